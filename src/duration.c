/* SPDX-License-Identifier: MIT */
/*
 * Durations as flock -w and timeout(1) take them: "250ms", "30s", "5m",
 * "1h", "1.5s"; a bare number is seconds.  Pure: no I/O, no exit.
 */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

/* Far beyond any sane TTL, and small enough that ms * 1e6 fits int64_t. */
#define DURATION_MAX_MS	1e12

static const struct {
	const char	*suffix;
	double		 ms;
} duration_units[] = {
	{ "ms", 1 },
	{ "s", 1000 },
	{ "m", 60 * 1000 },
	{ "h", 60 * 60 * 1000 },
	{ "", 1000 },		/* a bare number means seconds */
	{ NULL, 0 }
};

/*
 * Parse str into whole milliseconds.  Returns 0, or -1 with *errstr set to
 * a static phrase for the caller's message.  Zero is accepted (the caller
 * decides whether it means "do not wait" or is too small); a positive value
 * under one millisecond is refused rather than silently rounded to zero.
 */
int
duration_parse(const char *str, int64_t *ms, const char **errstr)
{
	const char	*p, *end;
	double		 value;
	int		 i, ndigits = 0;

	if (str == NULL || *str == '\0') {
		*errstr = "empty";
		return (-1);
	}
	if (*str == '-') {
		*errstr = "negative";
		return (-1);
	}
	/*
	 * Accept only digits with at most one '.', checked by hand: strtod
	 * alone would also take blanks, signs, hex, exponents, inf and nan.
	 */
	for (p = str; isdigit((unsigned char)*p); p++)
		ndigits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			ndigits++;
	if (ndigits == 0) {
		*errstr = "not a number";
		return (-1);
	}
	end = p;
	errno = 0;
	value = strtod(str, NULL);
	for (i = 0; duration_units[i].suffix != NULL; i++) {
		if (strcmp(end, duration_units[i].suffix) == 0)
			break;
	}
	if (duration_units[i].suffix == NULL) {
		*errstr = "unknown unit (ms, s, m or h)";
		return (-1);
	}
	if (errno == ERANGE || !isfinite(value) ||
	    value > DURATION_MAX_MS / duration_units[i].ms) {
		*errstr = "too large";
		return (-1);
	}
	value *= duration_units[i].ms;
	if (value > 0 && value < 1) {
		*errstr = "below 1ms";
		return (-1);
	}
	*ms = (int64_t)value;
	*errstr = NULL;
	return (0);
}

/*
 * Format ms the short way a person would write it: 250ms, 30s, 1.5s,
 * 1.999s, 5m, 2h; exact, never rounded.
 */
void
duration_format(int64_t ms, char *buf, size_t len)
{
	char	frac[8];
	int	n;

	if (ms < 1000)
		(void)snprintf(buf, len, "%lldms", (long long)ms);
	else if (ms % 3600000 == 0)
		(void)snprintf(buf, len, "%lldh", (long long)(ms / 3600000));
	else if (ms % 60000 == 0)
		(void)snprintf(buf, len, "%lldm", (long long)(ms / 60000));
	else if (ms % 1000 == 0)
		(void)snprintf(buf, len, "%llds", (long long)(ms / 1000));
	else {
		/* Milliseconds as a decimal fraction, trailing zeros cut. */
		(void)snprintf(frac, sizeof(frac), "%03lld",
		    (long long)(ms % 1000));
		for (n = 3; n > 1 && frac[n - 1] == '0'; n--)
			frac[n - 1] = '\0';
		(void)snprintf(buf, len, "%lld.%ss", (long long)(ms / 1000),
		    frac);
	}
}

/* 250ms, 1.2s, 3m2s, 2h5m: a span as people read it in a log. */
void
duration_span(int64_t ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	if (ms < 1000)
		(void)snprintf(buf, len, "%lldms", (long long)ms);
	else if (ms < 60000)
		(void)snprintf(buf, len, "%lld.%llds", (long long)(ms / 1000),
		    (long long)(ms % 1000 / 100));
	else if (ms < 3600000)
		(void)snprintf(buf, len, "%lldm%llds",
		    (long long)(ms / 60000), (long long)(ms / 1000 % 60));
	else
		(void)snprintf(buf, len, "%lldh%lldm",
		    (long long)(ms / 3600000), (long long)(ms / 60000 % 60));
}
