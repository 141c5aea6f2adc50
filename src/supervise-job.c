/* SPDX-License-Identifier: MIT */
/*
 * redlock-cli's side of the job, once the guardian runs it
 * (supervise-start.c starts the guardian): what the guardian
 * (supervise-guard.c) tells us about the command, what we ask it to do,
 * the messages on the socket pair between us, and the job's end.  Each message is announced with a SIGCHLD, so the
 * supervisor's sigtimedwait() hears of them as of a child's change.
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

/* How long redlock-cli waits for a guardian that reads nothing. */
#define GUARD_SEND_WAIT_MS	100

static void	 supervise_job_stop(struct supervisor *);
static void	 supervise_exited(struct supervisor *,
		     const struct supervise_msg *);
static void	 supervise_wait_guard(struct supervisor *);
static void	 supervise_guard_gone(struct supervisor *);
static void	 supervise_guard_gone_early(struct supervisor *, int);
static void	 supervise_orphans(void);
static int	 supervise_status_code(int);
static void	 supervise_describe(int, char *, size_t);
static void	 supervise_exec_failed(const char *, int);

/* Ask the guardian (op, sig); once it is gone there is nothing to do. */
void
supervise_tell(struct supervisor *s, int op, int sig)
{
	if (supervise_guard_send(s->guard_fd, op, sig) == 0)
		return;
	if (errno == EAGAIN)
		log_warnx("cannot pass SIG%s on: the command's guardian (pid "
		    "%ld) does not answer", signame_name(sig), (long)s->guard);
	else
		log_debug("the command's guardian is gone: %s",
		    strerror(errno));
}

/*
 * Ctrl-Z at the terminal stopped the command's group.  Stop too, so the
 * shell sees the job stopped and gets the terminal back, and hand the
 * terminal and a SIGCONT to the command when we are continued (fg, bg).
 * No renewal happens while we are stopped: if that outlasts the lock's
 * validity, the loop treats the lock as lost as soon as we run again, and
 * the command is not continued at all: the lock may be someone else's by
 * now, and SIGKILL needs no SIGCONT.  The guardian does not stop: if we
 * are killed meanwhile, it still kills the job.
 */
static void
supervise_job_stop(struct supervisor *s)
{
	if (s->tty_fd == -1)
		return;		/* stopped by someone else: theirs to resume */
	(void)tcsetpgrp(s->tty_fd, getpgrp());
	(void)kill(getpid(), SIGSTOP);
	/* Continued. */
	if (clock_mono_ns() >= lock_valid_until_ns(s->lock))
		return;
	if (tcgetpgrp(s->tty_fd) == getpgrp())
		(void)tcsetpgrp(s->tty_fd, s->child);
	supervise_tell(s, SUPERVISE_PASS, SIGCONT);
}

/* "exited 3", "was killed by SIGTERM": a wait status in words. */
static void
supervise_describe(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		(void)snprintf(buf, len, "was killed by SIG%s",
		    signame_name(WTERMSIG(status)));
	else
		(void)snprintf(buf, len, "exited %d", WEXITSTATUS(status));
}

/*
 * The command has exited; m->left of its processes still run.  What is
 * left runs in the background now: the terminal is ours again, so that
 * Ctrl-C reaches us (and through us, what is left).
 */
static void
supervise_exited(struct supervisor *s, const struct supervise_msg *m)
{
	char	what[64];
	int	n = m->left;

	s->is_exited = 1;
	s->is_over = m->is_last;
	s->code = supervise_status_code(m->status);
	s->code_sig = WIFSIGNALED(m->status) ? WTERMSIG(m->status) : 0;
	if (s->tty_fd != -1)
		(void)tcsetpgrp(s->tty_fd, getpgrp());
	if (n == 0)
		return;
	supervise_describe(m->status, what, sizeof(what));
	if (s->opts->release_on_exit && n > 0)
		log_info("command %s; releasing lock '%s' while %d of its "
		    "processes still run%s (--release-on-exit)", what,
		    lock_name(s->lock), n, n == 1 ? "s" : "");
	else if (s->opts->release_on_exit)
		log_info("command %s; releasing lock '%s' while processes it "
		    "left behind still run (--release-on-exit)", what,
		    lock_name(s->lock));
	else if (n > 0)
		log_info("command %s; holding lock '%s' until its %d "
		    "remaining process%s exit%s", what, lock_name(s->lock), n,
		    n == 1 ? "" : "es", n == 1 ? "s" : "");
	else
		log_info("command %s; holding lock '%s' until the processes "
		    "it left behind exit", what, lock_name(s->lock));
}

/*
 * The command could not be exec'd (the guardian exits 127 or 126 for it):
 * its name, masked as a recorded command is, since "PW=x cmd" makes the
 * name a secret; such a name gets a hint, as it is a shell's syntax.
 */
static void
supervise_exec_failed(const char *argv0, int err)
{
	const char	*words[1] = { argv0 };
	char		*shown = mask_words(words, 1);
	const char	*name = shown != NULL ? shown : "the command";

	if (err == ENOENT && strchr(argv0, '=') != NULL)
		log_warnx("%s: command not found (a variable for it? put env "
		    "first: -- env NAME=VALUE CMD)", name);
	else if (err == ENOENT)
		log_warnx("%s: command not found", name);
	else
		log_warnx("%s: %s", name, strerror(err));
	free(shown);
}

/*
 * The guardian's first word: the command runs (m->pid), perhaps with
 * exec's errno (it exits 126 or 127 then), or it could not be started
 * (pid -1; err says why: ENOLCK if the lock was given up before the
 * guardian, stopped meanwhile, could start it).  0, or -1 if not started.
 */
int
supervise_started(struct supervisor *s, const struct supervise_msg *m)
{
	if (m->pid == -1 && m->err == ENOLCK) {
		log_warnx("cannot start the command: lock '%s' was lost before "
		    "its guardian (pid %ld) could start it", lock_name(s->lock),
		    (long)s->guard);
		return (-1);
	}
	if (m->pid == -1) {
		errno = m->err;
		log_warn("cannot start the command");
		return (-1);
	}
	s->child = m->pid;
	return (0);
}

/*
 * Every message the guardian has sent.  A command it could not start
 * ends the job (exit 69) as one that ran would: the guardian exits after
 * saying so.  supervise-listen.c asks too, before it judges whether a
 * force or a cancel came after the command's end.
 */
void
supervise_hear(struct supervisor *s)
{
	struct supervise_msg m;

	while (supervise_guard_recv(s->guard_fd, &m) == 1) {
		if (m.event == SUPERVISE_STARTED &&
		    supervise_started(s, &m) == -1) {
			s->is_start_failed = 1;
			s->is_exited = 1;
			s->code = EXIT_UNAVAILABLE;
		} else if (m.event == SUPERVISE_EXEC_FAILED)
			supervise_exec_failed(s->argv0, m.err);
		else if (m.event == SUPERVISE_STOPPED)
			supervise_job_stop(s);
		else if (m.event == SUPERVISE_EXITED)
			supervise_exited(s, &m);
	}
}

/*
 * Reap our children: the guardian, and whatever of the job was
 * re-parented to us (see supervise_guard_gone()).
 */
static void
supervise_wait_guard(struct supervisor *s)
{
	pid_t	w;
	int	status;

	for (;;) {
		w = waitpid(-1, &status, WNOHANG);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		if (w == s->guard) {
			s->is_guard_reaped = 1;
			s->guard_status = status;
		} else if (w == s->child && s->child > 0 && !s->is_exited) {
			/*
			 * The command, re-parented to us (the job's subreaper)
			 * when its guardian died before it could tell us: it
			 * may have ended first (its guardian stopped, then
			 * killed), and then its status is the run's.
			 */
			s->is_exited = 1;
			s->code = supervise_status_code(status);
			s->code_sig = WIFSIGNALED(status) ?
			    WTERMSIG(status) : 0;
		}
	}
}

/*
 * SIGKILL our children until there are none.  Only ever needed when the
 * guardian died first: then the command died with it (PR_SET_PDEATHSIG)
 * and what else the job ran was re-parented to us, a subreaper too.
 */
static void
supervise_orphans(void)
{
	pid_t w;

	for (;;) {
		while ((w = waitpid(-1, NULL, WNOHANG)) > 0 ||
		    (w == -1 && errno == EINTR))
			;
		if (w == -1)
			return;		/* ECHILD: none left */
		(void)supervise_proc_signal_descendants(getpid(), SIGKILL, 0);
		clock_sleep_ns(clock_ms_to_ns(10));
	}
}

/*
 * The guardian was killed by sig before it said that the command runs
 * (the command is started, and so said, before any other word): no
 * command ran, or one died with it at once (PR_SET_PDEATHSIG).  Said as
 * a guardian killed later is, with the signal's exit status, not as a
 * server that is unavailable.
 */
static void
supervise_guard_gone_early(struct supervisor *s, int sig)
{
	log_warnx("the command's guardian (pid %ld) was killed by SIG%s "
	    "before it started the command", (long)s->guard,
	    signame_name(sig));
	supervise_orphans();
	s->is_exited = 1;
	s->code = EXIT_SIGNAL_BASE + sig;
	s->code_sig = sig;
}

/*
 * The guardian has exited: normally once the command and all it left
 * behind did, or with the command under --release-on-exit (what is left
 * then runs on, re-parented upwards).  Killed before (by someone's
 * SIGKILL, the OOM killer), nobody answers for what the job still runs:
 * kill it, as the lock will be released.
 */
static void
supervise_guard_gone(struct supervisor *s)
{
	int	st = s->guard_status;

	if (s->is_start_failed ||
	    (s->is_exited && WIFEXITED(st) && WEXITSTATUS(st) == EXIT_OK))
		return;
	if (s->child == 0 && WIFSIGNALED(st)) {
		supervise_guard_gone_early(s, WTERMSIG(st));
		return;
	}
	if (WIFSIGNALED(st))
		log_warnx("the command's guardian (pid %ld) was killed by "
		    "SIG%s: killing what is left of the job", (long)s->guard,
		    signame_name(WTERMSIG(st)));
	else
		log_warnx("the command's guardian (pid %ld) exited %d: "
		    "killing what is left of the job", (long)s->guard,
		    WEXITSTATUS(st));
	supervise_orphans();
	if (!s->is_exited) {
		s->is_exited = 1;
		s->code = EXIT_SIGNAL_BASE + SIGKILL;
		s->code_sig = SIGKILL;
	}
}

/*
 * Is the job over?  1 once the command and every process it started have
 * exited (the guardian's last word, or its end), or only the command with
 * --release-on-exit.  The guardian then exits by itself (once we close
 * our end, after the release); not waiting for that keeps its exit off
 * the way of `run k -- true`.  Checked before the lock is declared lost,
 * so a job that ended while a renewal was still trying is not reported as
 * cut short: a renewal never runs past the lock's validity, so it ended
 * in time.  Asked only after a SIGCHLD (may_have_changed), not at every
 * wake-up: an idle hold should cost only its renewals.
 */
int
supervise_reap(struct supervisor *s)
{
	if (s->is_reaped)
		return (1);
	if (!s->may_have_changed)
		return (0);
	/* Anything after this raises a SIGCHLD of its own. */
	s->may_have_changed = 0;
	supervise_hear(s);
	supervise_wait_guard(s);
	if (s->is_guard_reaped) {
		supervise_hear(s);	/* what it said before it went */
		supervise_guard_gone(s);
		s->is_reaped = 1;
	} else if (s->is_over ||
	    (s->is_exited && s->opts->release_on_exit))
		s->is_reaped = 1;	/* it exits by itself */
	return (s->is_reaped);
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
 * In redlock-cli: ask the guardian.  0, or -1 once it is gone, or (EAGAIN)
 * if it has not read what we asked before.  The socket's buffer holds
 * thousands of requests, which the guardian reads at once; one that does
 * not (someone stopped it) is given GUARD_SEND_WAIT_MS once it is full,
 * not more: waiting for it would stop the renewals.
 */
int
supervise_guard_send(int fd, int op, int sig)
{
	struct supervise_req	r;
	struct pollfd		pfd;
	ssize_t			n;
	int			tries = 0;

	r.op = op;
	r.sig = sig;
	for (;;) {
		n = send(fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(r))
			return (0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n != -1 || errno != EAGAIN || tries++ > 0)
			return (-1);
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, GUARD_SEND_WAIT_MS) == -1)
			return (-1);
		errno = EAGAIN;
	}
}

/* In redlock-cli: the next message, if any: 1, 0 (none yet), -1 (EOF). */
int
supervise_guard_recv(int fd, struct supervise_msg *m)
{
	ssize_t n;

	while ((n = recv(fd, m, sizeof(*m), MSG_DONTWAIT)) == -1 &&
	    errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return (0);
	return (n == (ssize_t)sizeof(*m) ? 1 : -1);
}
