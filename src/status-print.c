/* SPDX-License-Identifier: MIT */
/*
 * How a lock's state reads, for status and list alike: the text of
 * status, and the JSON object that status --json prints and list --json
 * prints one of per lock, so that both say the same in the same words.
 */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "redlock.h"
#include "print.h"

static void	status_print_holder_text(const struct lock_holder *);
static void	status_print_holder_json(const struct lock_holder *);
static void	status_print_line(const char *, const char *);
static void	status_print_servers(const struct lock_state *, int);
static void	status_print_holder_brief(const struct lock_holder *);
static const char *status_print_mode(int64_t, const struct lock_state *);
static const char *status_print_queue(const struct lock_state *);
static int	 status_print_queued(const struct lock_state *);
static void	status_print_holders_json(const struct lock_state *);
static void	status_print_waiters(const struct lock_state *, int);

/* Another holder's token would let anyone release its lock: show a
 * recognisable prefix only. */
void
status_print_token(const char *token, char *out, size_t len)
{
	log_shorten(out, len, token, strlen(token));
}

/* "name: value", with the value made safe for a terminal. */
static void
status_print_line(const char *name, const char *value)
{
	char safe[1100];

	log_sanitize(safe, sizeof(safe), value, strlen(value));
	(void)printf("%s: %s\n", name, safe);
}

static void
status_print_holder_text(const struct lock_holder *h)
{
	char buf[64];

	status_print_token(h->token, buf, sizeof(buf));
	status_print_line("token", buf);
	if (h->ttl_ms >= 0)
		duration_span(h->ttl_ms, buf, sizeof(buf));
	else
		(void)snprintf(buf, sizeof(buf), "none");
	(void)printf("ttl: %s\n", buf);
	if (h->fence >= 0)
		(void)printf("fence: %lld\n", (long long)h->fence);
	if (h->host != NULL)
		status_print_line("host", h->host);
	if (h->pid >= 0)
		(void)printf("pid: %lld\n", (long long)h->pid);
	if (h->command != NULL)
		status_print_line("command", h->command);
	timefmt_utc(h->since_ms, buf, sizeof(buf));
	if (buf[0] != '\0')
		(void)printf("since: %s\n", buf);
	timefmt_age(h->since_ms, buf, sizeof(buf));
	if (buf[0] != '\0')
		(void)printf("held: %s\n", buf);
}

/* One holder's fields, without braces, for either JSON shape. */
static void
status_print_holder_json(const struct lock_holder *h)
{
	char buf[64];

	status_print_token(h->token, buf, sizeof(buf));
	(void)fputs("\"token\":", stdout);
	json_string(buf);
	(void)printf(",\"ttl_ms\":%lld", (long long)h->ttl_ms);
	if (h->fence >= 0)
		(void)printf(",\"fence\":%lld", (long long)h->fence);
	if (h->host != NULL) {
		(void)fputs(",\"host\":", stdout);
		json_string(h->host);
	}
	if (h->pid >= 0)
		(void)printf(",\"pid\":%lld", (long long)h->pid);
	if (h->command != NULL) {
		(void)fputs(",\"command\":", stdout);
		json_string(h->command);
	}
	timefmt_utc(h->since_ms, buf, sizeof(buf));
	if (buf[0] != '\0') {
		(void)fputs(",\"since\":", stdout);
		json_string(buf);
	}
}

/*
 * Quorum mode: each server's own view, and how many hold the majority's
 * token (text lines, or a JSON "servers" array).
 */
static void
status_print_servers(const struct lock_state *st, int json)
{
	const struct lock_view		*vs = st->views;
	const struct lock_holder	*hs = st->holders;
	size_t				 n = st->nholders;
	char	 tok[64], ttl[32];
	size_t	 i, j;
	int	 mine;

	if (json)
		(void)fputs(",\"servers\":[", stdout);
	for (i = 0; i < st->nviews; i++) {
		mine = 0;
		for (j = 0; n > 0 && j < vs[i].nholders; j++)
			if (strcmp(vs[i].holders[j].token, hs[0].token) == 0)
				mine = 1;
		if (json) {
			(void)fputs(i ? ",{\"url\":" : "{\"url\":", stdout);
			json_string(vs[i].display);
			if (vs[i].error != NULL) {
				(void)fputs(",\"error\":", stdout);
				json_string(vs[i].error);
			} else {
				(void)printf(",\"held\":%s,\"holders\":%zu",
				    vs[i].nholders > 0 ? "true" : "false",
				    vs[i].nholders);
				if (vs[i].nholders > 0)
					(void)printf(",\"ttl_ms\":%lld",
					    (long long)vs[i].holders[0].ttl_ms);
			}
			(void)fputs("}", stdout);
			continue;
		}
		if (vs[i].error != NULL)
			(void)printf("server %s: error: %s\n", vs[i].display,
			    vs[i].error);
		else if (vs[i].nholders == 0)
			(void)printf("server %s: free\n", vs[i].display);
		else {
			status_print_token(vs[i].holders[0].token, tok,
			    sizeof(tok));
			duration_span(vs[i].holders[0].ttl_ms, ttl,
			    sizeof(ttl));
			(void)printf("server %s: %s %s (ttl %s)\n",
			    vs[i].display, mine ? "holds" : "held by other",
			    tok, ttl);
		}
	}
	if (json)
		(void)fputs("]", stdout);
}

/* The mode to show: a holding server's, or the one the caller asked. */
static const char *
status_print_mode(int64_t limit, const struct lock_state *st)
{
	if (st->mode != NULL)
		return (st->mode);
	return (limit != 0 ? "semaphore" : "exclusive");
}

/* The queue's mode, as the servers keep it: "any" when none was seen. */
static const char *
status_print_queue(const struct lock_state *st)
{
	return (st->queue[0] != '\0' ? st->queue : "any");
}

/* Whether waiters queue (fifo or latest), which text shows. */
static int
status_print_queued(const struct lock_state *st)
{
	return (strcmp(status_print_queue(st), "any") != 0);
}

/* Every holder's fields, as a JSON "holders" array. */
static void
status_print_holders_json(const struct lock_state *st)
{
	size_t i;

	(void)fputs(",\"holders\":[", stdout);
	for (i = 0; i < st->nholders; i++) {
		(void)fputs(i ? ",{" : "{", stdout);
		status_print_holder_json(&st->holders[i]);
		(void)fputs("}", stdout);
	}
	(void)fputs("]", stdout);
	if (st->unlisted > 0)
		(void)printf(",\"holders_unlisted\":%zu", st->unlisted);
}

/*
 * The lock key as one JSON object, without a newline: its mode, the
 * waiters, and every holder in "holders"; an exclusive holder's fields
 * also at the top, where scripts written for a plain mutex look.  limit: a
 * semaphore's slots (0: not a semaphore; -1: a semaphore whose limit is
 * not known).
 */
void
status_print_json(const char *key, int64_t limit, const struct lock_state *st)
{
	const char	*mode = status_print_mode(limit, st);
	size_t		 n = st->nholders;

	(void)fputs("{\"key\":", stdout);
	json_string(key);
	(void)printf(",\"held\":%s,\"mode\":\"%s\",\"queue\":\"%s\","
	    "\"waiting\":%zu", n > 0 ? "true" : "false", mode,
	    status_print_queue(st), st->waiting);
	status_print_waiters(st, 1);
	if (limit > 0)
		(void)printf(",\"limit\":%lld", (long long)limit);
	if (n > 0 && strcmp(mode, "exclusive") == 0) {
		(void)fputs(",", stdout);
		status_print_holder_json(&st->holders[0]);
	}
	if (n > 0 || limit != 0)
		status_print_holders_json(st);
	if (st->last != NULL) {
		(void)fputs(",\"last\":", stdout);
		history_print_run_json(st->last);
	}
	if (st->nviews > 1)
		status_print_servers(st, 1);
	(void)fputs("}", stdout);
}

/*
 * "free", or the lines of the holder; of each holder, after a count, for
 * a semaphore and for shared holders (with their mode).
 */
void
status_print_text(const char *key, int64_t limit, const struct lock_state *st)
{
	const char	*mode = status_print_mode(limit, st);
	size_t		 i, n = st->nholders;
	int		 is_many = limit != 0 || strcmp(mode, "shared") == 0;

	if (n == 0) {
		(void)puts("free");
		if (st->last != NULL)
			history_print_last(st->last);
		if (st->nviews > 1)
			status_print_servers(st, 0);
		return;
	}
	status_print_line("key", key);
	if (limit > 0)
		(void)printf("limit: %lld\n", (long long)limit);
	else if (is_many)
		(void)printf("mode: %s\n", mode);
	if (is_many)
		(void)printf("holders: %zu\n", n + st->unlisted);
	for (i = 0; i < n; i++) {
		if (is_many)
			(void)puts("");
		status_print_holder_text(&st->holders[i]);
	}
	if (st->unlisted > 0)
		(void)printf("\n(%zu more holders not listed)\n",
		    st->unlisted);
	/* Only when some wait or a queue is used: most locks have none. */
	if (st->waiting > 0 || status_print_queued(st)) {
		if (is_many)
			(void)puts("");
		if (status_print_queued(st))
			status_print_line("queue", st->queue);
		(void)printf("waiting: %zu\n", st->waiting);
		status_print_waiters(st, 0);
	}
	if (st->nviews > 1)
		status_print_servers(st, 0);
}

/*
 * Who waits: JSON's "waiters" array (after a comma), or a line each,
 * "waiter: HOST pid P, order N, exclusive, since TIME".
 */
static void
status_print_waiters(const struct lock_state *st, int json)
{
	const struct lock_waiter	*w;
	char				 since[64], order[32];
	size_t				 i;

	if (json)
		(void)fputs(",\"waiters\":[", stdout);
	for (i = 0; i < st->nwaiters; i++) {
		w = &st->waiters[i];
		timefmt_utc(w->since_ms, since, sizeof(since));
		(void)snprintf(order, sizeof(order), "%lld",
		    (long long)w->order);
		if (!json) {
			(void)printf("waiter: %s pid %lld%s%s, %s, since %s\n",
			    w->host != NULL ? w->host : "?",
			    (long long)w->pid, w->order >= 0 ? ", order " : "",
			    w->order >= 0 ? order : "", w->kind, since);
			continue;
		}
		(void)fputs(i > 0 ? ",{\"host\":" : "{\"host\":", stdout);
		json_string(w->host != NULL ? w->host : "");
		(void)printf(",\"pid\":%lld,\"order\":%s,\"mode\":",
		    (long long)w->pid, w->order >= 0 ? order : "null");
		json_string(w->kind);
		(void)fputs(",\"since\":", stdout);
		json_string(since);
		(void)fputs("}", stdout);
	}
	if (json)
		(void)fputs("]", stdout);
}

/*
 * One holder, in a line: "HOST pid P (COMMAND, since TIME, held 5m2s,
 * ttl 29.5s)",
 * or the shortened token of a holder without metadata.
 */
static void
status_print_holder_brief(const struct lock_holder *h)
{
	char	buf[1100], since[64], ttl[32];

	duration_span(h->ttl_ms, ttl, sizeof(ttl));
	if (h->host == NULL || h->pid < 0) {
		status_print_token(h->token, buf, sizeof(buf));
		(void)printf("token %s (ttl %s)", buf, ttl);
		return;
	}
	log_sanitize(buf, sizeof(buf), h->host, strlen(h->host));
	(void)printf("%s pid %lld (", buf, (long long)h->pid);
	if (h->command != NULL) {
		log_sanitize(buf, sizeof(buf), h->command, strlen(h->command));
		(void)printf("%s, ", buf);
	}
	timefmt_utc(h->since_ms, since, sizeof(since));
	if (since[0] != '\0')
		(void)printf("since %s, ", since);
	timefmt_age(h->since_ms, since, sizeof(since));
	if (since[0] != '\0')
		(void)printf("held %s, ", since);
	(void)printf("ttl %s)", ttl);
}

/*
 * The lock key in one line, for list: KEY, the mode (a semaphore's holders
 * out of its limit), each holder, the queue's mode (--queue fifo or
 * latest), the waiters, and a mark where the servers of a quorum
 * disagree.
 */
void
status_print_entry(const char *key, int64_t limit, const struct lock_state *st)
{
	char	safe[1100];
	size_t	i;

	log_sanitize(safe, sizeof(safe), key, strlen(key));
	/* list --all: a name nobody holds, and how its last run ended. */
	if (st->nholders == 0 && st->last != NULL) {
		(void)printf("%s free, ", safe);
		history_print_last(st->last);
		return;
	}
	(void)printf("%s %s", safe, status_print_mode(limit, st));
	if (limit > 0)
		(void)printf(" %zu/%lld", st->nholders + st->unlisted,
		    (long long)limit);
	for (i = 0; i < st->nholders; i++) {
		(void)fputs(i > 0 ? ", " : " ", stdout);
		status_print_holder_brief(&st->holders[i]);
	}
	if (st->unlisted > 0)
		(void)printf(", %zu more", st->unlisted);
	if (status_print_queued(st))
		(void)printf(" queue %s", st->queue);
	(void)printf(" waiting %zu%s\n", st->waiting, st->disagree ?
	    " (servers disagree)" : "");
}
