/* SPDX-License-Identifier: MIT */
/*
 * Acquire: one atomic script per attempt on every server at once, the
 * Redlock majority and validity rules, quorum fencing, and giving back a
 * take that did not make a lock.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/* What lock_keep() decided about a take by a majority. */
enum lock_keep {
	KEEP_OURS,		/* the lock is ours */
	KEEP_TOO_LATE,		/* less than the margin left: try again */
	KEEP_UNFENCED,		/* no majority lifted: as a split vote */
	KEEP_NOT_REPLICATED	/* WAIT failed: give it back and fail */
};

/* A pause before trying again after a take that came too late. */
#define LOCK_LATE_PAUSE_MS	50

static int	 lock_is_pair(const redisReply *);
static void	 lock_forget_attempt(struct lock *);
static int	 lock_raise_fence(struct lock *, struct lock_round *,
		     const long long *, long long, int64_t);
static enum lock_keep lock_keep(struct lock *, struct lock_round *,
		     const long long *, long long, int64_t);
static void	 lock_too_late(struct lock *, int64_t, int64_t);

/* An acquire reply: {held (0 or 1), fence or TTL hint}. */
static int
lock_is_pair(const redisReply *r)
{
	return (r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    r->elements == 2 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[1]->type == REDIS_REPLY_INTEGER);
}

/*
 * After an acquire attempt that did not give us the lock, or whose outcome
 * is unknown (a reply was lost), make sure our token is left nowhere:
 * compare-and-delete is harmless where the take never happened.  Best
 * effort, on fresh connections where a reply went missing.
 */
static void
lock_forget_attempt(struct lock *l)
{
	struct lock_round	rd;
	struct lock_failure	saved = l->fail;

	(void)lock_release_call(l, &rd);
	lock_round_free(l, &rd);
	if (l->spec.is_fair)
		lock_leave_queue(l);
	l->fail = saved;
}

/*
 * Quorum fencing.  Each server counts acquisitions on its own, so a holder
 * takes the highest fence F that its majority returned, and then lifts the
 * counters of its majority to at least F, while it still holds the lock
 * there (checked in the same script).  Any later holder's majority shares
 * a server s with ours; it could take the lock on s only after ours was
 * gone from s, hence after our lift, so its INCR on s returns more than F
 * and its own fence (a maximum) is more than F too.  Only servers that
 * returned less than F need the lift.  Returns 0 when a majority has a
 * counter of at least F.
 */
static int
lock_raise_fence(struct lock *l, struct lock_round *rd,
    const long long *fences, long long f, int64_t cap_ns)
{
	struct lock_round	 lift;
	struct conn		**held;
	const char		*argv[3], **args;
	size_t			*lens, i, n, at_least = 0;
	char			 fence[32];

	for (i = 0; i < l->nconns; i++)
		if (rd->results[i] == CONN_OK && fences[i] >= f)
			at_least++;
	if (at_least >= l->quorum)
		return (0);
	(void)snprintf(fence, sizeof(fence), "%lld", f);
	argv[0] = l->token;
	argv[1] = fence;
	argv[2] = l->limit_arg;
	lock_script_args(l, 3, 3, argv, NULL, &args, &lens);
	/*
	 * Only where we hold the lock (the script checks it anyway): a
	 * server that did not answer the acquire must not hold this round
	 * up for its whole I/O timeout.  Lifting where the counter is
	 * already F is harmless and keeps it one round.
	 */
	held = xcalloc(l->nconns, sizeof(*held));
	for (i = 0, n = 0; i < l->nconns; i++)
		if (fences[i] >= 0)
			held[n++] = l->conns[i];
	lift.replies = xcalloc(n, sizeof(*lift.replies));
	lift.results = xcalloc(n, sizeof(*lift.results));
	script_call_many(held, n, l->scripts->raise_fence, 3, 3, args, lens,
	    cap_ns, lift.replies, lift.results);
	free(args);
	free(lens);
	at_least = 0;
	for (i = 0; i < n; i++) {
		if (lift.results[i] == CONN_OK &&
		    lift.replies[i]->type == REDIS_REPLY_INTEGER &&
		    lift.replies[i]->integer == 1)
			at_least++;
		if (lift.replies[i] != NULL)
			freeReplyObject(lift.replies[i]);
	}
	free(lift.replies);
	free(lift.results);
	free(held);
	return (at_least >= l->quorum ? 0 : -1);
}

/*
 * A majority took the lock in the attempt begun at start_ns: can we keep
 * it?  Quorum fencing and WAIT for replicas come first, each bounded by
 * cap_ns (the validity minus the margin); then at least the margin must be
 * left, or there is no time to run anything under it.
 */
static enum lock_keep
lock_keep(struct lock *l, struct lock_round *rd, const long long *fences,
    long long fence, int64_t cap_ns)
{
	if (clock_mono_ns() > cap_ns)
		return (KEEP_TOO_LATE);
	if (l->nconns > 1 && lock_raise_fence(l, rd, fences, fence,
	    cap_ns) != 0)
		return (clock_mono_ns() > cap_ns ? KEEP_TOO_LATE :
		    KEEP_UNFENCED);
	l->fail.text[0] = '\0';
	if (lock_wait_replicas(l, cap_ns) == -1)
		return (KEEP_NOT_REPLICATED);
	return (clock_mono_ns() > cap_ns ? KEEP_TOO_LATE : KEEP_OURS);
}

/* The failure of a take that left less than the margin of validity. */
static void
lock_too_late(struct lock *l, int64_t start, int64_t ttl_ms)
{
	char took[32], margin[32];

	duration_format((clock_mono_ns() - start) / 1000000, took,
	    sizeof(took));
	duration_format(lock_margin_ns(ttl_ms) / 1000000, margin,
	    sizeof(margin));
	lock_failed(l, EXIT_UNAVAILABLE, "lock '%s': taken too late to be "
	    "used: the servers took %s, leaving less than the %s safety "
	    "margin of its validity", l->spec.key, took, margin);
}

/*
 * Acquire: one atomic script per attempt, on every server at once.  The
 * lock is ours iff a majority took it and the time that took leaves some
 * validity (TTL - elapsed - drift).  The spec's wait_ms is WAIT_FOREVER,
 * 0 for a single attempt, or how long to keep trying.  Returns EXIT_OK
 * (l->fence, l->valid_until_ns set), EXIT_BUSY (l->busy_ttl_ms set), or
 * the exit code of a failure (l->fail set).
 */
int
lock_acquire(struct lock *l)
{
	struct lock_round	 rd;
	const char		*argv[9];
	size_t			 i, held, busy, answered;
	char			 ttl[32], pid[32], since[32], host[256];
	char			 lease[32];
	long long		*fences, fence;
	int64_t			 deadline_ns = 0, start, now, hint, cap_ns;
	int64_t			 ttl_ms = l->spec.ttl_ms, wait_ms = l->spec.wait_ms;
	enum lock_keep		 kept;
	int			 rc;

	if (l->token == NULL) {
		l->token = xmalloc(TOKEN_HEX_LEN + 1);
		token_new(l->token);
	}
	if (gethostname(host, sizeof(host)) == -1)
		(void)snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	(void)snprintf(pid, sizeof(pid), "%lld", l->spec.pid > 0 ?
	    (long long)l->spec.pid : (long long)getpid());
	(void)snprintf(lease, sizeof(lease), "%d", l->spec.is_fair ?
	    LOCK_FAIR_LEASE_MS : 0);
	if (wait_ms != WAIT_FOREVER)
		deadline_ns = clock_mono_ns() + clock_ms_to_ns(wait_ms);
	argv[0] = l->token;
	argv[1] = ttl;
	argv[2] = host;
	argv[3] = pid;
	argv[4] = l->spec.command;
	argv[5] = since;
	argv[6] = l->limit_arg;
	argv[7] = lease;
	argv[8] = l->wake_prefix;
	fences = xcalloc(l->nconns, sizeof(*fences));
	for (;;) {
		(void)snprintf(since, sizeof(since), "%lld",
		    (long long)clock_wall_ms());
		start = clock_mono_ns();
		/* The wait deadline decides whether to try again; an
		 * attempt under way gets its full I/O timeout, but no step
		 * of it may outlast what the lock would be valid for. */
		cap_ns = lock_cap_ns(start, ttl_ms);
		answered = lock_call(l, l->scripts->acquire, LOCK_NKEYS, 9, argv,
		    NULL, cap_ns, &rd);
		held = busy = 0;
		hint = -1;
		fence = -1;
		for (i = 0; i < l->nconns; i++) {
			fences[i] = -1;
			if (rd.results[i] != CONN_OK)
				continue;
			if (!lock_is_pair(rd.replies[i])) {
				(void)lock_unexpected(l, i, "acquire",
				    rd.replies[i], "array of 2 integers");
				rd.results[i] = CONN_PROTOCOL;
				answered--;
				continue;
			}
			if (rd.replies[i]->element[0]->integer == 1) {
				held++;
				fences[i] = rd.replies[i]->element[1]->integer;
				if (fences[i] > fence)
					fence = fences[i];
			} else {
				busy++;
				if (hint == -1 || rd.replies[i]->element[1]->
				    integer < hint)
					hint = rd.replies[i]->element[1]->
					    integer;
			}
		}
		kept = held >= l->quorum ? lock_keep(l, &rd, fences, fence,
		    cap_ns) : KEEP_UNFENCED;
		lock_round_free(l, &rd);
		if (kept == KEEP_OURS) {
			free(fences);
			l->fence = fence;
			l->ttl_ms = ttl_ms;
			l->acquired_ns = start;
			l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
			    lock_drift_ms(ttl_ms));
			return (EXIT_OK);
		}
		if (kept == KEEP_NOT_REPLICATED) {
			/* Not safely ours: give it back, fail. */
			lock_forget_attempt(l);
			free(fences);
			return (EXIT_UNAVAILABLE);
		}
		if (kept == KEEP_TOO_LATE) {
			/* Ours, but too late to run anything under it. */
			lock_too_late(l, start, ttl_ms);
			lock_forget_attempt(l);
			log_info("%s; trying again", l->fail.text);
			now = clock_mono_ns();
			if (wait_ms == 0 || (deadline_ns > 0 &&
			    now >= deadline_ns)) {
				free(fences);
				if (l->spec.is_fair)
					lock_leave_queue(l);
				return (EXIT_UNAVAILABLE);
			}
			clock_sleep_ns(clock_ms_to_ns(LOCK_LATE_PAUSE_MS));
			continue;
		}
		/* A partial or doubtful take must not linger anywhere. */
		if (held > 0 || answered < l->nconns)
			lock_forget_attempt(l);
		/*
		 * A failure when too few servers answered to ever make a
		 * majority; otherwise the lock is busy (or the vote split):
		 * wait and try again like any busy lock.
		 */
		if (answered < l->quorum) {
			rc = lock_fail(l, held);
			free(fences);
			return (rc);
		}
		l->busy_ttl_ms = hint;
		now = clock_mono_ns();
		if (wait_ms == 0 || (deadline_ns > 0 && now >= deadline_ns)) {
			free(fences);
			if (l->spec.is_fair)
				lock_leave_queue(l);
			return (EXIT_BUSY);
		}
		if ((rc = lock_wait_for_release(l, deadline_ns)) != 0) {
			free(fences);
			return (rc);
		}
		if (deadline_ns > 0 && clock_mono_ns() >= deadline_ns)
			wait_ms = 0;	/* one last attempt at the deadline */
	}
}
