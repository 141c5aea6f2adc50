/* SPDX-License-Identifier: MIT */
/*
 * Supervising run's command while the lock is held: vfork/exec, renewal on
 * a CLOCK_MONOTONIC schedule, signal forwarding, reaping, and the answer to
 * a lost lock.
 *
 * The design follows tini: the signals we care about are blocked and
 * collected with sigtimedwait(), whose timeout is the next renewal or
 * deadline, so there are no asynchronous handlers and no self-pipe.
 *
 * Process groups: the command gets a process group of its own, so that a
 * lost lock can stop everything it started (a shell's pipeline included).
 * When we were started in the terminal's foreground, that group becomes the
 * foreground group: Ctrl-C then reaches the command exactly once, straight
 * from the terminal, and not a second time through us.  Signals sent to
 * our pid (kill, systemd, CI runners) are forwarded to the command's pid.
 *
 * The command is started with vfork(), not fork(): no page tables to copy
 * and no copy-on-write faults afterwards, which is most of what starting
 * the command costs us.  The child shares our memory until it calls exec,
 * so it only makes system calls: everything it needs (the environment
 * included) is built before, and an exec failure is reported back through
 * a close-on-exec pipe, for us to log.
 */

#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "redlock.h"

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

struct supervisor {
	struct lock			*lock;
	const struct supervise_opts	*opts;
	pid_t				 child;
	int				 tty_fd;	/* -1 if not handed */
	int64_t				 renew_ns;
	int64_t				 retry_ns;
	int64_t				 margin_ns;
	int64_t				 next_renew_ns;
	int64_t				 last_ok_ns;
	int				 is_lost;
	int				 lost_not_owner;
	int				 is_killed;
	int				 is_reaped;
	int				 may_have_changed; /* ask waitpid */
	int				 status;	/* the child's */
	int64_t				 kill_at_ns;
	char				 last_error[512];
};

/* What the child needs, all of it prepared before vfork(). */
struct spawn {
	char		**argv;
	char		**envp;
	const sigset_t	 *old_mask;
	const struct sigaction *old_chld;
	sigset_t	  stops;	/* SIGTSTP: see supervise_child() */
	pid_t		  parent;
	int		  tty_fd;
	int		  err_fd;	/* exec's errno goes here */
};

deadfn static void supervise_child(const struct spawn *);
static pid_t	 supervise_vfork(const struct spawn *)
		     __attribute__((noinline));
static pid_t	 supervise_spawn(struct supervisor *, char **,
		     const sigset_t *, const struct sigaction *, pid_t);
static char	**supervise_environ(const struct lock *, size_t *);
static void	 supervise_renew(struct supervisor *, int64_t);
static void	 supervise_lose(struct supervisor *, const char *);
static void	 supervise_finish(struct supervisor *);
static int	 supervise_status_code(int);
static void	 supervise_job_stop(struct supervisor *);
static int	 supervise_reap(struct supervisor *);

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
 * In the child, between vfork and exec, on our memory: system calls only,
 * and _exit(), which leaves our stdio and atexit handlers alone.
 */
static void
supervise_child(const struct spawn *sp)
{
	struct timespec	zero = { 0, 0 };
	int		e, code;

	(void)setpgid(0, 0);
	/* SIGTTOU is blocked here, so a background group may take the tty. */
	if (sp->tty_fd != -1)
		(void)tcsetpgrp(sp->tty_fd, getpid());
	/* If we die, so does the command: no unsupervised lock holder.
	 * Dying before this line is caught by the getppid() check. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != sp->parent)
		_exit(EXIT_LOST);
	/* The child's dispositions are its own (no CLONE_SIGHAND). */
	supervise_restore_sigpipe();
	(void)sigaction(SIGCHLD, sp->old_chld, NULL);
	/*
	 * A Ctrl-Z that came after our tcsetpgrp is pending here (blocked):
	 * unblocked, it would stop us before exec, and a stopped vfork child
	 * never lets the parent go on.  Drop it (the keystroke is lost, the
	 * terminal is not), right before unblocking; what is left is the
	 * moment between the two calls and exec's PATH search.
	 */
	while (sigtimedwait(&sp->stops, NULL, &zero) > 0)
		;
	if (sigprocmask(SIG_SETMASK, sp->old_mask, NULL) == -1)
		_exit(EXIT_NOEXEC);
	execvpe(sp->argv[0], sp->argv, sp->envp);
	e = errno;
	code = e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
	/* If even this fails, the exit status (126 or 127) still tells. */
	while (write(sp->err_fd, &e, sizeof(e)) == -1 && errno == EINTR)
		;
	_exit(code);
}

/*
 * vfork() in a function of its own: no local variable of the caller lives
 * across it, so none can be clobbered by the child (-Wclobbered).  The
 * child never returns from here.
 */
static pid_t
supervise_vfork(const struct spawn *sp)
{
	pid_t pid;

	if ((pid = vfork()) == 0)
		supervise_child(sp);
	return (pid);
}

/*
 * The command's environment: ours, with REDLOCK_KEY, REDLOCK_TOKEN,
 * REDLOCK_FENCE and REDLOCK_TTL_MS set to this lock's.  Our own strings
 * are borrowed; those from *first_own on are allocated here.
 */
static char **
supervise_environ(const struct lock *l, size_t *first_own)
{
	static const char *ours[] = { "REDLOCK_KEY=", "REDLOCK_TOKEN=",
	    "REDLOCK_FENCE=", "REDLOCK_TTL_MS=", NULL };
	extern char	**environ;
	char		**envp;
	size_t		  n = 0, i, j;

	while (environ[n] != NULL)
		n++;
	envp = xcalloc(n + 5, sizeof(*envp));
	for (i = 0, n = 0; environ[i] != NULL; i++) {
		for (j = 0; ours[j] != NULL; j++)
			if (strncmp(environ[i], ours[j], strlen(ours[j])) == 0)
				break;
		if (ours[j] == NULL)
			envp[n++] = environ[i];
	}
	*first_own = n;
	envp[n++] = xasprintf("REDLOCK_KEY=%s", l->user_key);
	envp[n++] = xasprintf("REDLOCK_TOKEN=%s", l->token);
	envp[n++] = xasprintf("REDLOCK_FENCE=%lld", (long long)l->fence);
	envp[n++] = xasprintf("REDLOCK_TTL_MS=%lld", (long long)l->ttl_ms);
	envp[n] = NULL;
	return (envp);
}

/*
 * Start argv as the command; returns its pid, or -1 (logged).  An exec
 * failure is logged here; the child exits 126 or 127 and is reaped as
 * usual.
 */
static pid_t
supervise_spawn(struct supervisor *s, char **argv, const sigset_t *old_mask,
    const struct sigaction *old_chld, pid_t parent)
{
	struct spawn	 sp;
	pid_t		 pid;
	ssize_t		 n;
	size_t		 i, first_own;
	int		 fds[2], e = 0;

	if (pipe2(fds, O_CLOEXEC) == -1) {
		log_warn("pipe");
		return (-1);
	}
	sp.argv = argv;
	sp.envp = supervise_environ(s->lock, &first_own);
	sp.old_mask = old_mask;
	sp.old_chld = old_chld;
	if (sigemptyset(&sp.stops) == -1 || sigaddset(&sp.stops, SIGTSTP) == -1)
		fatal(EXIT_UNAVAILABLE, "sigset");
	sp.parent = parent;
	sp.tty_fd = s->tty_fd;
	sp.err_fd = fds[1];
	pid = supervise_vfork(&sp);
	(void)close(fds[1]);
	if (pid == -1)
		log_warn("vfork");
	else {
		/* EOF once exec succeeded (close-on-exec), else errno. */
		while ((n = read(fds[0], &e, sizeof(e))) == -1 &&
		    errno == EINTR)
			;
		if (n == (ssize_t)sizeof(e) && e == ENOENT)
			log_warnx("%s: command not found", argv[0]);
		else if (n == (ssize_t)sizeof(e))
			log_warnx("%s: %s", argv[0], strerror(e));
	}
	(void)close(fds[0]);
	for (i = first_own; sp.envp[i] != NULL; i++)
		free(sp.envp[i]);
	free(sp.envp);
	return (pid);
}

/*
 * Ctrl-Z at the terminal stopped the command's group.  Stop too, so the
 * shell sees the job stopped and gets the terminal back, and hand the
 * terminal and a SIGCONT to the command when we are continued (fg, bg).
 * No renewal happens while we are stopped: if that outlasts the lock's
 * validity, the loop treats the lock as lost as soon as we run again, and
 * the command is not continued at all: the lock may be someone else's by
 * now, and SIGKILL needs no SIGCONT.
 */
static void
supervise_job_stop(struct supervisor *s)
{
	if (s->tty_fd == -1)
		return;		/* stopped by someone else: theirs to resume */
	(void)tcsetpgrp(s->tty_fd, getpgrp());
	(void)kill(getpid(), SIGSTOP);
	/* Continued. */
	if (clock_mono_ns() >= s->lock->valid_until_ns)
		return;
	if (tcgetpgrp(s->tty_fd) == getpgrp())
		(void)tcsetpgrp(s->tty_fd, s->child);
	(void)kill(-s->child, SIGCONT);
}

/*
 * Has the command exited?  Reaps it (1), or handles a stop, or not yet
 * (0).  Checked before the lock is declared lost, so a command that ended
 * while a renewal was still trying is not reported as cut short: a
 * renewal never runs past the lock's validity, so it ended in time.
 * waitpid is asked only after a SIGCHLD (may_have_changed), not at every
 * wake-up: on an idle hold it was a sixth of the CPU each renewal cost.
 * Any child is reaped, as tini does: as a container's PID 1 we inherit
 * the command's orphans, which would otherwise stay zombies.
 */
static int
supervise_reap(struct supervisor *s)
{
	pid_t	w;
	int	status;

	if (s->is_reaped)
		return (1);
	if (!s->may_have_changed)
		return (0);
	for (;;) {
		w = waitpid(-1, &status, WNOHANG | WUNTRACED);
		if (w == 0) {
			/* Anything after this raises a SIGCHLD of its own. */
			s->may_have_changed = 0;
			return (0);
		}
		if (w == -1 && errno == EINTR)
			continue;
		if (w == -1) {
			/* ECHILD: gone, and its status with it. */
			log_warn("waitpid");
			s->status = 0;
			s->is_reaped = 1;
			return (1);
		}
		if (w != s->child)
			continue;	/* an orphan of the command */
		if (WIFSTOPPED(status)) {
			/* One SIGCHLD may stand for the exit too: keep
			 * may_have_changed, to ask again. */
			supervise_job_stop(s);
			return (0);
		}
		s->status = status;
		s->is_reaped = 1;
		return (1);
	}
}

/* Exit status of run for a child's wait status, as a shell reports it. */
static int
supervise_status_code(int status)
{
	if (WIFEXITED(status))
		return (WEXITSTATUS(status));
	if (WIFSIGNALED(status))
		return (EXIT_SIGNAL_BASE + WTERMSIG(status));
	return (EXIT_UNAVAILABLE);
}

/*
 * The lock is gone or about to be: tell the command now, while the lock is
 * still ours for margin_ns, and kill it when the lock expires (or after
 * --kill-after, if sooner).  The message says why and when we last knew.
 */
static void
supervise_lose(struct supervisor *s, const char *why)
{
	char	ago[32];
	int64_t	now = clock_mono_ns(), kill_at;

	s->is_lost = 1;
	duration_format((now - s->last_ok_ns) / 1000000, ago, sizeof(ago));
	log_warnx("lock '%s' lost: %s; last confirmed %s ago; sending SIG%s "
	    "to the command", s->lock->user_key, why, ago,
	    signame_name(s->opts->lost_signal));
	if (kill(-s->child, s->opts->lost_signal) == -1 && errno == ESRCH)
		(void)kill(s->child, s->opts->lost_signal);
	kill_at = s->lock->valid_until_ns;
	if (s->opts->kill_after_ms > 0 &&
	    now + clock_ms_to_ns(s->opts->kill_after_ms) < kill_at)
		kill_at = now + clock_ms_to_ns(s->opts->kill_after_ms);
	if (kill_at < now)
		kill_at = now;
	s->kill_at_ns = kill_at;
}

/* One renewal: extend to the full TTL, bounded by the validity left. */
static void
supervise_renew(struct supervisor *s, int64_t now)
{
	char	why[700];
	int	rc;

	rc = lock_extend(s->lock, s->lock->ttl_ms,
	    s->lock->valid_until_ns - s->margin_ns);
	if (rc == EXIT_OK) {
		s->last_ok_ns = now;
		s->next_renew_ns = now + s->renew_ns;
		log_debug("renewed lock '%s'", s->lock->user_key);
		return;
	}
	/* Its SIGCHLD may be waiting, blocked, behind this renewal. */
	s->may_have_changed = 1;
	if (supervise_reap(s))
		return;		/* done in time: nothing was lost */
	if (rc == EXIT_NOT_OWNER) {
		s->lost_not_owner = 1;
		supervise_lose(s, s->lock->not_owner == LOCK_OTHER ?
		    "another owner holds it" : "it expired in Redis");
		return;
	}
	(void)snprintf(s->last_error, sizeof(s->last_error), "%s",
	    s->lock->err);
	log_info("renewal of lock '%s' failed, retrying: %s",
	    s->lock->user_key, s->lock->err);
	s->next_renew_ns = clock_mono_ns() + s->retry_ns;
	if (clock_mono_ns() >= s->lock->valid_until_ns - s->margin_ns) {
		(void)snprintf(why, sizeof(why), "renewal failed: %s",
		    s->last_error);
		supervise_lose(s, why);
	}
}

/* After the command is reaped: release (or keep for --min-hold). */
static void
supervise_finish(struct supervisor *s)
{
	int64_t	now = clock_mono_ns(), held_ms, rest_ms;
	int	rc;

	if (s->tty_fd != -1)
		(void)tcsetpgrp(s->tty_fd, getpgrp());
	if (s->lost_not_owner)
		return;		/* someone else's lock now: hands off */
	if (s->is_lost && now >= s->lock->valid_until_ns)
		return;		/* expired: nothing of ours is left */
	held_ms = (now - s->lock->acquired_ns) / 1000000;
	rest_ms = s->opts->min_hold_ms - held_ms;
	if (!s->is_lost && rest_ms > 0) {
		/* Shorten the TTL to the rest rather than delete the key. */
		rc = lock_extend(s->lock, rest_ms, 0);
		if (rc == EXIT_OK)
			log_info("keeping lock '%s' for %lldms more "
			    "(--min-hold)", s->lock->user_key,
			    (long long)rest_ms);
	} else
		rc = lock_release(s->lock);
	if (rc == EXIT_OK && rest_ms <= 0)
		log_info("released lock '%s'", s->lock->user_key);
	else if (rc == EXIT_NOT_OWNER)
		log_warnx("lock '%s' had already expired when the command "
		    "ended", s->lock->user_key);
	else if (rc != EXIT_OK)
		log_warnx("cannot release lock '%s' (it will expire by its "
		    "TTL): %s", s->lock->user_key, s->lock->err);
}

/*
 * Run argv while holding l (already acquired).  Returns run's exit status:
 * the command's, or opts->lost_exit_code if the lock was lost.
 */
int
supervise_run(struct lock *l, const struct supervise_opts *o, char **argv)
{
	struct supervisor	 s;
	struct sigaction	 dfl, old_chld;
	sigset_t		 set, old;
	siginfo_t		 info;
	struct timespec		 ts;
	int64_t			 now, wake, ttl_ns;
	pid_t			 parent = getpid();
	int			 i, sig, have_deadline;

	memset(&s, 0, sizeof(s));
	s.lock = l;
	s.opts = o;
	s.tty_fd = -1;
	s.may_have_changed = 1;
	ttl_ns = clock_ms_to_ns(l->ttl_ms);
	/* Lose the lock a quarter TTL before it ends: time to stop. */
	s.margin_ns = ttl_ns / 4;
	s.renew_ns = o->renew_ms > 0 ? clock_ms_to_ns(o->renew_ms) :
	    ttl_ns / 3;
	if (s.renew_ns > ttl_ns / 2)
		s.renew_ns = ttl_ns / 2;	/* room for retries */
	s.retry_ns = ttl_ns / 20;
	if (s.retry_ns < clock_ms_to_ns(50))
		s.retry_ns = clock_ms_to_ns(50);
	if (s.retry_ns > clock_ms_to_ns(2000))
		s.retry_ns = clock_ms_to_ns(2000);
	s.next_renew_ns = l->acquired_ns + s.renew_ns;
	s.last_ok_ns = l->acquired_ns;

	if (sigemptyset(&set) == -1 || sigaddset(&set, SIGCHLD) == -1 ||
	    sigaddset(&set, SIGTTOU) == -1)
		fatal(EXIT_UNAVAILABLE, "sigset");
	/* Forwarded to the command: the signals that would end us. */
	for (i = 0; endsig_list[i] != 0; i++)
		if (sigaddset(&set, endsig_list[i]) == -1)
			fatal(EXIT_UNAVAILABLE, "sigset");
	for (i = 0; supervise_job_signals[i] != 0; i++)
		if (sigaddset(&set, supervise_job_signals[i]) == -1)
			fatal(EXIT_UNAVAILABLE, "sigset");
	/*
	 * A SIGCHLD ignored by whoever started us (it survives exec) would
	 * mean no SIGCHLD and no exit status: the kernel reaps the command
	 * itself.  Take the default for us; the command gets it back.
	 */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	if (sigemptyset(&dfl.sa_mask) == -1 ||
	    sigaction(SIGCHLD, &dfl, &old_chld) == -1) {
		log_warn("sigaction");
		(void)lock_release(l);
		return (EXIT_UNAVAILABLE);
	}
	if (sigprocmask(SIG_BLOCK, &set, &old) == -1) {
		log_warn("sigprocmask");
		(void)lock_release(l);
		(void)sigaction(SIGCHLD, &old_chld, NULL);
		return (EXIT_UNAVAILABLE);
	}
	/* SIGTTOU is only blocked (for tcsetpgrp), never waited for. */
	if (sigdelset(&set, SIGTTOU) == -1)
		fatal(EXIT_UNAVAILABLE, "sigset");
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
		s.tty_fd = STDIN_FILENO;
	(void)fflush(stdout);
	(void)fflush(stderr);
	/* The command starts with the mask we were started with, before
	 * the caller held anything (endsig_hold). */
	if (o->caller_mask != NULL)
		old = *o->caller_mask;
	if ((s.child = supervise_spawn(&s, argv, &old, &old_chld,
	    parent)) == -1) {
		(void)lock_release(l);
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		(void)sigaction(SIGCHLD, &old_chld, NULL);
		return (EXIT_UNAVAILABLE);
	}
	/* Also here, in case the child died before it could. */
	(void)setpgid(s.child, s.child);

	for (;;) {
		if (supervise_reap(&s))
			break;
		now = clock_mono_ns();
		if (!s.is_lost &&
		    now >= l->valid_until_ns - s.margin_ns) {
			char why[700];

			(void)snprintf(why, sizeof(why), "no renewal "
			    "succeeded in time%s%s", s.last_error[0] ?
			    ": " : "", s.last_error);
			supervise_lose(&s, why);
		}
		if (s.is_lost && !s.is_killed && now >= s.kill_at_ns) {
			log_warnx("lock '%s' expired: killing the command",
			    l->user_key);
			(void)kill(-s.child, SIGKILL);
			(void)kill(s.child, SIGKILL);
			s.is_killed = 1;
		}
		if (!s.is_lost && now >= s.next_renew_ns) {
			/*
			 * A try with only a moment left could not succeed
			 * and would hide why the earlier ones failed: wait
			 * for the deadline instead.
			 */
			if (l->valid_until_ns - s.margin_ns - now <
			    clock_ms_to_ns(SUPERVISE_MIN_TRY_MS) &&
			    s.last_error[0] != '\0') {
				s.next_renew_ns = l->valid_until_ns -
				    s.margin_ns;
				continue;
			}
			supervise_renew(&s, now);
			continue;
		}
		/* Sleep until the next renewal or deadline, or a signal. */
		have_deadline = 1;
		if (!s.is_lost) {
			wake = s.next_renew_ns;
			if (l->valid_until_ns - s.margin_ns < wake)
				wake = l->valid_until_ns - s.margin_ns;
		} else if (!s.is_killed)
			wake = s.kill_at_ns;
		else
			have_deadline = 0;	/* only the child's exit */
		if (have_deadline) {
			wake = wake > now ? wake - now : 0;
			ts.tv_sec = wake / 1000000000;
			ts.tv_nsec = wake % 1000000000;
		}
		sig = sigtimedwait(&set, &info, have_deadline ? &ts : NULL);
		if (sig == -1) {
			/* EAGAIN: a deadline; EINTR; nothing else can be. */
			continue;
		}
		if (sig == SIGTSTP || sig == SIGCONT) {
			/* Past the lock's validity it stays stopped until
			 * killed (see supervise_job_stop). */
			if (sig == SIGCONT &&
			    clock_mono_ns() >= l->valid_until_ns)
				continue;
			log_debug("passing SIG%s on to the command's group",
			    signame_name(sig));
			if (kill(-s.child, sig) == -1 && errno == ESRCH)
				(void)kill(s.child, sig);
			continue;
		}
		if (sig != SIGCHLD) {
			log_debug("forwarding SIG%s to the command",
			    signame_name(sig));
			if (kill(s.child, sig) == -1 && errno != ESRCH)
				log_warn("cannot forward SIG%s",
				    signame_name(sig));
			continue;
		}
		/* SIGCHLD: the top of the loop reaps. */
		s.may_have_changed = 1;
	}
	supervise_finish(&s);
	if (s.is_lost)
		return (o->lost_exit_code);
	return (supervise_status_code(s.status));
}
