/* SPDX-License-Identifier: MIT
 * tests/net/ftguard.c: lets Debian's redis-server run under libfaketime.
 *
 * redis-server is linked with libjemalloc, whose start-up (from a
 * library constructor, before libfaketime's own) calls clock_gettime()
 * and pthread_cond_init(); libfaketime interposes both, and, not yet
 * initialised, calls dlsym(), which allocates: jemalloc's init lock is
 * taken a second time and the server hangs for ever (libfaketime issues
 * #130, #327, #478: "Unexpected recursive calls to clock_gettime()").
 *
 * Preloaded in front of libfaketime (LD_PRELOAD=ftguard.so:libfaketime.so.1),
 * this answers those calls itself until its own constructor has run,
 * which is after libfaketime's (the first preloaded object is initialised
 * last): the raw system call for the clocks, PTHREAD_COND_INITIALIZER for a
 * condition variable.  From then on every call goes to libfaketime, which
 * fakes the clock as FAKETIME_TIMESTAMP_FILE says.  Built by tests/net/net.py
 * with cc, as tests/fakes/proxy.c is by the model checker.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int ready;
static int (*next_cg)(clockid_t, struct timespec *);
static int (*next_gtod)(struct timeval *, void *);
static int (*next_cinit)(pthread_cond_t *, const pthread_condattr_t *);

__attribute__((constructor)) static void ftguard_init(void)
{
	next_cg = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	next_gtod = (int (*)(struct timeval *, void *))dlsym(RTLD_NEXT, "gettimeofday");
	next_cinit = (int (*)(pthread_cond_t *, const pthread_condattr_t *))
	    dlsym(RTLD_NEXT, "pthread_cond_init");
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

static int is_ready(void)
{
	return __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
}

int clock_gettime(clockid_t c, struct timespec *ts)
{
	if (!is_ready() || !next_cg)
		return (int)syscall(SYS_clock_gettime, c, ts);
	return next_cg(c, ts);
}

int gettimeofday(struct timeval *tv, void *tz)
{
	if (!is_ready() || !next_gtod)
		return (int)syscall(SYS_gettimeofday, tv, tz);
	return next_gtod(tv, tz);
}

int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	if (!is_ready() || !next_cinit) {
		pthread_cond_t z = PTHREAD_COND_INITIALIZER;

		(void)a;
		memcpy(c, &z, sizeof z);
		return 0;
	}
	return next_cinit(c, a);
}
