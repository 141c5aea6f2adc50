/* SPDX-License-Identifier: MIT */
/*
 * What a string that does not parse as a URL may have meant, for the
 * "did you mean" of its usage error: one job, apart from url.c's parser,
 * which calls it once the parse has failed.
 */

#include <string.h>
#include <strings.h>

#include "redlock.h"

/*
 * For a string that is not a URL of ours, what it may have meant: a known
 * scheme with "://" mistyped ("redis:/host", "redis//host", "Redis://h"),
 * a path ("/run/redis.sock"), or a host without a scheme ("localhost:6380").
 * The guess (allocated; the caller redacts it before showing it), or NULL.
 */
char *
url_guess(const char *str)
{
	static const char *schemes[] = { "redis-sentinel", "redis+cluster",
	    "rediss", "redis", "unix" };
	const char	*rest = NULL, *scheme = "redis", *sep;
	size_t		 i, n;

	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		n = strlen(schemes[i]);
		if (strncasecmp(str, schemes[i], n) == 0 &&
		    (str[n] == ':' || str[n] == '/')) {
			scheme = schemes[i];
			rest = str + n;
			break;
		}
	}
	if ((sep = strstr(str, "://")) != NULL) {
		/* An unknown scheme: only a known one in other case. */
		if (rest != sep)
			return (NULL);
		rest = sep + 3;
	} else if (rest != NULL) {
		/* "redis:/h", "redis//h", "redis:h", "unix:/p" */
		if (*rest == ':')
			rest++;
		rest += strspn(rest, "/");
		if (strcmp(scheme, "unix") == 0 && strstr(rest, "@/") == NULL) {
			/* the path, which starts at a '/' */
			rest--;
			if (rest < str || *rest != '/')
				return (NULL);
		}
	} else {
		/* a path, or a host and port */
		if (*str == '/')
			scheme = "unix";
		rest = str;
	}
	if (*rest == '\0')
		return (NULL);
	return (xasprintf("%s://%s", scheme, rest));
}
