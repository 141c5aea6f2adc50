/* SPDX-License-Identifier: MIT */
/*
 * The one parser of whole numbers, for every integer option, URL port and
 * database, and signal number: strtonum(3) in spirit.  Pure: it returns an
 * error phrase and never prints; the caller names what was wrong.
 */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "redlock.h"

/*
 * Parse s, decimal digits with an optional leading '-', into a number in
 * [min, max].  Returns 0, or -1 with *errstr "invalid" (empty, blanks, a
 * '+', hex, trailing text), "too small" or "too large".  strtoll alone
 * would take leading blanks, a '+' and an empty string as 0.
 */
int
number_parse(const char *s, long long min, long long max, long long *out,
    const char **errstr)
{
	const char	*p = s;
	char		*end;
	long long	 v;

	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p)) {
		*errstr = "invalid";
		return (-1);
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0') {
		*errstr = "invalid";
		return (-1);
	}
	if ((errno == ERANGE && v == LLONG_MIN) || v < min) {
		*errstr = "too small";
		return (-1);
	}
	if (errno == ERANGE || v > max) {
		*errstr = "too large";
		return (-1);
	}
	*out = v;
	*errstr = NULL;
	return (0);
}
