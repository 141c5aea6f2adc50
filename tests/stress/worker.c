/* SPDX-License-Identifier: MIT */
/*
 * One stress worker: CYCLES times, run a job under `redlock-cli run`, and
 * wait for redlock-cli and for every process of the job, taking SIGKILL
 * faults from stress.sh on the way.
 *
 *   stress-worker ID CYCLES -- REDLOCK-CLI [ARG...] run [ARG...] KEY
 *
 * The command is added for each cycle, by the job's shape (STRESS_SHAPE,
 * drawn with STRESS_PIPE_PCT and STRESS_BG_PCT; see child.c):
 *   plain, bg   -- $STRESS_CHILD child
 *   pipe        -c '$STRESS_CHILD child | $STRESS_CHILD sink'
 *
 * Log lines (STRESS_LOG):
 *   kill <worker> <acquire|hold|release> <t> <shape>
 *        we SIGKILLed our redlock-cli (hold: a process of the job was
 *        between its start and its end line)
 *   exit <worker> <rc> <t>
 *        that cycle is over: our redlock-cli has exited (rc, 128+N if
 *        killed by signal N) and every process of its job is confirmed
 *        gone; the checker closes a section here when one of the job's
 *        processes logged no end line (it was SIGKILLed)
 *
 * Faults: SIGUSR1 = SIGKILL our redlock-cli whatever it is doing; SIGUSR2 =
 * the same, but only while its job runs (the lock holder).  Only the
 * parent can signal a child without a pid-reuse race (we reap it only in
 * this loop, after the kill), which is why stress.sh asks us rather than
 * signalling redlock-cli itself.
 *
 * Dead means dead: each process of a job tells us its pid when it starts
 * (STRESS_NOTE_START, STRESS_NOTE_PROC) and we open a pidfd for it; before
 * logging `exit` we wait until every one of them has exited, whoever its
 * parent is by then (we are a child subreaper, so what redlock-cli leaves
 * behind is re-parented to us and reaped here).
 *
 * Delayed writes are started here (STRESS_NOTE_DELAY), outside the job.
 * After the cycles: wait for them, create STRESS_DIR/done.ID, and wait for
 * SIGTERM, so that stress.sh signals only a live process of its own.
 * SIGTERM at any time ends the worker (its redlock-cli is SIGKILLed first).
 * A redlock-cli still running STRESS_CYCLE_LIMIT_S (120) after its cycle
 * began has hung: the worker says where it is blocked, kills it and exits
 * 3, which fails the run (stress.sh notices a worker gone early).
 */

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <poll.h>

#include "stress.h"

#define JOB_MAX_PROCS	16

enum phase { PH_ACQUIRE, PH_HOLD, PH_RELEASE };
static const char *phase_name[] = { "acquire", "hold", "release" };

/* The processes of this cycle's job, as they told us. */
struct job {
	int	n;
	int	ended;			/* how many logged their end */
	pid_t	pid[JOB_MAX_PROCS];
	int	fd[JOB_MAX_PROCS];	/* pidfd, -1 if it was gone */
};

static int	 logfd, sfd, note_rd, worker;
static int	 stopping;
static pid_t	 self;
static char	 child_path[4096];

/* A pidfd for pid: -1 if it has gone already. */
static int
pidfd_for(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd == -1 && errno != ESRCH) {
		perror("stress-worker: pidfd_open");
		exit(2);
	}
	return (fd);
}

/* Start a delayed write (a process of ours, not of the job). */
static void
start_late(const struct stress_note *n)
{
	char	fence[32], at[32];
	pid_t	pid;

	(void)snprintf(fence, sizeof(fence), "%lld", n->fence);
	(void)snprintf(at, sizeof(at), "%lld", n->at);
	if ((pid = fork()) == -1) {
		perror("stress-worker: fork");
		exit(2);
	}
	if (pid == 0) {
		execl(child_path, child_path, "late", fence, at, (char *)NULL);
		perror(child_path);
		_exit(127);
	}
}

/* Read the notes; those of this cycle update j and *ph. */
static void
drain_notes(int cycle, struct job *j, enum phase *ph)
{
	struct stress_note n;

	while (read(note_rd, &n, sizeof(n)) == (ssize_t)sizeof(n)) {
		if (n.kind == STRESS_NOTE_DELAY) {
			start_late(&n);
			continue;
		}
		if (n.cycle != cycle)
			continue;
		if ((n.kind == STRESS_NOTE_START ||
		    n.kind == STRESS_NOTE_PROC) && j->n < JOB_MAX_PROCS) {
			j->pid[j->n] = (pid_t)n.pid;
			j->fd[j->n++] = pidfd_for((pid_t)n.pid);
		} else if (n.kind == STRESS_NOTE_END)
			j->ended++;
		*ph = j->n > 0 && j->ended < j->n ? PH_HOLD :
		    j->n > 0 ? PH_RELEASE : PH_ACQUIRE;
	}
}

/* Reap what has exited, once redlock-cli has been reaped. */
static void
reap_strays(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/*
 * While redlock-cli (r) runs: reap every child that has exited, r's wait
 * status into *status (and *done set) wherever it comes.  One loop, not a
 * waitpid(r) and then reap_strays(): r exiting between the two was reaped
 * as a stray, its status lost, and the cycle waited for it for ever.
 */
static void
reap_children(pid_t r, int *status, int *done)
{
	pid_t	w;
	int	st;

	while ((w = waitpid(-1, &st, WNOHANG)) > 0 ||
	    (w == -1 && errno == EINTR))
		if (w == r) {
			*status = st;
			*done = 1;
		}
}

/* One line of /proc/pid/name (its newline dropped) into buf. */
static void
proc_line(pid_t pid, const char *name, char *buf, size_t len)
{
	char	path[64];
	ssize_t	n;
	int	fd;

	(void)snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, len - 1);
	(void)close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* One line about pid: where it is blocked (wchan, syscall and arguments). */
static void
describe_proc(pid_t pid)
{
	char	wchan[64], sysc[256];

	proc_line(pid, "wchan", wchan, sizeof(wchan));
	proc_line(pid, "syscall", sysc, sizeof(sysc));
	fprintf(stderr, "stress-worker %d:   pid %ld wchan %s syscall %s\n",
	    worker, (long)pid, wchan, sysc);
}

/*
 * A redlock-cli that outlived its cycle's bound: say where it and its
 * children (the guardian) are blocked, so that the failure says what hung.
 */
static void
describe_hung(pid_t r, int cycle, long long limit_s)
{
	char	path[64], children[256], *p, *end;
	long	pid;

	fprintf(stderr, "stress-worker %d: redlock-cli (pid %ld) still runs "
	    "after %lld s in cycle %d\n", worker, (long)r, limit_s, cycle);
	describe_proc(r);
	(void)snprintf(path, sizeof(path), "task/%ld/children", (long)r);
	proc_line(r, path, children, sizeof(children));
	for (p = children; (pid = strtol(p, &end, 10)) > 0; p = end)
		describe_proc((pid_t)pid);
}

/* Every process of j has exited (its pidfd is readable). */
static int
job_gone(const struct job *j)
{
	struct pollfd	pfd;
	int		i;

	for (i = 0; i < j->n; i++) {
		if (j->fd[i] == -1)
			continue;
		pfd.fd = j->fd[i];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) != 1)
			return (0);
	}
	return (1);
}

/*
 * After redlock-cli has exited: wait until every process of the job has
 * too (30 s at most: a job's processes live far less than that).
 */
static void
job_wait(int cycle, struct job *j, enum phase *ph)
{
	struct signalfd_siginfo	si;
	int64_t			end = stress_now() + 30000000000LL;

	drain_notes(cycle, j, ph);
	while (!job_gone(j) && !stopping) {
		if (stress_now() > end) {
			stress_log(logfd, "note worker %d cycle %d: a process "
			    "of the job still runs after 30 s", worker, cycle);
			break;
		}
		(void)usleep(2000);
		reap_strays();
		drain_notes(cycle, j, ph);
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo == SIGTERM ||
			    si.ssi_signo == SIGINT)
				stopping = 1;
	}
}

static void
job_close(struct job *j)
{
	int i;

	for (i = 0; i < j->n; i++)
		if (j->fd[i] != -1)
			(void)close(j->fd[i]);
	j->n = 0;
}

/* This cycle's shape, and its command appended to base (argv of n). */
static const char *
cycle_command(char **base, int n, char **argv)
{
	static char	 pipeline[2 * sizeof(child_path) + 32];
	const char	*shape = "plain";
	int		 r = (int)(stress_rand() % 100);

	memcpy(argv, base, (size_t)n * sizeof(*argv));
	if (r < stress_env_num("STRESS_PIPE_PCT", 0)) {
		shape = "pipe";
		(void)snprintf(pipeline, sizeof(pipeline), "'%s' child | "
		    "'%s' sink", child_path, child_path);
		argv[n++] = "-c";
		argv[n++] = pipeline;
	} else {
		if (r < stress_env_num("STRESS_PIPE_PCT", 0) +
		    stress_env_num("STRESS_BG_PCT", 0))
			shape = "bg";
		argv[n++] = "--";
		argv[n++] = child_path;
		argv[n++] = "child";
	}
	argv[n] = NULL;
	(void)setenv("STRESS_SHAPE", shape, 1);
	return (shape);
}

/* A signal for us: a fault (SIGKILL our redlock-cli r), the end, or r's
 * exit (*status, and *done set). */
static void
on_signal(const struct signalfd_siginfo *si, pid_t r, enum phase ph,
    const char *shape, int *status, int *done)
{
	switch (si->ssi_signo) {
	case SIGUSR1:
	case SIGUSR2:
		if (si->ssi_signo == SIGUSR2 && ph != PH_HOLD)
			break;
		/* r is not reaped yet: the pid is still ours. */
		if (kill(r, SIGKILL) == 0)
			stress_log(logfd, "kill %d %s %lld %s", worker,
			    phase_name[ph], (long long)stress_now(), shape);
		break;
	case SIGTERM:
	case SIGINT:
		stopping = 1;
		(void)kill(r, SIGKILL);
		break;
	case SIGCHLD:
		reap_children(r, status, done);
		break;
	}
}

/* One cycle; returns the wait status of redlock-cli. */
static int
cycle_run(int cycle, char **base, int nbase, char **argv)
{
	struct signalfd_siginfo	si;
	struct pollfd		pfd[2];
	struct job		j;
	enum phase		ph = PH_ACQUIRE;
	const char		*shape;
	sigset_t		none;
	pid_t			r;
	int			status = 0, done = 0;
	char			num[32];
	long long		limit_s = stress_env_num("STRESS_CYCLE_LIMIT_S",
				    120);
	int64_t			deadline = stress_now() +
				    (int64_t)limit_s * 1000000000;

	memset(&j, 0, sizeof(j));
	(void)snprintf(num, sizeof(num), "%d", cycle);
	(void)setenv("STRESS_CYCLE", num, 1);
	shape = cycle_command(base, nbase, argv);
	if ((r = fork()) == -1) {
		perror("stress-worker: fork");
		exit(2);
	}
	if (r == 0) {
		(void)sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = note_rd;
	pfd[1].events = POLLIN;
	while (!done) {
		if (stress_now() > deadline) {
			describe_hung(r, cycle, limit_s);
			(void)kill(r, SIGKILL);
			exit(3);
		}
		if (poll(pfd, 2, 1000) == -1) {
			if (errno == EINTR)
				continue;
			perror("stress-worker: poll");
			exit(2);
		}
		if (pfd[1].revents & POLLIN)
			drain_notes(cycle, &j, &ph);
		if ((pfd[0].revents & POLLIN) &&
		    read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			on_signal(&si, r, ph, shape, &status, &done);
	}
	job_wait(cycle, &j, &ph);
	job_close(&j);
	stress_log(logfd, "exit %d %d %lld", worker,
	    WIFEXITED(status) ? WEXITSTATUS(status) :
	    WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255,
	    (long long)stress_now());
	reap_strays();
	return (status);
}

/* Block what we take through the signalfd; set the notify pipe up. */
static void
setup(const char *id)
{
	sigset_t	set;
	char		num[32];
	int		p[2];

	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGCHLD);
	(void)sigaddset(&set, SIGUSR1);
	(void)sigaddset(&set, SIGUSR2);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1) {
		perror("stress-worker: signalfd");
		exit(2);
	}
	/* The write end is inherited by redlock-cli and its job. */
	if (pipe(p) == -1 || fcntl(p[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(p[0], F_SETFL, O_NONBLOCK) == -1) {
		perror("stress-worker: pipe");
		exit(2);
	}
	note_rd = p[0];
	(void)snprintf(num, sizeof(num), "%d", p[1]);
	(void)setenv("STRESS_NOTIFY_FD", num, 1);
	(void)setenv("STRESS_WORKER", id, 1);
	(void)snprintf(num, sizeof(num), "%ld", (long)self);
	(void)setenv("STRESS_WORKER_PID", num, 1);
}

int
main(int argc, char **argv)
{
	struct signalfd_siginfo	si;
	struct pollfd		pfd;
	char			path[4096], **cmd;
	int			cycles, i, nbase;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: stress-worker ID CYCLES -- CMD...\n");
		return (2);
	}
	worker = atoi(argv[1]);
	cycles = atoi(argv[2]);
	self = getpid();
	stress_seed();
	logfd = stress_open_log();
	(void)snprintf(child_path, sizeof(child_path), "%s",
	    stress_env("STRESS_CHILD"));
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		perror("stress-worker: PR_SET_CHILD_SUBREAPER");
		return (2);
	}
	setup(argv[1]);
	nbase = argc - 4;
	if ((cmd = calloc((size_t)nbase + 4, sizeof(*cmd))) == NULL) {
		perror("stress-worker");
		return (2);
	}
	for (i = 1; i <= cycles && !stopping; i++)
		(void)cycle_run(i, argv + 4, nbase, cmd);

	/* Delayed writers still on their way (SIGTERM ends the wait). */
	pfd.fd = sfd;
	pfd.events = POLLIN;
	while (!stopping) {
		reap_strays();
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
			break;
		if (poll(&pfd, 1, 100) == 1 &&
		    read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
		    (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT))
			stopping = 1;
	}
	free(cmd);
	if (stopping)
		return (1);
	(void)snprintf(path, sizeof(path), "%s/done.%d",
	    stress_env("STRESS_DIR"), worker);
	if ((i = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) != -1)
		(void)close(i);
	pfd.fd = sfd;
	while (poll(&pfd, 1, -1) >= 0)
		if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
		    (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT))
			return (0);
	return (0);
}
