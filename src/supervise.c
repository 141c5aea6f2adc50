/* SPDX-License-Identifier: MIT */
/*
 * Supervising run's command while the lock is held: renewal on a
 * CLOCK_MONOTONIC schedule, the signals sent to us, and the answer to a
 * lost lock.
 *
 * Nothing of the job may outlive its lock.  The job's processes are the
 * guardian's (supervise-guard.c): a process of ours between us and the
 * command, which starts the command, is the subreaper of everything the
 * command starts, and kills all of it if we are killed.  The lock is held,
 * and renewed, until the guardian has seen the command and every process
 * it started exit, as flock(1) keeps its lock while any process still has
 * the descriptor; with --release-on-exit only until the command itself
 * exits, as flock -o.  run's exit status is the command's.
 *
 * The design follows tini: the signals we care about are blocked and
 * collected with sigtimedwait(), whose timeout is the next renewal or
 * deadline, so there are no asynchronous handlers and no self-pipe.  The
 * guardian's messages come over a socket pair, each announced with a
 * SIGCHLD, so the same sigtimedwait() hears of them.
 *
 * Process groups: the command gets a process group of its own, so that a
 * lost lock can stop everything it started (a shell's pipeline included).
 * When we were started in the terminal's foreground, that group becomes the
 * foreground group: Ctrl-C then reaches the command exactly once, straight
 * from the terminal, and not a second time through us.  Signals sent to
 * our pid (kill, systemd, CI runners) go to the command's whole group, as
 * timeout(1) sends them; once the command has exited, to what it left
 * behind.  A lost lock's signal goes to all of the job at once.
 *
 * supervise_run() is a sequence of phases, each a section below: start
 * (block the signals, start the guardian and the command), hold (renew,
 * meet the deadlines, pass signals on, until the command exits), drain
 * (the same until what it started has exited too, unless
 * --release-on-exit), lose (any time the lock is lost: its signal, then
 * SIGKILL), release (or keep it for --min-hold), and back to the caller's
 * signal mask.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

/* A renewal needs at least this long to have a chance. */
#define SUPERVISE_MIN_TRY_MS	5

/* init */
static void	 supervise_init(struct supervisor *, struct lock *,
		     const struct supervise_opts *);
/* hold, then drain */
static void	 supervise_hold(struct supervisor *);
static void	 supervise_drain(struct supervisor *);
static void	 supervise_step(struct supervisor *);
static int	 supervise_deadlines(struct supervisor *, int64_t);
static void	 supervise_renew(struct supervisor *, int64_t);
static void	 supervise_wait(struct supervisor *, int64_t);
/* lose */
static void	 supervise_lose(struct supervisor *, const char *);
static void	 supervise_lose_why(struct supervisor *, const char *);
static void	 supervise_lose_due(struct supervisor *, int64_t);
/* back to the caller */
static void	 supervise_unblock(struct supervisor *);
static enum run_outcome supervise_outcome(const struct supervisor *);
static int	 supervise_code(const struct supervisor *);

/*
 * Run argv while holding l (already acquired), phase by phase.  Returns
 * run's exit status: the command's, or opts->lost_exit_code if the lock
 * was lost.  The signal mask and SIGCHLD's disposition are as they were
 * when we were called, whichever way we return.
 */
int
supervise_run(struct lock *l, const struct supervise_opts *o, char **argv)
{
	struct supervisor s;

	supervise_init(&s, l, o);
	if (supervise_start(&s, argv) == -1) {
		(void)lock_release(l);
		supervise_unblock(&s);
		o->end->outcome = RUN_ERROR;
		return (EXIT_UNAVAILABLE);
	}
	supervise_audit_start(&s, argv);
	supervise_listen_open(&s);
	supervise_hold(&s);
	supervise_drain(&s);
	o->end->outcome = supervise_outcome(&s);
	/* How it ended goes to the history with the release (a forced
	 * run's entry is the force's own). */
	if (o->end->outcome != RUN_FORCED)
		lock_history_end(l, outcome_name(o->end->outcome),
		    supervise_code(&s), o->end->queued_ms);
	/* The next holder waits for the release, not for our listening. */
	supervise_release(&s);
	supervise_listen_close(&s);
	(void)close(s.guard_fd);
	supervise_unblock(&s);
	o->end->held_ms = supervise_held_ms(&s);
	supervise_audit(&s, o->end->outcome);
	return (supervise_code(&s));
}

/* run's exit status: the command's, unless the lock went first. */
static int
supervise_code(const struct supervisor *s)
{
	if (s->is_late_end)
		return (s->code);
	/* Lost before the command ran (its guardian was stopped): what kept
	 * it from running, 69 or the guardian's signal, as for a take too
	 * late to start it; --lost-exit-code is a command's cut short. */
	if (s->is_lost && s->child == 0 && !s->is_forced)
		return (s->code);
	if (s->is_lost)
		return (s->opts->lost_exit_code);
	if (s->is_cancelled)
		return (s->opts->cancelled_exit_code);
	return (s->code);
}

/*
 * What happened to the run.  A cancel or force that came after the
 * command's own end (is_late_end) changes nothing of it: the command's
 * status stands.
 */
static enum run_outcome
supervise_outcome(const struct supervisor *s)
{
	if (!s->is_late_end && s->is_forced)
		return (RUN_FORCED);
	if (!s->is_late_end && s->is_lost)
		return (RUN_LOST);
	if (!s->is_late_end && s->is_cancelled)
		return (RUN_CANCELLED);
	if (s->code_sig != 0)
		return (RUN_SIGNAL);
	return (s->code == 0 ? RUN_OK : RUN_FAILED);
}

/* The schedule: renewals, retries, the safety margin. */
static void
supervise_init(struct supervisor *s, struct lock *l,
    const struct supervise_opts *o)
{
	int64_t ttl_ns = clock_ms_to_ns(lock_ttl_ms(l));

	memset(s, 0, sizeof(*s));
	s->lock = l;
	s->opts = o;
	s->tty_fd = -1;
	s->guard_fd = -1;
	s->sig_fd = -1;
	s->may_have_changed = 1;
	/* Lose the lock a quarter TTL before it ends: time to stop. */
	s->margin_ns = lock_margin_ns(lock_ttl_ms(s->lock));
	s->renew_ns = o->renew_ms > 0 ? clock_ms_to_ns(o->renew_ms) :
	    ttl_ns / 3;
	if (s->renew_ns > ttl_ns / 2)
		s->renew_ns = ttl_ns / 2;	/* room for retries */
	s->retry_ns = ttl_ns / 20;
	if (s->retry_ns < clock_ms_to_ns(50))
		s->retry_ns = clock_ms_to_ns(50);
	if (s->retry_ns > clock_ms_to_ns(2000))
		s->retry_ns = clock_ms_to_ns(2000);
	s->next_renew_ns = lock_acquired_ns(l) + s->renew_ns;
	s->last_ok_ns = lock_acquired_ns(l);
}

/*----- hold and drain: renew, meet the deadlines, pass signals on -----*/

/* Hold: until the command itself exits (or all of the job, at once). */
static void
supervise_hold(struct supervisor *s)
{
	while (!supervise_reap(s) && !s->is_exited)
		supervise_step(s);
}

/*
 * Drain: the command has exited, what it started may still run, and the
 * lock stays ours (renewed) until that has exited too.  supervise_reap()
 * says the job is over at once under --release-on-exit.
 */
static void
supervise_drain(struct supervisor *s)
{
	while (!supervise_reap(s))
		supervise_step(s);
}

/* One turn of the loop: what is due, else sleep until something is. */
static void
supervise_step(struct supervisor *s)
{
	if (!supervise_deadlines(s, clock_mono_ns()))
		supervise_wait(s, clock_mono_ns());
}

/*
 * What is due at now: losing the lock, killing the job, a renewal.
 * Returns 1 if it did something that took time (look again), else 0.
 */
static int
supervise_deadlines(struct supervisor *s, int64_t now)
{
	struct lock *l = s->lock;

	supervise_lose_due(s, now);
	supervise_cancel_due(s, now);
	if (s->is_lost || now < s->next_renew_ns)
		return (0);
	/*
	 * A try with only a moment left could not succeed and would hide
	 * why the earlier ones failed: wait for the deadline instead.
	 */
	if (lock_valid_until_ns(l) - s->margin_ns - now <
	    clock_ms_to_ns(SUPERVISE_MIN_TRY_MS) && s->last_error[0] != '\0') {
		s->next_renew_ns = lock_valid_until_ns(l) - s->margin_ns;
		return (1);
	}
	supervise_renew(s, now);
	return (1);
}

/* One renewal: extend to the full TTL, bounded by the validity left. */
static void
supervise_renew(struct supervisor *s, int64_t now)
{
	char	why[700];
	int	rc;

	rc = lock_extend(s->lock, lock_ttl_ms(s->lock),
	    lock_valid_until_ns(s->lock) - s->margin_ns);
	if (rc == EXIT_OK) {
		s->last_ok_ns = now;
		s->next_renew_ns = now + s->renew_ns;
		log_debug("renewed lock '%s'", lock_name(s->lock));
		return;
	}
	/* Its SIGCHLD may be waiting, blocked, behind this renewal. */
	s->may_have_changed = 1;
	if (supervise_reap(s))
		return;		/* done in time: nothing was lost */
	if (rc == EXIT_NOT_OWNER) {
		s->lost_not_owner = 1;
		supervise_lose(s, lock_not_owner(s->lock) == LOCK_OTHER ?
		    "another owner holds it" : "it expired in Redis");
		return;
	}
	(void)snprintf(s->last_error, sizeof(s->last_error), "%s",
	    lock_error(s->lock));
	log_info("renewal of lock '%s' failed, retrying: %s",
	    lock_name(s->lock), lock_error(s->lock));
	s->next_renew_ns = clock_mono_ns() + s->retry_ns;
	if (clock_mono_ns() >= lock_valid_until_ns(s->lock) - s->margin_ns) {
		(void)snprintf(why, sizeof(why), "renewal failed: %s",
		    s->last_error);
		supervise_lose(s, why);
	}
}

/* Sleep until the next renewal or deadline, or a signal; handle that. */
static void
supervise_wait(struct supervisor *s, int64_t now)
{
	struct lock	*l = s->lock;
	struct timespec	 ts;
	siginfo_t	 info;
	int64_t		 wake = 0;
	int		 sig, have_deadline = 1;

	if (!s->is_lost) {
		wake = s->next_renew_ns;
		if (lock_valid_until_ns(l) - s->margin_ns < wake)
			wake = lock_valid_until_ns(l) - s->margin_ns;
	} else if (!s->is_killed)
		wake = s->kill_at_ns;
	else
		have_deadline = 0;	/* only the job's end */
	if (s->is_cancelled && !s->is_killed && s->cancel_kill_ns < wake)
		wake = s->cancel_kill_ns;
	if (s->sig_fd != -1)
		sig = supervise_listen_wait(s, have_deadline ? wake : -1);
	else {
		wake = wake > now ? wake - now : 0;
		ts.tv_sec = wake / 1000000000;
		ts.tv_nsec = wake % 1000000000;
		sig = sigtimedwait(&s->wait_set, &info, have_deadline ? &ts :
		    NULL);
	}
	if (sig == -1)
		return;		/* EAGAIN: a deadline; EINTR */
	if (sig == SIGCHLD) {
		s->may_have_changed = 1;	/* the loop reaps */
		return;
	}
	/* Past the lock's validity a stopped job stays stopped until
	 * killed (see supervise_job_stop). */
	if (sig == SIGCONT && clock_mono_ns() >= lock_valid_until_ns(l))
		return;
	log_debug("passing SIG%s on to the command's group",
	    signame_name(sig));
	supervise_tell(s, SUPERVISE_PASS, sig);
}

/*----- lose: the lock is gone or about to be -----*/

/*
 * Tell the job now, while the lock is still ours for margin_ns, and kill
 * it when the lock expires (or after --kill-after, if sooner).  The one
 * line says why and when we last knew.
 */
static void
supervise_lose(struct supervisor *s, const char *why)
{
	char	ago[32], line[1024];

	duration_format((clock_mono_ns() - s->last_ok_ns) / 1000000, ago,
	    sizeof(ago));
	(void)snprintf(line, sizeof(line), "lock '%s' lost: %s; last "
	    "confirmed %s ago", lock_name(s->lock), why, ago);
	supervise_lose_why(s, line);
}

/* The lock is lost, as line says: tell the job, kill it when due. */
static void
supervise_lose_why(struct supervisor *s, const char *line)
{
	int64_t	now = clock_mono_ns(), kill_at;

	s->is_lost = 1;
	s->held_until_ns = now;
	log_warnx("%s; sending SIG%s to the command", line,
	    signame_name(s->opts->lost_signal));
	supervise_tell(s, SUPERVISE_LOST, s->opts->lost_signal);
	kill_at = lock_valid_until_ns(s->lock);
	if (s->opts->kill_after_ms > 0 &&
	    now + clock_ms_to_ns(s->opts->kill_after_ms) < kill_at)
		kill_at = now + clock_ms_to_ns(s->opts->kill_after_ms);
	if (kill_at < now)
		kill_at = now;
	s->kill_at_ns = kill_at;
}

/* Lose the lock once no renewal came in time; kill when that is due. */
static void
supervise_lose_due(struct supervisor *s, int64_t now)
{
	char why[700];

	if (s->is_forced && !s->is_lost)
		supervise_lose_why(s, lock_error(s->lock));
	if (!s->is_lost &&
	    now >= lock_valid_until_ns(s->lock) - s->margin_ns) {
		(void)snprintf(why, sizeof(why), "no renewal succeeded in "
		    "time%s%s", s->last_error[0] ? ": " : "", s->last_error);
		supervise_lose(s, why);
	}
	if (s->is_lost && !s->is_killed && now >= s->kill_at_ns) {
		log_warnx("lock '%s' expired: killing the command",
		    lock_name(s->lock));
		supervise_tell(s, SUPERVISE_KILL, SIGKILL);
		s->is_killed = 1;
	}
}

/*
 * Back to the mask and SIGCHLD's disposition from before supervise_run.
 * A signal collected for the job that came too late for it (a SIGTSTP, a
 * SIGCHLD) and that the old mask lets through is dropped first, as it was
 * while it stayed blocked: a late SIGTSTP would stop us, not the job.
 */
static void
supervise_unblock(struct supervisor *s)
{
	struct timespec	zero = { 0, 0 };
	sigset_t	drop;
	int		sig;

	if (!s->is_blocked)
		return;
	if (sigemptyset(&drop) == -1)
		return;
	for (sig = 1; sig < NSIG; sig++)
		if ((sig == SIGTTOU || sigismember(&s->wait_set, sig) == 1) &&
		    sigismember(&s->before_mask, sig) == 0)
			(void)sigaddset(&drop, sig);
	while (sigtimedwait(&drop, NULL, &zero) > 0)
		;
	(void)sigprocmask(SIG_SETMASK, &s->before_mask, NULL);
	(void)sigaction(SIGCHLD, &s->before_chld, NULL);
	s->is_blocked = 0;
}

