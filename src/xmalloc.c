/* SPDX-License-Identifier: MIT */
/*
 * Allocation that cannot fail: out of memory is fatal (exit 69), as in
 * tmux's xmalloc.c.  Lock-holding code never needs large allocations, so a
 * failure here means the machine is in trouble, and the TTL frees the lock.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

void *
xmalloc(size_t size)
{
	void *p;

	if ((p = malloc(size == 0 ? 1 : size)) == NULL)
		fatal(EXIT_UNAVAILABLE, "out of memory");
	return (p);
}

void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		fatal(EXIT_UNAVAILABLE, "out of memory");
	return (p);
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		fatalx(EXIT_UNAVAILABLE, "out of memory");
	if ((p = realloc(old, n * size == 0 ? 1 : n * size)) == NULL)
		fatal(EXIT_UNAVAILABLE, "out of memory");
	return (p);
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		fatal(EXIT_UNAVAILABLE, "out of memory");
	return (p);
}

char *
xasprintf(const char *fmt, ...)
{
	va_list	 ap;
	char	*p;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal(EXIT_UNAVAILABLE, "out of memory");
	return (p);
}

/* Free a string that held a secret, wiping it first. */
void
freezero_str(char *s)
{
	if (s == NULL)
		return;
	explicit_bzero(s, strlen(s));
	free(s);
}
