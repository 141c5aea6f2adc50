/* SPDX-License-Identifier: MIT */
/*
 * Queues (--queue fifo, latest; the Lua is LUA_QUEUE in scripts-lua.h):
 * what an attempt tells the queue, the notes that supersede a waiter,
 * and --skip-outdated's record of the last order that ran.  A holder's
 * listening for a cancel is in lock-listen.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static const char *lock_queue_names[] = { "any", "fifo", "latest" };

static void	 lock_note_by(struct lock *, const char *, size_t, const char *,
		     size_t, const char *);
static const redisReply *lock_done_reply(const redisReply *);
static void	 lock_done_failed(struct lock *, const redisReply *);
static int	 lock_done_call(struct lock *, int64_t, int);

const char *
lock_queue_name(int q)
{
	return (q >= 0 && q <= LOCK_QUEUE_LATEST ? lock_queue_names[q] : "?");
}

void
lock_queue_open(struct lock *l)
{
	size_t len;

	/* Only the names this lock uses: each costs a slot computation. */
	if (l->spec.is_fair || l->spec.listens)
		l->cancel_prefix = keyslot_companion(l->key, l->key_len,
		    "cancel:", &len);
	if (l->spec.order >= 0)
		l->done_key = keyslot_companion(l->key, l->key_len, "done",
		    &len);
	if (l->spec.cancel_grace_ms >= 0 && l->spec.queue == LOCK_QUEUE_LATEST)
		(void)snprintf(l->grace_arg, sizeof(l->grace_arg), "%lld",
		    (long long)l->spec.cancel_grace_ms);
}

void
lock_queue_close(struct lock *l)
{
	lock_listen_free(l);
	free(l->cancel_prefix);
	free(l->done_key);
}

/*
 * ARGV[11..15] of acquire (see LUA_QUEUE): mode, rank, cancel grace,
 * cancel prefix, whether we listen.  The rank is chosen once, at the
 * first attempt: --order, else the wall clock in microseconds (exact in
 * a double, which a sorted set's score is).
 */
void
lock_queue_args(struct lock *l, const char **argv)
{
	/* Unqueued, the rank goes unread: not worth a clock and a format. */
	if (l->rank[0] == '\0' && l->spec.is_fair)
		(void)snprintf(l->rank, sizeof(l->rank), "%lld",
		    l->spec.order >= 0 ? (long long)l->spec.order :
		    (long long)clock_wall_ms() * 1000 +
		    (long long)(clock_mono_ns() / 1000 % 1000));
	argv[0] = lock_queue_name(l->spec.queue);
	argv[1] = l->rank;
	argv[2] = l->grace_arg;
	argv[3] = l->cancel_prefix;
	argv[4] = l->spec.listens ? "1" : "0";
}

/* The failure "superseded by HOST (pid P)", with what a server said. */
static void
lock_note_by(struct lock *l, const char *host, size_t hlen, const char *pid,
    size_t plen, const char *what)
{
	char h[256], p[32];

	log_sanitize(h, sizeof(h), host, hlen);
	log_sanitize(p, sizeof(p), pid, plen);
	lock_failed(l, EXIT_SUPERSEDED, "lock '%s': %s on %s (pid %s)",
	    l->spec.key, what, h, p);
}

/* An acquire reply {2, 0, '', HOST, PID, '', ''}: we were superseded. */
int
lock_superseded(struct lock *l, const redisReply *r)
{
	if (r->elements != 7 || r->element[3]->type != REDIS_REPLY_STRING ||
	    r->element[4]->type != REDIS_REPLY_STRING)
		return (0);
	lock_note_by(l, r->element[3]->str, r->element[3]->len,
	    r->element[4]->str, r->element[4]->len,
	    "superseded by a newer waiter");
	return (1);
}

/*
 * A waiter's BZPOPMIN reply {key, member, score}: 1 if the member is a
 * note "superseded PID HOST" (failure set), 0 for a wake-up or nothing.
 */
int
lock_wake_note(struct lock *l, const redisReply *r)
{
	const redisReply	*m;
	const char		*sp;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[1]->type != REDIS_REPLY_STRING)
		return (0);
	m = r->element[1];
	if (m->len < 11 || memcmp(m->str, "superseded ", 11) != 0 ||
	    (sp = memchr(m->str + 11, ' ', m->len - 11)) == NULL)
		return (0);
	lock_note_by(l, sp + 1, m->len - (size_t)(sp + 1 - m->str),
	    m->str + 11, (size_t)(sp - m->str) - 11,
	    "superseded by a newer waiter");
	return (1);
}

/*----- --skip-outdated: the record of the last order that ran -----*/

/* A done reply {order, host, time}, or NULL for {} or anything else. */
static const redisReply *
lock_done_reply(const redisReply *r)
{
	size_t i;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 3)
		return (NULL);
	for (i = 0; i < 3; i++)
		if (r->element[i]->type != REDIS_REPLY_STRING)
			return (NULL);
	return (r);
}

/* The failure "outdated: order M already ran (HOST, TIME)" of a record. */
static void
lock_done_failed(struct lock *l, const redisReply *r)
{
	char		at[32], h[256], order[32];
	struct tm	tm;
	time_t		t;

	t = (time_t)(strtoll(r->element[2]->str, NULL, 10) / 1000);
	at[0] = '\0';
	if (gmtime_r(&t, &tm) != NULL)
		(void)strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	log_sanitize(h, sizeof(h), r->element[1]->str, r->element[1]->len);
	log_sanitize(order, sizeof(order), r->element[0]->str,
	    r->element[0]->len);
	lock_failed(l, EXIT_OUTDATED, "lock '%s': outdated: order %s already "
	    "ran (%s, %s)", l->spec.key, order, h, at);
}

/*
 * The done script everywhere: look (is_record 0) or record order.  On a
 * record of at least order on any server, EXIT_OUTDATED (the highest
 * record says why); EXIT_OK; or the failure's code when too few servers
 * answered.
 */
static int
lock_done_call(struct lock *l, int64_t order, int is_record)
{
	struct lock_round	 rd;
	const redisReply	*r, *best = NULL;
	const char		*argv[4];
	char			 num[32], now[32], host[256];
	size_t			 i, answered;
	int			 rc;

	(void)snprintf(num, sizeof(num), "%lld", (long long)order);
	(void)snprintf(now, sizeof(now), "%lld", (long long)clock_wall_ms());
	if (gethostname(host, sizeof(host)) == -1)
		(void)snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	argv[0] = l->done_key;
	argv[1] = num;
	argv[2] = is_record ? host : "";
	argv[3] = now;
	answered = lock_call(l, l->scripts->done, 1, 4, argv, NULL, 0, &rd);
	for (i = 0; i < l->nconns; i++)
		if (rd.results[i] == CONN_OK &&
		    (r = lock_done_reply(rd.replies[i])) != NULL &&
		    (best == NULL || strtoll(r->element[0]->str, NULL, 10) >
		    strtoll(best->element[0]->str, NULL, 10)))
			best = r;
	if (best != NULL)
		lock_done_failed(l, best);
	rc = best != NULL ? EXIT_OUTDATED : answered >= l->quorum ? EXIT_OK :
	    lock_fail(l, answered);
	lock_round_free(l, &rd);
	return (rc);
}

/* Whether an order of at least order already ran on this lock. */
int
lock_outdated(struct lock *l, int64_t order)
{
	return (lock_done_call(l, order, 0));
}

/* Our order ran to the end: remember it (unless a higher one is). */
int
lock_record_done(struct lock *l, int64_t order)
{
	int rc = lock_done_call(l, order, 1);

	return (rc == EXIT_OUTDATED ? EXIT_OK : rc);
}
