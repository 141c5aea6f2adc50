/* SPDX-License-Identifier: MIT */
/*
 * Time.  Every deadline is CLOCK_MONOTONIC, so a wall clock that jumps
 * (NTP step, suspend) never stretches or shortens a lock; wall time is for
 * display and for the "since" field only.
 */

#include <errno.h>
#include <time.h>

#include "redlock.h"

int64_t
clock_mono_ns(void)
{
	struct timespec ts;

	/* Cannot fail for CLOCK_MONOTONIC on Linux with a valid pointer. */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

int64_t
clock_wall_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int64_t
clock_ms_to_ns(int64_t ms)
{
	return (ms * 1000000);
}

/* Sleep the whole interval, resuming after signal handlers interrupt it. */
void
clock_sleep_ns(int64_t ns)
{
	struct timespec ts;

	if (ns <= 0)
		return;
	ts.tv_sec = ns / 1000000000;
	ts.tv_nsec = ns % 1000000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}
