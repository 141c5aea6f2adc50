/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer targets in tests/fuzz/: a check that aborts with
 * a message (libFuzzer then saves the input), and quiet stdio.
 */

#ifndef FUZZ_H
#define FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * A broken invariant is a crash: say which, on fd 2 (stderr the FILE may
 * point at /dev/null, see fuzz_quiet()), and abort so the input is kept.
 */
#define FUZZ_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		dprintf(STDERR_FILENO, "%s:%d: check failed: %s: ",	\
		    __FILE__, __LINE__, #cond);				\
		dprintf(STDERR_FILENO, __VA_ARGS__);			\
		dprintf(STDERR_FILENO, "\n");				\
		abort();						\
	}								\
} while (0)

/*
 * The code under test prints usage and warnings through stdout and
 * stderr.  Point those FILEs at /dev/null without touching fds 1 and 2:
 * libFuzzer and the sanitizers keep writing their reports to fd 2.
 * FUZZ_VERBOSE=1 in the environment keeps the messages, to read them when
 * replaying one input.
 */
static inline void
fuzz_quiet(void)
{
	FILE		*null;
	const char	*env = getenv("FUZZ_VERBOSE");

	if (env != NULL && *env != '\0' && *env != '0')
		return;
	if ((null = fopen("/dev/null", "w")) == NULL)
		return;
	stdout = null;
	stderr = null;
}

#endif /* FUZZ_H */
