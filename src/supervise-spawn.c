/* SPDX-License-Identifier: MIT */
/*
 * Starting the command, in the guardian (supervise-guard.c).
 *
 * The command is started with vfork(), not fork(): no page tables to copy
 * and no copy-on-write faults afterwards, which is most of what starting
 * the command costs.  The child shares the guardian's memory until it
 * calls exec, so it only makes system calls: everything it needs (the
 * environment included) is built before, in redlock-cli, and an exec
 * failure is reported back through a close-on-exec pipe.
 */

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>

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
#include "supervise-impl.h"

deadfn static void supervise_child(const struct supervise_spawn *);
static int	 supervise_child_say(const struct supervise_spawn *);
static pid_t	 supervise_vfork(const struct supervise_spawn *)
		     __attribute__((noinline));

/* SUPERVISE_STARTED with our pid: 0, or -1 if redlock-cli is gone. */
static int
supervise_child_say(const struct supervise_spawn *sp)
{
	struct supervise_msg m;

	memset(&m, 0, sizeof(m));
	m.event = SUPERVISE_STARTED;
	m.pid = getpid();
	for (;;) {
		if (send(sp->tell_fd, &m, sizeof(m), MSG_NOSIGNAL) ==
		    (ssize_t)sizeof(m))
			return (0);
		if (errno != EINTR)
			return (-1);
	}
}

/*
 * In the child, between vfork and exec, on the guardian's memory: system
 * calls only, and _exit(), which leaves stdio and atexit handlers alone.
 */
static void
supervise_child(const struct supervise_spawn *sp)
{
	struct timespec	zero = { 0, 0 };
	int		e, code;

	(void)setpgid(0, 0);
	/* SIGTTOU is blocked here, so a background group may take the tty. */
	if (sp->tty_fd != -1)
		(void)tcsetpgrp(sp->tty_fd, getpid());
	/* If the guardian dies, so does the command: no unsupervised lock
	 * holder.  Dying before this line is caught by the getppid() check. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != sp->parent)
		_exit(EXIT_LOST);
	/*
	 * Say that we run, ourselves, before exec: the guardian, suspended
	 * until then, could be stopped once we run, before it said so, and
	 * redlock-cli would then not know our pid if the guardian were
	 * killed after our end (see supervise_wait_guard()).  Nobody to
	 * tell: nobody supervises, so no start.
	 */
	if (supervise_child_say(sp) == -1)
		_exit(EXIT_LOST);
	/* The child's dispositions are its own (no CLONE_SIGHAND). */
	endsig_restore_sigpipe();
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
supervise_vfork(const struct supervise_spawn *sp)
{
	pid_t pid;

	if ((pid = vfork()) == 0)
		supervise_child(sp);
	return (pid);
}

/*
 * The command's environment: ours, with REDLOCK_KEY, REDLOCK_TOKEN,
 * REDLOCK_FENCE and REDLOCK_TTL_MS set to its lock's.  Our own strings
 * are borrowed; those from *first_own on are allocated here.
 */
char **
supervise_environ(const char *key, const char *token, long long fence,
    long long ttl_ms, size_t *first_own)
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
	envp[n++] = xasprintf("REDLOCK_KEY=%s", key);
	envp[n++] = xasprintf("REDLOCK_TOKEN=%s", token);
	envp[n++] = xasprintf("REDLOCK_FENCE=%lld", fence);
	envp[n++] = xasprintf("REDLOCK_TTL_MS=%lld", ttl_ms);
	envp[n] = NULL;
	return (envp);
}

/*
 * Start the command, in its own process group; returns its pid, or -1
 * (errno) if it could not be started.  *err gets exec's errno, or 0 once
 * exec succeeded; after a failed exec the child exits 126 or 127 and is
 * reaped as usual.
 */
pid_t
supervise_spawn(struct supervise_spawn *sp, int *err)
{
	pid_t	 pid;
	ssize_t	 n;
	int	 fds[2], e = 0, saved;

	*err = 0;
	if (pipe2(fds, O_CLOEXEC) == -1)
		return (-1);
	if (sigemptyset(&sp->stops) == -1 ||
	    sigaddset(&sp->stops, SIGTSTP) == -1) {
		(void)close(fds[0]);
		(void)close(fds[1]);
		return (-1);
	}
	sp->parent = getpid();
	sp->err_fd = fds[1];
	pid = supervise_vfork(sp);
	saved = errno;
	(void)close(fds[1]);
	if (pid != -1) {
		/* Also here, in case the child died before it could. */
		(void)setpgid(pid, pid);
		/* EOF once exec succeeded (close-on-exec), else errno. */
		while ((n = read(fds[0], &e, sizeof(e))) == -1 &&
		    errno == EINTR)
			;
		if (n == (ssize_t)sizeof(e))
			*err = e;
	}
	(void)close(fds[0]);
	errno = saved;
	return (pid);
}
