/* SPDX-License-Identifier: MIT */
/*
 * The command that stress.sh runs under `redlock-cli run`: one critical
 * section, logged, with a fenced write to a shared resource.
 *
 *   stress-child child    the critical section (needs REDLOCK_FENCE and the
 *                         STRESS_* environment that worker.c and stress.sh set)
 *   stress-child now      print CLOCK_MONOTONIC ns (since STRESS_T0 if set)
 *
 * The critical section:
 *   start <fence> <worker> <t> <pid>
 *   ... hold: 1..STRESS_HOLD_MS ms, or (STRESS_LONG_PCT %) TTL/2..2*TTL ms,
 *       long enough for a server pause to make run lose the lock ...
 *   the protected write (or its hand-off, below), unless the lock was lost
 *   end <fence> <worker> <t> <ok|lost|handoff>[ term]
 *
 * On SIGTERM (run's signal that the lock is being lost) an obedient child
 * stops at once without writing (`end ... lost term`); a stubborn one
 * (STRESS_STUBBORN_PCT %) notes it and carries on, so run's SIGKILL at the
 * lock's expiry is what stops it (then there is no `end` line and the checker
 * closes its interval at the worker's `exit` line, see check.awk).
 *
 * The resource: a state file holding the highest fence it accepted, read,
 * compared and rewritten under flock(2); it logs `accept <fence> <tag>` or
 * `reject <fence> (last <f>) <tag>` (tag in-lock or late) while still
 * holding the flock, so the log's order is the resource's order.
 *
 * Delayed write (STRESS_DELAY_PCT %, a fault): the child hands its write to
 * a process of its own group and session, as a write stuck in the network
 * would be, logs `delay <fence> <worker> <ms> <t>` and `end ... handoff`
 * and exits; the write reaches the resource up to 2*TTL later, usually
 * after newer holders wrote, and fencing must then reject it.  Nothing
 * that run does can stop it: that is what fencing is for.
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

static void
notify(int kind)
{
	struct stress_note	n;
	const char		*fd = getenv("STRESS_NOTIFY_FD");

	if (fd == NULL)
		return;
	memset(&n, 0, sizeof(n));
	n.cycle = (int)stress_env_num("STRESS_CYCLE", 0);
	n.kind = kind;
	n.pid = (int)getpid();
	if (write(atoi(fd), &n, sizeof(n)) == -1)
		return;		/* the worker is gone: nothing to tell */
}

/* The protected write: accept only a fence above the last accepted. */
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
	if (fence > last) {
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
 * The delayed writer: its own process group (run's kill of the child's
 * group must not reach a write already "in the network"), reparented to
 * the worker (a child subreaper) when the child exits, and killed if the
 * worker dies so that nothing outlives an interrupted run.
 */
static void __attribute__((noreturn))
delayed_write(int logfd, long long fence, int worker, int64_t at,
    pid_t child)
{
	pid_t	worker_pid;
	int	i;

	(void)setpgid(0, 0);
	(void)signal(SIGTERM, SIG_DFL);
	worker_pid = (pid_t)stress_env_num("STRESS_WORKER_PID", 0);
	for (i = 0; i < 10000 && getppid() == child; i++)
		(void)usleep(1000);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != worker_pid) {
		stress_log(logfd, "note delayed write %lld (worker %d) "
		    "abandoned: parent %d, worker %d", fence, worker,
		    (int)getppid(), (int)worker_pid);
		_exit(0);
	}
	(void)stress_sleep_until(at, NULL);
	resource_write(logfd, fence, "late");
	_exit(0);
}

static int
child_main(void)
{
	struct sigaction	sa;
	int64_t			until, hold_ms, ttl_ms, delay_ms;
	long long		fence;
	const char		*status;
	int			logfd, worker, stubborn;
	pid_t			pid;

	stress_seed();
	logfd = stress_open_log();
	fence = strtoll(stress_env("REDLOCK_FENCE"), NULL, 10);
	worker = (int)stress_env_num("STRESS_WORKER", 0);
	ttl_ms = stress_env_num("REDLOCK_TTL_MS", 1000);
	stubborn = stress_chance(stress_env_num("STRESS_STUBBORN_PCT", 0));

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;	/* no SA_RESTART: wake the sleep */
	(void)sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);

	if (stress_chance(stress_env_num("STRESS_LONG_PCT", 0)))
		hold_ms = stress_between(ttl_ms / 2, 2 * ttl_ms);
	else
		hold_ms = stress_between(1, stress_env_num("STRESS_HOLD_MS",
		    4));

	notify(STRESS_NOTE_START);
	stress_log(logfd, "start %lld %d %lld %d", fence, worker,
	    (long long)stress_now(), (int)getpid());
	until = stress_now() + hold_ms * 1000000;
	(void)stress_sleep_until(until, stubborn ? NULL : &got_term);
	if (got_term && !stubborn)
		status = "lost";
	else if (stress_chance(stress_env_num("STRESS_DELAY_PCT", 0))) {
		delay_ms = stress_between(0, 2 * ttl_ms);
		stress_log(logfd, "delay %lld %d %lld %lld", fence, worker,
		    (long long)delay_ms, (long long)stress_now());
		until = stress_now() + delay_ms * 1000000;
		if ((pid = fork()) == 0)
			delayed_write(logfd, fence, worker, until, getppid());
		status = pid == -1 ? "fork-failed" : "handoff";
	} else {
		resource_write(logfd, fence, "in-lock");
		status = "ok";
	}
	stress_log(logfd, "end %lld %d %lld %s%s", fence, worker,
	    (long long)stress_now(), status, got_term ? " term" : "");
	notify(STRESS_NOTE_END);
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
	fprintf(stderr, "usage: stress-child child | now\n");
	return (2);
}
