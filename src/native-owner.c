/* SPDX-License-Identifier: MIT */
/*
 * The owner-checked steps of the scripts played with native commands
 * (scripts-native.c): a conditional delete (DELIFEQ, DELEX IFEQ, else
 * WATCH and MULTI), the metadata's delete, a waiter's wake-up, and the
 * history's entries, as scripts-history.h writes them.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "native-impl.h"

static int	 nat_del_watched(struct nat *, int, const char *, size_t);
static const char *nat_el(const redisReply *, size_t, size_t *);
static void	 nat_history_add(struct nat *, const char *, const char *const *,
		     const size_t *);
static int	 nat_clash(struct nat *);


/*----- owner-checked steps -----*/

/* Under WATCH of key k: does it hold the token tok?  1 yes, 0 no, -1. */
int
nat_watch_holds(struct nat *n, int k, const char *tok, size_t len)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	int		 holds;

	cmd_s(&m, "WATCH");
	cmd_key(&m, n, k);
	if (nat_do(n, &m) == -1 || (r = nat_get(n, k)) == NULL)
		return (-1);
	holds = nat_same(r, tok, len);
	freeReplyObject(r);
	if (!holds && nat_word(n, "UNWATCH") == -1)
		return (-1);
	return (holds);
}

/* EXEC of a transaction begun with MULTI: 1 ran, 0 a WATCHed key moved. */
int
nat_exec(struct nat *n)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	int		 ran;

	cmd_s(&m, "EXEC");
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	ran = r->type == REDIS_REPLY_ARRAY;
	freeReplyObject(r);
	return (ran);
}

/* DEL key k if it holds tok: WATCH, GET, MULTI, DEL, EXEC. */
static int
nat_del_watched(struct nat *n, int k, const char *tok, size_t len)
{
	struct nat_cmd	m = { .n = 0 };
	int		holds, i;

	for (i = 0; i < NAT_TRIES; i++) {
		if ((holds = nat_watch_holds(n, k, tok, len)) != 1)
			return (holds);
		cmd_s(&m, "DEL");
		cmd_key(&m, n, k);
		if (nat_word(n, "MULTI") == -1 || nat_do(n, &m) == -1)
			return (-1);
		m.n = 0;
		if ((holds = nat_exec(n)) != 0)
			return (holds);
	}
	return (0);
}

/*
 * Delete key k if it holds tok: 1 deleted, 0 not (gone, or another's),
 * -1 after a failure.  The server's own conditional delete where it has
 * one, found out once.
 */
int
nat_del_if(struct nat *n, int k, const char *tok, size_t len)
{
	static const struct {
		const char	*cmd, *ifeq;
		int		 lack;
	} dels[] = {
		{ "DELIFEQ", NULL, CONN_LACKS_DELIFEQ },
		{ "DELEX", "IFEQ", CONN_LACKS_DELEX },
	};
	struct nat_cmd	 m;
	redisReply	*r;
	size_t		 i;
	long long	 v;

	for (i = 0; i < sizeof(dels) / sizeof(dels[0]); i++) {
		if (conn_lacks(n->c, dels[i].lack))
			continue;
		memset(&m, 0, sizeof(m));
		cmd_s(&m, dels[i].cmd);
		cmd_key(&m, n, k);
		if (dels[i].ifeq != NULL)
			cmd_s(&m, dels[i].ifeq);
		m.secret = m.n;
		cmd_b(&m, tok, len);
		if ((r = nat_send(n, &m, 1)) != NULL) {
			v = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
			freeReplyObject(r);
			return (v == 1);
		}
		if (n->failed)
			return (-1);
		if (!nat_lacked(n, dels[i].lack)) {
			n->failed = CONN_SERVER_ERROR;
			return (-1);
		}
	}
	return (nat_del_watched(n, k, tok, len));
}

/* What a failed owner-checked step found: 0 the key is gone, -1 another's. */
int
nat_who_now(struct nat *n)
{
	redisReply	*r;
	int		 gone;

	if ((r = nat_get(n, LK_LOCK)) == NULL)
		return (0);
	gone = r->type == REDIS_REPLY_NIL;
	freeReplyObject(r);
	return (gone ? 0 : -1);
}

/* The metadata goes with its holder, if it still is tok's. */
void
nat_meta_drop(struct nat *n, const char *tok, size_t len)
{
	struct nat_cmd	m = { .n = 0 };
	redisReply	*r;
	int		holds;

	cmd_s(&m, "WATCH");
	cmd_key(&m, n, LK_META);
	if (nat_do(n, &m) == -1)
		return;
	m.n = 0;
	m.is_token = 1;
	cmd_s(&m, "HGET");
	cmd_key(&m, n, LK_META);
	cmd_s(&m, "token");
	if ((r = nat_send(n, &m, 0)) == NULL)
		return;
	holds = nat_same(r, tok, len);
	freeReplyObject(r);
	if (!holds) {
		(void)nat_word(n, "UNWATCH");
		return;
	}
	m.n = 0;
	cmd_s(&m, "DEL");
	cmd_key(&m, n, LK_META);
	if (nat_word(n, "MULTI") == 0 && nat_do(n, &m) == 0)
		(void)nat_exec(n);
}

/* Wake a waiter, as LUA_WAKE does for the queue of --queue any. */
void
nat_wake(struct nat *n)
{
	struct nat_cmd m = { .n = 0 };

	cmd_s(&m, "ZADD");
	cmd_key(&m, n, LK_WAKE);
	cmd_s(&m, "0");
	cmd_s(&m, "go");
	if (nat_do(n, &m) == 0)
		(void)nat_key_int(n, "PEXPIRE", LK_WAKE, NAT_LINGER_MS);
}

/*----- history (scripts-history.h) -----*/

/* XADD of one entry: its ten values, in the fields' order. */
static void
nat_history_add(struct nat *n, const char *size, const char *const *v,
    const size_t *l)
{
	static const char *const fields[] = { "o", "x", "h", "p", "c", "r",
	    "q", "s", "e", "f" };
	struct nat_cmd	m = { .n = 0 };
	size_t		i;

	cmd_s(&m, "XADD");
	cmd_key(&m, n, LK_HISTORY);
	cmd_s(&m, "MAXLEN");
	cmd_s(&m, size);
	cmd_s(&m, "*");
	for (i = 0; i < 10; i++) {
		cmd_s(&m, fields[i]);
		cmd_b(&m, v[i], l[i]);
	}
	if (nat_do(n, &m) == 0)
		(void)nat_key_int(n, "PEXPIRE", LK_HISTORY, NAT_KEEP_MS);
}

/* The entry sent whole in ARGV from `at` on (the size first). */
void
nat_history_argv(struct nat *n, int at)
{
	const char	*v[10];
	size_t		 l[10];
	int		 i;

	if (atoll(nat_arg(n, at, NULL)) <= 0)
		return;
	for (i = 0; i < 10; i++)
		v[i] = nat_arg(n, at + 1 + i, &l[i]);
	nat_history_add(n, nat_arg(n, at, NULL), v, l);
}

/* The holder's metadata as history_holder() reads it (HMGET). */
redisReply *
nat_holder_meta(struct nat *n)
{
	static const char *const f[] = { "token", "host", "pid", "command",
	    "since", "fence", "order" };
	struct nat_cmd	m = { .n = 0 };
	size_t		i;

	cmd_s(&m, "HMGET");
	cmd_key(&m, n, LK_META);
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		cmd_s(&m, f[i]);
	return (nat_send(n, &m, 0));
}

static const char *
nat_el(const redisReply *r, size_t i, size_t *len)
{
	const redisReply *e = r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    i < r->elements ? r->element[i] : NULL;

	*len = e != NULL && e->type == REDIS_REPLY_STRING ? e->len : 0;
	return (*len > 0 ? e->str : "");
}

/* history_ended(): the holder m's entry, with outcome o and its end. */
void
nat_history_ended(struct nat *n, const char *size, const redisReply *m,
    const char *o, const char *ended)
{
	/* o x h p c r q s e f, from HMGET token host pid command since
	 * fence order */
	static const int from[10] = { -1, -1, 1, 2, 3, 6, -1, 4, -1, 5 };
	const char	*v[10];
	size_t		 l[10];
	int		 i;

	for (i = 0; i < 10; i++)
		v[i] = from[i] >= 0 ? nat_el(m, (size_t)from[i], &l[i]) :
		    (l[i] = 0, "");
	v[0] = o;
	l[0] = strlen(o);
	v[8] = ended;
	l[8] = strlen(ended);
	nat_history_add(n, size, v, l);
}

/* The key's type, said as the scripts' clash() does: REDLOCK-TYPE t. */
static int
nat_clash(struct nat *n)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	char		 type[32] = "";

	n->failed = 0;
	cmd_s(&m, "TYPE");
	cmd_key(&m, n, LK_LOCK);
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_STATUS)
		(void)snprintf(type, sizeof(type), "%s", r->str);
	freeReplyObject(r);
	conn_set_error(n->c, CONN_SERVER_ERROR, "%s: REDLOCK-TYPE %s",
	    conn_display(n->c), type);
	n->failed = CONN_SERVER_ERROR;
	return (-1);
}

/* GET of the lock; a key of another type is a clash. */
redisReply *
nat_get_lock(struct nat *n)
{
	redisReply *r = nat_get(n, LK_LOCK);

	if (r == NULL && n->failed == CONN_SERVER_ERROR &&
	    strstr(conn_error(n->c), "WRONGTYPE") != NULL)
		(void)nat_clash(n);
	return (r);
}

/*
 * raise_fence (LUA_RAISE_FENCE_BODY): lift the counter to ARGV[2] while
 * the token holds the lock, under WATCH of both: the counter must never
 * be set lower than another holder's INCR made it.
 */
int
nat_raise_fence(struct nat *n)
{
	struct nat_cmd	 m = { .n = 0 }, set = { .n = 0 };
	redisReply	*r;
	size_t		 len;
	const char	*tok = nat_arg(n, 0, &len), *fence = nat_arg(n, 1, NULL);
	char		 keep[32];
	long long	 now = 0;
	int		 held;

	cmd_s(&m, "WATCH");
	cmd_key(&m, n, LK_FENCE);
	if (nat_do(n, &m) == -1 ||
	    (held = nat_watch_holds(n, LK_LOCK, tok, len)) == -1)
		return (-1);
	if (held && (r = nat_get(n, LK_FENCE)) != NULL) {
		now = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
		freeReplyObject(r);
		/* The counter lives a week past any TTL a lock has. */
		(void)snprintf(keep, sizeof(keep), "%lld", NAT_KEEP_MS * 2);
		cmd_s(&set, "SET");
		cmd_key(&set, n, LK_FENCE);
		cmd_s(&set, fence);
		cmd_s(&set, "PX");
		cmd_s(&set, keep);
		m.n = 0;
		cmd_s(&m, "HSET");
		cmd_key(&m, n, LK_META);
		cmd_s(&m, "fence");
		cmd_s(&m, fence);
		if (nat_word(n, "MULTI") == -1 ||
		    (now < atoll(fence) && nat_do(n, &set) == -1) ||
		    nat_do(n, &m) == -1 || (held = nat_exec(n)) == -1)
			return (-1);
	}
	if (n->failed)
		return (-1);
	nat_int(n, held);
	return (0);
}
