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
	KEEP_NOT_REPLICATED,	/* WAIT failed: give it back and fail */
	KEEP_REFUSED		/* spec.after_take said no: give it back */
};

/* A pause before trying again after a take that came too late. */
#define LOCK_LATE_PAUSE_MS	50

static int	 lock_is_reply(const redisReply *);
static void	 lock_leave_taken(struct lock *);
static int	 lock_raise_fence(struct lock *, struct lock_round *,
		     const long long *, long long, int64_t);
static enum lock_keep lock_keep(struct lock *, struct lock_round *,
		     const long long *, long long, int64_t);
static void	 lock_too_late(struct lock *, int64_t, int64_t);
static enum lock_keep lock_after_take(struct lock *, int64_t, int *);

/*
 * An acquire reply: {held (0 or 1), fence or TTL hint}, and when busy the
 * holder's token, host, pid, command, since and more (LUA_ACQUIRE_BODY).
 */
static int
lock_is_reply(const redisReply *r)
{
	return (r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    (r->elements == 2 || (r->elements >= 7 && r->elements <= 9)) &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[1]->type == REDIS_REPLY_INTEGER);
}

/* The arguments of every attempt (see acquire in scripts-lua.h). */
struct lock_attempt_args {
	const char	*argv[LOCK_ATTEMPT_ARGC];
	int		 argc;		/* 10 for a probe (-n), else all */
	char		 ttl[32], pid[32], since[32], lease[32], host[256];
	char		 history[16];
};

/* Release a lock that we took but are not keeping. */
static void
lock_leave_taken(struct lock *l)
{
	struct lock_round	rd;

	(void)lock_release_call(l, &rd);
	lock_round_free(l, &rd);
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
	int			 nkeys;

	for (i = 0; i < l->nconns; i++)
		if (rd->results[i] == CONN_OK && fences[i] >= f)
			at_least++;
	if (at_least >= l->quorum)
		return (0);
	(void)snprintf(fence, sizeof(fence), "%lld", f);
	argv[0] = l->token;
	argv[1] = fence;
	argv[2] = l->limit_arg;
	/* A mutex needs only its own three keys: no reader's or slot's. */
	nkeys = l->spec.mode == LOCK_MUTEX ? 3 : LOCK_NKEYS;
	lock_script_args(l, nkeys, 3, argv, NULL, &args, &lens);
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
	script_call_many(held, n, l->scripts->raise_fence, nkeys, 3, args, lens,
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
	if (lock_wait_replicas(l, cap_ns) == -1)
		return (KEEP_NOT_REPLICATED);
	return (clock_mono_ns() > cap_ns ? KEEP_TOO_LATE : KEEP_OURS);
}

/*
 * The lock is ours: the caller's check (spec.after_take, which may take
 * a round trip), then, whatever came before, at least the margin of
 * validity must be left to start anything under it.
 */
static enum lock_keep
lock_after_take(struct lock *l, int64_t start, int *rc)
{
	if (l->spec.after_take != NULL &&
	    (*rc = l->spec.after_take(l, l->spec.after_take_arg)) != EXIT_OK)
		return (KEEP_REFUSED);
	return (clock_mono_ns() > lock_cap_ns(start, l->spec.ttl_ms) ?
	    KEEP_TOO_LATE : KEEP_OURS);
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

/* What one attempt found on the servers. */
struct lock_attempt {
	size_t		 held, busy, answered, superseded;
	size_t		 unsent;	/* failed before any of it went out */
	long long	*fences;	/* per server: -1 where not taken */
	long long	 fence;		/* the highest */
	int64_t		 hint;		/* ms until the first holder's expiry */
};

static void
lock_attempt_args(struct lock *l, struct lock_attempt_args *a)
{
	if (gethostname(a->host, sizeof(a->host)) == -1)
		(void)snprintf(a->host, sizeof(a->host), "unknown");
	a->host[sizeof(a->host) - 1] = '\0';
	(void)snprintf(a->ttl, sizeof(a->ttl), "%lld",
	    (long long)l->spec.ttl_ms);
	(void)snprintf(a->pid, sizeof(a->pid), "%lld", l->spec.pid > 0 ?
	    (long long)l->spec.pid : (long long)getpid());
	/* Only a waiter joins a queue: a probe (-n, -w 0) changes nobody's
	 * place, and leaves nothing behind. */
	(void)snprintf(a->lease, sizeof(a->lease), "%d", l->spec.is_fair &&
	    l->spec.wait_ms != 0 ? LOCK_FAIR_LEASE_MS : 0);
	a->argv[0] = l->token;
	a->argv[1] = a->ttl;
	a->argv[2] = a->host;
	a->argv[3] = a->pid;
	a->argv[4] = l->spec.command;
	a->argv[5] = a->since;
	a->argv[6] = l->limit_arg;
	a->argv[7] = a->lease;
	a->argv[8] = l->q.wake_prefix;
	/* A caller that will wait notes it (a writer's intent keeps new
	 * readers out, and status shows every waiter); -n does not, so it
	 * leaves nothing behind. */
	a->argv[9] = l->spec.wait_ms != 0 ? LOCK_STR(LOCK_INTENT_LEASE_MS) : "0";
	lock_queue_args(l, &a->argv[10]);
	/* A manual hold (acquire) marks its metadata 'm': left to expire,
	 * its next holder writes it to the history as expired. */
	if (!l->spec.listens)
		a->argv[14] = "m";
	(void)snprintf(a->history, sizeof(a->history), "%d",
	    l->opts->history_size);
	a->argv[16] = a->history;
	a->argc = LOCK_ATTEMPT_ARGC;
}

/* Keep who holds the lock now, for the busy message and -v. */
static void
lock_note_holder(struct lock *l, const redisReply *r)
{
	struct lock_holder	*h = &l->busy;
	const redisReply	*e;
	char			*s[5], *end;
	size_t			 i;

	if (r->elements < 7)
		return;
	lock_queue_mixed(l, r);
	e = r->elements >= 8 ? r->element[7] : NULL;
	if (e != NULL && e->type == REDIS_REPLY_STRING && e->len == 2 &&
	    memcmp(e->str, "no", 2) == 0 && !l->said_no_cancel) {
		l->said_no_cancel = 1;
		l->holder_changed = 1;	/* -v says it with the holder */
	}
	for (i = 0; i < 5; i++) {
		e = r->element[2 + i];
		if (e->type != REDIS_REPLY_STRING)
			return;
		s[i] = xmalloc(e->len + 1);
		memcpy(s[i], e->str, e->len);
		s[i][e->len] = '\0';
	}
	if (*s[0] != '\0' && (h->token == NULL || strcmp(h->token, s[0]) != 0))
		l->holder_changed = 1;
	lock_holder_clear(h);
	h->token = s[0];
	h->host = *s[1] != '\0' ? s[1] : (free(s[1]), NULL);
	/* A reader kept out by a waiting writer is told its pid as "wP". */
	h->writer = s[2][0] == 'w';
	h->pid = strtoll(s[2] + h->writer, &end, 10);
	if (s[2][h->writer] == '\0' || *end != '\0' || h->pid <= 0)
		h->pid = -1;
	free(s[2]);
	h->command = lock_command_shown(s[3], strlen(s[3]));
	free(s[3]);
	h->since_ms = strtoll(s[4], &end, 10);
	if (*end != '\0' || h->since_ms < 0)
		h->since_ms = 0;
	free(s[4]);
	h->fence = -1;
}

/* Count one attempt's answers: who took it, who is busy, the fences. */
static void
lock_count_attempt(struct lock *l, struct lock_round *rd,
    struct lock_attempt *at)
{
	const redisReply	*r;
	size_t			 i;

	at->held = at->busy = at->superseded = at->unsent = 0;
	at->hint = -1;
	at->fence = -1;
	for (i = 0; i < l->nconns; i++) {
		at->fences[i] = -1;
		if (rd->results[i] != CONN_OK) {
			at->unsent += !conn_may_have_run(l->conns[i]);
			continue;
		}
		r = rd->replies[i];
		if (!lock_is_reply(r)) {
			(void)lock_unexpected(l, i, "acquire", r,
			    "array of 2 integers");
			rd->results[i] = CONN_PROTOCOL;
			at->answered--;
			continue;
		}
		if (r->element[0]->integer == 1) {
			at->held++;
			at->fences[i] = r->element[1]->integer;
			if (at->fences[i] > at->fence)
				at->fence = at->fences[i];
			continue;
		}
		if (r->element[0]->integer == 2) {
			at->superseded += (size_t)lock_superseded(l, r);
			continue;
		}
		at->busy++;
		if (at->hint == -1 || r->element[1]->integer < at->hint)
			at->hint = r->element[1]->integer;
		if (at->busy == 1)
			lock_note_holder(l, r);
	}
}

/*
 * One attempt on every server at once, begun at start; no step of it may
 * outlast what the lock would be valid for.  Returns what lock_keep()
 * decided, or KEEP_UNFENCED when no majority took it.
 */
static enum lock_keep
lock_attempt(struct lock *l, struct lock_attempt_args *a, int64_t start,
    struct lock_attempt *at, struct lock_next *next)
{
	struct lock_round	rd;
	enum lock_keep		kept;
	int64_t			cap_ns = lock_cap_ns(start, l->spec.ttl_ms);

	if (next->is_sent) {
		/* The wait sent it, begun at start (next->sent_ns). */
		next->is_sent = 0;
		rd = next->rd;
		at->answered = next->answered;
	} else {
		(void)snprintf(a->since, sizeof(a->since), "%lld",
		    (long long)clock_wall_ms());
		at->answered = lock_call(l, l->scripts->acquire, LOCK_NKEYS,
		    a->argc, a->argv, NULL, cap_ns, &rd);
	}
	lock_count_attempt(l, &rd, at);
	kept = at->held >= l->quorum ? lock_keep(l, &rd, at->fences,
	    at->fence, cap_ns) : KEEP_UNFENCED;
	lock_round_free(l, &rd);
	return (kept);
}

/*
 * After an attempt that did not make the lock ours: 0 to try again (after
 * waiting for a release), or the exit code to return.
 */
static int
lock_not_taken(struct lock *l, const struct lock_attempt_args *a,
    enum lock_keep kept, int64_t start, struct lock_attempt *at,
    struct lock_next *next, int64_t deadline_ns)
{
	int last = l->spec.wait_ms == 0 ||
	    (deadline_ns > 0 && clock_mono_ns() >= deadline_ns);
	int fail_rc = 0;

	if (kept == KEEP_NOT_REPLICATED) {
		/* Not safely ours: release it (and wake the next: we are
		 * leaving), fail. */
		lock_leave_taken(l);
		return (EXIT_UNAVAILABLE);
	}
	if (kept == KEEP_TOO_LATE) {
		/* Ours, but too late to run anything under it. */
		lock_too_late(l, start, l->spec.ttl_ms);
		lock_forget_attempt(l, a->argv, a->argc, !last);
		log_info("%s; trying again", l->fail.text);
		if (last)
			return (EXIT_UNAVAILABLE);
		clock_sleep_ns(clock_ms_to_ns(LOCK_LATE_PAUSE_MS));
		return (0);
	}
	if (at->superseded == 0 && at->answered < l->quorum)
		fail_rc = lock_fail(l, at->held);
	/* A partial or doubtful take must not linger anywhere; a server
	 * that never got the attempt has nothing of it. */
	if (at->held > 0 || at->answered + at->unsent < l->nconns)
		lock_forget_attempt(l, a->argv, a->argc, !last &&
		    at->superseded == 0 && at->answered >= l->quorum);
	/* A split vote: lock_wait_for_release() backs off. */
	l->splits = at->held > 0 ? l->splits + 1 : 0;
	if (at->superseded > 0)
		return (EXIT_SUPERSEDED);	/* lock_superseded() said why */
	/*
	 * A failure when too few servers answered to ever make a majority
	 * (recorded before the give-back, whose round must not replace it);
	 * otherwise the lock is busy (or the vote split): wait and try again
	 * like any busy lock.
	 */
	if (at->answered < l->quorum)
		return (lock_ride_out(l, fail_rc, deadline_ns, last));
	l->was_busy = 1;
	l->busy_ttl_ms = at->hint;
	if (last)
		return (EXIT_BUSY);
	lock_say_waiting(l);
	if (l->spec.before_wait != NULL) {
		l->spec.before_wait(l->spec.before_wait_arg);
		l->spec.before_wait = NULL;	/* once */
	}
	return (lock_ride_out(l, lock_wait_for_release(l, next, deadline_ns),
	    deadline_ns, last));
}

/*
 * Before the first attempt: our token, the attempt's arguments, and those
 * of an attempt sent behind a wait (next), which leaves acquired-at to
 * the server's clock.
 */
static void
lock_acquire_begin(struct lock *l, struct lock_attempt_args *a,
    struct lock_next *next)
{
	l->may_wait = l->spec.wait_ms != 0;
	l->splits = 0;
	if (l->token == NULL) {
		l->token = xmalloc(TOKEN_HEX_LEN + 1);
		token_new(l->token);
	}
	lock_attempt_args(l, a);
	memset(next, 0, sizeof(*next));
	next->argc = a->argc;
	memcpy(next->argv, a->argv, sizeof(next->argv));
	next->argv[5] = "";	/* acquired-at: the server's clock */
}

/*
 * Acquire: one atomic script per attempt, on every server at once.  The
 * lock is ours iff a majority took it and the time that took leaves some
 * validity (TTL - elapsed - drift).  The spec's wait_ms is WAIT_FOREVER,
 * 0 for a single attempt, or how long to keep trying.  Returns EXIT_OK
 * (l->fence, l->valid_until_ns set), EXIT_BUSY (l->busy set), or the
 * exit code of a failure (l->fail set).
 */
int
lock_acquire(struct lock *l)
{
	struct lock_attempt_args a;
	struct lock_attempt	 at;
	struct lock_next	 next;
	enum lock_keep		 kept;
	int64_t			 deadline_ns = 0, start, taken;
	int			 rc;

	lock_acquire_begin(l, &a, &next);
	if (l->spec.wait_ms != WAIT_FOREVER)
		deadline_ns = clock_mono_ns() + clock_ms_to_ns(l->spec.wait_ms);
	at.fences = xcalloc(l->nconns, sizeof(*at.fences));
	for (;;) {
		start = next.is_sent ? next.sent_ns : clock_mono_ns();
		kept = lock_attempt(l, &a, start, &at, &next);
		taken = clock_mono_ns();
		if (kept == KEEP_OURS && (kept = lock_after_take(l, start,
		    &rc)) == KEEP_OURS)
			break;
		if (kept == KEEP_REFUSED) {
			lock_leave_taken(l);
			free(at.fences);
			return (rc);
		}
		if ((rc = lock_not_taken(l, &a, kept, start, &at, &next,
		    deadline_ns)) != 0) {
			/* Superseded: out of the queue already. */
			if (rc != EXIT_UNAVAILABLE && rc != EXIT_SUPERSEDED)
				lock_leave_queue(l);
			free(at.fences);
			return (rc);
		}
		/* Noted as a waiter now (status shows it): the next
		 * attempts keep that up, and drop it when they take. */
		if (!l->spec.is_fair)
			a.argv[7] = next.argv[7] = "-1";
		if (deadline_ns > 0 && clock_mono_ns() >= deadline_ns)
			l->spec.wait_ms = 0;	/* one last try at the deadline */
	}
	free(at.fences);
	l->fence = at.fence;
	l->ttl_ms = l->spec.ttl_ms;
	/*
	 * The validity counts from when the attempt was sent, which for an
	 * attempt sent behind a wait is the wait's start: that is all we
	 * know of when the server may have set the key.  How long the lock
	 * was held counts from when we knew it was ours.
	 */
	l->acquired_ns = start;
	l->taken_ns = taken;
	l->taken_wall_ms = clock_wall_ms();
	l->valid_until_ns = start + clock_ms_to_ns(l->ttl_ms -
	    lock_drift_ms(l->ttl_ms));
	return (EXIT_OK);
}
