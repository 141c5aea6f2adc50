/* SPDX-License-Identifier: MIT */
/*
 * bench/helper.c: the commands that bench/run.sh runs under the locks.  A
 * small C program rather than `sh -c '...'` or `date`, so that what is timed
 * is the lock tool's hand-off and not a shell's start-up (a static binary
 * reaches main() in well under a millisecond; bash -c takes 2-5 ms on the
 * build machine).  run.sh compiles it into its temporary directory.
 *
 *   helper stamp FILE            write the wall clock (microseconds) to FILE
 *   helper hold HELD GO END      create HELD, wait until GO exists, then
 *                                write the wall clock to END and exit
 *   helper probe DIR OVERLAPS    critical section: mkdir DIR (if it already
 *                                exists, another holder is inside: append a
 *                                line to OVERLAPS), stay 100 us, rmdir DIR
 *   helper sleepstamp SECS START END
 *                                write the clock to START, sleep SECS,
 *                                write the clock to END
 *   helper termstamp HELD FILE   create HELD, wait for SIGTERM, write the
 *                                clock when it came to FILE (bench/queues.sh)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int write_stamp(const char *path, long long us)
{
	char buf[32];
	int fd, n, ok;

	n = snprintf(buf, sizeof buf, "%lld\n", us);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	ok = write(fd, buf, (size_t)n) == n;
	return close(fd) != 0 || !ok;
}

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	long long t = now_us();
	const char *cmd = argc > 1 ? argv[1] : "";

	if (strcmp(cmd, "stamp") == 0 && argc == 3)
		return write_stamp(argv[2], t);
	if (strcmp(cmd, "hold") == 0 && argc == 5) {
		if (write_stamp(argv[2], t) != 0)
			return 1;
		while (access(argv[3], F_OK) != 0)
			nap_us(1000);
		return write_stamp(argv[4], now_us());
	}
	if (strcmp(cmd, "probe") == 0 && argc == 4) {
		if (mkdir(argv[2], 0700) != 0) {
			int fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);

			if (fd < 0 || write(fd, "overlap\n", 8) != 8)
				return 1;
			return close(fd) != 0;
		}
		nap_us(100);
		return rmdir(argv[2]) != 0;
	}
	if (strcmp(cmd, "sleepstamp") == 0 && argc == 5) {
		long secs = strtol(argv[2], NULL, 10);

		if (write_stamp(argv[3], t) != 0)
			return 1;
		nap_us(secs * 1000000);
		return write_stamp(argv[4], now_us());
	}
	if (strcmp(cmd, "termstamp") == 0 && argc == 4) {
		sigset_t set;
		int sig;

		/* Taken with sigwait, so the stamp is the moment it came. */
		if (sigemptyset(&set) != 0 || sigaddset(&set, SIGTERM) != 0 ||
		    sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
		    write_stamp(argv[2], t) != 0 || sigwait(&set, &sig) != 0)
			return 1;
		return write_stamp(argv[3], now_us());
	}
	fprintf(stderr, "usage: helper stamp FILE | hold HELD GO END | "
	    "probe DIR OVERLAPS | sleepstamp SECS START END | "
	    "termstamp HELD FILE\n");
	return 64;
}
