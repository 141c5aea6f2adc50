/* SPDX-License-Identifier: MIT */
/*
 * Shared by the stress programs (child.c, worker.c): CLOCK_MONOTONIC time
 * relative to the run's start, one-write log lines, the environment, and a
 * small PRNG.  Header-only so that stress.sh compiles each program with
 * one cc call.
 */

#ifndef STRESS_H
#define STRESS_H

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Messages from the processes of a job to their worker over the notify
 * pipe: one write each, under PIPE_BUF, so never torn or mixed.
 */
struct stress_note {
	int		cycle;
	int		kind;		/* STRESS_NOTE_* */
	int		pid;
	long long	fence;		/* STRESS_NOTE_DELAY: the write's */
	long long	at;		/* STRESS_NOTE_DELAY: when, stress_now() */
};
#define STRESS_NOTE_START	1	/* the child: about to log `start` */
#define STRESS_NOTE_END		2	/* a process of the job logged its end */
#define STRESS_NOTE_PROC	3	/* another process of the job started */
#define STRESS_NOTE_DELAY	4	/* deliver this write at `at`, late */

static inline int64_t
stress_mono_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		abort();
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* ns since STRESS_T0 (itself absolute monotonic ns), so that awk's doubles
 * hold every time exactly whatever the uptime. */
static inline int64_t
stress_now(void)
{
	static int64_t	t0 = -1;
	const char	*s;

	if (t0 == -1) {
		s = getenv("STRESS_T0");
		t0 = s != NULL ? strtoll(s, NULL, 10) : 0;
	}
	return (stress_mono_ns() - t0);
}

static inline const char *
stress_env(const char *name)
{
	const char *v = getenv(name);

	if (v == NULL || *v == '\0') {
		fprintf(stderr, "stress: %s is not set\n", name);
		exit(2);
	}
	return (v);
}

static inline long long
stress_env_num(const char *name, long long dflt)
{
	const char *v = getenv(name);

	return (v == NULL || *v == '\0' ? dflt : strtoll(v, NULL, 10));
}

static inline int
stress_open_log(void)
{
	int fd = open(stress_env("STRESS_LOG"),
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd == -1) {
		perror("stress: log");
		exit(2);
	}
	return (fd);
}

/* One line, one write(2) on an O_APPEND descriptor: lines never mix. */
__attribute__((format(printf, 2, 3)))
static inline void
stress_log(int fd, const char *fmt, ...)
{
	char	buf[256];
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n > (int)sizeof(buf) - 2)
		abort();
	buf[n++] = '\n';
	while (write(fd, buf, (size_t)n) == -1 && errno == EINTR)
		;
}

/* splitmix64: enough randomness for choosing faults. */
static uint64_t stress_rng_state;

static inline void
stress_seed(void)
{
	stress_rng_state = (uint64_t)stress_mono_ns() ^
	    ((uint64_t)getpid() << 32);
}

static inline uint64_t
stress_rand(void)
{
	uint64_t z = (stress_rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31));
}

/* Uniform in [lo, hi]. */
static inline long long
stress_between(long long lo, long long hi)
{
	if (hi <= lo)
		return (lo);
	return (lo + (long long)(stress_rand() % (uint64_t)(hi - lo + 1)));
}

/* True with probability pct percent. */
static inline int
stress_chance(long long pct)
{
	return ((long long)(stress_rand() % 100) < pct);
}

/* Sleep until the relative time `until` (ns); returns early (1) when a
 * signal handler ran and *stop became set. */
static inline int
stress_sleep_until(int64_t until, volatile sig_atomic_t *stop)
{
	struct timespec	ts;
	int64_t		left;

	while ((left = until - stress_now()) > 0) {
		if (stop != NULL && *stop)
			return (1);
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		(void)nanosleep(&ts, NULL);
	}
	return (stop != NULL && *stop);
}

#endif
