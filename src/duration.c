/* SPDX-License-Identifier: MIT */
/*
 * Durations as flock -w, timeout(1) and systemd take them: "250ms",
 * "30s", "5m", "1h", "1d", "1.5s", and sums as systemd writes them
 * ("1h30m", "2min", "1h 30m"); a bare number is seconds.  Pure: no I/O,
 * no exit.
 */

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "redlock.h"

#define NS_PER_MS	INT64_C(1000000)
/*
 * Far beyond any sane TTL (about 31.7 years), and small enough that a
 * deadline of now plus this many nanoseconds, plus another such, still
 * fits int64_t.
 */
#define DURATION_MAX_NS	(INT64_C(1000000000000) * NS_PER_MS)
/* A part too large: "too large" is said once the syntax is known good. */
#define DURATION_BIG	(DURATION_MAX_NS + 1)
#define DURATION_UNKNOWN_UNIT	"unknown unit (us, ms, s, m, h, d or w)"

/* systemd's spellings (systemd.time(7)), without months and years. */
static const struct {
	const char	*name;
	int64_t		 ns;
} duration_units[] = {
	{ "us", 1000 }, { "usec", 1000 },
	{ "ms", NS_PER_MS }, { "msec", NS_PER_MS },
	{ "s", 1000 * NS_PER_MS }, { "sec", 1000 * NS_PER_MS },
	{ "second", 1000 * NS_PER_MS }, { "seconds", 1000 * NS_PER_MS },
	{ "m", 60000 * NS_PER_MS }, { "min", 60000 * NS_PER_MS },
	{ "minute", 60000 * NS_PER_MS }, { "minutes", 60000 * NS_PER_MS },
	{ "h", 3600000 * NS_PER_MS }, { "hr", 3600000 * NS_PER_MS },
	{ "hour", 3600000 * NS_PER_MS }, { "hours", 3600000 * NS_PER_MS },
	{ "d", 86400000 * NS_PER_MS }, { "day", 86400000 * NS_PER_MS },
	{ "days", 86400000 * NS_PER_MS },
	{ "w", 604800000 * NS_PER_MS }, { "week", 604800000 * NS_PER_MS },
	{ "weeks", 604800000 * NS_PER_MS },
	{ NULL, 0 }
};

static int64_t	 duration_unit(const char *, size_t);
static int64_t	 duration_fraction(const char *, const char *, int64_t);
static const char *duration_part(const char *, int64_t *, int *,
		     const char **);
static int	 duration_is_blank(char);

/* The nanoseconds of the unit spelt by the len bytes at p, or 0. */
static int64_t
duration_unit(const char *p, size_t len)
{
	int i;

	for (i = 0; duration_units[i].name != NULL; i++)
		if (strlen(duration_units[i].name) == len &&
		    memcmp(duration_units[i].name, p, len) == 0)
			return (duration_units[i].ns);
	return (0);
}

/*
 * The digits from p to end as a fraction of unit_ns, in whole
 * nanoseconds, exactly: from the last digit back, each step divides by
 * ten what the digits after it add, so that floating point never turns
 * "0.29s" into 289ms.  Every value stays under 10 * unit_ns.
 */
static int64_t
duration_fraction(const char *p, const char *end, int64_t unit_ns)
{
	int64_t ns = 0;

	while (end > p) {
		end--;
		ns = ((*end - '0') * unit_ns + ns) / 10;
	}
	return (ns);
}

/*
 * One part at p: digits with at most one '.' among them, then the letters
 * of its unit, or none (*is_bare: seconds).  Adds its nanoseconds to
 * *total, which stops at DURATION_BIG.  Returns where the part ends, or
 * NULL with *errstr set.
 */
static const char *
duration_part(const char *p, int64_t *total, int *is_bare,
    const char **errstr)
{
	const char	*dot = NULL, *unit;
	int64_t		 whole = 0, unit_ns, ns;
	int		 ndigits = 0;

	for (; isdigit((unsigned char)*p) || (*p == '.' && dot == NULL); p++) {
		if (*p == '.') {
			dot = p;
			continue;
		}
		ndigits++;
		if (dot == NULL)
			whole = whole > DURATION_MAX_NS / 10 ? DURATION_BIG :
			    whole * 10 + (*p - '0');
	}
	if (ndigits == 0) {
		*errstr = "not a number";
		return (NULL);
	}
	for (unit = p; isalpha((unsigned char)*p); p++)
		;
	*is_bare = p == unit;
	unit_ns = *is_bare ? 1000 * NS_PER_MS : duration_unit(unit,
	    (size_t)(p - unit));
	if (unit_ns == 0) {
		*errstr = DURATION_UNKNOWN_UNIT;
		return (NULL);
	}
	ns = whole > DURATION_MAX_NS / unit_ns ? DURATION_BIG :
	    whole * unit_ns;
	if (dot != NULL && ns < DURATION_BIG)
		ns += duration_fraction(dot + 1, unit, unit_ns);
	/* Both at most DURATION_BIG plus a week: no overflow. */
	*total = *total + ns > DURATION_MAX_NS ? DURATION_BIG : *total + ns;
	return (p);
}

static int
duration_is_blank(char c)
{
	return (c == ' ' || c == '\t');
}

/*
 * Parse str into whole milliseconds (a fraction of one is cut).  A sum's
 * parts follow one another, or are apart by blanks ("1h30m", "1h 30m"),
 * each with its unit: only a number on its own may leave it out.
 * Returns 0, or -1 with *errstr set to a static phrase for the caller's
 * message.  Zero is accepted (the caller decides whether it means "do
 * not wait" or is too small); a positive value under one millisecond is
 * refused rather than silently rounded to zero.
 */
int
duration_parse(const char *str, int64_t *ms, const char **errstr)
{
	const char	*p = str;
	int64_t		 total = 0;
	int		 nparts = 0, is_bare;

	if (str == NULL || *str == '\0') {
		*errstr = "empty";
		return (-1);
	}
	for (;;) {
		if (*p == '-') {
			*errstr = "negative";
			return (-1);
		}
		if ((p = duration_part(p, &total, &is_bare, errstr)) == NULL)
			return (-1);
		nparts++;
		/* "1h30", "5 s": which unit was meant is anyone's guess. */
		if (is_bare && (nparts > 1 || *p != '\0')) {
			*errstr = duration_is_blank(*p) || nparts > 1 ?
			    "a number without a unit in a sum" :
			    DURATION_UNKNOWN_UNIT;
			return (-1);
		}
		if (*p == '\0')
			break;
		while (duration_is_blank(*p))
			p++;
		if (*p == '\0') {
			*errstr = "trailing blank";
			return (-1);
		}
	}
	if (total > DURATION_MAX_NS) {
		*errstr = "too large";
		return (-1);
	}
	if (total > 0 && total < NS_PER_MS) {
		*errstr = "below 1ms";
		return (-1);
	}
	*ms = total / NS_PER_MS;
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
