/* SPDX-License-Identifier: MIT */
/*
 * status KEY: who holds the lock.  Exit 0 when held, 1 when free, like
 * `systemctl is-active`, so scripts can test it directly.  With --limit,
 * every holder of the semaphore.
 */

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "redlock.h"

static int	cmd_status_exec(struct global_opts *, struct cmd_args *);
static void	cmd_status_text(const struct lock_holder *);
static void	cmd_status_json(const struct lock_holder *);
static void	cmd_status_token(const char *, char *, size_t);
static void	cmd_status_since(int64_t, char *, size_t);
static void	cmd_status_line(const char *, const char *);
static void	cmd_status_servers(const struct lock_state *, int);
static void	cmd_status_print_json(const struct cmd_args *,
		    const struct lock_state *);
static void	cmd_status_print_text(const struct cmd_args *,
		    const struct lock_state *);

static const int cmd_status_options[] = { OPT_JSON, OPT_LIMIT, 0 };

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "KEY [--limit N] [--json]",
	.summary = "show who holds the lock; exit 0 if it is held, 1 if it "
	    "is free",
	.example = "redlock-cli status deploy --json",
	.options = cmd_status_options,
	.flags = CMD_TAKES_KEY | CMD_NEEDS_SERVER,
	.exec = cmd_status_exec
};

/* Another holder's token would let anyone release its lock: show a
 * recognisable prefix only. */
static void
cmd_status_token(const char *token, char *out, size_t len)
{
	log_shorten(out, len, token, strlen(token));
}

static void
cmd_status_since(int64_t since_ms, char *out, size_t len)
{
	struct tm	tm;
	time_t		t = (time_t)(since_ms / 1000);

	out[0] = '\0';
	if (since_ms > 0 && gmtime_r(&t, &tm) != NULL)
		(void)strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "name: value", with the value made safe for a terminal. */
static void
cmd_status_line(const char *name, const char *value)
{
	char safe[1100];

	log_sanitize(safe, sizeof(safe), value, strlen(value));
	(void)printf("%s: %s\n", name, safe);
}

static void
cmd_status_text(const struct lock_holder *h)
{
	char buf[64];

	cmd_status_token(h->token, buf, sizeof(buf));
	cmd_status_line("token", buf);
	(void)printf("ttl_ms: %lld\n", (long long)h->ttl_ms);
	if (h->fence >= 0)
		(void)printf("fence: %lld\n", (long long)h->fence);
	if (h->host != NULL)
		cmd_status_line("host", h->host);
	if (h->pid >= 0)
		(void)printf("pid: %lld\n", (long long)h->pid);
	if (h->command != NULL)
		cmd_status_line("command", h->command);
	cmd_status_since(h->since_ms, buf, sizeof(buf));
	if (buf[0] != '\0')
		(void)printf("since: %s\n", buf);
}

/* One holder's fields, without braces, for either JSON shape. */
static void
cmd_status_json(const struct lock_holder *h)
{
	char buf[64];

	cmd_status_token(h->token, buf, sizeof(buf));
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
	cmd_status_since(h->since_ms, buf, sizeof(buf));
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
cmd_status_servers(const struct lock_state *st, int json)
{
	const struct lock_view		*vs = st->views;
	const struct lock_holder	*hs = st->holders;
	size_t				 n = st->nholders;
	char	 tok[64];
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
			cmd_status_token(vs[i].holders[0].token, tok,
			    sizeof(tok));
			(void)printf("server %s: %s %s (ttl_ms %lld)\n",
			    vs[i].display, mine ? "holds" : "held by other",
			    tok, (long long)vs[i].holders[0].ttl_ms);
		}
	}
	if (json)
		(void)fputs("]", stdout);
}

/* The lock as one JSON object: the holder's fields, or every holder's. */
static void
cmd_status_print_json(const struct cmd_args *a, const struct lock_state *st)
{
	size_t i, n = st->nholders;

	(void)fputs("{\"key\":", stdout);
	json_string(a->key);
	(void)printf(",\"held\":%s", n > 0 ? "true" : "false");
	if (a->limit > 0) {
		(void)printf(",\"limit\":%lld,\"holders\":[",
		    (long long)a->limit);
		for (i = 0; i < n; i++) {
			(void)fputs(i ? ",{" : "{", stdout);
			cmd_status_json(&st->holders[i]);
			(void)fputs("}", stdout);
		}
		(void)fputs("]", stdout);
		if (st->unlisted > 0)
			(void)printf(",\"holders_unlisted\":%zu",
			    st->unlisted);
	} else if (n > 0) {
		(void)fputs(",", stdout);
		cmd_status_json(&st->holders[0]);
	}
	(void)fputs(",\"queue\":", stdout);
	json_string(st->queue[0] != '\0' ? st->queue : "any");
	(void)printf(",\"waiting\":%zu", st->waiting);
	if (st->nviews > 1)
		cmd_status_servers(st, 1);
	(void)fputs("}\n", stdout);
}

/* "free", or the lines of the holder (of each holder, with --limit). */
static void
cmd_status_print_text(const struct cmd_args *a, const struct lock_state *st)
{
	size_t i, n = st->nholders;

	if (n == 0) {
		(void)puts("free");
		if (st->nviews > 1)
			cmd_status_servers(st, 0);
		return;
	}
	cmd_status_line("key", a->key);
	if (a->limit > 0)
		(void)printf("limit: %lld\nholders: %zu\n",
		    (long long)a->limit, n + st->unlisted);
	for (i = 0; i < n; i++) {
		if (a->limit > 0)
			(void)puts("");
		cmd_status_text(&st->holders[i]);
	}
	if (st->unlisted > 0)
		(void)printf("\n(%zu more holders not listed)\n",
		    st->unlisted);
	/* Only a queue's: a lock without one reads as it always did. */
	if (st->waiting > 0 || (st->queue[0] != '\0' &&
	    strcmp(st->queue, "any") != 0)) {
		if (a->limit > 0)
			(void)puts("");
		cmd_status_line("queue", st->queue);
		(void)printf("waiting: %zu\n", st->waiting);
	}
	if (st->nviews > 1)
		cmd_status_servers(st, 0);
}

static int
cmd_status_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec	 spec;
	struct lock		*l;
	struct lock_state	 st;
	int			 rc;

	cmd_lock_spec(a, &spec);
	l = lock_open(g, &spec);
	if ((rc = lock_status(l, &st)) != EXIT_OK) {
		log_warnx("%s", lock_error(l));
		lock_state_free(&st);
		lock_close(l);
		return (rc);
	}
	if (a->json)
		cmd_status_print_json(a, &st);
	else
		cmd_status_print_text(a, &st);
	/* 1 means "free", as the contract says. */
	rc = st.nholders > 0 ? EXIT_OK : EXIT_BUSY;
	if (cmd_flush_stdout() == -1 && rc == EXIT_OK)
		rc = EXIT_UNAVAILABLE;
	lock_state_free(&st);
	lock_close(l);
	return (rc);
}
