/* SPDX-License-Identifier: MIT */
/*
 * What the two fakes (bad-redis.c, proxy.c) share: a message and exit 2 on
 * a setup error, the monotonic clock, and SIGTERM/SIGINT that only end the
 * main loop (got_term), let in while it waits in ppoll().  Each fake
 * defines FAKE_NAME, the prefix of its messages, and includes this once.
 */

#ifndef FAKE_H
#define FAKE_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t	 got_term;

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (fputs(FAKE_NAME ": ", stderr) == EOF ||
	    vfprintf(stderr, fmt, ap) < 0 || fputc('\n', stderr) == EOF) {
		/* Exiting anyway. */
	}
	va_end(ap);
	exit(2);
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		die("clock_gettime: %s", strerror(errno));
	return ((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

static void
on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

/*
 * SIGTERM and SIGINT set got_term, SIGPIPE is ignored, and the first two
 * are blocked except in ppoll() with *waitmask, so the loop sees got_term
 * at its next turn and never in the middle of a step.
 */
static void
fake_signals(sigset_t *waitmask)
{
	struct sigaction	sa;
	sigset_t		block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	if (sigemptyset(&sa.sa_mask) == -1 ||
	    sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGINT, &sa, NULL) == -1)
		die("sigaction: %s", strerror(errno));
	sa.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &sa, NULL) == -1)
		die("sigaction: %s", strerror(errno));
	if (sigemptyset(&block) == -1 || sigaddset(&block, SIGTERM) == -1 ||
	    sigaddset(&block, SIGINT) == -1 ||
	    sigprocmask(SIG_BLOCK, &block, waitmask) == -1 ||
	    sigdelset(waitmask, SIGTERM) == -1 ||
	    sigdelset(waitmask, SIGINT) == -1)
		die("sigprocmask: %s", strerror(errno));
}

#endif /* FAKE_H */
