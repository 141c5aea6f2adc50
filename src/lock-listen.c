/* SPDX-License-Identifier: MIT */
/*
 * A holder's listening for a cancel (--cancel-running) while it holds.  A
 * run of --queue latest blocks in BZPOPMIN on a key of its own
 * ({K}:cancel:TOKEN), on connections of its own, so that renewals and the
 * release never wait behind it; a cancel (LUA_QUEUE's queue_cancel)
 * reaches it at once.  Each call blocks for the lock's TTL, across three
 * renewals, not one: the server answers a timeout on its own tick, up to
 * 100 ms after the renewal's, so a call per renewal would cost an idle
 * hold a wake-up more each time.  Not for longer: a connection idle for minutes may be
 * dropped on the way (a NAT's idle timeout) without either end seeing
 * it, and a cancel would then not come.  Nothing here waits: the
 * supervisor polls these connections with its signals
 * (supervise-listen.c).
 */

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/* The shortest block: the server's timeouts are only as fine as its tick. */
#define LOCK_LISTEN_MIN_MS	100
/* After a failed listen, the next try waits this long. */
#define LOCK_LISTEN_RETRY_MS	1000

/* A holder's listening, one connection per server. */
struct lock_listen {
	struct conn	**conns;
	int		 *in_flight;
	size_t		 *polled;	/* the conn of each pollfd given */
	size_t		  npolled;
	char		 *key;		/* {K}:cancel:TOKEN */
	char		  timeout[32];	/* seconds, of timeout_ms */
	int64_t		  timeout_ms;
	const char	 *argv[3];
	size_t		  lens[3];
	int		  is_off;	/* the servers cannot block */
	int64_t		  retry_ns;	/* not before, after a failure */
};

static int	 lock_listen_heard(struct lock *, const redisReply *);
static int	 lock_listen_take(struct lock *, size_t);

/* Block for a cancel on every server where no such call is in flight. */
void
lock_listen_start(struct lock *l)
{
	struct lock_listen	*ls = l->listen;
	int64_t			 now = clock_mono_ns(), ms;
	size_t			 i, len;

	if (ls == NULL) {
		ls = l->listen = xcalloc(1, sizeof(*ls));
		ls->conns = xcalloc(l->nconns, sizeof(*ls->conns));
		ls->in_flight = xcalloc(l->nconns, sizeof(*ls->in_flight));
		ls->polled = xcalloc(l->nconns, sizeof(*ls->polled));
		ls->key = xasprintf("%s%s", l->q.cancel_prefix, l->token);
		len = strlen(ls->key);
		ls->argv[0] = "BZPOPMIN";
		ls->lens[0] = 8;
		ls->argv[1] = ls->key;
		ls->lens[1] = len;
		ls->argv[2] = ls->timeout;
	}
	if (ls->is_off || now < ls->retry_ns)
		return;
	ms = l->ttl_ms > LOCK_LISTEN_MIN_MS ? l->ttl_ms : LOCK_LISTEN_MIN_MS;
	/* Once per TTL, not at every wake-up: a wake-up is mostly a
	 * renewal, and a hold's CPU is mostly its renewals. */
	if (ms != ls->timeout_ms) {
		(void)snprintf(ls->timeout, sizeof(ls->timeout), "%lld.%03lld",
		    (long long)(ms / 1000), (long long)(ms % 1000));
		ls->lens[2] = strlen(ls->timeout);
		ls->timeout_ms = ms;
	}
	for (i = 0; i < l->nconns; i++) {
		if (ls->in_flight[i])
			continue;
		if (ls->conns[i] == NULL)
			ls->conns[i] = conn_new(&l->opts->urls[i], &l->conf);
		/* The key ends with the token: -v -v cuts it. */
		conn_set_secret(ls->conns[i], 1, strlen(l->q.cancel_prefix));
		conn_start(ls->conns[i], 3, ls->argv, ls->lens,
		    clock_ms_to_ns(ms), 0);
		ls->in_flight[i] = 1;
	}
}

/* What to poll for: up to max descriptors in pfd; *wait_ns lowered. */
size_t
lock_listen_poll(struct lock *l, struct pollfd *pfd, size_t max,
    int64_t *wait_ns)
{
	struct lock_listen	*ls = l->listen;
	size_t			 i;

	if (ls == NULL)
		return (0);
	ls->npolled = 0;
	for (i = 0; i < l->nconns && ls->npolled < max; i++)
		if (ls->in_flight[i] && conn_pending(ls->conns[i],
		    &pfd[ls->npolled], wait_ns))
			ls->polled[ls->npolled++] = i;
	return (ls->npolled);
}

/*
 * What poll() saw on the descriptors of lock_listen_poll(): what came
 * (LOCK_HEARD_*, a force before a cancel; the failure says from whom).
 */
int
lock_listen_events(struct lock *l, const struct pollfd *pfd, size_t n)
{
	struct lock_listen	*ls = l->listen;
	struct pollfd		 scratch;
	int64_t			 wait_ns = -1;
	size_t			 i;
	int			 heard = LOCK_HEARD_NONE, got;

	if (ls == NULL)
		return (heard);
	for (i = 0; i < n && i < ls->npolled; i++)
		conn_advance(ls->conns[ls->polled[i]], pfd[i].revents);
	for (i = 0; i < l->nconns; i++) {
		if (!ls->in_flight[i] || conn_pending(ls->conns[i], &scratch,
		    &wait_ns))
			continue;
		if ((got = lock_listen_take(l, i)) > heard)
			heard = got;
	}
	return (heard);
}

/* One listening call is over: what its answer says (LOCK_HEARD_*). */
static int
lock_listen_take(struct lock *l, size_t i)
{
	struct lock_listen	*ls = l->listen;
	redisReply		*r;
	int			 result, heard = LOCK_HEARD_NONE;

	ls->in_flight[i] = 0;
	result = conn_take(ls->conns[i], &r);
	if (result == CONN_OK)
		heard = lock_listen_heard(l, r);
	else if (result == CONN_SERVER_ERROR) {
		/* Redis before 6.0 takes whole seconds: renewals only. */
		log_debug("%s; not listening for cancels",
		    conn_error(ls->conns[i]));
		ls->is_off = 1;
	} else {
		log_debug("%s", conn_error(ls->conns[i]));
		ls->retry_ns = clock_mono_ns() +
		    clock_ms_to_ns(LOCK_LISTEN_RETRY_MS);
	}
	if (r != NULL)
		freeReplyObject(r);
	return (heard);
}

/*
 * What r ({key, member, score}) says: a note "cancelled GRACE ORDER PID
 * HOST" (the failure EXIT_CANCELLED, and the grace it asks for), or
 * "forced PID HOST" (an operator's release --force: EXIT_LOST), else
 * nothing (LOCK_HEARD_NONE).
 */
static int
lock_listen_heard(struct lock *l, const redisReply *r)
{
	const redisReply	*m;
	struct lock_note_who	 w;
	const char		*p, *end;
	char			 by[400], pid[32];
	long long		 grace;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[1]->type != REDIS_REPLY_STRING)
		return (LOCK_HEARD_NONE);
	m = r->element[1];
	end = m->str + m->len;
	if (m->len > 7 && memcmp(m->str, "forced ", 7) == 0 &&
	    (p = memchr(m->str + 7, ' ', m->len - 7)) != NULL) {
		log_sanitize(by, sizeof(by), p + 1, (size_t)(end - p - 1));
		log_sanitize(pid, sizeof(pid), m->str + 7,
		    (size_t)(p - m->str - 7));
		lock_failed(l, EXIT_LOST, "lock '%s' was force-released by %s "
		    "(pid %s)", l->spec.key, by, pid);
		return (LOCK_HEARD_FORCE);
	}
	if (m->len < 10 || memcmp(m->str, "cancelled ", 10) != 0)
		return (LOCK_HEARD_NONE);
	grace = strtoll(m->str + 10, (char **)&p, 10);
	if (p >= end || *p != ' ' || grace < 0 ||
	    lock_note_parse(p + 1, (size_t)(end - p - 1), &w) == -1)
		return (LOCK_HEARD_NONE);
	lock_note_by(by, sizeof(by), &w, "run");
	lock_failed(l, EXIT_CANCELLED, "lock '%s': cancelled %s", l->spec.key,
	    by);
	l->q.cancel_grace_ms = grace;
	return (LOCK_HEARD_CANCEL);
}

/* No more listening: what is in flight is dropped with its connection. */
void
lock_listen_stop(struct lock *l)
{
	size_t i;

	if (l->listen == NULL)
		return;
	for (i = 0; i < l->nconns; i++) {
		conn_free(l->listen->conns[i]);
		l->listen->conns[i] = NULL;
		l->listen->in_flight[i] = 0;
	}
	l->listen->is_off = 1;
}

int64_t
lock_cancel_grace_ms(const struct lock *l)
{
	return (l->q.cancel_grace_ms);
}

/* The listening's connections and state, with the lock. */
void
lock_listen_free(struct lock *l)
{
	lock_listen_stop(l);
	if (l->listen == NULL)
		return;
	free(l->listen->conns);
	free(l->listen->in_flight);
	free(l->listen->polled);
	free(l->listen->key);
	free(l->listen);
	l->listen = NULL;
}
