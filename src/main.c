/*
 * redlock-cli: a distributed lock for shell scripts, on Redis.
 *
 * main() is a straight sequence: global options, find the command, its
 * options, the connection settings, run it, exit with what it returned.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

int
main(int argc, char **argv)
{
	struct global_opts	 g;
	struct cmd_args		 a;
	const struct cmd_entry	*e;
	int			 i, rc;

	memset(&g, 0, sizeof(g));
	g.connect_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.io_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.wait_timeout_ms = DEFAULT_TIMEOUT_MS;

	if ((i = options_parse_globals(argc, argv, &g)) < 0) {
		settings_free(&g);
		return (-1 - i);
	}
	if (strcmp(argv[i], "help") == 0) {
		rc = i + 2 < argc ? EXIT_USAGE : cmd_help(argv[i + 1]);
		if (i + 2 < argc)
			log_warnx("help: unexpected argument '%s'",
			    argv[i + 2]);
		settings_free(&g);
		return (rc);
	}
	if ((e = cmd_find(argv[i])) == NULL) {
		log_warnx("unknown command '%s' (see '%s --help')", argv[i],
		    PROGNAME);
		settings_free(&g);
		return (EXIT_USAGE);
	}
	if ((rc = options_parse(e, argc - i, argv + i, &g, &a)) < 0 ||
	    (rc = settings_setup(&g)) != 0) {
		settings_free(&g);
		return (rc < 0 ? -1 - rc : rc);
	}
	/*
	 * A reader that goes away must not kill us between taking a lock
	 * and reporting it: write errors are checked instead.  run gives
	 * its command the disposition we were started with.
	 */
	supervise_ignore_sigpipe();
	rc = e->exec(&g, &a);
	settings_free(&g);
	return (rc);
}
