/* SPDX-License-Identifier: MIT */
/*
 * Time.  Every deadline is CLOCK_MONOTONIC, so a wall clock that jumps
 * (NTP step, suspend) never stretches or shortens a lock; wall time is for
 * display and for the "since" field only.
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
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

/*
 * A wait of wait_ns (-1: no deadline) as poll()'s timeout: milliseconds,
 * rounded up so that we never wake just before a deadline, and at most
 * CLOCK_POLL_MAX_MS.  poll() takes an int: from 24.8 days on, the
 * milliseconds would turn negative, which poll() takes as "for ever", so
 * a renewal of a lock of 75 days or more would never come.  A wait cut
 * short wakes early; every caller looks at its deadlines again and waits
 * for the rest.
 */
int
clock_poll_ms(int64_t wait_ns)
{
	if (wait_ns == -1)
		return (-1);
	if (wait_ns <= 0)
		return (0);
	if (wait_ns > clock_ms_to_ns(CLOCK_POLL_MAX_MS))
		return (CLOCK_POLL_MAX_MS);
	return ((int)((wait_ns + 999999) / 1000000));
}

/* Sleep the whole interval, resuming after signal handlers interrupt it. */
void
clock_sleep_ns(int64_t ns)
{
	clock_sleep_masked_ns(ns, NULL);
}

/*
 * Sleep ns with the signal mask set to mask meanwhile (NULL: as it is),
 * atomically, as ppoll() sets it: a signal that mask lets through may end
 * us during the sleep, and none is missed between the two.
 */
void
clock_sleep_masked_ns(int64_t ns, const sigset_t *mask)
{
	struct timespec ts;
	int64_t		until = clock_mono_ns() + ns, left;

	while ((left = until - clock_mono_ns()) > 0) {
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		if (ppoll(NULL, 0, &ts, mask) == 0 ||
		    (errno != EINTR))
			return;
	}
}

/* The earlier of two deadlines, where 0 is none. */
int64_t
clock_sooner(int64_t a, int64_t b)
{
	if (a == 0)
		return (b);
	return (b != 0 && b < a ? b : a);
}
