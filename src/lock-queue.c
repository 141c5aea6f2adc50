/* SPDX-License-Identifier: MIT */
/*
 * Queues (--queue fifo, latest; the Lua is LUA_QUEUE in scripts-lua.h):
 * what an attempt tells the queue, the notes that supersede a waiter,
 * --skip-outdated's record of the last order that ran, and a holder's
 * listening for a cancel between its renewals.
 *
 * Listening: a run of --queue latest blocks, between renewals, in
 * BZPOPMIN on a key of its own ({K}:cancel:TOKEN), on connections of its
 * own, so that renewals and the release never wait behind it.  The
 * timeout is the time left until the next renewal, so an idle hold costs
 * its renewals and one blocking call between each two of them; a cancel
 * (LUA_QUEUE's queue_cancel) reaches it at once.  Nothing here waits: the
 * supervisor polls these connections with its signals (supervise-listen.c).
 */

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/* Below this, a blocking call would not return before the renewal. */
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
	char		  timeout[32];
	const char	 *argv[3];
	size_t		  lens[3];
	int		  is_off;	/* the servers cannot block */
	int64_t		  retry_ns;	/* not before, after a failure */
};

static const char *lock_queue_names[] = { "any", "fifo", "latest" };

static void	 lock_note_by(struct lock *, const char *, size_t, const char *,
		     size_t, const char *);
static int	 lock_done_call(struct lock *, int64_t, int);
static int	 lock_listen_heard(struct lock *, const redisReply *);
static int	 lock_listen_take(struct lock *, size_t);

const char *
lock_queue_name(int q)
{
	return (q >= 0 && q <= LOCK_QUEUE_LATEST ? lock_queue_names[q] : "?");
}

void
lock_queue_open(struct lock *l)
{
	size_t len;

	l->cancel_prefix = keyslot_companion(l->key, l->key_len, "cancel:",
	    &len);
	l->done_key = keyslot_companion(l->key, l->key_len, "done", &len);
	if (l->spec.cancel_grace_ms >= 0 && l->spec.queue == LOCK_QUEUE_LATEST)
		(void)snprintf(l->grace_arg, sizeof(l->grace_arg), "%lld",
		    (long long)l->spec.cancel_grace_ms);
}

void
lock_queue_close(struct lock *l)
{
	lock_listen_stop(l);
	if (l->listen != NULL) {
		free(l->listen->conns);
		free(l->listen->in_flight);
		free(l->listen->polled);
		free(l->listen->key);
		free(l->listen);
	}
	free(l->cancel_prefix);
	free(l->done_key);
}

/*
 * ARGV[10..14] of acquire (see LUA_QUEUE): mode, rank, cancel grace,
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

/*
 * The done script everywhere: look (is_record 0) or record order.  On a
 * record of at least order, EXIT_OUTDATED with the failure "outdated:
 * order M already ran (HOST, TIME)"; EXIT_OK; or the failure's code when
 * too few servers answered.
 */
static int
lock_done_call(struct lock *l, int64_t order, int is_record)
{
	struct lock_round	 rd;
	const redisReply	*r, *best = NULL;
	const char		*argv[4];
	char			 num[32], now[32], host[256], at[32], h[256];
	size_t			 i, answered;
	struct tm		 tm;
	time_t			 t;

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
	for (i = 0; i < l->nconns; i++) {
		r = rd.replies[i];
		if (rd.results[i] == CONN_OK && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 3 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    r->element[1]->type == REDIS_REPLY_STRING &&
		    r->element[2]->type == REDIS_REPLY_STRING && (best == NULL || strtoll(
		    r->element[0]->str, NULL, 10) > strtoll(
		    best->element[0]->str, NULL, 10)))
			best = r;
	}
	if (best != NULL) {
		t = (time_t)(strtoll(best->element[2]->str, NULL, 10) / 1000);
		at[0] = '\0';
		if (gmtime_r(&t, &tm) != NULL)
			(void)strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ",
			    &tm);
		log_sanitize(h, sizeof(h), best->element[1]->str,
		    best->element[1]->len);
		lock_failed(l, EXIT_OUTDATED, "lock '%s': outdated: order %s "
		    "already ran (%s, %s)", l->spec.key,
		    best->element[0]->str, h, at);
	}
	lock_round_free(l, &rd);
	if (best != NULL)
		return (EXIT_OUTDATED);
	return (answered >= l->quorum ? EXIT_OK : lock_fail(l, answered));
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

/*----- a holder's listening for a cancel -----*/

/*
 * Block for a cancel until until_ns (the next renewal) on every server
 * where no such call is in flight already.
 */
void
lock_listen_start(struct lock *l, int64_t until_ns)
{
	struct lock_listen	*ls = l->listen;
	int64_t			 now = clock_mono_ns(), ms;
	size_t			 i, len;

	if (ls == NULL) {
		ls = l->listen = xcalloc(1, sizeof(*ls));
		ls->conns = xcalloc(l->nconns, sizeof(*ls->conns));
		ls->in_flight = xcalloc(l->nconns, sizeof(*ls->in_flight));
		ls->polled = xcalloc(l->nconns, sizeof(*ls->polled));
		ls->key = xasprintf("%s%s", l->cancel_prefix, l->token);
		len = strlen(ls->key);
		ls->argv[0] = "BZPOPMIN";
		ls->lens[0] = 8;
		ls->argv[1] = ls->key;
		ls->lens[1] = len;
		ls->argv[2] = ls->timeout;
	}
	ms = (until_ns - now) / 1000000;
	if (ls->is_off || now < ls->retry_ns || ms < LOCK_LISTEN_MIN_MS)
		return;
	(void)snprintf(ls->timeout, sizeof(ls->timeout), "%.3f",
	    (double)ms / 1000.0);
	ls->lens[2] = strlen(ls->timeout);
	for (i = 0; i < l->nconns; i++) {
		if (ls->in_flight[i])
			continue;
		if (ls->conns[i] == NULL)
			ls->conns[i] = conn_new(&l->opts->urls[i], &l->conf);
		/* The key holds the token: -v -v shows it shortened. */
		conn_set_secret(ls->conns[i], 1);
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
 * What poll() saw on the descriptors of lock_listen_poll(): 1 when a
 * cancel came (the failure says from whom), else 0.
 */
int
lock_listen_events(struct lock *l, const struct pollfd *pfd, size_t n)
{
	struct lock_listen	*ls = l->listen;
	struct pollfd		 scratch;
	int64_t			 wait_ns = -1;
	size_t			 i;
	int			 heard = 0;

	if (ls == NULL)
		return (0);
	for (i = 0; i < n && i < ls->npolled; i++)
		conn_advance(ls->conns[ls->polled[i]], pfd[i].revents);
	for (i = 0; i < l->nconns; i++) {
		if (!ls->in_flight[i] || conn_pending(ls->conns[i], &scratch,
		    &wait_ns))
			continue;
		heard |= lock_listen_take(l, i);
	}
	return (heard);
}

/* One listening call is over: 1 if its answer is a cancel. */
static int
lock_listen_take(struct lock *l, size_t i)
{
	struct lock_listen	*ls = l->listen;
	redisReply		*r;
	int			 result, heard = 0;

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
 * A note "cancelled GRACE PID HOST" in r ({key, member, score}): the
 * failure EXIT_CANCELLED, and the grace it asks for.  1 if so.
 */
static int
lock_listen_heard(struct lock *l, const redisReply *r)
{
	const redisReply	*m;
	const char		*p, *pid, *host, *end;
	char			 h[256], pd[32];
	long long		 grace;

	if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
	    r->element[1]->type != REDIS_REPLY_STRING)
		return (0);
	m = r->element[1];
	end = m->str + m->len;
	if (m->len < 10 || memcmp(m->str, "cancelled ", 10) != 0)
		return (0);
	grace = strtoll(m->str + 10, (char **)&p, 10);
	if (p >= end || *p != ' ' || grace < 0)
		return (0);
	pid = p + 1;
	if ((p = memchr(pid, ' ', (size_t)(end - pid))) == NULL)
		return (0);
	host = p + 1;
	log_sanitize(h, sizeof(h), host, (size_t)(end - host));
	log_sanitize(pd, sizeof(pd), pid, (size_t)(p - pid));
	lock_failed(l, EXIT_CANCELLED, "lock '%s': cancelled by a newer run "
	    "on %s (pid %s)", l->spec.key, h, pd);
	l->cancel_grace_ms = grace;
	return (1);
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
	return (l->cancel_grace_ms);
}
