/* SPDX-License-Identifier: MIT */
/*
 * One stress worker: CYCLES times, run CMD (redlock-cli run ... -- child)
 * and wait for it, taking SIGKILL faults from stress.sh on the way.
 *
 *   stress-worker ID CYCLES -- CMD [ARG...]
 *
 * Log lines (STRESS_LOG):
 *   kill <worker> <acquire|hold|release> <t>   we SIGKILLed our redlock-cli
 *   exit <worker> <rc> <t>                     that cycle is over: our
 *        redlock-cli has exited (rc, 128+N if killed by signal N) and its
 *        child is confirmed dead; the checker closes a child's interval here
 *        when the child logged no `end` (it was SIGKILLed)
 *
 * Faults: SIGUSR1 = SIGKILL our redlock-cli whatever it is doing; SIGUSR2 =
 * the same, but only while its child runs (the lock holder).  Only the
 * parent can signal a child without a pid-reuse race (we reap it only in
 * this loop, after the kill), which is why stress.sh asks us rather than
 * signalling redlock-cli itself.
 *
 * Dead means dead: we are a child subreaper, so a child orphaned by the
 * SIGKILL of its redlock-cli (and killed by PR_SET_PDEATHSIG) is reparented
 * to us, and we wait for it before logging `exit`.  A child reaped by
 * redlock-cli itself was dead before redlock-cli exited.
 *
 * After the cycles: wait for the delayed writers (reparented to us too),
 * create STRESS_DIR/done.ID, and wait for SIGTERM, so that stress.sh signals
 * only a live process of its own.  SIGTERM at any time ends the worker
 * (its redlock-cli is SIGKILLed first).
 */

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <poll.h>

#include "stress.h"

enum phase { PH_ACQUIRE, PH_HOLD, PH_RELEASE };
static const char *phase_name[] = { "acquire", "hold", "release" };

static int	logfd, sfd, note_rd, worker;
static int	stopping;

/* Read the children's notes for this cycle. */
static void
drain_notes(int cycle, pid_t *child, enum phase *ph)
{
	struct stress_note n;

	while (read(note_rd, &n, sizeof(n)) == (ssize_t)sizeof(n)) {
		if (n.cycle != cycle)
			continue;
		if (n.kind == STRESS_NOTE_START) {
			*child = (pid_t)n.pid;
			*ph = PH_HOLD;
		} else if (n.kind == STRESS_NOTE_END)
			*ph = PH_RELEASE;
	}
}

static void
block_wait(pid_t pid)
{
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

static void
reap_strays(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* One cycle; returns the wait status of redlock-cli. */
static int
cycle_run(int cycle, char **cmd)
{
	struct signalfd_siginfo	si;
	struct pollfd		pfd[2];
	enum phase		ph = PH_ACQUIRE;
	sigset_t		none;
	pid_t			r, child = 0;
	int			status = 0, done = 0;
	char			num[32];

	(void)snprintf(num, sizeof(num), "%d", cycle);
	(void)setenv("STRESS_CYCLE", num, 1);
	if ((r = fork()) == -1) {
		perror("stress-worker: fork");
		exit(2);
	}
	if (r == 0) {
		(void)sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(cmd[0], cmd);
		perror(cmd[0]);
		_exit(127);
	}
	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = note_rd;
	pfd[1].events = POLLIN;
	while (!done) {
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			perror("stress-worker: poll");
			exit(2);
		}
		if (pfd[1].revents & POLLIN)
			drain_notes(cycle, &child, &ph);
		if (!(pfd[0].revents & POLLIN))
			continue;
		if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		switch (si.ssi_signo) {
		case SIGUSR1:
		case SIGUSR2:
			if (si.ssi_signo == SIGUSR2 && ph != PH_HOLD)
				break;
			/* r is not reaped yet: the pid is still ours. */
			if (kill(r, SIGKILL) == 0)
				stress_log(logfd, "kill %d %s %lld", worker,
				    phase_name[ph], (long long)stress_now());
			break;
		case SIGTERM:
		case SIGINT:
			stopping = 1;
			(void)kill(r, SIGKILL);
			break;
		case SIGCHLD:
			if (waitpid(r, &status, WNOHANG) == r)
				done = 1;
			break;
		}
	}
	/* Notes written before redlock-cli died are in the pipe still. */
	drain_notes(cycle, &child, &ph);
	if (child > 0)
		block_wait(child);	/* ECHILD: reaped by redlock-cli */
	stress_log(logfd, "exit %d %d %lld", worker,
	    WIFEXITED(status) ? WEXITSTATUS(status) :
	    WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255,
	    (long long)stress_now());
	reap_strays();
	return (status);
}

int
main(int argc, char **argv)
{
	struct signalfd_siginfo	si;
	sigset_t		set;
	char			num[32], path[4096];
	int			cycles, i, p[2];

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: stress-worker ID CYCLES -- CMD...\n");
		return (2);
	}
	worker = atoi(argv[1]);
	cycles = atoi(argv[2]);
	logfd = stress_open_log();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		perror("stress-worker: PR_SET_CHILD_SUBREAPER");
		return (2);
	}
	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGCHLD);
	(void)sigaddset(&set, SIGUSR1);
	(void)sigaddset(&set, SIGUSR2);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1) {
		perror("stress-worker: signalfd");
		return (2);
	}
	/* The write end is inherited by redlock-cli and its child. */
	if (pipe(p) == -1 || fcntl(p[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(p[0], F_SETFL, O_NONBLOCK) == -1) {
		perror("stress-worker: pipe");
		return (2);
	}
	note_rd = p[0];
	(void)snprintf(num, sizeof(num), "%d", p[1]);
	(void)setenv("STRESS_NOTIFY_FD", num, 1);
	(void)setenv("STRESS_WORKER", argv[1], 1);
	(void)snprintf(num, sizeof(num), "%ld", (long)getpid());
	(void)setenv("STRESS_WORKER_PID", num, 1);

	for (i = 1; i <= cycles && !stopping; i++)
		(void)cycle_run(i, argv + 4);
	(void)close(p[1]);

	/* Delayed writers still on their way (SIGTERM ends the wait). */
	while (!stopping) {
		reap_strays();
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
			break;
		if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
		    (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT))
			stopping = 1;
	}
	if (stopping)
		return (1);
	(void)snprintf(path, sizeof(path), "%s/done.%d",
	    stress_env("STRESS_DIR"), worker);
	if ((i = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) != -1)
		(void)close(i);
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			return (0);
	return (0);
}
