/* SPDX-License-Identifier: MIT */
/*
 * The reading and the operator's scripts played with native commands
 * (scripts-native.c): status, list and history as the scripts answer
 * them, and release --force.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "native-impl.h"

static void	 nat_force_tell(struct nat *, const redisReply *);
static int	 nat_snapshot(struct nat *, const redisReply *, int, int);

/* One mutex's snapshot, as mutex_snapshot() and the list's entry. */
static int
nat_snapshot(struct nat *n, const redisReply *cur, int k, int meta)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*ttl, *h;
	size_t		 i;

	cmd_s(&m, "PTTL");
	cmd_key(&m, n, k);
	if ((ttl = nat_send(n, &m, 0)) == NULL)
		return (-1);
	m.n = 0;
	cmd_s(&m, "HGETALL");
	cmd_key(&m, n, meta);
	if ((h = nat_send(n, &m, 0)) == NULL) {
		freeReplyObject(ttl);
		return (-1);
	}
	if (cur->type == REDIS_REPLY_STRING) {
		nat_arr(n, 1);
		nat_arr(n, 2);
		nat_str(n, cur->str, cur->len);
		nat_int(n, ttl->type == REDIS_REPLY_INTEGER ? ttl->integer : -1);
	} else
		nat_arr(n, 0);
	nat_arr(n, h->type == REDIS_REPLY_ARRAY ? h->elements : 0);
	for (i = 0; h->type == REDIS_REPLY_ARRAY && i < h->elements; i++)
		nat_str_of(n, h->element[i]);
	nat_int(n, cur->type == REDIS_REPLY_STRING);
	nat_int(n, 0);		/* no limit */
	freeReplyObject(ttl);
	freeReplyObject(h);
	return (0);
}

/*
 * status (lua_mutex_status): {holders, metadata, count, 0, waiting,
 * 'exclusive', queue mode, waiters}; native waiters are not listed.
 */
int
nat_status(struct nat *n)
{
	redisReply	*cur;
	int		 rc;

	if ((cur = nat_get_lock(n)) == NULL)
		return (-1);
	nat_arr(n, 8);
	rc = nat_snapshot(n, cur, LK_LOCK, LK_META);
	freeReplyObject(cur);
	nat_int(n, 0);
	nat_str(n, "exclusive", 9);
	nat_str(n, "any", 3);
	nat_arr(n, 0);
	return (rc);
}

/*
 * A mutex's waiters (lua_mutex_waiters): {0, {}}, since a native waiter
 * is never noted.
 */
int
nat_waiters(struct nat *n)
{
	nat_arr(n, 2);
	nat_int(n, 0);
	nat_arr(n, 0);
	return (0);
}

/* force_tell(): the removed holder's note, where its run listens. */
static void
nat_force_tell(struct nat *n, const redisReply *cur)
{
	struct nat_cmd	m = { .n = 0 };
	char		*key, *note;
	size_t		plen;
	const char	*prefix = nat_arg(n, 1, &plen);

	key = xmalloc(plen + cur->len + 1);
	memcpy(key, prefix, plen);
	memcpy(key + plen, cur->str, cur->len);
	key[plen + cur->len] = '\0';
	note = xasprintf("forced %s %s", nat_arg(n, 3, NULL),
	    nat_arg(n, 2, NULL));
	/* The key ends with the holder's token: -v -v shortens it. */
	m.secret = 1;
	m.secret_from = plen;
	cmd_s(&m, "ZADD");
	cmd_b(&m, key, plen + cur->len);
	cmd_s(&m, "-1");
	cmd_s(&m, note);
	if (nat_do(n, &m) == 0) {
		m.n = 0;
		cmd_s(&m, "PEXPIRE");
		cmd_b(&m, key, plen + cur->len);
		cmd_s(&m, "5000");
		(void)nat_do(n, &m);
	}
	free(key);
	free(note);
}

/*
 * force (LUA_FORCE_BODY for a mutex): remove whoever holds it, tell it,
 * write its history entry, wake a waiter; {{token, host, pid, command,
 * since}} or {}.  ARGV: wake prefix, cancel prefix, host, pid, size.
 */
int
nat_force(struct nat *n)
{
	redisReply	*cur, *meta;
	char		 now[32];
	int		 done, mine;
	size_t		 i;

	if ((cur = nat_get_lock(n)) == NULL)
		return (-1);
	if (cur->type != REDIS_REPLY_STRING) {
		freeReplyObject(cur);
		nat_arr(n, 0);
		return (0);
	}
	if ((meta = nat_holder_meta(n)) == NULL ||
	    (done = nat_del_if(n, LK_LOCK, cur->str, cur->len)) == -1) {
		freeReplyObject(cur);
		if (meta != NULL)
			freeReplyObject(meta);
		return (-1);
	}
	mine = meta->type == REDIS_REPLY_ARRAY && meta->elements >= 5 &&
	    nat_same(meta->element[0], cur->str, cur->len);
	if (done) {
		nat_meta_drop(n, cur->str, cur->len);
		(void)snprintf(now, sizeof(now), "%lld",
		    (long long)clock_wall_ms());
		if (mine && atoll(nat_arg(n, 4, NULL)) > 0)
			nat_history_ended(n, nat_arg(n, 4, NULL), meta,
			    "forced", now);
		nat_force_tell(n, cur);
		nat_wake(n);
	}
	nat_arr(n, done ? 1 : 0);
	if (done) {
		nat_arr(n, 5);
		nat_str(n, cur->str, cur->len);
		for (i = 1; i <= 4; i++)
			nat_str_of(n, mine ? meta->element[i] : NULL);
	}
	freeReplyObject(cur);
	freeReplyObject(meta);
	return (n->failed ? -1 : 0);
}

/*
 * list (lua_list): {0, {key, holders, metadata, count, limit, waiting,
 * mode, queue mode, waiters}, ...} for each candidate that is a held
 * mutex (its metadata exists).  KEYS: six names a candidate.
 */
int
nat_list(struct nat *n)
{
	struct nat_cmd	 m;
	redisReply	*r, **cur;
	size_t		 nfound = 0, i, len;
	int		*at, a, rc = 0, is_lock;
	const char	*k;

	cur = xcalloc((size_t)n->nkeys / 6 + 1, sizeof(*cur));
	at = xcalloc((size_t)n->nkeys / 6 + 1, sizeof(*at));
	for (a = 0; a + 5 < n->nkeys && !n->failed; a += 6) {
		memset(&m, 0, sizeof(m));
		cmd_s(&m, "EXISTS");
		cmd_key(&m, n, a + 1);
		if ((r = nat_send(n, &m, 0)) == NULL)
			break;
		is_lock = r->type == REDIS_REPLY_INTEGER && r->integer > 0;
		freeReplyObject(r);
		m.n = 0;
		m.is_token = 1;
		cmd_s(&m, "GET");
		cmd_key(&m, n, a);
		/* soft: a semaphore's zset (WRONGTYPE) is not listed here */
		if (!is_lock || (r = nat_send(n, &m, 1)) == NULL)
			continue;
		if (r->type == REDIS_REPLY_STRING) {
			cur[nfound] = r;
			at[nfound++] = a;
		} else
			freeReplyObject(r);
	}
	nat_arr(n, 1 + nfound);
	nat_int(n, 0);
	for (i = 0; i < nfound && rc == 0; i++) {
		k = nat_key(n, at[i], &len);
		nat_arr(n, 9);
		nat_str(n, k, len);
		rc = nat_snapshot(n, cur[i], at[i], at[i] + 1);
		nat_int(n, 0);
		nat_str(n, "exclusive", 9);
		nat_str(n, "any", 3);
		nat_arr(n, 0);
	}
	for (i = 0; i < nfound; i++)
		freeReplyObject(cur[i]);
	free(cur);
	free(at);
	return (n->failed ? -1 : rc);
}

/* leave: a native waiter was never noted; nothing to take back. */
int
nat_leave(struct nat *n)
{
	nat_int(n, 1);
	return (0);
}

/* history_note: ARGV[2] the size, ARGV[3..12] the entry. */
int
nat_history_note(struct nat *n)
{
	nat_history_argv(n, 1);
	nat_int(n, 1);
	return (n->failed ? -1 : 0);
}

/* history_read: XREVRANGE's own reply, passed on as it is. */
int
nat_history_read(struct nat *n)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	size_t		 i, j;

	cmd_s(&m, "XREVRANGE");
	cmd_key(&m, n, LK_HISTORY);
	cmd_s(&m, "+");
	cmd_s(&m, "-");
	cmd_s(&m, "COUNT");
	cmd_arg(&m, n, 0);
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	nat_arr(n, r->type == REDIS_REPLY_ARRAY ? r->elements : 0);
	for (i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
		const redisReply *e = r->element[i], *f;

		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[1]->type != REDIS_REPLY_ARRAY) {
			nat_arr(n, 0);
			continue;
		}
		f = e->element[1];
		nat_arr(n, 2);
		nat_str_of(n, e->element[0]);
		nat_arr(n, f->elements);
		for (j = 0; j < f->elements; j++)
			nat_str_of(n, f->element[j]);
	}
	freeReplyObject(r);
	return (0);
}
