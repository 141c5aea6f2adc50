/* SPDX-License-Identifier: MIT */
/*
 * The table of every option, and what may be asked of it: the row of an
 * option, its default as help shows it, and whether a verb takes it.  The
 * bottom of the option parser: the parser (options.c), its messages
 * (options-error.c) and help (help.c) read it; it calls none of them.
 */

#include <getopt.h>
#include <stddef.h>
#include <string.h>

#include "redlock.h"
#include "options-impl.h"

/*
 * Every option, once: getopt's row, whether any verb takes it, and what
 * help says of it.  A verb lists the ids of its own in its entry.
 */
const struct options_def options_defs[] = {
	{ { { "url", required_argument, NULL, OPT_URL }, 1 }, "URL",
	    "a Redis server; repeat it for a Redlock quorum",
	    "$REDLOCK_URL, else $REDIS_URL, else " DEFAULT_URL },
	{ { { "user", required_argument, NULL, OPT_USER }, 1 }, "NAME",
	    "the ACL user for URLs that name none", "$REDLOCK_USER" },
	{ { { "password-file", required_argument, NULL, OPT_PASSWORD_FILE }, 1 },
	    "FILE", "read the password from FILE (mode 0600)",
	    "$REDLOCK_PASSWORD, else $REDISCLI_AUTH" },
	{ { { "no-auth-warning", no_argument, NULL, OPT_NO_AUTH_WARNING }, 1 },
	    NULL, "no warning for a password given in -u", NULL },
	{ { { "connect-timeout", required_argument, NULL,
	    OPT_CONNECT_TIMEOUT }, 1 }, "DUR",
	    "give up connecting to a server after DUR", "1s" },
	{ { { "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT }, 1 },
	    "DUR", "give up on a reply after DUR", "1s" },
	{ { { "wait-replicas", required_argument, NULL, OPT_WAIT_REPLICAS }, 1 },
	    "N", "WAIT for N replicas after acquire and renewals", NULL },
	{ { { "wait-timeout", required_argument, NULL, OPT_WAIT_TIMEOUT }, 1 },
	    "DUR", "how long WAIT may take", "1s" },
	{ { { "history-size", required_argument, NULL, OPT_HISTORY_SIZE }, 1 },
	    "N", "keep each lock's last N runs (0: none)", "1000" },
	{ { { "tls", no_argument, NULL, OPT_TLS }, 1 }, NULL,
	    "TLS to every server, as rediss:// does", NULL },
	{ { { "cacert", required_argument, NULL, OPT_CACERT }, 1 }, "FILE",
	    "trust the CAs in FILE", "the system's" },
	{ { { "cacertdir", required_argument, NULL, OPT_CACERTDIR }, 1 }, "DIR",
	    "trust the CAs in DIR (openssl rehash)", NULL },
	{ { { "cert", required_argument, NULL, OPT_CERT }, 1 }, "FILE",
	    "the client certificate, with --key", NULL },
	{ { { "key", required_argument, NULL, OPT_KEY }, 1 }, "FILE",
	    "the private key of --cert", NULL },
	{ { { "sni", required_argument, NULL, OPT_SNI }, 1 }, "NAME",
	    "the TLS server name to send and verify", "the URL's host" },
	{ { { "insecure", no_argument, NULL, OPT_INSECURE }, 1 }, NULL,
	    "do not verify the servers' certificates", NULL },
	{ { { "prefix", required_argument, NULL, OPT_PREFIX }, 1 }, "STR",
	    "prepended to every key", "$REDLOCK_PREFIX, else none" },
	{ { { "quiet", no_argument, NULL, OPT_QUIET }, 1 }, NULL,
	    "no message when the lock is busy", NULL },
	{ { { "verbose", no_argument, NULL, OPT_VERBOSE }, 1 }, NULL,
	    "say what is done; twice: each Redis command too", NULL },
	{ { { "syslog", no_argument, NULL, OPT_SYSLOG }, 1 }, NULL,
	    "log to syslog too", NULL },
	{ { { "help", no_argument, NULL, OPT_HELP }, 1 }, NULL,
	    "print the help and exit", NULL },
	{ { { "version", no_argument, NULL, OPT_VERSION }, 1 }, NULL,
	    "print the version and exit", NULL },
	{ { { "ttl", required_argument, NULL, OPT_TTL }, 0 }, "TTL",
	    "the lock expires TTL after it is taken or extended", "30s" },
	{ { { "nonblock", no_argument, NULL, OPT_NONBLOCK }, 0 }, NULL,
	    "fail at once if the lock is busy", NULL },
	/* flock(1)'s spellings, where the meaning is the same */
	{ { { "nb", no_argument, NULL, OPT_NONBLOCK }, 0 }, NULL, NULL, NULL },
	{ { { "nonblocking", no_argument, NULL, OPT_NONBLOCK }, 0 }, NULL,
	    NULL, NULL },
	{ { { "wait", required_argument, NULL, OPT_WAIT }, 0 }, "WAIT",
	    "give up after WAIT; -w 0 is -n", "wait until it is free" },
	{ { { "timeout", required_argument, NULL, OPT_WAIT }, 0 }, "WAIT",
	    NULL, NULL },
	{ { { "conflict-exit-code", required_argument, NULL,
	    OPT_CONFLICT_CODE }, 0 }, "CODE",
	    "exit status when the lock is busy, 0 to 255", "1" },
	{ { { "token", required_argument, NULL, OPT_TOKEN }, 0 }, "TOK",
	    "the lock's token", "a new random one" },	/* see options_default */
	{ { { "limit", required_argument, NULL, OPT_LIMIT }, 0 }, "N",
	    "KEY is a semaphore of N slots, not a lock", NULL },
	{ { { "fair", no_argument, NULL, OPT_FAIR }, 0 }, NULL,
	    "the same as --queue fifo", NULL },
	{ { { "queue", required_argument, NULL, OPT_QUEUE }, 0 }, "MODE",
	    "how waiters queue: any, fifo (by arrival) or latest", "any" },
	{ { { "order", required_argument, NULL, OPT_ORDER }, 0 }, "N",
	    "rank waiters by N, not by arrival (e.g. a pipeline id)", NULL },
	{ { { "skip-outdated", no_argument, NULL, OPT_SKIP_OUTDATED }, 0 },
	    NULL, "exit 81 if an order > N already ran (needs --order)",
	    NULL },
	{ { { "cancel-running", optional_argument, NULL,
	    OPT_CANCEL_RUNNING }, 0 }, "GRACE",
	    "stop an older running holder, SIGKILL after GRACE", "10s" },
	{ { { "superseded-exit-code", required_argument, NULL,
	    OPT_SUPERSEDED_CODE }, 0 }, "N",
	    "exit status when a newer waiter came first", "80" },
	{ { { "outdated-exit-code", required_argument, NULL,
	    OPT_OUTDATED_CODE }, 0 }, "N",
	    "exit status when a newer order already ran", "81" },
	{ { { "cancelled-exit-code", required_argument, NULL,
	    OPT_CANCELLED_CODE }, 0 }, "N",
	    "exit status when a newer run cancelled CMD", "82" },
	{ { { "shared", no_argument, NULL, OPT_SHARED }, 0 }, NULL,
	    "a shared hold: any number at once, none with -x", NULL },
	{ { { "exclusive", no_argument, NULL, OPT_EXCLUSIVE }, 0 }, NULL,
	    "an exclusive hold (the default): no other holder", NULL },
	{ { { "json", no_argument, NULL, OPT_JSON }, 0 }, NULL,
	    "print JSON", NULL },
	{ { { "renew", required_argument, NULL, OPT_RENEW }, 0 }, "DUR",
	    "renew the lock every DUR", "a third of the TTL" },
	{ { { "lost-signal", required_argument, NULL, OPT_LOST_SIGNAL }, 0 },
	    "SIG", "the signal CMD gets when the lock is lost", "TERM" },
	{ { { "kill-after", required_argument, NULL, OPT_KILL_AFTER }, 0 },
	    "DUR", "SIGKILL DUR after --lost-signal",
	    "when the lock expires" },
	{ { { "lost-exit-code", required_argument, NULL,
	    OPT_LOST_EXIT_CODE }, 0 }, "N",
	    "exit status when the lock was lost", "75" },
	{ { { "release-on-exit", no_argument, NULL, OPT_RELEASE_ON_EXIT }, 0 },
	    NULL, "release when CMD exits, not when all it started have", NULL },
	{ { { "close", no_argument, NULL, OPT_RELEASE_ON_EXIT }, 0 }, NULL,
	    NULL, NULL },
	{ { { "jitter", required_argument, NULL, OPT_JITTER }, 0 }, "DUR",
	    "first sleep a random time up to DUR", "0" },
	{ { { "min-hold", required_argument, NULL, OPT_MIN_HOLD }, 0 }, "DUR",
	    "hold the lock DUR at least, even if CMD ends sooner", "0" },
	{ { { "force", no_argument, NULL, OPT_FORCE }, 0 }, NULL,
	    "remove whoever holds KEY (an operator's release)", NULL },
	{ { { "command", required_argument, NULL, OPT_SHELL_COMMAND }, 0 },
	    "STRING", "run /bin/sh -c STRING instead of -- CMD", NULL },
	{ { { "record-command", required_argument, NULL,
	    OPT_RECORD_COMMAND }, 0 }, "HOW",
	    "full (secrets masked), name or none: what status shows of the "
	    "command line",
	    "full" },
	{ { { "all", no_argument, NULL, OPT_ALL }, 0 }, NULL,
	    "list: free names that have a history too, with their last run",
	    NULL },
	{ { { "count", required_argument, NULL, OPT_COUNT }, 0 }, "N",
	    "how many entries history shows; also -n N", "20" },
	{ { { "metrics-file", required_argument, NULL, OPT_METRICS_FILE }, 0 },
	    "PATH", "at the end, write Prometheus metrics of the runs to PATH",
	    "$REDLOCK_METRICS_FILE" },
	{ { { NULL, 0, NULL, 0 }, 0 }, NULL, NULL, NULL }
};

/*
 * flock(1)'s short spellings: -o is --release-on-exit (flock's "close
 * before exec" keeps nothing of the lock in the command), -e is -x.
 */
const struct options_alias options_short_aliases[] = {
	{ 'o', OPT_RELEASE_ON_EXIT },
	{ 'e', OPT_EXCLUSIVE },
	/* history's -n COUNT, as tail(1) and journalctl(1) spell it; -n
	 * is --nonblock for the verbs that take a lock. */
	{ 'n', OPT_COUNT },
	{ 0, 0 }
};

/*
 * The option a short alias stands for in verb e (a letter may be an
 * alias in one verb and an option of its own in another); any other id
 * as it is.
 */
int
options_canonical(const struct cmd_entry *e, int id)
{
	const struct options_alias *a;

	for (a = options_short_aliases; a->letter != 0; a++)
		if (a->letter == id && options_takes(e, a->id))
			return (a->id);
	return (id);
}

/* Rows in options_defs, the ending one included. */
const size_t options_ndefs = sizeof(options_defs) / sizeof(options_defs[0]);

/* The row of option id (the first: an alias comes after its option). */
const struct options_def *
options_find(int id)
{
	const struct options_def *d;

	for (d = options_defs; d->getopt.opt.name != NULL; d++)
		if (d->getopt.opt.val == id)
			return (d);
	return (NULL);
}

/* What help gives as the default of d with verb e. */
const char *
options_default(const struct options_def *d, const struct cmd_entry *e)
{
	if (d->getopt.opt.val == OPT_TOKEN && e != NULL &&
	    (e->flags & CMD_TOKEN_FROM_ENV))
		return ("$" TOKEN_ENV);
	return (d->dflt);
}

/* Whether verb e (NULL: none) lists option id among its own. */
int
options_listed(const struct cmd_entry *e, int id)
{
	size_t i;

	for (i = 0; e != NULL && e->options[i] != 0; i++)
		if (e->options[i] == id)
			return (1);
	return (0);
}

/*
 * The row of the option whose argument is optional if the word before
 * argv[i] is that option, typed alone ("--cancel-running"): a value
 * after it was meant as its argument.  NULL otherwise.
 */
const struct options_def *
options_optional_before(char **argv, int i)
{
	const struct options_def	*d;
	const char			*w = i > 0 ? argv[i - 1] : "";

	if (strncmp(w, "--", 2) != 0)
		return (NULL);
	for (d = options_defs; d->getopt.opt.name != NULL; d++)
		if (d->getopt.opt.has_arg == optional_argument &&
		    strcmp(w + 2, d->getopt.opt.name) == 0)
			return (d);
	return (NULL);
}

/* Whether option id is valid with verb e (NULL: before any verb). */
int
options_takes(const struct cmd_entry *e, int id)
{
	const struct options_def *d = options_find(id);

	return ((d != NULL && d->getopt.is_global) || options_listed(e, id));
}
