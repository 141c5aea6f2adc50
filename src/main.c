/* SPDX-License-Identifier: MIT */
/*
 * redlock-cli: a distributed lock for shell scripts, on Redis.
 *
 * main() is a straight sequence: global options, find the command, its
 * options, the connection settings, run it, exit with what it returned.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"

/*
 * Started with standard input, output or error closed (`>&-`, some
 * daemons), the next descriptor we open would take its number: the Redis
 * socket would get our messages or the token, and Redis would read their
 * bytes as commands.  Hold each closed one with /dev/null opened the
 * wrong way round, so that using it still fails as on a closed one (EBADF:
 * acquire then gives the lock back, as no one got the token), and
 * close-on-exec, so that run's command starts with it closed, as given.
 */
static int
main_hold_stdio(void)
{
	int fd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		/* The lowest free number: fd itself, 0 to fd-1 being open. */
		if (open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) |
		    O_CLOEXEC) != fd)
			return (-1);
	}
	return (0);
}

int
main(int argc, char **argv)
{
	struct global_opts	 g;
	struct cmd_args		 a;
	struct options_status	 st;
	const struct cmd_entry	*e;
	int			 i = 0, rc;

	if (main_hold_stdio() == -1)
		return (EXIT_UNAVAILABLE);	/* nowhere to say so */
	memset(&g, 0, sizeof(g));
	g.connect_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.io_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.wait_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.history_size = LOCK_HISTORY_MAX;

	st = options_parse_globals(argc, argv, &g, &i);
	if (st.exit_now) {
		settings_free(&g);
		return (st.code);
	}
	if ((e = cmd_find(argv[i])) == NULL) {
		options_unknown_command(argc - i, argv + i);
		settings_free(&g);
		return (EXIT_USAGE);
	}
	st = options_parse(e, argc - i, argv + i, &g, &a);
	if (st.exit_now) {
		settings_free(&g);
		return (st.code);
	}
	/* Syslog's lines name the lock (log.c), from the first one on. */
	if (e->flags & CMD_TAKES_KEY)
		log_name_lock(a.key);
	if ((e->flags & CMD_NEEDS_SERVER) && (rc = settings_setup(&g)) != 0) {
		settings_free(&g);
		return (rc);
	}
	/*
	 * A reader that goes away must not kill us between taking a lock
	 * and reporting it: write errors are checked instead.  run gives
	 * its command the disposition we were started with.
	 */
	endsig_ignore_sigpipe();
	rc = e->exec(&g, &a);
	settings_free(&g);
	return (rc);
}
