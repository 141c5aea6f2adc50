/* SPDX-License-Identifier: MIT */
/*
 * run's release phase: the job is over.  The lock given back (or kept
 * for the rest of --min-hold), --skip-outdated's record written while
 * the lock is still ours, and what a failed release means said in one
 * line.
 */

#include <stdio.h>
#include <termios.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

static void	 supervise_release_failed(struct supervisor *, int);
static int64_t	 supervise_min_hold_left_ms(const struct supervisor *,
		     int64_t);

/*
 * Give the lock back, or with --min-hold keep it for the rest by
 * shortening its TTL rather than deleting the key, so that a host whose
 * clock is late does not run the same job again.
 */
void
supervise_release(struct supervisor *s)
{
	int64_t	now = clock_mono_ns(), rest_ms;
	int	rc;

	if (s->tty_fd != -1)
		(void)tcsetpgrp(s->tty_fd, getpgrp());
	/*
	 * Recorded while the lock is ours, so that no older order gets in
	 * first; a cancel or force that came after the command's own end
	 * changes nothing of what it did.
	 */
	if (s->opts->record_order >= 0 && s->code == 0 && s->code_sig == 0 &&
	    (s->is_late_end || (!s->is_lost && !s->is_cancelled)) &&
	    lock_record_done(s->lock, s->opts->record_order) != EXIT_OK)
		log_warnx("%s", lock_error(s->lock));
	/* Nothing to release (someone else's lock now, or expired), or
	 * kept by --min-hold: the history entry goes alone. */
	if (s->lost_not_owner ||
	    (s->is_lost && now >= lock_valid_until_ns(s->lock))) {
		lock_history_note(s->lock);
		return;
	}
	rest_ms = s->is_lost ? 0 : supervise_min_hold_left_ms(s, now);
	if (rest_ms > 0)
		lock_history_note(s->lock);
	rc = rest_ms > 0 ? lock_linger(s->lock, rest_ms) :
	    lock_release(s->lock);
	if (!s->is_lost)
		s->held_until_ns = rc == EXIT_OK && rest_ms > 0 ?
		    now + clock_ms_to_ns(rest_ms) : clock_mono_ns();
	if (rc == EXIT_OK && rest_ms > 0)
		log_info("keeping lock '%s' for %lldms more (--min-hold)",
		    lock_name(s->lock), (long long)rest_ms);
	else if (rc == EXIT_OK)
		log_info("released lock '%s'", lock_name(s->lock));
	else
		supervise_release_failed(s, rc);
}

/*
 * What is left of --min-hold at now, in milliseconds rounded up.  It
 * counts from the take, the answer that made the lock ours, not from
 * when that attempt was sent (for a run that waited, the start of its
 * wait): the server granted the lock before we heard of it, so the lock
 * stays at least --min-hold after it was granted.
 */
static int64_t
supervise_min_hold_left_ms(const struct supervisor *s, int64_t now)
{
	int64_t left_ns = lock_taken_ns(s->lock) +
	    clock_ms_to_ns(s->opts->min_hold_ms) - now;

	return (left_ns > 0 ? (left_ns + 999999) / 1000000 : 0);
}

/*
 * The release (or --min-hold's extension) failed.  After a lost lock
 * that is the same failure, already told in one line: -v only.  Else say
 * what is known: the server cannot tell a lock that expired from one
 * deleted by someone else, but our own clock knows when it expired.
 */
static void
supervise_release_failed(struct supervisor *s, int rc)
{
	const char *name = lock_name(s->lock);

	if (s->is_lost)
		log_info("lock '%s' was lost, and not released either (it "
		    "will expire by its TTL): %s", name, lock_error(s->lock));
	else if (rc != EXIT_NOT_OWNER)
		log_warnx("cannot release lock '%s' (it will expire by its "
		    "TTL): %s", name, lock_error(s->lock));
	else if (clock_mono_ns() >= lock_valid_until_ns(s->lock))
		log_warnx("lock '%s' had already expired when the command "
		    "ended", name);
	else if (lock_not_owner(s->lock) == LOCK_GONE)
		log_warnx("lock '%s' was released or deleted by someone else, "
		    "or had expired, when the command ended", name);
	else
		log_warnx("lock '%s' was held by another owner when the "
		    "command ended", name);
}
