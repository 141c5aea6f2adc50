/* SPDX-License-Identifier: MIT */
/*
 * Who waits for a lock, as status and list show it.  A semaphore's status,
 * and list in every mode, get the waiters in their snapshot, parsed here
 * (lock_waiters_parse).  A mutex's
 * status script names the lock's own three keys only: a Cluster refuses a
 * call whose keys partly do not exist while their slot migrates
 * (TRYAGAIN), and a waiter's keys mostly do not (lock-call.c,
 * lock_call_keys).  So its waiters are read after the snapshot, with two
 * calls of one key each, which a migrating slot serves, or sends on with
 * ASK: lua_mutex_waiters on the queue's leases (how many wait, and the
 * first tokens), then HMGET of the queue's ':who' hash (the queue's mode,
 * and who each waiter is).  Only the servers whose snapshot came are
 * asked, so a server that did not answer costs no second timeout.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/*
 * The servers whose leases answered, for one HMGET of the ':who' hash
 * that serves them all: the queue's mode (field ''), then each token's two
 * fields, the tokens of every server one after another; each server's
 * reply is read at its own tokens.
 */
struct waiters_who {
	struct conn	**conns;
	size_t		 *view;		/* the index of each one's view */
	const redisReply **tokens;	/* its {count, {token, ...}} */
	size_t		 *from;		/* its first field in the HMGET */
	size_t		  n;
	const char	**argv;		/* the HMGET */
	size_t		 *lens;
	char		**owned;	/* the fields "w:" TOKEN */
	size_t		  argc;
};

static void	 waiter_parse(const char *, size_t, const char *, size_t,
		     struct lock_waiter *);
static int	 waiters_tokens(const redisReply *);
static size_t	 waiters_failed(struct lock *, struct lock_view *, size_t,
		     struct conn *, int, const redisReply *);
static void	 waiters_hmget(struct lock *, struct waiters_who *);
static size_t	 waiters_who(struct lock *, struct lock_view *,
		     struct waiters_who *);
static void	 waiters_fill(struct lock_view *, const redisReply *,
		     const redisReply *, size_t);

/*
 * One waiter, "PID HOST" and "ORDER AT KIND" (LUA_WAITER_INFO), into w:
 * what a server sent is cut and made printable.  Either may be empty.
 */
static void
waiter_parse(const char *who, size_t wlen, const char *info, size_t ilen,
    struct lock_waiter *w)
{
	char		 buf[128], host[256], *end;
	const char	*sp;
	long long	 order, at;

	memset(w, 0, sizeof(*w));
	w->pid = w->order = -1;
	if ((sp = memchr(who, ' ', wlen)) != NULL) {
		log_sanitize(host, sizeof(host), sp + 1,
		    wlen - (size_t)(sp + 1 - who));
		w->host = xstrdup(host);
		w->pid = strtoll(who, &end, 10);
		if (end != sp || w->pid <= 0)
			w->pid = -1;
	}
	log_sanitize(buf, sizeof(buf), info, ilen);
	w->kind[0] = '\0';
	if (sscanf(buf, "%lld %lld %11s", &order, &at, w->kind) == 3 ||
	    sscanf(buf, "- %lld %11s", &at, w->kind) == 2) {
		w->order = buf[0] == '-' ? -1 : order;
		w->since_ms = at > 0 ? at / 1000 : 0;
	}
}

/*
 * The waiters list of a snapshot, {{"PID HOST", "ORDER AT KIND"}, ...}
 * (LUA_WAITING), into v.  -1 if not that shape.
 */
int
lock_waiters_parse(const redisReply *list, struct lock_view *v)
{
	const redisReply	*e;
	size_t			 i;

	if (list->type != REDIS_REPLY_ARRAY)
		return (-1);
	v->waiters = xcalloc(list->elements, sizeof(*v->waiters));
	for (i = 0; i < list->elements; i++) {
		e = list->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[1]->type != REDIS_REPLY_STRING)
			break;
		waiter_parse(e->element[0]->str, e->element[0]->len,
		    e->element[1]->str, e->element[1]->len, &v->waiters[i]);
	}
	v->nwaiters = i;
	return (i == list->elements ? 0 : -1);
}

void
lock_waiters_free(struct lock_waiter *ws, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ws[i].host);
	free(ws);
}

/* How many tokens a lua_mutex_waiters reply lists, or -1 if malformed. */
static int
waiters_tokens(const redisReply *r)
{
	size_t i;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[0]->integer < 0 ||
	    r->element[1]->type != REDIS_REPLY_ARRAY ||
	    r->element[1]->elements > LOCK_STATUS_LISTED)
		return (-1);
	for (i = 0; i < r->element[1]->elements; i++)
		if (r->element[1]->element[i]->type != REDIS_REPLY_STRING)
			return (-1);
	return ((int)r->element[1]->elements);
}

/*
 * The view-th view's failure to tell its waiters: its server's error, or
 * the shape of its reply.  Returns 1, a view lost.
 */
static size_t
waiters_failed(struct lock *l, struct lock_view *vs, size_t view,
    struct conn *c, int result, const redisReply *r)
{
	if (result == CONN_OK)
		(void)lock_unexpected(l, view, "status", r, "the waiters: "
		    "their number and tokens, or the queue's mode and who "
		    "they are");
	vs[view].error = xstrdup(result == CONN_OK ? l->fail.text :
	    conn_error(c));
	return (1);
}

/*
 * A mutex's waiters, for status: every view that came without an error
 * gets its number of waiters, the queue's mode and who waits, or an error
 * of its own.  Returns how many views got an error.
 */
size_t
lock_waiters_read(struct lock *l, struct lock_view *vs)
{
	struct waiters_who	 w;
	const char		*args[2];
	size_t			 lens[2], i, n = 0, lost = 0;
	char			 listed[32];
	redisReply		**replies;
	int			 *results;

	(void)snprintf(listed, sizeof(listed), "%d", LOCK_STATUS_LISTED);
	args[0] = l->keys[LK_LEASES];
	lens[0] = l->keys_len[LK_LEASES];
	args[1] = listed;
	lens[1] = strlen(listed);
	memset(&w, 0, sizeof(w));
	w.conns = xcalloc(l->nconns, sizeof(*w.conns));
	w.view = xcalloc(l->nconns, sizeof(*w.view));
	w.tokens = xcalloc(l->nconns, sizeof(*w.tokens));
	w.from = xcalloc(l->nconns, sizeof(*w.from));
	for (i = 0; i < l->nconns; i++)
		if (vs[i].error == NULL) {
			w.view[n] = i;
			w.conns[n++] = l->conns[i];
		}
	replies = xcalloc(n + 1, sizeof(*replies));
	results = xcalloc(n + 1, sizeof(*results));
	if (n > 0)
		script_call_many(w.conns, n, scripts_mutex_waiters, 1, 1,
		    args, lens, 0, replies, results);
	for (i = 0; i < n; i++) {
		if (results[i] != CONN_OK || waiters_tokens(replies[i]) == -1) {
			lost += waiters_failed(l, vs, w.view[i], w.conns[i],
			    results[i], replies[i]);
			continue;
		}
		w.conns[w.n] = w.conns[i];
		w.view[w.n] = w.view[i];
		w.tokens[w.n++] = replies[i];
	}
	if (w.n > 0)
		lost += waiters_who(l, vs, &w);
	for (i = 0; i < n; i++)
		if (replies[i] != NULL)
			freeReplyObject(replies[i]);
	free(replies);
	free(results);
	free(w.conns);
	free(w.view);
	free(w.tokens);
	free(w.from);
	return (lost);
}

/* The HMGET of w's servers' tokens, into w->argv. */
static void
waiters_hmget(struct lock *l, struct waiters_who *w)
{
	const redisReply	*t;
	size_t			 i, j, argc = 3;

	for (i = 0; i < w->n; i++)
		argc += 2 * w->tokens[i]->element[1]->elements;
	w->argv = xcalloc(argc, sizeof(*w->argv));
	w->lens = xcalloc(argc, sizeof(*w->lens));
	w->owned = xcalloc(argc, sizeof(*w->owned));
	w->argv[0] = "HMGET";
	w->lens[0] = 5;
	w->argv[1] = l->keys[LK_WHO];
	w->lens[1] = l->keys_len[LK_WHO];
	w->argv[2] = "";		/* the queue's mode */
	for (i = 0, w->argc = 3; i < w->n; i++) {
		w->from[i] = w->argc;
		for (j = 0; j < w->tokens[i]->element[1]->elements; j++) {
			t = w->tokens[i]->element[1]->element[j];
			w->argv[w->argc] = t->str;
			w->lens[w->argc++] = t->len;
			w->owned[w->argc] = xasprintf("w:%.*s", (int)t->len,
			    t->str);
			w->argv[w->argc] = w->owned[w->argc];
			w->lens[w->argc++] = t->len + 2;
		}
	}
}

/* The HMGET on w's servers, each view filled or failed: how many failed. */
static size_t
waiters_who(struct lock *l, struct lock_view *vs, struct waiters_who *w)
{
	redisReply	**replies;
	int		 *results;
	size_t		  i, lost = 0;

	waiters_hmget(l, w);
	replies = xcalloc(w->n, sizeof(*replies));
	results = xcalloc(w->n, sizeof(*results));
	conn_command_many(w->conns, w->n, w->n, (int)w->argc, w->argv,
	    w->lens, 0, 0, replies, results);
	for (i = 0; i < w->n; i++) {
		if (results[i] != CONN_OK ||
		    replies[i]->type != REDIS_REPLY_ARRAY ||
		    replies[i]->elements != w->argc - 2)
			lost += waiters_failed(l, vs, w->view[i], w->conns[i],
			    results[i], replies[i]);
		else
			waiters_fill(&vs[w->view[i]], w->tokens[i],
			    replies[i], w->from[i] - 2);
		if (replies[i] != NULL)
			freeReplyObject(replies[i]);
	}
	free(replies);
	free(results);
	for (i = 0; i < w->argc; i++)
		free(w->owned[i]);
	free(w->owned);
	free(w->argv);
	free(w->lens);
	return (lost);
}

/*
 * A view's waiters: their number and tokens (lua_mutex_waiters' reply),
 * the queue's mode (the HMGET's first value) and who each is (its values
 * from the at-th on, two a token; a field that is not there reads as
 * empty, as LUA_WAITING sends it).
 */
static void
waiters_fill(struct lock_view *v, const redisReply *tokens,
    const redisReply *who, size_t at)
{
	const redisReply	*mode = who->element[0], *p, *i;
	size_t			 k, n = tokens->element[1]->elements;

	v->waiting = (size_t)tokens->element[0]->integer;
	if (mode->type == REDIS_REPLY_STRING && mode->len < sizeof(v->queue))
		log_sanitize(v->queue, sizeof(v->queue), mode->str, mode->len);
	else
		(void)snprintf(v->queue, sizeof(v->queue), "any");
	lock_waiters_free(v->waiters, v->nwaiters);
	v->waiters = xcalloc(n, sizeof(*v->waiters));
	for (k = 0; k < n; k++) {
		p = who->element[at + 2 * k];
		i = who->element[at + 2 * k + 1];
		waiter_parse(p->type == REDIS_REPLY_STRING ? p->str : "",
		    p->type == REDIS_REPLY_STRING ? p->len : 0,
		    i->type == REDIS_REPLY_STRING ? i->str : "",
		    i->type == REDIS_REPLY_STRING ? i->len : 0,
		    &v->waiters[k]);
	}
	v->nwaiters = n;
}
