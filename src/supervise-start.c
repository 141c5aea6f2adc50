/* SPDX-License-Identifier: MIT */
/*
 * run's start phase, in redlock-cli: block what the supervisor's loop
 * waits for, and start the job: the guardian (supervise-guard.c is its
 * own code, which runs in the forked child) either once the lock is ours
 * or while a run waits for it (supervise_pre_start), so that the command
 * starts without a fork once the lock is taken.  What we ask the guardian
 * and hear from it afterwards is supervise-job.c's.
 */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"
#include "supervise-impl.h"

/*
 * Job control sent to us (kill -TSTP %1 reaches our process group, not
 * the command's) goes to the command's group: a stopped supervisor would
 * let the lock expire under a command that still runs.  Paused this way,
 * the job keeps its lock, renewed, as a stopped flock(1) would.
 */
static const int supervise_job_signals[] = { SIGTSTP, SIGCONT, 0 };

static int	 supervise_block(struct supervisor *);
static int	 supervise_spawn_job(struct supervisor *, char **);
static int	 supervise_spawn_guard(struct supervisor *, char **);
static int	 supervise_guard_prepare(struct guard *, int [2], int);

/*
 * The command's process group gets the terminal only if ours has it.
 * 0, or -1 (logged; the lock is still held, the signals still blocked:
 * the caller releases, then unblocks, so that no signal interrupts the
 * release).
 */
int
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
 * supervise_run, and SIGCHLD's disposition from before.  Either way the
 * command starts without us waiting for it: the loop renews meanwhile and
 * hears how the start went (supervise_started()), since a guardian that
 * someone stopped (SIGSTOP) on its way must not stop the renewals too.
 * 0, or -1 (logged).
 */
static int
supervise_spawn_job(struct supervisor *s, char **argv)
{
	s->argv0 = argv[0];
	s->guard = -1;
	if (s->opts->pre != NULL)
		s->guard = supervise_pre_go(s->opts->pre, s->lock,
		    s->tty_fd != -1, &s->guard_fd);
	/* None started during the wait, or it was gone before it could be
	 * told: no command was started, a new guardian starts it. */
	if (s->guard == -1)
		return (supervise_spawn_guard(s, argv));
	return (0);
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

/*
 * In redlock-cli, before either fork of a guardian: its socket pair (sv),
 * and g as the guardian starts with.  We become a subreaper: if the
 * guardian is killed, what the job still runs comes to us
 * (supervise_guard_gone()) rather than to init.  0, or -1 (errno).
 */
static int
supervise_guard_prepare(struct guard *g, int sv[2], int release_on_exit)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return (-1);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_debug("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	memset(g, 0, sizeof(*g));
	g->fd = sv[1];
	g->rl = getpid();
	g->release_on_exit = release_on_exit;
	(void)fflush(stdout);
	(void)fflush(stderr);
	return (0);
}

/*
 * In redlock-cli: start the guardian, which starts the command.  Returns
 * the guardian's pid (then *fd is our end of the pair), or -1 (logged).
 * Its first word (SUPERVISE_STARTED) is not waited for: the supervisor
 * hears it with the next (supervise-reap.c), so that a short command
 * costs no wake-up for it.
 */
pid_t
supervise_guard_start(struct supervise_spawn *sp, int release_on_exit,
    int *fd)
{
	struct guard	g;
	pid_t		pid;
	int		sv[2];

	if (supervise_guard_prepare(&g, sv, release_on_exit) == -1) {
		log_warn("socketpair");
		return (-1);
	}
	if ((pid = fork()) == -1) {
		log_warn("fork");
		(void)close(sv[0]);
		(void)close(sv[1]);
		return (-1);
	}
	if (pid == 0) {
		(void)close(sv[0]);
		supervise_guard_main(&g, sp);
	}
	(void)close(sv[1]);
	*fd = sv[0];
	return (pid);
}

/*
 * In redlock-cli, when a run's lock is busy and it waits: start the
 * guardian now, with all the command needs but what only the taking
 * tells (supervise_pre_go), so that once the lock is ours the command
 * starts without a fork on the way: a fork and a new process's first run
 * would lengthen every hand-off between waiting hosts.  It closes its copies of our descriptors first.  pre->pid is -1 if it
 * could not be started; the run then starts one as usual.
 */
void
supervise_pre_start(struct supervise_pre *pre, char **argv, const char *key,
    const sigset_t *caller_mask, int release_on_exit)
{
	struct guard	g;
	sigset_t	all, before;
	int		sv[2], e;

	pre->pid = -1;
	pre->fd = -1;
	if (supervise_guard_prepare(&g, sv, release_on_exit) == -1) {
		log_debug("socketpair: %s", strerror(errno));
		return;
	}
	/* Nothing may reach it before it has blocked every signal itself. */
	if (sigfillset(&all) == -1 ||
	    sigprocmask(SIG_SETMASK, &all, &before) == -1) {
		(void)close(sv[0]);
		(void)close(sv[1]);
		return;
	}
	if ((pre->pid = fork()) == 0) {
		(void)close(sv[0]);
		supervise_guard_pre_main(&g, argv, key, caller_mask);
	}
	e = errno;
	(void)sigprocmask(SIG_SETMASK, &before, NULL);
	(void)close(sv[1]);
	if (pre->pid == -1) {
		log_debug("fork: %s", strerror(e));
		(void)close(sv[0]);
		return;
	}
	pre->fd = sv[0];
}

/*
 * In redlock-cli, the lock ours: have the guardian of supervise_pre_start()
 * start the command.  Its pid (*fd its end, pre emptied), or -1 if it was
 * gone before it could be told: pre is then ended, and the caller starts
 * a guardian as usual, since no command was started.  Its first word is
 * not waited for, as supervise_guard_start()'s is not: a guardian stopped
 * on its way would keep us from renewing the lock.
 */
pid_t
supervise_pre_go(struct supervise_pre *pre, const struct lock *l,
    int take_tty, int *fd)
{
	struct supervise_go	go;
	const char		*token = lock_token(l);
	pid_t			 pid = pre->pid;
	ssize_t			 n;

	if (pid == -1 || strlen(token) > TOKEN_HEX_LEN) {
		supervise_pre_end(pre);
		return (-1);
	}
	memset(&go, 0, sizeof(go));
	go.op = SUPERVISE_GO;
	go.take_tty = take_tty;
	go.fence = (long long)lock_fence(l);
	go.ttl_ms = (long long)lock_ttl_ms(l);
	memcpy(go.token, token, strlen(token) + 1);
	while ((n = send(pre->fd, &go, sizeof(go), MSG_NOSIGNAL)) == -1 &&
	    errno == EINTR)
		;
	if (n != (ssize_t)sizeof(go)) {
		log_debug("the guardian started before is gone: another one");
		supervise_pre_end(pre);
		return (-1);
	}
	*fd = pre->fd;
	pre->pid = -1;
	pre->fd = -1;
	return (pid);
}

/*
 * In redlock-cli: no command after all, or a new guardian for it.  Ours
 * exits on the EOF: it has no child.  It is not waited for: redlock-cli
 * exits next (or supervises, and reaps every child), and a superseded
 * waiter's exit should not wait for another process's; whoever inherits
 * it then reaps it.
 */
void
supervise_pre_end(struct supervise_pre *pre)
{
	if (pre->fd != -1)
		(void)close(pre->fd);
	pre->pid = -1;
	pre->fd = -1;
}
