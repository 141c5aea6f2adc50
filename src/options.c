/* SPDX-License-Identifier: MIT */
/*
 * Option parsing, shared by every command: the table of every option, and
 * the parse of one command line.  Each verb lists the options it accepts
 * (cmd-<verb>.c); one parser knows what each option means
 * (options-value.c), so -t is the same thing wherever it is accepted, and
 * the global options work both before and after the verb.  Parsing never
 * exits: it returns a status (options-error.c words its messages).
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"
#include "options-impl.h"

/* Where release and extend find the token that --token does not give. */
#define TOKEN_ENV	"REDLOCK_TOKEN"

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
	{ { { NULL, 0, NULL, 0 }, 0 }, NULL, NULL, NULL }
};

static struct options_status options_exit(int);
static int	 options_listed(const struct cmd_entry *, int);
static void	 options_getopt_tables(const struct cmd_entry *, char **,
		     struct option **);
static void	 options_print_version(void);
static void	 options_defaults(struct cmd_args *);
static int	 options_word(const struct cmd_entry *, char **,
		     struct cmd_args *);
static int	 options_check_words(const struct cmd_entry *, int, char **,
		     struct cmd_args *, const struct options_seen *);
static int	 options_check_values(const struct cmd_entry *,
		     struct cmd_args *, const struct options_seen *);

static const struct options_status options_go_on = { 0, EXIT_OK };

static struct options_status
options_exit(int code)
{
	struct options_status st = { 1, code };

	return (st);
}

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
static int
options_listed(const struct cmd_entry *e, int id)
{
	size_t i;

	for (i = 0; e != NULL && e->options[i] != 0; i++)
		if (e->options[i] == id)
			return (1);
	return (0);
}

/* Whether option id is valid with verb e (NULL: before any verb). */
int
options_takes(const struct cmd_entry *e, int id)
{
	const struct options_def *d = options_find(id);

	return ((d != NULL && d->getopt.is_global) || options_listed(e, id));
}

/*
 * getopt_long's two tables for one verb (NULL: the globals alone): its
 * options plus the globals.  The short string starts "+:": stop at the
 * first word that is not an option, and tell a missing argument (':')
 * from an unknown option ('?').
 */
static void
options_getopt_tables(const struct cmd_entry *e, char **shortopts,
    struct option **longopts)
{
	const struct options_def	*d;
	size_t				 n = 0, ns = 2;

	*longopts = xcalloc(sizeof(options_defs) / sizeof(options_defs[0]),
	    sizeof(**longopts));
	*shortopts = xcalloc(sizeof(options_defs) / sizeof(options_defs[0]),
	    3);
	memcpy(*shortopts, "+:", 2);
	for (d = options_defs; d->getopt.opt.name != NULL; d++) {
		/* The row is at hand: no options_find() for each (every
		 * command line builds these tables). */
		if (!d->getopt.is_global &&
		    !options_listed(e, d->getopt.opt.val))
			continue;
		(*longopts)[n++] = d->getopt.opt;
		if (d->getopt.opt.val >= 256 || d->help == NULL)
			continue;
		(*shortopts)[ns++] = (char)d->getopt.opt.val;
		if (d->getopt.opt.has_arg == required_argument)
			(*shortopts)[ns++] = ':';
	}
}

/* -V: the version and what is inside (hiredis, the libssl TLS would load). */
static void
options_print_version(void)
{
	char tls[64];

	tls_describe(tls, sizeof(tls));
	(void)printf("%s %s (hiredis %s, TLS: %s)\n", PROGNAME, VERSION,
	    conn_hiredis_version(), tls);
}

/*
 * Global options before the verb.  On going on, *verb_index is the index
 * of the verb in argv; otherwise main exits (help, version, error).
 */
struct options_status
options_parse_globals(int argc, char **argv, struct global_opts *g,
    int *verb_index)
{
	struct option	*longopts;
	char		*shortopts;
	int		 ch, rc = 0;

	options_getopt_tables(NULL, &shortopts, &longopts);
	optind = 0;	/* glibc: full reset */
	opterr = 0;
	while (rc == 0 && (ch = getopt_long(argc, argv, shortopts, longopts,
	    NULL)) != -1) {
		if (ch == OPT_HELP || ch == OPT_VERSION) {
			if (ch == OPT_HELP)
				help_print_all();
			else
				options_print_version();
			rc = -1;
		} else if (ch == '?' && options_misplaced(argc, argv, optind))
			rc = EXIT_USAGE;
		else if (ch == '?' || ch == ':')
			rc = options_getopt_error(NULL, ch, argv, optind);
		else
			rc = options_global(ch, optarg, g);
	}
	free(longopts);
	free(shortopts);
	if (rc != 0)
		return (options_exit(rc == -1 ? EXIT_OK : rc));
	if (optind >= argc) {
		log_warnx("missing command (see '%s --help')", PROGNAME);
		return (options_exit(EXIT_USAGE));
	}
	*verb_index = optind;
	return (options_go_on);
}

static void
options_defaults(struct cmd_args *a)
{
	memset(a, 0, sizeof(*a));
	a->ttl_ms = DEFAULT_TTL_MS;
	a->wait_ms = WAIT_FOREVER;
	a->conflict_code = EXIT_BUSY;
	a->lost_signal = SIGTERM;
	a->lost_exit_code = EXIT_LOST;
	a->order = -1;
	a->cancel_grace_ms = -1;
	a->superseded_code = EXIT_SUPERSEDED;
	a->outdated_code = EXIT_OUTDATED;
	a->cancelled_code = EXIT_CANCELLED;
}

/*
 * A word that is no option, at argv[optind]: KEY (or help's COMMAND) if
 * there is none yet.  Returns 0 to go on, or EXIT_USAGE.
 */
static int
options_word(const struct cmd_entry *e, char **argv, struct cmd_args *a)
{
	if (a->key == NULL && (e->flags & (CMD_TAKES_KEY | CMD_TAKES_TOPIC))) {
		a->key = argv[optind++];
		return (0);
	}
	if (e->flags & CMD_TAKES_COMMAND)
		log_warnx("%s: unexpected argument '%s' (put the command "
		    "after '--')", e->name, argv[optind]);
	else
		log_warnx("%s: unexpected argument '%s'", e->name,
		    argv[optind]);
	return (EXIT_USAGE);
}

/* After the options: KEY, and run's command.  Returns 0 or EXIT_USAGE. */
static int
options_check_words(const struct cmd_entry *e, int argc, char **argv,
    struct cmd_args *a, const struct options_seen *seen)
{
	if (seen->saw_dashdash && !(e->flags & CMD_TAKES_COMMAND) &&
	    a->key == NULL && optind < argc &&
	    (e->flags & (CMD_TAKES_KEY | CMD_TAKES_TOPIC)))
		a->key = argv[optind++];	/* "acquire -- -odd-key" */
	if (a->key == NULL && (e->flags & CMD_TAKES_KEY)) {
		log_warnx("%s: missing KEY (usage: %s %s %s)", e->name,
		    PROGNAME, e->name, e->usage);
		return (EXIT_USAGE);
	}
	if (a->key != NULL && *a->key == '\0' && (e->flags & CMD_TAKES_KEY)) {
		log_warnx("%s: KEY is empty", e->name);
		return (EXIT_USAGE);
	}
	if (!(e->flags & CMD_TAKES_COMMAND)) {
		if (optind < argc) {
			log_warnx("%s: unexpected argument '%s'", e->name,
			    argv[optind]);
			return (EXIT_USAGE);
		}
		return (0);
	}
	if (seen->saw_dashdash) {
		a->argv = argv + optind;
		a->argc = argc - optind;
	}
	if (a->argc > 0 && a->shell_command != NULL) {
		log_warnx("%s: give either -c STRING or -- CMD, not both",
		    e->name);
		return (EXIT_USAGE);
	}
	if (a->argc == 0 && a->shell_command == NULL) {
		log_warnx("%s: no command given (see '%s help %s')", e->name,
		    PROGNAME, e->name);
		return (EXIT_USAGE);
	}
	return (0);
}

/* Options that go together or not.  Returns 0 or EXIT_USAGE. */
static int
options_check_values(const struct cmd_entry *e, struct cmd_args *a,
    const struct options_seen *seen)
{
	const char *env;

	if (seen->have_n && seen->have_w) {
		log_warnx("%s: -n and -w cannot be used together", e->name);
		return (EXIT_USAGE);
	}
	if (seen->have_n)
		a->wait_ms = 0;
	if (a->skip_outdated && a->order < 0) {
		log_warnx("%s: --skip-outdated needs --order", e->name);
		return (EXIT_USAGE);
	}
	if (a->cancel_grace_ms >= 0 && a->queue != LOCK_QUEUE_LATEST) {
		log_warnx("%s: --cancel-running needs --queue latest", e->name);
		return (EXIT_USAGE);
	}
	/* A probe never cancels anyone: only a waiter may. */
	if (a->cancel_grace_ms >= 0 && a->wait_ms == 0) {
		log_warnx("%s: --cancel-running needs a waiter: it cannot be "
		    "used with %s", e->name, seen->have_n ? "-n" : "-w 0");
		return (EXIT_USAGE);
	}
	if (a->shared && a->queue == LOCK_QUEUE_LATEST) {
		log_warnx("%s: --shared and --queue latest cannot be used "
		    "together", e->name);
		return (EXIT_USAGE);
	}
	if (a->shared && a->limit > 0) {
		log_warnx("%s: --shared and --limit cannot be used together",
		    e->name);
		return (EXIT_USAGE);
	}
	if (a->renew_ms != 0 && a->renew_ms >= a->ttl_ms) {
		log_warnx("%s: --renew must be shorter than the TTL", e->name);
		return (EXIT_USAGE);
	}
	if (a->force && a->token != NULL) {
		log_warnx("%s: --force and --token cannot be used together",
		    e->name);
		return (EXIT_USAGE);
	}
	if (a->token == NULL && !a->force && (e->flags & CMD_TOKEN_FROM_ENV) &&
	    (env = getenv(TOKEN_ENV)) != NULL && *env != '\0')
		a->token = env;
	if (a->token != NULL && *a->token == '\0') {
		log_warnx("%s: the token is empty", e->name);
		return (EXIT_USAGE);
	}
	return (0);
}

/*
 * Parse a verb's arguments (argv[0] is the verb).  KEY may stand anywhere
 * among the options; for run everything after "--" is the command.  On
 * going on, *a is what the verb was asked; otherwise main exits (help,
 * version, error).
 */
struct options_status
options_parse(const struct cmd_entry *e, int argc, char **argv,
    struct global_opts *g, struct cmd_args *a)
{
	struct options_seen	 seen = { 0, 0, 0 };
	struct option		*longopts;
	char			*shortopts;
	int			 ch, rc = 0, before;

	options_getopt_tables(e, &shortopts, &longopts);
	options_defaults(a);
	optind = 0;
	opterr = 0;
	while (rc == 0) {
		before = optind == 0 ? 1 : optind;
		ch = getopt_long(argc, argv, shortopts, longopts, NULL);
		if (ch == -1 && optind == before + 1 &&
		    strcmp(argv[before], "--") == 0)
			seen.saw_dashdash = 1;
		if (ch == -1 && (seen.saw_dashdash || optind >= argc))
			break;
		if (ch == -1)
			rc = options_word(e, argv, a);
		else if (ch == '?' || ch == ':')
			rc = options_getopt_error(e->name, ch, argv, optind);
		else if (ch == OPT_HELP) {
			help_print_command(e);
			rc = -1;
		} else if (ch == OPT_VERSION) {
			options_print_version();
			rc = -1;
		} else if ((rc = options_verb(ch, optarg, a, &seen)) == -1 &&
		    (rc = options_global(ch, optarg, g)) == -1) {
			log_warnx("%s: unknown option", e->name);
			rc = EXIT_USAGE;
		}
	}
	free(longopts);
	free(shortopts);
	if (rc == 0 && (rc = options_check_words(e, argc, argv, a,
	    &seen)) == 0)
		rc = options_check_values(e, a, &seen);
	if (rc != 0)
		return (options_exit(rc == -1 ? EXIT_OK : rc));
	return (options_go_on);
}
