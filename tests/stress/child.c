/* SPDX-License-Identifier: MIT */
/*
 * The processes of the jobs that stress.sh runs under `redlock-cli run`:
 * one critical section each, logged, with fenced writes to a shared
 * resource.
 *
 *   stress-child child    the critical section (needs REDLOCK_FENCE and the
 *                         STRESS_* environment that worker.c and stress.sh
 *                         set); STRESS_SHAPE says the job's shape
 *   stress-child sink     the reading end of a pipeline job: `child | sink`
 *   stress-child late FENCE AT
 *                         a delayed write, started by the worker
 *   stress-child now      print CLOCK_MONOTONIC ns (since STRESS_T0 if set)
 *
 * The critical section:
 *   start <fence> <worker> <t> <pid> <shape>
 *   ... hold: 1..STRESS_HOLD_MS ms, or (STRESS_LONG_PCT %) TTL/2..2*TTL ms,
 *       long enough for a server pause to make run lose the lock ...
 *   the protected write (or its hand-off, below), unless the lock was lost
 *   end <fence> <worker> <t> <ok|lost|handoff>[ term]
 *
 * The other processes of a job log their own lines, so that the checker
 * counts the section until the last of them is gone:
 *   proc <fence> <worker> <t> <pid> <sink|bg>
 *   procend <fence> <worker> <t> <pid> <ok|lost>[ term]
 * Shapes: plain (the child alone); pipe (`child | sink` under sh -c: sink
 * reads until the child exits); bg (the child leaves a process behind, a
 * daemon by double fork and setsid(), that writes to the resource with the
 * same fence 1..STRESS_BG_MS ms after the child has exited).
 *
 * On SIGTERM (run's signal that the lock is being lost) an obedient
 * process stops at once without writing (`... lost term`); a stubborn one
 * (STRESS_STUBBORN_PCT %) notes it and carries on, so run's SIGKILL at the
 * lock's expiry is what stops it (then there is no end line, and the
 * checker closes the section at the worker's `exit` line, see check.awk).
 *
 * The resource: a state file holding the highest fence it accepted, read,
 * compared and rewritten under flock(2).  It accepts a fence at least as
 * high as the last one (a holder may write more than once: the man page's
 * rule is to reject a lower fence) and logs `accept <fence> <tag>` or
 * `reject <fence> (last <f>) <tag>` (tag in-lock or late) while still
 * holding the flock, so the log's order is the resource's order.
 *
 * Delayed write (STRESS_DELAY_PCT %, a fault): the child hands its write
 * to its worker, as a write stuck in the network would be, logs
 * `delay <fence> <worker> <ms> <t>` and `end ... handoff` and exits; the
 * worker starts `stress-child late`, which delivers it up to 2*TTL later,
 * usually after newer holders wrote, and fencing must then reject it.  It
 * is not a process of the job (run would wait for it): nothing that run
 * does can stop a write in the network, that is what fencing is for.
 */

#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "stress.h"

static volatile sig_atomic_t got_term;

static void
on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

/* Catch SIGTERM; no SA_RESTART, so that it wakes a sleep or a read. */
static void
catch_term(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	(void)sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
}

static void
notify(int kind, long long fence, long long at)
{
	struct stress_note	n;
	const char		*fd = getenv("STRESS_NOTIFY_FD");

	if (fd == NULL)
		return;
	memset(&n, 0, sizeof(n));
	n.cycle = (int)stress_env_num("STRESS_CYCLE", 0);
	n.kind = kind;
	n.pid = (int)getpid();
	n.fence = fence;
	n.at = at;
	if (write(atoi(fd), &n, sizeof(n)) == -1)
		return;		/* the worker is gone: nothing to tell */
}

/* The protected write: accept no fence below the last accepted. */
static void
resource_write(int logfd, long long fence, const char *tag)
{
	char		buf[64];
	long long	last = -1;
	ssize_t		n;
	int		fd, len;

	fd = open(stress_env("STRESS_RES"), O_RDWR | O_CREAT | O_CLOEXEC,
	    0644);
	if (fd == -1) {
		perror("stress: resource");
		exit(2);
	}
	while (flock(fd, LOCK_EX) == -1)
		if (errno != EINTR) {
			perror("stress: flock");
			exit(2);
		}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		last = strtoll(buf, NULL, 10);
	}
	if (fence >= last) {
		len = snprintf(buf, sizeof(buf), "%lld\n", fence);
		if (pwrite(fd, buf, (size_t)len, 0) != len ||
		    ftruncate(fd, len) == -1) {
			perror("stress: resource write");
			exit(2);
		}
		stress_log(logfd, "accept %lld %s", fence, tag);
	} else
		stress_log(logfd, "reject %lld (last %lld) %s", fence, last,
		    tag);
	(void)close(fd);	/* and the flock with it */
}

/*
 * The delayed writer, started by the worker (a child subreaper): killed
 * if the worker dies, so that nothing outlives an interrupted run.
 */
static int
late_main(long long fence, int64_t at)
{
	pid_t	worker_pid;
	int	logfd = stress_open_log();

	worker_pid = (pid_t)stress_env_num("STRESS_WORKER_PID", 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != worker_pid) {
		stress_log(logfd, "note delayed write %lld abandoned: parent "
		    "%d, worker %d", fence, (int)getppid(), (int)worker_pid);
		return (0);
	}
	(void)stress_sleep_until(at, NULL);
	resource_write(logfd, fence, "late");
	return (0);
}

/*
 * The process a bg job leaves behind: double fork (the middle one exits
 * at once, so it is orphaned and re-parented to run's subreaper) and
 * setsid(), as a daemon does; then, 1..STRESS_BG_MS ms after the child
 * has gone, the same fenced write.  Returns in the child, at once.
 */
static void
background(int logfd, long long fence, int worker, int stubborn)
{
	const char	*status = "ok";
	int64_t		 until;
	pid_t		 pid;

	if ((pid = fork()) != 0) {
		if (pid > 0)
			while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
				;
		return;
	}
	if (fork() != 0)
		_exit(0);
	(void)setsid();
	got_term = 0;
	stress_seed();
	notify(STRESS_NOTE_PROC, fence, 0);
	stress_log(logfd, "proc %lld %d %lld %d bg", fence, worker,
	    (long long)stress_now(), (int)getpid());
	until = stress_now() +
	    stress_between(1, stress_env_num("STRESS_BG_MS", 100)) * 1000000;
	(void)stress_sleep_until(until, stubborn ? NULL : &got_term);
	if (got_term && !stubborn)
		status = "lost";
	else
		resource_write(logfd, fence, "in-lock");
	stress_log(logfd, "procend %lld %d %lld %d %s%s", fence, worker,
	    (long long)stress_now(), (int)getpid(), status,
	    got_term ? " term" : "");
	notify(STRESS_NOTE_END, fence, 0);
	_exit(0);
}

/* The end of a pipeline: read until the child has exited. */
static int
sink_main(void)
{
	char		 buf[256];
	long long	 fence;
	ssize_t		 n;
	int		 logfd, worker, stubborn;

	stress_seed();
	logfd = stress_open_log();
	fence = strtoll(stress_env("REDLOCK_FENCE"), NULL, 10);
	worker = (int)stress_env_num("STRESS_WORKER", 0);
	stubborn = stress_chance(stress_env_num("STRESS_STUBBORN_PCT", 0));
	catch_term();
	notify(STRESS_NOTE_PROC, fence, 0);
	stress_log(logfd, "proc %lld %d %lld %d sink", fence, worker,
	    (long long)stress_now(), (int)getpid());
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0 ||
	    (n == -1 && errno == EINTR && (stubborn || !got_term)))
		;
	stress_log(logfd, "procend %lld %d %lld %d %s%s", fence, worker,
	    (long long)stress_now(), (int)getpid(),
	    got_term && !stubborn ? "lost" : "ok", got_term ? " term" : "");
	notify(STRESS_NOTE_END, fence, 0);
	return (0);
}

static int
child_main(void)
{
	int64_t			until, hold_ms, ttl_ms, delay_ms;
	long long		fence;
	const char		*status, *shape;
	int			logfd, worker, stubborn;

	stress_seed();
	logfd = stress_open_log();
	fence = strtoll(stress_env("REDLOCK_FENCE"), NULL, 10);
	worker = (int)stress_env_num("STRESS_WORKER", 0);
	ttl_ms = stress_env_num("REDLOCK_TTL_MS", 1000);
	stubborn = stress_chance(stress_env_num("STRESS_STUBBORN_PCT", 0));
	if ((shape = getenv("STRESS_SHAPE")) == NULL || *shape == '\0')
		shape = "plain";
	catch_term();

	if (stress_chance(stress_env_num("STRESS_LONG_PCT", 0)))
		hold_ms = stress_between(ttl_ms / 2, 2 * ttl_ms);
	else
		hold_ms = stress_between(1, stress_env_num("STRESS_HOLD_MS",
		    4));

	notify(STRESS_NOTE_START, fence, 0);
	stress_log(logfd, "start %lld %d %lld %d %s", fence, worker,
	    (long long)stress_now(), (int)getpid(), shape);
	until = stress_now() + hold_ms * 1000000;
	(void)stress_sleep_until(until, stubborn ? NULL : &got_term);
	if (got_term && !stubborn)
		status = "lost";
	else if (stress_chance(stress_env_num("STRESS_DELAY_PCT", 0))) {
		delay_ms = stress_between(0, 2 * ttl_ms);
		stress_log(logfd, "delay %lld %d %lld %lld", fence, worker,
		    (long long)delay_ms, (long long)stress_now());
		notify(STRESS_NOTE_DELAY, fence,
		    (long long)(stress_now() + delay_ms * 1000000));
		status = "handoff";
	} else {
		resource_write(logfd, fence, "in-lock");
		status = "ok";
	}
	if (strcmp(status, "lost") != 0 && strcmp(shape, "bg") == 0)
		background(logfd, fence, worker, stubborn);
	stress_log(logfd, "end %lld %d %lld %s%s", fence, worker,
	    (long long)stress_now(), status, got_term ? " term" : "");
	notify(STRESS_NOTE_END, fence, 0);
	return (0);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "now") == 0) {
		printf("%lld\n", (long long)(getenv("STRESS_T0") != NULL ?
		    stress_now() : stress_mono_ns()));
		return (0);
	}
	if (argc == 2 && strcmp(argv[1], "child") == 0)
		return (child_main());
	if (argc == 2 && strcmp(argv[1], "sink") == 0)
		return (sink_main());
	if (argc == 4 && strcmp(argv[1], "late") == 0)
		return (late_main(strtoll(argv[2], NULL, 10),
		    (int64_t)strtoll(argv[3], NULL, 10)));
	fprintf(stderr, "usage: stress-child child | sink | late FENCE AT | "
	    "now\n");
	return (2);
}
