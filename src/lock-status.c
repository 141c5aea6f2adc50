/* SPDX-License-Identifier: MIT */
/*
 * status: who holds a lock (or the slots of a semaphore), from one atomic
 * snapshot taken by the status script.
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
static int	 status_parse(struct lock *, size_t, const redisReply *,
		     struct lock_view *);
static void	 status_copy(struct lock_holder *, const struct lock_holder *);
static void	 lock_holders_free(struct lock_holder *, size_t);
static void	 status_queue(struct lock_state *, const redisReply *);

/*
 * The queue, after the holders: how many wait (the most any server
 * counts) and in which mode (the first server's that names one).
 */
static void
status_queue(struct lock_state *st, const redisReply *r)
{
	const redisReply *mode;

	if (r->elements < 5 || r->element[3]->type != REDIS_REPLY_INTEGER ||
	    r->element[4]->type != REDIS_REPLY_STRING)
		return;
	if (r->element[3]->integer > (long long)st->waiting)
		st->waiting = (size_t)r->element[3]->integer;
	mode = r->element[4];
	if ((st->queue[0] == '\0' || strcmp(st->queue, "any") == 0) &&
	    mode->len < sizeof(st->queue))
		log_sanitize(st->queue, sizeof(st->queue), mode->str,
		    mode->len);
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
			h->command = status_str(v);
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

/* Parse one server's status reply into its holders. */
static int
status_parse(struct lock *l, size_t idx, const redisReply *r,
    struct lock_view *v)
{
	const redisReply	*list, *e;
	size_t			 i;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[1]->type != REDIS_REPLY_ARRAY ||
	    r->element[2]->type != REDIS_REPLY_INTEGER ||
	    r->element[2]->integer < (long long)r->element[0]->elements)
		return (lock_unexpected(l, idx, "status", r,
		    "array of holders, metadata and count"));
	list = r->element[0];
	for (i = 0; i < list->elements; i++) {
		e = list->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[1]->type != REDIS_REPLY_INTEGER)
			return (lock_unexpected(l, idx, "status", r,
			    "token and TTL for each holder"));
	}
	v->holders = xcalloc(list->elements, sizeof(*v->holders));
	for (i = 0; i < list->elements; i++) {
		struct lock_holder *h = &v->holders[i];

		e = list->element[i];
		h->fence = -1;
		h->pid = -1;
		h->token = status_str(e->element[0]);
		h->ttl_ms = e->element[1]->integer;
		h->ours = l->token != NULL && strcmp(h->token, l->token) == 0;
		status_meta(h, r->element[1], l->spec.mode == LOCK_SEMAPHORE);
	}
	v->nholders = list->elements;
	v->nholding = (size_t)r->element[2]->integer;
	return (EXIT_OK);
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
	size_t			 i, j, k, m, count, answered = 0;
	char			 listed[32];
	struct lock_holder	*hs, *h;

	memset(st, 0, sizeof(*st));
	(void)snprintf(listed, sizeof(listed), "%d", LOCK_STATUS_LISTED);
	argv[0] = l->limit_arg;
	argv[1] = listed;
	(void)lock_call(l, l->scripts->status, LK_LEASES + 1, 2, argv, NULL, 0,
	    &rd);
	vs = xcalloc(l->nconns, sizeof(*vs));
	for (i = 0; i < l->nconns; i++) {
		vs[i].display = conn_display(l->conns[i]);
		if (rd.results[i] == CONN_OK &&
		    status_parse(l, i, rd.replies[i], &vs[i]) == EXIT_OK) {
			answered++;
			status_queue(st, rd.replies[i]);
			if (vs[i].nholding - vs[i].nholders > st->unlisted)
				st->unlisted = vs[i].nholding - vs[i].nholders;
			continue;
		}
		vs[i].error = xstrdup(rd.results[i] == CONN_OK ? l->fail.text :
		    conn_error(l->conns[i]));
	}
	lock_round_free(l, &rd);
	st->views = vs;
	st->nviews = l->nconns;
	if (answered < l->quorum)
		return (lock_fail(l, answered));
	/* A holder counts where a majority sees the same token. */
	hs = NULL;
	m = 0;
	for (i = 0; i < l->nconns; i++) {
		for (j = 0; j < vs[i].nholders; j++) {
			h = &vs[i].holders[j];
			for (k = 0; k < m; k++)
				if (strcmp(hs[k].token, h->token) == 0)
					break;
			if (k < m)
				continue;
			count = 0;
			for (k = i; k < l->nconns; k++) {
				size_t x;

				for (x = 0; x < vs[k].nholders; x++)
					if (strcmp(vs[k].holders[x].token,
					    h->token) == 0)
						count++;
			}
			if (count < l->quorum)
				continue;
			hs = xreallocarray(hs, m + 1, sizeof(*hs));
			status_copy(&hs[m++], h);
		}
	}
	st->holders = hs;
	st->nholders = m;
	return (EXIT_OK);
}

static void
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
	for (i = 0; i < st->nviews; i++) {
		lock_holders_free(st->views[i].holders,
		    st->views[i].nholders);
		free(st->views[i].error);
	}
	free(st->views);
	memset(st, 0, sizeof(*st));
}
