/* SPDX-License-Identifier: MIT */
/*
 * Times as every output shows them: a moment in UTC ISO 8601
 * ("2026-12-05T03:20:20Z"), and how long ago one was, as a duration
 * ("3m12s").  The bottom of the printing files: it calls only the clock
 * and duration.c.
 */

#include <stdio.h>
#include <time.h>

#include "redlock.h"

/* since_ms (wall clock) in ISO 8601 UTC; '' when unknown (0). */
void
timefmt_utc(int64_t since_ms, char *out, size_t len)
{
	struct tm	tm;
	time_t		t = (time_t)(since_ms / 1000);

	out[0] = '\0';
	if (since_ms > 0 && gmtime_r(&t, &tm) != NULL)
		(void)strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* How long ago since_ms was, by this host's clock; '' when unknown. */
void
timefmt_age(int64_t since_ms, char *out, size_t len)
{
	int64_t now = clock_wall_ms();

	out[0] = '\0';
	if (since_ms > 0 && now >= since_ms)
		duration_span(now - since_ms, out, len);
}
