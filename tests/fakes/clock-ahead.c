/* SPDX-License-Identifier: MIT */
/*
 * clock-ahead: an LD_PRELOAD library that sets a process's wall clock
 * CLOCK_AHEAD_S seconds ahead (the environment variable; 0 if unset), for
 * tests/fences.bats's server whose clock is fastest.  It stands in for
 * libfaketime where that deadlocks in redis-server: Debian's server is
 * linked with jemalloc, whose first malloc asks clock_gettime, which
 * libfaketime (0.9.10) answers by initialising itself with dlsym, whose
 * failed look-ups malloc again (libfaketime's issue 130).  Here nothing is
 * looked up: the real clocks are read by system call, and only
 * CLOCK_REALTIME (gettimeofday, time, TIME in Redis) is moved.
 *
 *	cc -shared -fPIC -o clock-ahead.so clock-ahead.c
 *	CLOCK_AHEAD_S=3600 LD_PRELOAD=./clock-ahead.so redis-server ...
 */

#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long
ahead(void)
{
	const char *s = getenv("CLOCK_AHEAD_S");

	return (s != NULL ? strtol(s, NULL, 10) : 0);
}

int
clock_gettime(clockid_t id, struct timespec *ts)
{
	long rc = syscall(SYS_clock_gettime, id, ts);

	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += ahead();
	return ((int)rc);
}

int
gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec	ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return (-1);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return (0);
}

time_t
time(time_t *t)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return ((time_t)-1);
	if (t != NULL)
		*t = ts.tv_sec;
	return (ts.tv_sec);
}
