/* SPDX-License-Identifier: MIT */
/*
 * The command table: lookup, usage and help, and the messages the verbs
 * share.  Each verb is described by data in its own cmd-<verb>.c (usage,
 * short options, ids of its long options; see options.c); adding a verb
 * means one file, one extern line and one table line here.
 */

#include <stdio.h>
#include <string.h>

#include "redlock.h"

extern const struct cmd_entry cmd_acquire_entry;
extern const struct cmd_entry cmd_extend_entry;
extern const struct cmd_entry cmd_release_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_status_entry;

static const struct cmd_entry *cmd_table[] = {
	&cmd_acquire_entry,
	&cmd_extend_entry,
	&cmd_release_entry,
	&cmd_run_entry,
	&cmd_status_entry,
	NULL
};

const struct cmd_entry *
cmd_find(const char *name)
{
	int i;

	/* Exact names only: a script's "ext" must not change meaning. */
	for (i = 0; cmd_table[i] != NULL; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return (cmd_table[i]);
	return (NULL);
}

void
cmd_print_usage(int to_stdout)
{
	FILE	*f = to_stdout ? stdout : stderr;
	int	 i;

	(void)fprintf(f, "usage: %s [global options] command KEY [options]\n"
	    "\ncommands:\n", PROGNAME);
	for (i = 0; cmd_table[i] != NULL; i++)
		(void)fprintf(f, "  %-8s %s\n", cmd_table[i]->name,
		    cmd_table[i]->usage);
	(void)fprintf(f, "  help     [COMMAND]\n"
	    "\nglobal options (before or after the command):\n"
	    "  -u, --url URL            a server (repeat for a Redlock quorum):"
	    "\n"
	    "                           redis://[[user]:pass@]host[:port][/db]"
	    ", rediss://...,\n"
	    "                           unix:///path[?db=N], redis+cluster://"
	    "h1:p1,h2:p2,\n"
	    "                           redis-sentinel://h1:p1,h2:p2/master\n"
	    "      --user NAME, --password-file FILE (mode 0600), "
	    "--no-auth-warning\n"
	    "      --connect-timeout DUR, --io-timeout DUR (default 1s)\n"
	    "      --wait-replicas N, --wait-timeout DUR   WAIT after "
	    "acquire and renewals\n"
	    "      --tls, --cacert FILE, --cacertdir DIR, --cert FILE, "
	    "--key FILE,\n"
	    "      --sni NAME, --insecure\n"
	    "      --prefix STR         prepended to every key\n"
	    "  -q, --quiet              no message when the lock is busy\n"
	    "  -v, --verbose            say what was done; twice: each "
	    "Redis command\n"
	    "      --syslog             log to syslog too\n"
	    "  -h, --help; -V, --version\n"
	    "\nsee redlock-cli(1) for durations, exit status and "
	    "environment\n");
}

void
cmd_print_help(const struct cmd_entry *e, int to_stdout)
{
	FILE *f = to_stdout ? stdout : stderr;

	(void)fprintf(f, "usage: %s %s %s\n%s\n", PROGNAME, e->name, e->usage,
	    e->summary);
}

/* redlock-cli help [COMMAND] */
int
cmd_help(const char *name)
{
	const struct cmd_entry *e;

	if (name == NULL) {
		cmd_print_usage(1);
		return (EXIT_OK);
	}
	if ((e = cmd_find(name)) == NULL) {
		log_warnx("unknown command '%s'", name);
		return (EXIT_USAGE);
	}
	cmd_print_help(e, 1);
	return (EXIT_OK);
}

/* The lock a verb was asked for, as the lock layer takes it. */
void
cmd_lock_spec(const struct cmd_args *a, struct lock_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->key = a->key;
	spec->mode = a->limit > 0 ? LOCK_SEMAPHORE : LOCK_MUTEX;
	spec->limit = a->limit;
	spec->is_fair = a->fair;
	spec->ttl_ms = a->ttl_ms;
	spec->wait_ms = a->wait_ms;
}

/* The lock is busy: say so (unless -q), for acquire and run alike. */
void
cmd_report_busy(const struct lock *l, const struct cmd_args *a)
{
	char waited[32];

	if (a->limit > 0 && a->wait_ms == 0) {
		log_busy("lock '%s' has no free slot (limit %lld)", lock_name(l),
		    (long long)a->limit);
		return;
	}
	if (a->limit > 0) {
		duration_format(a->wait_ms, waited, sizeof(waited));
		log_busy("lock '%s' still has no free slot (limit %lld) after "
		    "%s", lock_name(l), (long long)a->limit, waited);
		return;
	}
	if (a->wait_ms == 0) {
		log_busy("lock '%s' is held by another owner", lock_name(l));
		return;
	}
	duration_format(a->wait_ms, waited, sizeof(waited));
	log_busy("lock '%s' is still held by another owner after %s",
	    lock_name(l), waited);
}

/* release or extend found that our token does not hold the lock. */
void
cmd_report_not_owner(const struct lock *l, const char *verb)
{
	if (lock_not_owner(l) == LOCK_OTHER)
		log_warnx("cannot %s lock '%s': it is held by another owner",
		    verb, lock_name(l));
	else
		log_warnx("cannot %s lock '%s': it is not held (expired or "
		    "never taken)", verb, lock_name(l));
}

/* Results written to stdout must arrive; a lost token is a lost lock. */
int
cmd_flush_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		log_warn("cannot write to standard output");
		return (-1);
	}
	return (0);
}
