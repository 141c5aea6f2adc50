/* SPDX-License-Identifier: MIT */
/*
 * The exclusive lock's scripts, played with native commands on a server
 * that refuses scripts: an ACL without @scripting (the workaround for
 * CVE-2025-49844), Valkey 9 built without Lua.  Each play answers as its
 * script would (built as RESP and parsed by hiredis), so the lock layer
 * above it, quorum, fences and validity included, does not know.
 * script_call_many() (lock-scripts.c) calls native_call() for a server
 * once it refused a script (conn_lacks()), which costs a server with
 * scripts nothing.
 *
 * What a script did in one atomic step takes several commands here; each
 * step is safe on its own:
 *   - the take is SET NX PX.  The fence's INCR follows it, and
 *     lock_keep() drops a take whose validity ran out meanwhile, so a
 *     holder's INCR came while it held the lock, after every earlier
 *     holder's: fences still only go up.  A counter that does not exist
 *     starts above the clock in µs (SET NX first; the client's clock, as
 *     a counter restarts only 7 days after its name's last use);
 *   - release, give-back and force are owner-checked deletes: DELIFEQ
 *     (Valkey 9), DELEX IFEQ (Redis 8.4), else WATCH, GET, MULTI, DEL,
 *     EXEC; extend is SET IFEQ PX (Valkey 8.1, Redis 8.4), else the same
 *     with PEXPIRE; a quorum's fence lift and the metadata's delete are
 *     WATCHed;
 *   - the metadata is written after the take (status shows it once its
 *     token field matches the lock), a history entry after the release.
 * A waiter is woken as with scripts (the wake key), but is not listed by
 * status.  Queues, -s and --limit need scripts: refused (exit 69), with
 * the server's own words.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "native-impl.h"

struct nat_script {
	const char	*name;		/* a prefix, for the modes refused */
	int		(*play)(struct nat *);
	const char	*needs;		/* refused: what needs scripts */
};

static int	 nat_acquire(struct nat *);
static int	 nat_release(struct nat *);
static int	 nat_give_back(struct nat *);
static int	 nat_extend(struct nat *);
static long long nat_fence(struct nat *, long long);
static void	 nat_set_meta(struct nat *, long long, long long);
static int	 nat_taken(struct nat *, long long);

static const struct nat_script nat_scripts[] = {
	{ "MUTEX_ACQUIRE", nat_acquire, NULL },
	{ "MUTEX_RELEASE", nat_release, NULL },
	{ "MUTEX_GIVE_BACK", nat_give_back, NULL },
	{ "MUTEX_EXTEND", nat_extend, NULL },
	{ "MUTEX_STATUS", nat_status, NULL },
	{ "MUTEX_WAITERS", nat_waiters, NULL },
	{ "MUTEX_RAISE_FENCE", nat_raise_fence, NULL },
	{ "MUTEX_FORCE", nat_force, NULL },
	{ "LIST", nat_list, NULL },
	{ "LEAVE", nat_leave, NULL },
	{ "HISTORY_NOTE", nat_history_note, NULL },
	{ "HISTORY_READ", nat_history_read, NULL },
	{ "DONE", NULL, "--skip-outdated" },
	{ "SEMAPHORE_", NULL, "--limit" },
	{ "SHARED_", NULL, "-s" },
	{ NULL, NULL, NULL }
};

/*----- the plays -----*/

/*
 * A new counter starts above the clock in µs, then INCR: the fence of a
 * take (lock_keep() checks the validity once the reply is in).
 */
static long long
nat_fence(struct nat *n, long long ttl)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	char		 start[32], keep[32];
	long long	 f = -1;

	(void)snprintf(start, sizeof(start), "%lld",
	    (long long)clock_wall_ms() * 1000);
	(void)snprintf(keep, sizeof(keep), "%lld", ttl + NAT_KEEP_MS);
	cmd_s(&m, "SET");
	cmd_key(&m, n, LK_FENCE);
	cmd_s(&m, start);
	cmd_s(&m, "NX");
	cmd_s(&m, "PX");
	cmd_s(&m, keep);
	if (nat_do(n, &m) == -1)
		return (-1);
	m.n = 0;
	cmd_s(&m, "INCR");
	cmd_key(&m, n, LK_FENCE);
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_INTEGER)
		f = r->integer;
	freeReplyObject(r);
	if (f < 1)
		n->failed = CONN_PROTOCOL;
	if (f < 1 || nat_key_int(n, "PEXPIRE", LK_FENCE, ttl + NAT_KEEP_MS))
		return (-1);
	return (f);
}

/* set_meta(): the holder's metadata, from acquire's ARGV. */
static void
nat_set_meta(struct nat *n, long long f, long long ttl)
{
	struct nat_cmd	m = { .n = 0 };
	char		fence[32], since[32];
	const char	*listens = nat_arg(n, 14, NULL);

	(void)snprintf(fence, sizeof(fence), "%lld", f);
	if (*nat_arg(n, 5, NULL) != '\0')
		(void)snprintf(since, sizeof(since), "%s", nat_arg(n, 5, NULL));
	else
		(void)snprintf(since, sizeof(since), "%lld",
		    (long long)clock_wall_ms());
	cmd_s(&m, "HSET");
	cmd_key(&m, n, LK_META);
	cmd_s(&m, "token");
	cmd_token(&m, n);
	cmd_s(&m, "fence");
	cmd_s(&m, fence);
	cmd_s(&m, "host");
	cmd_arg(&m, n, 2);
	cmd_s(&m, "pid");
	cmd_arg(&m, n, 3);
	cmd_s(&m, "command");
	cmd_arg(&m, n, 4);
	cmd_s(&m, "since");
	cmd_s(&m, since);
	cmd_s(&m, "ttl");
	cmd_arg(&m, n, 1);
	cmd_s(&m, "listens");
	cmd_s(&m, *listens != '\0' ? listens : "0");
	cmd_s(&m, "queue");
	cmd_s(&m, "any");
	cmd_s(&m, "order");
	cmd_arg(&m, n, 11);
	if (nat_do(n, &m) == 0)
		(void)nat_key_int(n, "PEXPIRE", LK_META, ttl +
		    (strcmp(listens, "m") == 0 ? NAT_KEEP_MS : NAT_LINGER_MS));
}

/* The busy reply: {0, ms left, holder's token, host, pid, command, since}. */
static int
nat_busy(struct nat *n, const redisReply *cur)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*ttl, *meta;
	int		 mine;
	size_t		 i;

	cmd_s(&m, "PTTL");
	cmd_key(&m, n, LK_LOCK);
	if ((ttl = nat_send(n, &m, 0)) == NULL)
		return (-1);
	if ((meta = nat_holder_meta(n)) == NULL) {
		freeReplyObject(ttl);
		return (-1);
	}
	mine = meta->type == REDIS_REPLY_ARRAY && meta->elements >= 5 &&
	    cur->type == REDIS_REPLY_STRING &&
	    nat_same(meta->element[0], cur->str, cur->len);
	nat_arr(n, 7);
	nat_int(n, 0);
	nat_int(n, ttl->type == REDIS_REPLY_INTEGER && ttl->integer > 0 ?
	    ttl->integer : 0);
	nat_str_of(n, cur);
	for (i = 1; i <= 4; i++)
		nat_str_of(n, mine ? meta->element[i] : NULL);
	freeReplyObject(ttl);
	freeReplyObject(meta);
	return (0);
}

/* Ours already (a retry after a lost reply): its TTL anew, its fence. */
static int
nat_mine(struct nat *n, long long ttl)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	long long	 f;

	if (nat_key_int(n, "PEXPIRE", LK_LOCK, ttl) == -1)
		return (-1);
	cmd_s(&m, "HGET");
	cmd_key(&m, n, LK_META);
	cmd_s(&m, "fence");
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	f = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
	freeReplyObject(r);
	/* Its metadata never written (the take's reply was what got lost):
	 * a fence of its own now, never 0. */
	if (f < 1)
		return (nat_taken(n, ttl));
	nat_arr(n, 2);
	nat_int(n, 1);
	nat_int(n, f);
	return (0);
}

/* The lock is ours here: its fence and metadata, and {1, fence}. */
static int
nat_taken(struct nat *n, long long ttl)
{
	long long f;

	if ((f = nat_fence(n, ttl)) == -1)
		return (-1);
	nat_set_meta(n, f, ttl);
	nat_arr(n, 2);
	nat_int(n, 1);
	nat_int(n, f);
	return (n->failed ? -1 : 0);
}

/* A mode that needs scripts: refused, in the server's own words. */
static int
nat_refuse(struct nat *n, const char *needs)
{
	conn_set_error(n->c, CONN_NO_SCRIPTS, "%s: the server refuses "
	    "scripts, which %s needs (an exclusive lock without --queue "
	    "works without them): %s", conn_display(n->c), needs,
	    conn_lack_why(n->c));
	n->failed = CONN_NO_SCRIPTS;
	return (-1);
}

/*
 * acquire (LUA_ACQUIRE_BODY's reply): SET NX PX; then the fence and the
 * metadata.  A queue's waiter (a lease) or mode needs scripts.
 */
static int
nat_acquire(struct nat *n)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	long long	 ttl = atoll(nat_arg(n, 1, NULL));
	const char	*queue = nat_arg(n, 10, NULL);
	int		 rc;
	char		 needs[32];

	if (atoll(nat_arg(n, 7, NULL)) > 0 ||
	    (*queue != '\0' && strcmp(queue, "any") != 0)) {
		(void)snprintf(needs, sizeof(needs), "--queue %s", queue);
		return (nat_refuse(n, needs));
	}
	cmd_s(&m, "SET");
	cmd_key(&m, n, LK_LOCK);
	cmd_token(&m, n);
	cmd_s(&m, "NX");
	cmd_s(&m, "PX");
	cmd_arg(&m, n, 1);
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_STATUS) {
		freeReplyObject(r);
		return (nat_taken(n, ttl));
	}
	freeReplyObject(r);
	if ((r = nat_get(n, LK_LOCK)) == NULL)
		return (-1);
	if (nat_same(r, nat_arg(n, 0, NULL), n->lens[n->nkeys]))
		rc = nat_mine(n, ttl);
	else
		rc = nat_busy(n, r);
	freeReplyObject(r);
	return (rc);
}

/* release, give_back: the owner-checked delete's answer, 1, 0 or -1. */
static int
nat_drop(struct nat *n)
{
	size_t		 len;
	const char	*tok = nat_arg(n, 0, &len);
	int		 done;

	if ((done = nat_del_if(n, LK_LOCK, tok, len)) == -1)
		return (-2);
	if (done == 1)
		nat_meta_drop(n, tok, len);
	return (done == 1 ? 1 : nat_who_now(n));
}

/*
 * release (LUA_RELEASE_BODY, history_release): ARGV[4] the history's
 * size, ARGV[5..14] the entry.  A run's entry (a host) is written
 * whatever the delete finds; the release verb's, from the holder's
 * metadata, only if the token held.
 */
static int
nat_release(struct nat *n)
{
	const char	*size = nat_arg(n, 3, NULL);
	int		 keep = atoll(size) > 0, is_run = *nat_arg(n, 6, NULL);
	redisReply	*meta = NULL;
	int		 done;

	if (keep && !is_run && (meta = nat_holder_meta(n)) == NULL)
		return (-1);
	done = nat_drop(n);
	if (done != -2 && keep && is_run)
		nat_history_argv(n, 3);
	else if (done == 1 && meta != NULL && meta->type ==
	    REDIS_REPLY_ARRAY && meta->elements > 0 && nat_same(
	    meta->element[0], nat_arg(n, 0, NULL), n->lens[n->nkeys]))
		nat_history_ended(n, size, meta, nat_arg(n, 4, NULL),
		    nat_arg(n, 12, NULL));
	if (meta != NULL)
		freeReplyObject(meta);
	if (done == 1)
		nat_wake(n);
	if (done == -2 || n->failed)
		return (-1);
	nat_int(n, done);
	return (0);
}

/* give_back (LUA_GIVE_BACK_BODY): undo a take; wakes nobody. */
static int
nat_give_back(struct nat *n)
{
	int done = nat_drop(n);

	if (done == -2 || n->failed)
		return (-1);
	nat_int(n, done);
	return (0);
}

/* SET IFEQ PX: 1 renewed, 0 not the token's, -1 failed or not known. */
static int
nat_set_ifeq(struct nat *n, long long ttl)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	size_t		 len;
	const char	*tok = nat_arg(n, 0, &len);
	char		 num[32];
	int		 held;

	(void)snprintf(num, sizeof(num), "%lld", ttl);
	cmd_s(&m, "SET");
	cmd_key(&m, n, LK_LOCK);
	cmd_token(&m, n);
	cmd_s(&m, "IFEQ");
	cmd_b(&m, tok, len);
	cmd_s(&m, "PX");
	cmd_s(&m, num);
	if ((r = nat_send(n, &m, 1)) != NULL) {
		held = r->type == REDIS_REPLY_STATUS;
		freeReplyObject(r);
		return (held);
	}
	if (!n->failed && !nat_lacked(n, CONN_LACKS_SET_IFEQ))
		n->failed = CONN_SERVER_ERROR;
	return (-1);
}

/* PEXPIRE of the lock if it holds the token: SET IFEQ, else WATCH. */
static int
nat_renew(struct nat *n, long long ttl)
{
	size_t		 len;
	const char	*tok = nat_arg(n, 0, &len);
	int		 held, i;

	if (!conn_lacks(n->c, CONN_LACKS_SET_IFEQ) &&
	    ((held = nat_set_ifeq(n, ttl)) != -1 || n->failed))
		return (held);
	for (i = 0; i < NAT_TRIES; i++) {
		if ((held = nat_watch_holds(n, LK_LOCK, tok, len)) != 1)
			return (held);
		if (nat_word(n, "MULTI") == -1 ||
		    nat_key_int(n, "PEXPIRE", LK_LOCK, ttl) == -1)
			return (-1);
		if ((held = nat_exec(n)) != 0)
			return (held);
	}
	return (0);
}

/* The TTL extend sets: ARGV[2], or the one it was taken with (0). */
static long long
nat_extend_ttl(struct nat *n)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	long long	 ttl = atoll(nat_arg(n, 1, NULL));

	if (ttl > 0)
		return (ttl);
	cmd_s(&m, "HMGET");
	cmd_key(&m, n, LK_META);
	cmd_s(&m, "token");
	cmd_s(&m, "ttl");
	if ((r = nat_send(n, &m, 0)) == NULL)
		return (-1);
	if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
	    nat_same(r->element[0], nat_arg(n, 0, NULL), n->lens[n->nkeys]) &&
	    r->element[1]->type == REDIS_REPLY_STRING)
		ttl = atoll(r->element[1]->str);
	freeReplyObject(r);
	return (ttl > 0 ? ttl : atoll(nat_arg(n, 3, NULL)));
}

/* keep(): the fence counter and the metadata live on with the lock. */
static void
nat_keep(struct nat *n, long long ttl)
{
	struct nat_cmd	 m = { .n = 0 };
	redisReply	*r;
	long long	 linger = NAT_LINGER_MS;

	if (nat_key_int(n, "PEXPIRE", LK_FENCE, ttl + NAT_KEEP_MS) == -1)
		return;
	cmd_s(&m, "HGET");
	cmd_key(&m, n, LK_META);
	cmd_s(&m, "listens");
	if ((r = nat_send(n, &m, 0)) == NULL)
		return;
	if (nat_same(r, "m", 1))
		linger = NAT_KEEP_MS;
	freeReplyObject(r);
	(void)nat_key_int(n, "PEXPIRE", LK_META, ttl + linger);
}

/* extend (LUA_EXTEND_BODY): the TTL set, 0 not held, -1 another's. */
static int
nat_extend(struct nat *n)
{
	long long	ttl = nat_extend_ttl(n);
	int		held;

	if (ttl <= 0 || (held = nat_renew(n, ttl)) == -1)
		return (-1);
	if (held)
		nat_keep(n, ttl);
	else
		held = nat_who_now(n);
	if (n->failed)
		return (-1);
	nat_int(n, held == 1 ? ttl : held);
	return (0);
}

/*
 * Play script `name` on c as its script would run there: a conn_result,
 * and on CONN_OK the reply it would have sent in *reply.  Each command
 * within its I/O timeout and cap_ns (0: none), as the script's would be.
 */
int
native_call(struct conn *c, const char *name, int nkeys, int nargs,
    const char **args, const size_t *lens, int64_t cap_ns,
    redisReply **reply)
{
	const struct nat_script	*s;
	struct nat		 n;

	*reply = NULL;
	for (s = nat_scripts; s->name != NULL; s++)
		if (strncmp(name, s->name, strlen(s->name)) == 0)
			break;
	memset(&n, 0, sizeof(n));
	n.c = c;
	n.cap_ns = cap_ns;
	n.nkeys = nkeys;
	n.nargs = nargs;
	n.args = args;
	n.lens = lens;
	if (s->name == NULL)
		(void)nat_refuse(&n, name);
	else if (s->play == NULL)
		(void)nat_refuse(&n, s->needs);
	else if (s->play(&n) == 0 && !n.failed &&
	    (*reply = nat_reply(&n)) == NULL) {
		conn_set_error(c, CONN_PROTOCOL, "%s: %s: could not build "
		    "the reply", conn_display(c), name);
		n.failed = CONN_PROTOCOL;
	}
	free(n.rbuf);
	if (*reply == NULL && !n.failed)
		n.failed = CONN_PROTOCOL;
	return (*reply != NULL ? CONN_OK : n.failed);
}
