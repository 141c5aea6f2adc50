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

static struct sigaction	 supervise_old_sigpipe;
static int		 supervise_have_old_sigpipe;

/*
 * Job control sent to us (kill -TSTP %1 reaches our process group, not
 * the command's) goes to the command's group: a stopped supervisor would
 * let the lock expire under a command that still runs.  Paused this way,
 * the job keeps its lock, renewed, as a stopped flock(1) would.
 */
static const int supervise_job_signals[] = { SIGTSTP, SIGCONT, 0 };

/* init */
static void	 supervise_init(struct supervisor *, struct lock *,
		     const struct supervise_opts *);
/* start */
static int	 supervise_start(struct supervisor *, char **);
static int	 supervise_block(struct supervisor *);
static int	 supervise_spawn_job(struct supervisor *, char **);
static int	 supervise_spawn_pre(struct supervisor *);
static int	 supervise_spawn_guard(struct supervisor *, char **);
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
/* release, and back to the caller */
static void	 supervise_release(struct supervisor *);
static int64_t	 supervise_min_hold_left_ms(const struct supervisor *,
		     int64_t);
static void	 supervise_release_failed(struct supervisor *, int);
static void	 supervise_unblock(struct supervisor *);
static void	 supervise_audit(const struct supervisor *);

void
supervise_ignore_sigpipe(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	if (sigemptyset(&sa.sa_mask) == 0 &&
	    sigaction(SIGPIPE, &sa, &supervise_old_sigpipe) == 0)
		supervise_have_old_sigpipe = 1;
}

void
supervise_restore_sigpipe(void)
{
	if (supervise_have_old_sigpipe)
		(void)sigaction(SIGPIPE, &supervise_old_sigpipe, NULL);
}

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
		return (EXIT_UNAVAILABLE);
	}
	supervise_listen_open(&s);
	supervise_hold(&s);
	supervise_drain(&s);
	/* The next holder waits for the release, not for our listening. */
	supervise_release(&s);
	supervise_listen_close(&s);
	(void)close(s.guard_fd);
	supervise_unblock(&s);
	supervise_audit(&s);
	if (s.is_late_end)
		return (s.code);
	if (s.is_lost)
		return (o->lost_exit_code);
	if (s.is_cancelled)
		return (o->cancelled_exit_code);
	return (s.code);
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

/*----- start: block what the loop waits for, start the job -----*/

/*
 * The command's process group gets the terminal only if ours has it.
 * 0, or -1 (logged; the lock is still held, the signals still blocked:
 * the caller releases, then unblocks, so that no signal interrupts the
 * release).
 */
static int
supervise_start(struct supervisor *s, char **argv)
{
	if (supervise_block(s) == -1)
		return (-1);
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
		s->tty_fd = STDIN_FILENO;
	return (supervise_spawn_job(s, argv));
}

/*
 * Block what we wait for (s->wait_set, SIGTTOU aside), saving the mask
 * and SIGCHLD's disposition from before.  0, or -1 (logged, nothing
 * changed).
 */
static int
supervise_block(struct supervisor *s)
{
	sigset_t		*set = &s->wait_set;
	struct sigaction	 dfl;
	int			 i;

	if (sigemptyset(set) == -1 || sigaddset(set, SIGCHLD) == -1 ||
	    sigaddset(set, SIGTTOU) == -1)
		fatal(EXIT_UNAVAILABLE, "sigset");
	/* Passed on to the command: the signals that would end us. */
	for (i = 0; endsig_list[i] != 0; i++)
		if (sigaddset(set, endsig_list[i]) == -1)
			fatal(EXIT_UNAVAILABLE, "sigset");
	for (i = 0; supervise_job_signals[i] != 0; i++)
		if (sigaddset(set, supervise_job_signals[i]) == -1)
			fatal(EXIT_UNAVAILABLE, "sigset");
	/*
	 * A SIGCHLD ignored by whoever started us (it survives exec) would
	 * mean no SIGCHLD and no exit status: the kernel reaps the guardian
	 * itself.  Take the default for us; the command gets it back.
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	if (sigemptyset(&dfl.sa_mask) == -1 ||
	    sigaction(SIGCHLD, &dfl, &s->before_chld) == -1) {
		log_warn("sigaction");
		return (-1);
	}
	if (sigprocmask(SIG_BLOCK, set, &s->before_mask) == -1) {
		log_warn("sigprocmask");
		(void)sigaction(SIGCHLD, &s->before_chld, NULL);
		return (-1);
	}
	s->is_blocked = 1;
	/* SIGTTOU is only blocked (for tcsetpgrp), never waited for. */
	if (sigdelset(set, SIGTTOU) == -1)
		fatal(EXIT_UNAVAILABLE, "sigset");
	return (0);
}

/*
 * Start the guardian, and through it the command (or have the one of
 * supervise_pre_start start it).  The command gets the mask from before
 * the caller held anything (endsig_hold), else the one from before
 * supervise_run, and SIGCHLD's disposition from before.  A guardian
 * forked now starts the command without us waiting for it: the loop
 * renews meanwhile and hears how the start went (supervise_started()).
 * 0, or -1 (logged).
 */
static int
supervise_spawn_job(struct supervisor *s, char **argv)
{
	int rc;

	s->argv0 = argv[0];
	s->guard = -1;
	if (s->opts->pre != NULL && (rc = supervise_spawn_pre(s)) != 1)
		return (rc);
	return (supervise_spawn_guard(s, argv));
}

/*
 * Have the guardian forked during the wait start the command; it answers
 * at once.  0, -1 (logged), or 1 if it could not be told (start another).
 */
static int
supervise_spawn_pre(struct supervisor *s)
{
	struct supervise_msg m;

	s->guard = supervise_pre_go(s->opts->pre, s->lock, s->tty_fd != -1,
	    lock_valid_until_ns(s->lock), &s->guard_fd, &m);
	if (s->guard == -1)
		return (1);
	if (supervise_started(s, &m) == 0)
		return (0);
	/* A guardian stopped on the way would never exit. */
	(void)kill(s->guard, SIGKILL);
	(void)close(s->guard_fd);
	while (waitpid(s->guard, NULL, 0) == -1 && errno == EINTR)
		;
	return (-1);
}

/* Fork the guardian now, with the command's environment.  0, or -1. */
static int
supervise_spawn_guard(struct supervisor *s, char **argv)
{
	struct supervise_spawn	sp;
	size_t			i, first_own;

	memset(&sp, 0, sizeof(sp));
	sp.argv = argv;
	sp.envp = supervise_environ(lock_name(s->lock), lock_token(s->lock),
	    (long long)lock_fence(s->lock), (long long)lock_ttl_ms(s->lock),
	    &first_own);
	sp.old_mask = s->opts->caller_mask != NULL ? s->opts->caller_mask :
	    &s->before_mask;
	sp.old_chld = &s->before_chld;
	sp.tty_fd = s->tty_fd;
	s->guard = supervise_guard_start(&sp, s->opts->release_on_exit,
	    &s->guard_fd);
	for (i = first_own; sp.envp[i] != NULL; i++)
		free(sp.envp[i]);
	free(sp.envp);
	return (s->guard == -1 ? -1 : 0);
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

/*----- release: the job is over -----*/

/*
 * Give the lock back, or with --min-hold keep it for the rest by
 * shortening its TTL rather than deleting the key, so that a host whose
 * clock is late does not run the same job again.
 */
static void
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
	if (s->lost_not_owner)
		return;		/* someone else's lock now: hands off */
	if (s->is_lost && now >= lock_valid_until_ns(s->lock))
		return;		/* expired: nothing of ours is left */
	rest_ms = s->is_lost ? 0 : supervise_min_hold_left_ms(s, now);
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

/*
 * The one line --syslog keeps of every run, even without -v: what ran
 * under which fence, how long it waited for and held the lock, and how
 * the command ended.
 */
static void
supervise_audit(const struct supervisor *s)
{
	char	waited[32], held[32], how[64];

	duration_span(s->opts->waited_ms, waited, sizeof(waited));
	/* From the take: the wait before it is "waited". */
	duration_span((s->held_until_ns - lock_taken_ns(s->lock)) / 1000000,
	    held, sizeof(held));
	if (s->code_sig != 0)
		(void)snprintf(how, sizeof(how), "killed by SIG%s",
		    signame_name(s->code_sig));
	else
		(void)snprintf(how, sizeof(how), "exit %d", s->code);
	log_audit("run '%s' done: fence %lld, waited %s, held %s, %s%s",
	    lock_name(s->lock), (long long)lock_fence(s->lock), waited, held,
	    how, s->is_lost ? ", lock lost" : "");
}
