/* SPDX-License-Identifier: MIT */
/*
 * A lock's history (scripts-history.h keeps it on the servers): the entry
 * a holder's end writes, and the read of the newest entries, merged over
 * the servers of a quorum.  The entry rides with the release where there
 * is one (lock_release_call), so that a run pays no call for it; an end
 * with nothing to release sends it alone (lock_history_note).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static int	 history_parse(const redisReply *, struct lock_run **,
		     size_t *);
static int	 history_parse_one(const redisReply *, struct lock_run *);
static void	 history_field(struct lock_run *, const redisReply *,
		     const redisReply *);
static size_t	 history_merge(struct lock_run *, size_t);
static int	 history_newer(const void *, const void *);
static int	 history_same(const struct lock_run *,
		     const struct lock_run *);
static void	 history_clear(struct lock_run *);

/*
 * How the holder's end is to be written: outcome (NULL: nothing), the
 * exit status (-1: none) and when it began to wait (wall ms, 0: unknown).
 */
void
lock_history_end(struct lock *l, const char *outcome, int exit_code,
    int64_t queued_ms)
{
	l->end.outcome = outcome;
	l->end.exit_code = exit_code;
	l->end.queued_ms = queued_ms;
}

static void
history_num(char *buf, size_t size, int64_t v)
{
	if (v < 0)
		buf[0] = '\0';
	else
		(void)snprintf(buf, size, "%lld", (long long)v);
}

/*
 * The entry's ARGV: the size ("0" when there is nothing to write), then
 * the fields of history_from_argv.  A run (it listens) sends its own
 * entry whole; the release verb knows only the token, and sends host ''
 * for the server to take the rest from the holder's metadata.
 */
void
lock_entry_args(const struct lock *l, struct lock_entry_args *e)
{
	const char	**v = e->argv;
	int		  whole = l->spec.listens;

	(void)snprintf(e->size, sizeof(e->size), "%d", l->end.outcome !=
	    NULL ? l->opts->history_size : 0);
	history_num(e->exit, sizeof(e->exit), l->end.exit_code);
	e->host[0] = '\0';
	if (whole && gethostname(e->host, sizeof(e->host)) == -1)
		(void)snprintf(e->host, sizeof(e->host), "unknown");
	e->host[sizeof(e->host) - 1] = '\0';
	history_num(e->pid, sizeof(e->pid), whole ? (int64_t)getpid() : -1);
	history_num(e->order, sizeof(e->order), l->spec.order);
	history_num(e->queued, sizeof(e->queued), l->end.queued_ms > 0 ?
	    l->end.queued_ms : -1);
	history_num(e->started, sizeof(e->started), l->taken_wall_ms > 0 ?
	    l->taken_wall_ms : -1);
	history_num(e->ended, sizeof(e->ended), clock_wall_ms());
	history_num(e->fence, sizeof(e->fence), l->taken_wall_ms > 0 ?
	    l->fence : -1);
	v[0] = e->size;
	v[1] = l->end.outcome != NULL ? l->end.outcome : "";
	v[2] = e->exit;
	v[3] = e->host;
	v[4] = e->pid;
	v[5] = whole && l->spec.command != NULL ? l->spec.command : "";
	v[6] = e->order;
	v[7] = e->queued;
	v[8] = e->started;
	v[9] = e->ended;
	v[10] = e->fence;
}

/*
 * Write the end now, where nothing is released with it: a lost or
 * superseded run, one outdated before its take, one kept by --min-hold.
 * A history is a record, not the lock: a server that does not answer
 * is said with -v, and changes no exit status.
 */
void
lock_history_note(struct lock *l)
{
	struct lock_entry_args	 e;
	struct lock_round	 rd;
	const char		*argv[1 + LOCK_ENTRY_ARGC];
	size_t			 ok;

	if (l->end.outcome == NULL || l->opts->history_size == 0)
		return;
	lock_entry_args(l, &e);
	argv[0] = l->token != NULL ? l->token : "";
	memcpy(&argv[1], e.argv, sizeof(e.argv));
	ok = lock_call(l, scripts_history_note, LOCK_NKEYS,
	    1 + LOCK_ENTRY_ARGC, argv, NULL, 0, &rd);
	if (ok < l->nconns)
		log_info("lock '%s': the history entry reached %zu of %zu "
		    "servers: %s", l->spec.key, ok, l->nconns, l->fail.text);
	lock_round_free(l, &rd);
}

/*
 * The newest count entries, newest first, into *es (lock_runs_free).
 * In quorum, read from every server, needing a majority, and merged: an
 * entry written to all is shown once, one that a server missed (it was
 * down) comes from the others.
 */
int
lock_history(struct lock *l, int64_t count, struct lock_run **es,
    size_t *n)
{
	struct lock_round	 rd;
	const char		*argv[1];
	char			 num[32];
	size_t			 i, answered = 0;

	*es = NULL;
	*n = 0;
	(void)snprintf(num, sizeof(num), "%lld", (long long)count);
	argv[0] = num;
	(void)lock_call(l, scripts_history_read, LOCK_NKEYS, 1, argv, NULL, 0,
	    &rd);
	for (i = 0; i < l->nconns; i++) {
		if (rd.results[i] != CONN_OK)
			continue;
		if (history_parse(rd.replies[i], es, n) == -1) {
			(void)lock_unexpected(l, i, "history", rd.replies[i],
			    "array of entries");
			continue;
		}
		answered++;
	}
	lock_round_free(l, &rd);
	if (answered < l->quorum) {
		lock_runs_free(*es, *n);
		*es = NULL;
		*n = 0;
		return (lock_fail(l, answered));
	}
	*n = history_merge(*es, *n);
	while (*n > (size_t)count)
		history_clear(&(*es)[--*n]);
	return (EXIT_OK);
}

/* One server's XREVRANGE reply, appended to *es. */
static int
history_parse(const redisReply *r, struct lock_run **es, size_t *n)
{
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY)
		return (-1);
	*es = xreallocarray(*es, *n + r->elements + 1, sizeof(**es));
	for (i = 0; i < r->elements; i++) {
		if (history_parse_one(r->element[i], &(*es)[*n]) == -1)
			return (-1);
		(*n)++;
	}
	return (0);
}

/* {id, {field, value, ...}}: fields not known are skipped. */
static int
history_parse_one(const redisReply *r, struct lock_run *e)
{
	const redisReply	*f;
	size_t			 i;

	memset(e, 0, sizeof(*e));
	e->exit_code = e->pid = e->order = e->fence = -1;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[1]->type != REDIS_REPLY_ARRAY)
		return (-1);
	f = r->element[1];
	for (i = 0; i + 1 < f->elements; i += 2)
		if (f->element[i]->type == REDIS_REPLY_STRING &&
		    f->element[i + 1]->type == REDIS_REPLY_STRING)
			history_field(e, f->element[i], f->element[i + 1]);
	if (e->outcome == NULL)
		e->outcome = xstrdup("?");
	if (e->host == NULL)
		e->host = xstrdup("");
	if (e->command == NULL)
		e->command = xstrdup("");
	return (0);
}

/* A number as the scripts write it; -1 for '' or anything else. */
static int64_t
history_int(const redisReply *v)
{
	char		*end;
	long long	 n;

	if (v->len == 0 || v->len > 20)
		return (-1);
	n = strtoll(v->str, &end, 10);
	return (end == v->str + v->len && n >= 0 ? (int64_t)n : -1);
}

static void
history_field(struct lock_run *e, const redisReply *k, const redisReply *v)
{
	char	**s = NULL;
	int64_t	 *num = NULL;

	if (k->len != 1)
		return;
	switch (k->str[0]) {
	case 'o': s = &e->outcome; break;
	case 'h': s = &e->host; break;
	case 'c': s = &e->command; break;
	case 'p': num = &e->pid; break;
	case 'r': num = &e->order; break;
	case 'q': num = &e->queued_ms; break;
	case 's': num = &e->started_ms; break;
	case 'e': num = &e->ended_ms; break;
	case 'f': num = &e->fence; break;
	case 'x':
		e->exit_code = (int)(history_int(v) > 255 ? -1 :
		    history_int(v));
		return;
	default:
		return;
	}
	if (s != NULL && *s == NULL)
		*s = lock_command_shown(v->str, v->len);
	else if (num != NULL)
		*num = history_int(v);
	if (num == &e->queued_ms || num == &e->started_ms ||
	    num == &e->ended_ms)
		*num = *num < 0 ? 0 : *num;
}

/* Newest first, each entry once: returns how many are left. */
static size_t
history_merge(struct lock_run *es, size_t n)
{
	size_t i, kept = 0;

	if (n == 0)
		return (0);
	qsort(es, n, sizeof(*es), history_newer);
	for (i = 0; i < n; i++) {
		if (kept > 0 && history_same(&es[kept - 1], &es[i])) {
			history_clear(&es[i]);
			continue;
		}
		es[kept++] = es[i];
	}
	return (kept);
}

static int
history_newer(const void *a, const void *b)
{
	const struct lock_run *x = a, *y = b;
	int c;

	if (x->ended_ms != y->ended_ms)
		return (x->ended_ms > y->ended_ms ? -1 : 1);
	if (x->started_ms != y->started_ms)
		return (x->started_ms > y->started_ms ? -1 : 1);
	if (x->pid != y->pid)
		return (x->pid > y->pid ? -1 : 1);
	if ((c = strcmp(x->host, y->host)) != 0)
		return (c);
	return (strcmp(x->outcome, y->outcome));
}

/*
 * The same end, as two servers of a quorum recorded it.  The end is the
 * writer's clock for what a client wrote, the server's for a force or an
 * expiry: those may differ by the servers' skew, so they match on the
 * holder and its start.
 */
static int
history_same(const struct lock_run *a, const struct lock_run *b)
{
	return (a->pid == b->pid && a->started_ms == b->started_ms &&
	    a->fence == b->fence && a->exit_code == b->exit_code &&
	    strcmp(a->host, b->host) == 0 &&
	    strcmp(a->outcome, b->outcome) == 0 &&
	    (a->ended_ms == b->ended_ms || a->exit_code == -1));
}

static void
history_clear(struct lock_run *e)
{
	free(e->outcome);
	free(e->host);
	free(e->command);
	memset(e, 0, sizeof(*e));
}

void
lock_runs_free(struct lock_run *es, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		history_clear(&es[i]);
	free(es);
}
