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

	/* Every lock's: a waiter's wake key, a release's and a force's. */
	l->q.wake_prefix = keyslot_companion(l->key, l->key_len, "wake:",
	    &l->q.wake_prefix_len);
	/* Only the names this lock uses: each costs a slot computation. */
	if (l->spec.is_fair || l->spec.listens)
		l->q.cancel_prefix = keyslot_companion(l->key, l->key_len,
		    "cancel:", &len);
	if (l->spec.order >= 0)
		l->q.done_key = keyslot_companion(l->key, l->key_len, "done",
		    &len);
	if (l->spec.cancel_grace_ms >= 0 && l->spec.queue == LOCK_QUEUE_LATEST)
		(void)snprintf(l->q.grace_arg, sizeof(l->q.grace_arg), "%lld",
		    (long long)l->spec.cancel_grace_ms);
}

void
lock_queue_close(struct lock *l)
{
	free(l->q.wake_prefix);
	free(l->q.cancel_prefix);
	free(l->q.done_key);
}

/*
 * ARGV[11..16] of acquire (see LUA_QUEUE): mode, --order (''; without
 * one, the server ranks a waiter by its own clock at its first arrival,
 * never by ours: hosts with skewed clocks keep their places), cancel
 * grace, cancel prefix, whether a newer run may cancel us (a run of
 * --queue latest), and what kind of hold we wait for.
 */
void
lock_queue_args(struct lock *l, const char **argv)
{
	static const char *kinds[] = { "exclusive", "semaphore", "shared" };

	if (l->q.order[0] == '\0' && l->spec.order >= 0)
		(void)snprintf(l->q.order, sizeof(l->q.order), "%lld",
		    (long long)l->spec.order);
	argv[0] = lock_queue_name(l->spec.queue);
	argv[1] = l->q.order;
	argv[2] = l->q.grace_arg;
	argv[3] = l->q.cancel_prefix != NULL ? l->q.cancel_prefix : "";
	argv[4] = l->spec.listens && l->spec.queue == LOCK_QUEUE_LATEST ?
	    "1" : "0";
	argv[5] = kinds[l->spec.mode];
}

/*
 * Who did it, as the failure's words: "by order N on HOST (pid P)", or
 * "by a newer ROLE on HOST (pid P)" when it gave no --order (order '' or
 * '-').  What a server sent is cut and made printable.
 */
void
lock_note_by(char *buf, size_t size, const struct lock_note_who *w,
    const char *role)
{
	char h[256], p[32], o[32];

	log_sanitize(h, sizeof(h), w->host, w->host_len);
	log_sanitize(p, sizeof(p), w->pid, w->pid_len);
	log_sanitize(o, sizeof(o), w->order, w->order_len);
	if (o[0] != '\0' && strcmp(o, "-") != 0)
		(void)snprintf(buf, size, "by order %s on %s (pid %s)", o, h, p);
	else
		(void)snprintf(buf, size, "by a newer %s on %s (pid %s)", role,
		    h, p);
}

/*
 * Split "ORDER PID HOST" (the words after a note's first) into w.
 * 0, or -1 if the note is not of that form.
 */
int
lock_note_parse(const char *s, size_t len, struct lock_note_who *w)
{
	const char *end = s + len, *sp1, *sp2;

	if ((sp1 = memchr(s, ' ', len)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1))) == NULL)
		return (-1);
	w->order = s;
	w->order_len = (size_t)(sp1 - s);
	w->pid = sp1 + 1;
	w->pid_len = (size_t)(sp2 - sp1 - 1);
	w->host = sp2 + 1;
	w->host_len = (size_t)(end - sp2 - 1);
	return (0);
}

/* The failure "superseded by order N on HOST (pid P)". */
static void
lock_superseded_by(struct lock *l, const struct lock_note_who *w)
{
	char by[400];

	lock_note_by(by, sizeof(by), w, "waiter");
	lock_failed(l, EXIT_SUPERSEDED, "lock '%s': superseded %s",
	    l->spec.key, by);
}

/* An acquire reply {2, 0, '', HOST, PID, ORDER, ''}: we were superseded. */
int
lock_superseded(struct lock *l, const redisReply *r)
{
	struct lock_note_who w;

	if (r->elements != 7 || r->element[3]->type != REDIS_REPLY_STRING ||
	    r->element[4]->type != REDIS_REPLY_STRING ||
	    r->element[5]->type != REDIS_REPLY_STRING)
		return (0);
	w.host = r->element[3]->str;
	w.host_len = r->element[3]->len;
	w.pid = r->element[4]->str;
	w.pid_len = r->element[4]->len;
	w.order = r->element[5]->str;
	w.order_len = r->element[5]->len;
	lock_superseded_by(l, &w);
	return (1);
}

/*
 * A waiter's BZPOPMIN reply {key, member, score}: 1 if the member is a
 * note "superseded ORDER PID HOST" (failure set), 0 for a wake-up or
 * nothing.
 */
int
lock_wake_note(struct lock *l, const redisReply *r)
{
	const redisReply	*m;
	struct lock_note_who	 w;
	size_t			 skip;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[1]->type != REDIS_REPLY_STRING)
		return (0);
	m = r->element[1];
	/* The kept copy too, "kept superseded ...", that releases before
	 * the note moved to the waiters' hash (LUA_QUEUE_JOIN) still leave
	 * in a wake key, should it come first. */
	skip = m->len > 5 && memcmp(m->str, "kept ", 5) == 0 ? 5 : 0;
	if (m->len < skip + 11 ||
	    memcmp(m->str + skip, "superseded ", 11) != 0 ||
	    lock_note_parse(m->str + skip + 11, m->len - skip - 11, &w) == -1)
		return (0);
	lock_superseded_by(l, &w);
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
	size_t			 i, answered, lens[4];
	int			 rc;

	(void)snprintf(num, sizeof(num), "%lld", (long long)order);
	(void)snprintf(now, sizeof(now), "%lld", (long long)clock_wall_ms());
	if (gethostname(host, sizeof(host)) == -1)
		(void)snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	argv[0] = l->q.done_key;
	argv[1] = num;
	argv[2] = is_record ? host : "";
	argv[3] = now;
	for (i = 0; i < 4; i++)
		lens[i] = strlen(argv[i]);
	answered = lock_call_named(l, l->scripts->done, 1, 3, argv, lens, 0,
	    &rd);
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

/* Whether an order greater than order already ran on this lock. */
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

/*
 * An attempt's busy reply names, as its 9th element, the --queue mode of
 * the waiters in line when it is not the caller's: their order is no one
 * queue's (a fifo waiter behind latest ones is superseded by the next
 * latest; an 'any' waiter takes the lock ahead of a fifo line).  Said
 * once, as a warning: the wait goes on.
 */
void
lock_queue_mixed(struct lock *l, const redisReply *r)
{
	const redisReply	*e;
	char			 theirs[16];

	if (r->elements < 9 || l->said_mixed)
		return;
	e = r->element[8];
	if (e->type != REDIS_REPLY_STRING || e->len == 0)
		return;
	l->said_mixed = 1;
	log_sanitize(theirs, sizeof(theirs), e->str, e->len);
	log_warnx("lock '%s': its waiters queue with --queue %s, this one "
	    "with --queue %s: they do not wait in one line; give every "
	    "client of the lock the same --queue", l->spec.key, theirs,
	    lock_queue_name(l->spec.queue));
}
