/* SPDX-License-Identifier: MIT */
/*
 * Waiting for a busy lock without polling.
 *
 * The release script adds the one member of a wake key (a sorted set)
 * that waiters block on with BZPOPMIN, so a release wakes exactly one
 * waiter, at once.  Blocking pops rather than pub/sub: a message published
 * while a waiter is between its failed attempt and its SUBSCRIBE is lost,
 * and every subscriber gets every message (a herd); a member added then
 * stays until one waiter takes it.  A fair waiter (--fair) blocks on a wake
 * key of its own that the release fills only when that waiter is at the
 * head of the queue.  Each block is bounded by the holder's remaining TTL
 * (an expiry sends no wake-up) and by a slow, jittered fallback poll: the
 * last resort for a wake-up lost because the waiter it went to died before
 * using it.  With one server, the next attempt goes in the same write as
 * the BZPOPMIN (lock_wait_behind()): the server runs it in the step that
 * wakes the waiter, and the lock is the waiter's before it has woken.
 */

#include <sys/signalfd.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/* The first pause after an unavailable round of a -w waiter; doubled up
 * to 16 times that. */
#define LOCK_OUTAGE_PAUSE_MS	100
#define LOCK_FALLBACK_POLL_MS	2000
/* A fair waiter re-asserts its place (its lease) more often than the
 * lease runs out: LOCK_FAIR_LEASE_MS. */
#define LOCK_FAIR_POLL_MS	1000
#define LOCK_POLL_MS		50	/* servers without a usable BZPOPMIN */
/*
 * After a split vote, the first LOCK_SPLIT_TRIES tries again come after a
 * pause of LOCK_SPLIT_PAUSE_MS, doubled each time (jittered, so that the
 * waiters that split it part), rather than after a wake-up: a vote split
 * between waiters is decided within a few tries, and one split by a holder
 * that a server lost (its restart, say) lasts until that holder releases,
 * which wakes us anyway.  A plain sleep, as a BZPOPMIN's timeout is only
 * as fine as the server's tick (100 ms), and a wake-up is not lost
 * meanwhile: it stays in its key.
 */
#define LOCK_SPLIT_PAUSE_MS	10
#define LOCK_SPLIT_TRIES	5
/* An attempt goes behind a wait of at most this share of the TTL. */
#define LOCK_LEAD_TTL_SHARE	8

static int	 lock_split_pause(const struct lock *, int64_t);
static void	 lock_poll_instead(struct lock *, const char *, size_t);
static int	 lock_may_lead(const struct lock *, const struct lock_next *,
		     int64_t, int);
static int	 lock_stop_fd(const struct lock *);
static int	 lock_wait_behind(struct lock *, struct lock_next *,
		     const char **, const size_t *, int64_t, int);
static int	 lock_behind_outcome(struct lock *, struct lock_next *,
		     struct conn_lead *, int);
static int64_t	 lock_wait_time(const struct lock *, int64_t, int64_t, int *);
static int	 lock_wait_outcome(struct lock *, int, redisReply **, const int *,
		     int64_t);
static int	 lock_wait_all(struct lock *, const char **, const size_t *,
		     int64_t, int64_t, int);

/*
 * Block until the holder releases (BZPOPMIN on the wake key), the holder's
 * TTL ends, the fallback poll interval passes, or deadline_ns (0: none).
 * Returns 0 to attempt again (next->is_sent: the attempt is made, behind
 * the wait), or the exit code of a failure.
 */
int
lock_wait_for_release(struct lock *l, struct lock_next *next,
    int64_t deadline_ns)
{
	const char	 *argv[3];
	size_t		  lens[3];
	int		  rc, is_exact;
	char		  timeout[32], *own = NULL;
	int64_t		  block_ms, cap_ns, now = clock_mono_ns();

	if (l->splits > 0 && l->splits <= LOCK_SPLIT_TRIES)
		return (lock_split_pause(l, deadline_ns));
	if ((block_ms = lock_wait_time(l, now, deadline_ns, &is_exact)) <= 0)
		return (0);
	if (l->cannot_block) {
		/* While merely waiting, no lock is ours: the signals that
		 * end us, held by acquire and run (endsig.c), may do so. */
		clock_sleep_masked_ns(clock_ms_to_ns(block_ms),
		    l->spec.wait_mask);
		return (0);
	}
	(void)snprintf(timeout, sizeof(timeout), "%.3f",
	    (double)block_ms / 1000.0);
	argv[0] = "BZPOPMIN";
	lens[0] = 8;
	/* A queued waiter waits for its own turn (or a note that a newer
	 * one superseded it), not for any release; a reader for the release
	 * that lets every reader in. */
	if (l->spec.is_fair || l->spec.mode == LOCK_SHARED) {
		own = xasprintf("%s%s", l->q.wake_prefix, l->token);
		argv[1] = own;
		lens[1] = strlen(own);
	} else {
		argv[1] = l->keys[LK_WAKE];
		lens[1] = l->keys_len[LK_WAKE];
	}
	argv[2] = timeout;
	lens[2] = strlen(timeout);
	/*
	 * The server checks blocking timeouts only on its event loop's tick
	 * (100 ms at the default hz), so when the moment matters (holder's
	 * expiry, our -w deadline) we stop waiting ourselves, at the cost of
	 * a reconnect for the next attempt.
	 */
	cap_ns = is_exact ? now + clock_ms_to_ns(block_ms) : 0;
	if (lock_may_lead(l, next, block_ms, is_exact) &&
	    (rc = lock_wait_behind(l, next, argv, lens, block_ms,
	    own != NULL)) != -1) {
		free(own);
		return (rc);
	}
	rc = lock_wait_all(l, argv, lens, block_ms, cap_ns, own != NULL);
	free(own);
	return (rc);
}

/*
 * The BZPOPMIN of argv on every server at once; the first wake-up is
 * enough.  has_own: the key is the waiter's own (it ends with our token).
 */
static int
lock_wait_all(struct lock *l, const char **argv, const size_t *lens,
    int64_t block_ms, int64_t cap_ns, int has_own)
{
	redisReply	**replies;
	int		 *results, rc;
	size_t		  i;

	replies = xcalloc(l->nconns, sizeof(*replies));
	results = xcalloc(l->nconns, sizeof(*results));
	/* -v -v cuts our token from the end of our own wake key. */
	for (i = 0; has_own && i < l->nconns; i++)
		conn_set_secret(l->conns[i], 1, l->q.wake_prefix_len);
	/* The poll loop lets the signals of spec.wait_mask end us meanwhile
	 * (conn_config.wait_mask): no lock is ours while we wait. */
	conn_command_many(l->conns, l->nconns, 1, 3, argv, lens,
	    clock_ms_to_ns(block_ms), cap_ns, replies, results);
	rc = lock_wait_outcome(l, has_own, replies, results, cap_ns);
	free(replies);
	free(results);
	return (rc);
}

/*
 * Whether the next attempt may go behind the wait (struct lock_next): on
 * one server only (with several, the first wake-up ends the wait on all,
 * and an attempt queued behind another's BZPOPMIN would run late, or not
 * at all), when the wait ends on the server's own timeout rather than
 * ours (is_exact: we would have to cut it off), and when it is short
 * enough next to the TTL: the attempt's validity counts from its sending,
 * at the start of the wait.  At the default TTL (30 s) every wait that
 * the fallback poll bounds qualifies.
 */
static int
lock_may_lead(const struct lock *l, const struct lock_next *next,
    int64_t block_ms, int is_exact)
{
	return (next != NULL && l->nconns == 1 && !is_exact &&
	    block_ms * LOCK_LEAD_TTL_SHARE <= l->spec.ttl_ms &&
	    conn_can_lead(l->conns[0]));
}

/*
 * A signalfd for the end signals that waiting lets through (the caller's
 * mask, spec.wait_mask): held while an attempt is in flight behind the
 * wait, they stop it instead.  -2 when no such signal is to be watched,
 * -1 on failure (then the wait goes without an attempt behind it).
 */
static int
lock_stop_fd(const struct lock *l)
{
	sigset_t	set;
	int		i, any = 0, fd;

	if (l->spec.wait_mask == NULL)
		return (-2);
	if (sigemptyset(&set) == -1)
		return (-1);
	for (i = 0; endsig_list[i] != 0; i++)
		if (sigismember(l->spec.wait_mask, endsig_list[i]) == 0) {
			if (sigaddset(&set, endsig_list[i]) == -1)
				return (-1);
			any = 1;
		}
	if (!any)
		return (-2);
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1)
		log_debug("signalfd: %s", strerror(errno));
	return (fd);
}

/*
 * The wait of lock_wait_for_release(), with the next attempt sent behind
 * it in the same write: the server runs it the moment it wakes us (or the
 * wait times out), a round trip sooner than we could.  Returns what
 * lock_wait_for_release() does, or -1 if it could not be set up (then
 * nothing was sent).
 */
static int
lock_wait_behind(struct lock *l, struct lock_next *next, const char **argv,
    const size_t *lens, int64_t block_ms, int has_own)
{
	struct conn_lead	lead;
	int			fd, rc;

	if ((fd = lock_stop_fd(l)) == -1)
		return (-1);
	memset(&lead, 0, sizeof(lead));
	lead.argc = 3;
	lead.argv = argv;
	lead.lens = lens;
	lead.block_ns = clock_ms_to_ns(block_ms);
	/* A queued waiter's or reader's own key ends with its token. */
	lead.secret_arg = has_own ? 1 : 0;
	lead.secret_from = l->q.wake_prefix_len;
	lead.stop_fd = fd >= 0 ? fd : -1;
	next->sent_ns = clock_mono_ns();
	next->answered = lock_call_behind(l, &lead, l->scripts->acquire,
	    next->argc, next->argv, &next->rd);
	next->is_sent = 1;
	if (fd >= 0)
		(void)close(fd);
	rc = lock_behind_outcome(l, next, &lead, has_own);
	if (lead.reply != NULL)
		freeReplyObject(lead.reply);
	return (rc);
}

/*
 * What a wait with the attempt behind it came to.  Stopped by a signal
 * that would end us: the attempt's fate is unknown, so give back what it
 * may have taken and leave the queue, then let the signal act (as it
 * would have during a plain wait).  Superseded (a note in our own key):
 * undo an attempt that did not see it (it came after the note was
 * popped).  Otherwise 0: the caller judges the attempt, which a lost
 * reply makes doubtful there like any other.
 */
static int
lock_behind_outcome(struct lock *l, struct lock_next *next,
    struct conn_lead *lead, int has_own)
{
	const redisReply	*r = next->rd.replies[0];
	int			 is_note, was_superseded;

	if (lead->result == CONN_SERVER_ERROR)
		lock_poll_instead(l, lead->reply->str, lead->reply->len);
	is_note = has_own && lead->result == CONN_OK &&
	    lock_wake_note(l, lead->reply);
	if (!lead->is_stopped && !is_note)
		return (0);
	was_superseded = r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    r->elements > 0 && r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[0]->integer == 2;
	lock_round_free(l, &next->rd);
	next->is_sent = 0;
	if (!was_superseded) {
		lock_forget_attempt(l, next->argv, next->argc, 0);
		lock_leave_queue(l);
	}
	if (is_note)
		return (EXIT_SUPERSEDED);
	if (endsig_pending() != 0)
		/* It ends us here, at once: nothing of the lock is ours. */
		clock_sleep_masked_ns(clock_ms_to_ns(1), l->spec.wait_mask);
	return (0);
}

/*
 * A BZPOPMIN refused (why: its error): Redis before 6.0 takes whole
 * seconds only, so this waiter polls from now on.
 */
static void
lock_poll_instead(struct lock *l, const char *why, size_t len)
{
	char text[256];

	log_sanitize(text, sizeof(text), why, len);
	log_debug("%s; polling instead", text);
	l->cannot_block = 1;
}

/* The pause after a split vote (LOCK_SPLIT_PAUSE_MS); 0 to try again. */
static int
lock_split_pause(const struct lock *l, int64_t deadline_ns)
{
	int64_t	ms = LOCK_SPLIT_PAUSE_MS << (l->splits - 1);
	int64_t	ns = clock_ms_to_ns(ms / 2) + (int64_t)(token_random_u64() %
		    (uint64_t)clock_ms_to_ns(ms));
	int64_t	now = clock_mono_ns();

	if (deadline_ns > 0 && now + ns > deadline_ns)
		ns = deadline_ns > now ? deadline_ns - now : 0;
	/* Nothing is ours meanwhile: the end signals may end us. */
	clock_sleep_masked_ns(ns, l->spec.wait_mask);
	return (0);
}

/*
 * How long to block, from now: until the fallback poll (jittered, so that
 * waiters whose wake-ups fall at the same moment spread), the holder's
 * expiry or deadline_ns (0: none), whichever comes first; *is_exact when
 * the moment matters (one of the last two).
 */
static int64_t
lock_wait_time(const struct lock *l, int64_t now, int64_t deadline_ns,
    int *is_exact)
{
	int64_t poll_ms = l->spec.is_fair ? LOCK_FAIR_POLL_MS :
		    LOCK_FALLBACK_POLL_MS;
	int64_t block_ms;

	*is_exact = 0;
	block_ms = poll_ms * 3 / 4 + (int64_t)(token_random_u64() %
	    (uint64_t)(poll_ms / 2 + 1));
	if (l->busy_ttl_ms > 0 && l->busy_ttl_ms + 1 < block_ms) {
		block_ms = l->busy_ttl_ms + 1;
		*is_exact = 1;
	}
	if (l->cannot_block && block_ms > LOCK_POLL_MS)
		block_ms = LOCK_POLL_MS;
	if (deadline_ns > 0 && now + clock_ms_to_ns(block_ms) > deadline_ns) {
		block_ms = (deadline_ns - now) / 1000000;
		*is_exact = 1;
	}
	return (block_ms);
}

/*
 * What the wait's replies mean: 0 to attempt again, EXIT_SUPERSEDED when
 * our own key (has_own) held a newer waiter's note, or the exit code of a
 * failure.  Frees the replies.
 */
static int
lock_wait_outcome(struct lock *l, int has_own, redisReply **replies,
    const int *results, int64_t cap_ns)
{
	size_t	i;
	int	rc = -1;

	for (i = 0; i < l->nconns; i++) {
		/* A note in our own key: a newer waiter superseded us. */
		if (has_own && results[i] == CONN_OK &&
		    lock_wake_note(l, replies[i]))
			rc = EXIT_SUPERSEDED;
		if (replies[i] != NULL)
			freeReplyObject(replies[i]);
		if (rc == EXIT_SUPERSEDED)
			continue;
		/* MOVED: the next attempt follows it, then waits there. */
		if (results[i] == CONN_OK || results[i] == CONN_REDIRECT)
			rc = 0;
	}
	for (i = 0; rc == -1 && i < l->nconns; i++) {
		if (results[i] == CONN_SERVER_ERROR) {
			lock_poll_instead(l, conn_error(l->conns[i]),
			    strlen(conn_error(l->conns[i])));
			rc = 0;
		}
	}
	if (rc == -1 && cap_ns > 0 && clock_mono_ns() >= cap_ns)
		rc = 0;		/* our own deadline, not a failure */
	if (rc == -1 && l->nconns > 1)
		rc = 0;		/* the next attempt tells whether a quorum is up */
	if (rc == -1) {
		rc = conn_exit_code(results[0]);
		lock_failed(l, rc, "%s", conn_error(l->conns[0]));
	}
	return (rc);
}

/*
 * A waiter that gives up leaves the fair queue and drops its intent at
 * once (best effort: its leases would drop it anyway); one that never
 * waited (-n, not fair) has left nothing to drop.
 */
void
lock_leave_queue(struct lock *l)
{
	const char		*argv[1] = { l->token };
	struct lock_round	 rd;

	if (!l->spec.is_fair && !l->may_wait)
		return;
	(void)lock_call(l, l->scripts->leave, LOCK_NKEYS, 1, argv, NULL, 0,
	    &rd);
	lock_round_free(l, &rd);
}

/*
 * A -w waiter rides out a server outage shorter than its wait: a round
 * that too few servers answered is tried again, with a growing pause, until
 * the deadline.  Only once the servers have answered "busy" in this wait:
 * a wrong URL or a server that was never up still fails at once.  Nothing
 * is ours meanwhile (a doubtful take was given back, or holds our token
 * only, which the next attempt takes up), so the signals that end us may
 * do so during the pause.  Returns rc, or 0 to try again.
 */
int
lock_ride_out(struct lock *l, int rc, int64_t deadline_ns, int last)
{
	char	why[sizeof(l->fail.text)];
	int64_t	pause_ns, left_ns;

	if (rc != EXIT_UNAVAILABLE || deadline_ns == 0 || !l->was_busy)
		return (rc);
	if (last) {
		memcpy(why, l->fail.text, sizeof(why));
		lock_failed(l, rc, "lock '%s': the servers were unavailable "
		    "until the end of the wait: %.900s", l->spec.key, why);
		return (rc);
	}
	log_info("lock '%s': %s; trying again until the wait ends",
	    l->spec.key, l->fail.text);
	pause_ns = clock_ms_to_ns(LOCK_OUTAGE_PAUSE_MS << (l->outages < 4 ?
	    l->outages : 4));
	l->outages++;
	left_ns = deadline_ns - clock_mono_ns();
	clock_sleep_masked_ns(pause_ns < left_ns ? pause_ns : left_ns,
	    l->spec.wait_mask);
	l->fail.code = 0;
	l->fail.text[0] = '\0';
	return (0);
}

/* -v: say who holds the lock we wait for, once per holder. */
void
lock_say_waiting(struct lock *l)
{
	char	desc[512];

	/* Not for nothing: the holder's "since" costs a time zone lookup. */
	if (!l->holder_changed || log_verbosity < 1)
		return;
	l->holder_changed = 0;
	lock_describe_holder(l, desc, sizeof(desc));
	log_info("waiting for lock '%s', held by %s%s", l->spec.key, desc,
	    l->said_no_cancel == 1 ? ", which --cancel-running does not stop "
	    "(not an older run of --queue latest)" : "");
	if (l->said_no_cancel == 1)
		l->said_no_cancel = 2;	/* once */
}
