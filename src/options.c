/* SPDX-License-Identifier: MIT */
/*
 * Option parsing, shared by every command.  Each verb lists the options it
 * accepts (cmd-<verb>.c); one parser knows what each option means, so -t
 * is the same thing wherever it is accepted, and the global options work
 * both before and after the verb.  Parsing never exits: it returns a code.
 */

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

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
	    "waiters take the lock in order of arrival", NULL },
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
	{ { { "command", required_argument, NULL, OPT_SHELL_COMMAND }, 0 },
	    "STRING", "run /bin/sh -c STRING instead of -- CMD", NULL },
	{ { { NULL, 0, NULL, 0 }, 0 }, NULL, NULL, NULL }
};

/* What one verb's parse has seen so far, beyond struct cmd_args. */
struct options_seen {
	int	 have_n;
	int	 have_w;
	int	 saw_dashdash;
};

static int	 options_takes(const struct cmd_entry *, int);
static void	 options_getopt_tables(const struct cmd_entry *, char **,
		     struct option **);
static int	 options_duration(const char *, const char *, int64_t *, int);
static int	 options_ttl(const char *, int64_t *);
static int	 options_count(const char *, const char *, long long,
		     long long, int64_t *);
static const char *options_typed(char **, int, char *, size_t);
static int	 options_getopt_error(const char *, int, char **, int);
static int	 options_misplaced(int, char **, int);
static int	 options_global(int, const char *, struct global_opts *);
static int	 options_tls(int, const char *, struct tls_options *);
static void	 options_print_version(void);
static void	 options_defaults(struct cmd_args *);
static int	 options_verb(int, const char *, struct cmd_args *,
		     struct options_seen *);
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

/* Whether option id is valid with verb e (NULL: before any verb). */
static int
options_takes(const struct cmd_entry *e, int id)
{
	const struct options_def	*d = options_find(id);
	size_t				 i;

	if (d != NULL && d->getopt.is_global)
		return (1);
	for (i = 0; e != NULL && e->options[i] != 0; i++)
		if (e->options[i] == id)
			return (1);
	return (0);
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
		if (!options_takes(e, d->getopt.opt.val))
			continue;
		(*longopts)[n++] = d->getopt.opt;
		if (d->getopt.opt.val >= 256 || d->help == NULL)
			continue;
		(*shortopts)[ns++] = (char)d->getopt.opt.val;
		if (d->getopt.opt.has_arg == required_argument)
			(*shortopts)[ns++] = ':';
	}
}

/*
 * Parse a duration option.  allow_zero: 0 is meaningful (-w 0, --jitter 0).
 * Returns 0, or EXIT_USAGE after the message naming option and value.
 */
static int
options_duration(const char *option, const char *value, int64_t *ms,
    int allow_zero)
{
	const char *errstr;

	if (duration_parse(value, ms, &errstr) == -1 ||
	    (!allow_zero && *ms == 0 && (errstr = "below 1ms") != NULL)) {
		log_warnx("invalid %s '%s': %s", option, value, errstr);
		return (EXIT_USAGE);
	}
	return (0);
}

/*
 * A TTL the lock can be kept by: under LOCK_MIN_TTL_MS, the drift
 * allowance (TTL/100 + 2ms) and the safety margin (TTL/4) leave next to
 * no validity to run a command in (and a quorum would retry for ever), so
 * it is refused here, by name.  From 10ms on, 5ms or more are left.
 */
static int
options_ttl(const char *value, int64_t *ms)
{
	const char	*errstr;
	char		 least[32];

	if (duration_parse(value, ms, &errstr) == -1) {
		log_warnx("invalid --ttl '%s': %s", value, errstr);
		return (EXIT_USAGE);
	}
	if (*ms < LOCK_MIN_TTL_MS) {
		duration_format(LOCK_MIN_TTL_MS, least, sizeof(least));
		log_warnx("invalid --ttl '%s': below the minimum of %s", value,
		    least);
		return (EXIT_USAGE);
	}
	return (0);
}

/* A whole number option in [min, max]. */
static int
options_count(const char *option, const char *value, long long min,
    long long max, int64_t *out)
{
	const char	*errstr;
	long long	 v;

	if (number_parse(value, min, max, &v, &errstr) == -1) {
		log_warnx("invalid %s '%s': not a number from %lld to %lld",
		    option, value, min, max);
		return (EXIT_USAGE);
	}
	*out = v;
	return (0);
}

/*
 * The option getopt just refused, as typed: "--name" without any
 * "=value", or "-x" alone out of a cluster.  buf holds the latter.
 */
static const char *
options_typed(char **argv, int optind_now, char *buf, size_t len)
{
	const char *word = argv[optind_now - 1];

	if (strncmp(word, "--", 2) == 0) {
		(void)snprintf(buf, len, "%.*s", (int)strcspn(word, "="), word);
		return (buf);
	}
	if (optopt > 0 && optopt < 128) {
		(void)snprintf(buf, len, "-%c", optopt);
		return (buf);
	}
	return (word);
}

/* Print the message for a getopt error ('?' or ':'). */
static int
options_getopt_error(const char *verb, int ch, char **argv, int optind_now)
{
	const char	*word = argv[optind_now - 1];
	const char	*typed;
	char		 buf[64], prefix[64] = "";

	if (verb != NULL)
		(void)snprintf(prefix, sizeof(prefix), "%s: ", verb);
	typed = options_typed(argv, optind_now, buf, sizeof(buf));
	if (ch == ':')
		log_warnx("%soption '%s' requires an argument", prefix, typed);
	else if (strncmp(word, "--", 2) == 0 &&
	    word[strcspn(word, "=")] == '=' && optopt != 0)
		log_warnx("%soption '%s' does not take an argument", prefix,
		    typed);
	else
		log_warnx("%sunknown option '%s'", prefix, typed);
	return (EXIT_USAGE);
}

/*
 * An option getopt refused before the verb: if it is one of a verb's,
 * say where it goes, naming the verb given later on the line.  Returns 1
 * after the message, 0 when it is no option of ours at all.
 */
static int
options_misplaced(int argc, char **argv, int optind_now)
{
	const struct options_def	*d;
	const struct cmd_entry		*e = NULL;
	const char			*typed;
	char				 buf[64];
	int				 i;

	typed = options_typed(argv, optind_now, buf, sizeof(buf));
	for (d = options_defs; d->getopt.opt.name != NULL; d++)
		if (strncmp(typed, "--", 2) == 0 ?
		    strcmp(typed + 2, d->getopt.opt.name) == 0 :
		    (typed[0] == '-' && typed[1] == d->getopt.opt.val &&
		    typed[2] == '\0'))
			break;
	if (d->getopt.opt.name == NULL || d->getopt.is_global)
		return (0);
	/*
	 * Its argument is no verb: skip the next word, unless it came as
	 * "--name=value".  (After "-t5s" the next word is "-t5s" itself.)
	 */
	i = optind_now;
	if (d->getopt.opt.has_arg == required_argument &&
	    (typed[1] != '-' || strchr(argv[optind_now - 1], '=') == NULL))
		i++;
	for (; i < argc && e == NULL; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		e = cmd_find(argv[i]);
	}
	if (e == NULL)
		log_warnx("%s is an option of a command: put it after the "
		    "command and its KEY", typed);
	else if (options_takes(e, d->getopt.opt.val))
		log_warnx("%s is an option of '%s': put it after '%s KEY'",
		    typed, e->name, e->name);
	else
		log_warnx("%s: unknown option '%s'", e->name, typed);
	return (1);
}

static int
options_global(int ch, const char *arg, struct global_opts *g)
{
	int64_t v;

	switch (ch) {
	case OPT_URL:
		g->url_strings = xreallocarray(g->url_strings,
		    g->nurl_strings + 1, sizeof(*g->url_strings));
		g->url_strings[g->nurl_strings++] = xstrdup(arg);
		return (0);
	case OPT_QUIET:
		g->quiet = 1;
		return (0);
	case OPT_VERBOSE:
		g->verbose++;
		return (0);
	case OPT_PASSWORD_FILE:
		g->password_file = arg;
		return (0);
	case OPT_NO_AUTH_WARNING:
		g->no_auth_warning = 1;
		return (0);
	case OPT_CONNECT_TIMEOUT:
		return (options_duration("--connect-timeout", arg,
		    &g->connect_timeout_ms, 0));
	case OPT_IO_TIMEOUT:
		return (options_duration("--io-timeout", arg, &g->io_timeout_ms,
		    0));
	case OPT_PREFIX:
		g->prefix = arg;
		return (0);
	case OPT_SYSLOG:
		g->use_syslog = 1;
		return (0);
	case OPT_WAIT_REPLICAS:
		if (options_count("--wait-replicas", arg, 1, 1000, &v) != 0)
			return (EXIT_USAGE);
		g->wait_replicas = (int)v;
		return (0);
	case OPT_USER:
		g->user = arg;
		return (0);
	case OPT_WAIT_TIMEOUT:
		return (options_duration("--wait-timeout", arg,
		    &g->wait_timeout_ms, 0));
	default:
		return (options_tls(ch, arg, &g->tls));
	}
}

/* The TLS options.  Returns 0, or -1 if ch is none of them. */
static int
options_tls(int ch, const char *arg, struct tls_options *tls)
{
	switch (ch) {
	case OPT_TLS:
		tls->enabled = 1;
		return (0);
	case OPT_CACERT:
		tls->cacert = arg;
		return (0);
	case OPT_CACERTDIR:
		tls->cacertdir = arg;
		return (0);
	case OPT_CERT:
		tls->cert = arg;
		return (0);
	case OPT_KEY:
		tls->key = arg;
		return (0);
	case OPT_SNI:
		tls->sni = arg;
		return (0);
	case OPT_INSECURE:
		tls->insecure = 1;
		return (0);
	default:
		return (-1);	/* not a global option */
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
}

/* One of the verbs' options.  Returns 0, EXIT_USAGE, or -1 if none. */
static int
options_verb(int ch, const char *arg, struct cmd_args *a,
    struct options_seen *seen)
{
	int64_t	 v = 0;
	int	 rc = 0;

	switch (ch) {
	case OPT_TTL:
		return (options_ttl(arg, &a->ttl_ms));
	case OPT_NONBLOCK:
		seen->have_n = 1;
		return (0);
	case OPT_WAIT:
		seen->have_w = 1;
		/* -w 0 is -n, as in flock: "fail rather than wait" */
		return (options_duration("--wait", arg, &a->wait_ms, 1));
	case OPT_CONFLICT_CODE:
		rc = options_count("--conflict-exit-code", arg, 0, 255, &v);
		a->conflict_code = (int)v;
		return (rc);
	case OPT_TOKEN:
		a->token = arg;
		return (0);
	case OPT_JSON:
		a->json = 1;
		return (0);
	case OPT_RENEW:
		return (options_duration("--renew", arg, &a->renew_ms, 0));
	case OPT_LOST_SIGNAL:
		if ((a->lost_signal = signame_parse(arg)) == -1) {
			log_warnx("invalid --lost-signal '%s': not a signal "
			    "name or number", arg);
			return (EXIT_USAGE);
		}
		return (0);
	case OPT_KILL_AFTER:
		return (options_duration("--kill-after", arg, &a->kill_after_ms,
		    0));
	case OPT_LOST_EXIT_CODE:
		rc = options_count("--lost-exit-code", arg, 0, 255, &v);
		a->lost_exit_code = (int)v;
		return (rc);
	case OPT_JITTER:
		return (options_duration("--jitter", arg, &a->jitter_ms, 1));
	case OPT_MIN_HOLD:
		return (options_duration("--min-hold", arg, &a->min_hold_ms, 1));
	case OPT_SHELL_COMMAND:
		a->shell_command = arg;
		return (0);
	case OPT_LIMIT:
		/* How many holders a semaphore admits. */
		return (options_count("--limit", arg, 1, 1000000, &a->limit));
	case OPT_FAIR:
		a->fair = 1;
		return (0);
	case OPT_RELEASE_ON_EXIT:
		a->release_on_exit = 1;
		return (0);
	default:
		return (-1);
	}
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
	if (a->renew_ms != 0 && a->renew_ms >= a->ttl_ms) {
		log_warnx("%s: --renew must be shorter than the TTL", e->name);
		return (EXIT_USAGE);
	}
	if (a->token == NULL && (e->flags & CMD_TOKEN_FROM_ENV) &&
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
