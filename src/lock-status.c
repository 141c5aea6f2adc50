/* SPDX-License-Identifier: MIT */
/*
 * status: who holds a lock (or the slots of a semaphore), from one atomic
 * snapshot taken by the status script, and for a mutex who waits, read
 * after it (lock-waiters.c); list (lock-list.c) parses the same
 * snapshots, many in one reply, and takes the majority the same way.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static char	*status_str(const redisReply *);
static int	 status_is(const redisReply *, const char *, size_t,
		     const char *);
static void	 status_meta(struct lock_holder *, const redisReply *,
		     int);
static const char *status_mode(const redisReply *);
static void	 status_copy(struct lock_holder *, const struct lock_holder *);
static size_t	 status_count(const struct lock_view *, size_t, const char *);
static int	 status_views_differ(const struct lock_state *);
static void	 status_queue(struct lock_state *, const struct lock_view *);
static void	 status_copy_waiters(struct lock_state *,
		     const struct lock_view *);
static size_t	 status_views(struct lock *, const struct lock_round *,
		     struct lock_view *);

/*
 * A holder's recorded command, as status, list and the busy line show it:
 * masked again (mask.c), since another client, or an older redlock-cli,
 * may have recorded a secret.  NULL when none was recorded
 * (--record-command none), or when out of memory: then nothing is shown,
 * never the unmasked line.
 */
char *
lock_command_shown(const char *s, size_t len)
{
	char	*raw, *shown;

	if (len == 0)
		return (NULL);
	raw = xmalloc(len + 1);
	memcpy(raw, s, len);
	raw[len] = '\0';
	shown = mask_words((const char *const *)&raw, 1);
	free(raw);
	return (shown);
}

static char *
status_str(const redisReply *r)
{
	char *s;

	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)
		return (NULL);
	s = xmalloc(r->len + 1);
	memcpy(s, r->str, r->len);
	s[r->len] = '\0';
	return (s);
}

/* Is r the string prefix + name ("<token>:host" for a semaphore)? */
static int
status_is(const redisReply *r, const char *prefix, size_t plen,
    const char *name)
{
	size_t nlen = strlen(name);

	return (r->type == REDIS_REPLY_STRING && r->len == plen + nlen &&
	    memcmp(r->str, prefix, plen) == 0 &&
	    memcmp(r->str + plen, name, nlen) == 0);
}

/*
 * Fill h's metadata from the hash's field/value list.  A mutex's fields
 * are plain and describe h only if their "token" field names h; a
 * semaphore's are "<token>:field".
 */
static void
status_meta(struct lock_holder *h, const redisReply *meta, int is_sem)
{
	static const char *numeric[] = { "fence", "pid", "since", NULL };
	const redisReply *f, *v;
	char		 prefix_buf[512], num[32], *end;
	const char	*prefix = "";
	size_t		 plen = 0, i, tlen = strlen(h->token);
	long long	 n;
	int		 j;

	if (is_sem) {
		if (tlen + 2 > sizeof(prefix_buf))
			return;
		(void)snprintf(prefix_buf, sizeof(prefix_buf), "%s:",
		    h->token);
		prefix = prefix_buf;
		plen = tlen + 1;
	} else {
		for (i = 0; i + 1 < meta->elements; i += 2)
			if (status_is(meta->element[i], "", 0, "token") &&
			    meta->element[i + 1]->type == REDIS_REPLY_STRING &&
			    meta->element[i + 1]->len == tlen &&
			    memcmp(meta->element[i + 1]->str, h->token,
			    tlen) == 0)
				break;
		if (i + 1 >= meta->elements)
			return;		/* a foreign client's lock */
	}
	for (i = 0; i + 1 < meta->elements; i += 2) {
		f = meta->element[i];
		v = meta->element[i + 1];
		if (v->type != REDIS_REPLY_STRING)
			continue;
		if (status_is(f, prefix, plen, "host") && h->host == NULL)
			h->host = status_str(v);
		else if (status_is(f, prefix, plen, "command") &&
		    h->command == NULL)
			h->command = lock_command_shown(v->str, v->len);
		for (j = 0; numeric[j] != NULL; j++) {
			if (!status_is(f, prefix, plen, numeric[j]) ||
			    v->len == 0 || v->len >= sizeof(num) ||
			    !isdigit((unsigned char)v->str[0]))
				continue;
			memcpy(num, v->str, v->len);
			num[v->len] = '\0';
			errno = 0;
			n = strtoll(num, &end, 10);
			if (*end != '\0' || errno != 0)
				continue;
			if (j == 0)
				h->fence = n;
			else if (j == 1)
				h->pid = n;
			else
				h->since_ms = n;
		}
	}
}

/* The mode a snapshot names, as status shows it: a known name, or ours. */
static const char *
status_mode(const redisReply *r)
{
	static const char *modes[] = { "exclusive", "shared", "semaphore" };
	size_t i;

	for (i = 0; i < 3; i++)
		if (status_is(r, "", 0, modes[i]))
			return (modes[i]);
	return (modes[0]);
}

/*
 * Parse one snapshot of a lock, the n elements {holders, metadata, count,
 * limit, waiting, mode, queue mode, waiters} of a reply, into v
 * (lock_state_free(), or lock_holders_free() and lock_waiters_free(), free
 * it); ours: our token, or NULL.  -1 if it has not that shape, -2 if a
 * holder in it has not the shape {token, TTL}.
 */
int
lock_view_parse(redisReply *const *el, size_t n, const char *ours,
    struct lock_view *v)
{
	const redisReply	*list, *e;
	size_t			 i;

	if (n != 8 || el[7]->type != REDIS_REPLY_ARRAY ||
	    el[0]->type != REDIS_REPLY_ARRAY ||
	    el[1]->type != REDIS_REPLY_ARRAY ||
	    el[2]->type != REDIS_REPLY_INTEGER ||
	    el[3]->type != REDIS_REPLY_INTEGER ||
	    el[4]->type != REDIS_REPLY_INTEGER || el[4]->integer < 0 ||
	    el[5]->type != REDIS_REPLY_STRING ||
	    el[6]->type != REDIS_REPLY_STRING ||
	    el[2]->integer < (long long)el[0]->elements)
		return (-1);
	list = el[0];
	for (i = 0; i < list->elements; i++) {
		e = list->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[1]->type != REDIS_REPLY_INTEGER)
			return (-2);
	}
	v->mode = status_mode(el[5]);
	v->holders = xcalloc(list->elements, sizeof(*v->holders));
	for (i = 0; i < list->elements; i++) {
		struct lock_holder *h = &v->holders[i];

		e = list->element[i];
		h->fence = -1;
		h->pid = -1;
		h->token = status_str(e->element[0]);
		h->ttl_ms = e->element[1]->integer;
		h->ours = ours != NULL && strcmp(h->token, ours) == 0;
		/* A semaphore's and the readers' fields are per token. */
		status_meta(h, el[1], strcmp(v->mode, "exclusive") != 0);
	}
	v->nholders = list->elements;
	v->nholding = (size_t)el[2]->integer;
	v->limit = el[3]->integer;
	v->waiting = (size_t)el[4]->integer;
	log_sanitize(v->queue, sizeof(v->queue), el[6]->str,
	    el[6]->len < sizeof(v->queue) ? el[6]->len : 0);
	return (lock_waiters_parse(el[7], v));
}

static void
status_copy(struct lock_holder *dst, const struct lock_holder *src)
{
	*dst = *src;
	dst->token = xstrdup(src->token);
	dst->host = src->host != NULL ? xstrdup(src->host) : NULL;
	dst->command = src->command != NULL ? xstrdup(src->command) : NULL;
}

/*
 * Who holds l: st->holders gets the holders found on a majority of the
 * servers (none when free; with one server, whoever holds it there), and
 * st->views each server's own answer.  Returns EXIT_OK when a majority
 * answered, or the failure's exit code; lock_state_free() frees st either
 * way.
 */
int
lock_status(struct lock *l, struct lock_state *st)
{
	struct lock_round	 rd;
	struct lock_view	*vs;
	const char		*argv[2];
	size_t			 i, answered;
	char			 listed[32];

	memset(st, 0, sizeof(*st));
	(void)snprintf(listed, sizeof(listed), "%d", LOCK_STATUS_LISTED);
	argv[0] = l->limit_arg;
	argv[1] = listed;
	(void)lock_call_keys(l, l->scripts->status, 2, argv, 0, &rd);
	/* A semaphore asked about without --limit: its limit is stored with
	 * it, so ask again as what it is. */
	if (l->fail.type_clash == EXIT_USAGE && l->spec.mode == LOCK_MUTEX &&
	    strstr(l->fail.text, "is a semaphore") != NULL) {
		lock_round_free(l, &rd);
		l->fail.type_clash = 0;
		l->spec.mode = LOCK_SEMAPHORE;
		l->scripts = &scripts_semaphore;
		(void)lock_call_keys(l, l->scripts->status, 2, argv, 0, &rd);
	}
	vs = xcalloc(l->nconns, sizeof(*vs));
	answered = status_views(l, &rd, vs);
	lock_round_free(l, &rd);
	/* A semaphore's snapshot lists its waiters; a mutex's cannot. */
	if (l->spec.mode != LOCK_SEMAPHORE && answered > 0)
		answered -= lock_waiters_read(l, vs);
	st->views = vs;
	st->nviews = l->nconns;
	st->mode = l->spec.mode == LOCK_SEMAPHORE ? "semaphore" : "exclusive";
	for (i = 0; i < l->nconns; i++)
		if (vs[i].error == NULL && vs[i].nholders > 0)
			st->mode = vs[i].mode;
	if (answered < l->quorum)
		return (lock_fail(l, answered));
	lock_state_majority(st, l->quorum);
	return (EXIT_OK);
}

/*
 * Each server's answer to the status script into its view vs[i], or its
 * error.  Returns how many answered.
 */
static size_t
status_views(struct lock *l, const struct lock_round *rd,
    struct lock_view *vs)
{
	size_t	i, answered = 0;
	int	parsed;

	for (i = 0; i < l->nconns; i++) {
		vs[i].display = conn_display(l->conns[i]);
		parsed = -1;
		if (rd->results[i] == CONN_OK &&
		    rd->replies[i]->type == REDIS_REPLY_ARRAY &&
		    (parsed = lock_view_parse(rd->replies[i]->element,
		    rd->replies[i]->elements, l->token, &vs[i])) == 0) {
			answered++;
			continue;
		}
		if (rd->results[i] == CONN_OK)
			(void)lock_unexpected(l, i, "status", rd->replies[i],
			    parsed == -2 ? "token and TTL for each holder" :
			    "array of holders, metadata, count, limit, waiters, "
			    "mode and queue");
		vs[i].error = xstrdup(rd->results[i] == CONN_OK ? l->fail.text :
		    conn_error(l->conns[i]));
	}
	return (answered);
}

/* On how many of the n views token holds. */
static size_t
status_count(const struct lock_view *vs, size_t n, const char *token)
{
	size_t i, j, count = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < vs[i].nholders; j++)
			if (strcmp(vs[i].holders[j].token, token) == 0)
				count++;
	return (count);
}

/* The queue's mode: the first server's that names one other than any. */
static void
status_queue(struct lock_state *st, const struct lock_view *v)
{
	if (st->queue[0] == '\0' || (strcmp(st->queue, "any") == 0 &&
	    v->queue[0] != '\0'))
		(void)snprintf(st->queue, sizeof(st->queue), "%s", v->queue);
}

/* Whether the servers that answered tell different stories. */
static int
status_views_differ(const struct lock_state *st)
{
	const struct lock_view	*vs = st->views;
	size_t			 i, j, first = st->nviews;

	for (i = 0; i < st->nviews; i++) {
		if (vs[i].error != NULL)
			continue;
		if (first == st->nviews) {
			first = i;
			continue;
		}
		if (vs[i].nholders != vs[first].nholders)
			return (1);
		for (j = 0; j < vs[i].nholders; j++)
			if (status_count(&vs[first], 1,
			    vs[i].holders[j].token) == 0)
				return (1);
	}
	return (0);
}

/*
 * The majority's view of st->views: the holders whose token a quorum of
 * the servers sees (none when free; with one server, whoever holds it
 * there), the number of waiters that a quorum sees at least, the queue's
 * mode, the limit, the holders beyond those listed, and whether the
 * servers disagree.
 */
void
lock_state_majority(struct lock_state *st, size_t quorum)
{
	const struct lock_view	*vs = st->views;
	struct lock_holder	*h;
	size_t			 i, j, k, above;

	for (i = 0; i < st->nviews; i++) {
		for (j = 0; j < vs[i].nholders; j++) {
			h = &vs[i].holders[j];
			for (k = 0; k < st->nholders; k++)
				if (strcmp(st->holders[k].token, h->token) == 0)
					break;
			if (k < st->nholders || status_count(&vs[i],
			    st->nviews - i, h->token) < quorum)
				continue;
			st->holders = xreallocarray(st->holders,
			    st->nholders + 1, sizeof(*st->holders));
			status_copy(&st->holders[st->nholders++], h);
		}
		if (vs[i].error != NULL)
			continue;
		if (vs[i].nholding - vs[i].nholders > st->unlisted)
			st->unlisted = vs[i].nholding - vs[i].nholders;
		/* A value is the majority's if a quorum sees as much. */
		for (k = 0, above = 0; k < st->nviews; k++)
			above += vs[k].error == NULL &&
			    vs[k].waiting >= vs[i].waiting;
		if (above >= quorum && vs[i].waiting > st->waiting)
			st->waiting = vs[i].waiting;
		if (vs[i].limit > st->limit)
			st->limit = vs[i].limit;
		status_queue(st, &vs[i]);
	}
	/* The waiters as listed by a server that sees as many as that. */
	for (i = 0; i < st->nviews && st->waiting > 0; i++)
		if (vs[i].error == NULL && vs[i].waiting >= st->waiting) {
			status_copy_waiters(st, &vs[i]);
			break;
		}
	st->disagree = status_views_differ(st);
}

static void
status_copy_waiters(struct lock_state *st, const struct lock_view *v)
{
	size_t i;

	st->waiters = xcalloc(v->nwaiters, sizeof(*st->waiters));
	for (i = 0; i < v->nwaiters; i++) {
		st->waiters[i] = v->waiters[i];
		if (v->waiters[i].host != NULL)
			st->waiters[i].host = xstrdup(v->waiters[i].host);
	}
	st->nwaiters = v->nwaiters;
}

void
lock_holders_free(struct lock_holder *hs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(hs[i].token);
		free(hs[i].host);
		free(hs[i].command);
	}
	free(hs);
}

void
lock_state_free(struct lock_state *st)
{
	size_t i;

	lock_holders_free(st->holders, st->nholders);
	lock_waiters_free(st->waiters, st->nwaiters);
	for (i = 0; i < st->nviews; i++) {
		lock_holders_free(st->views[i].holders,
		    st->views[i].nholders);
		lock_waiters_free(st->views[i].waiters,
		    st->views[i].nwaiters);
		free(st->views[i].error);
	}
	free(st->views);
	memset(st, 0, sizeof(*st));
}
