/* SPDX-License-Identifier: MIT */
/*
 * Option parsing, shared by every command.  Each verb lists the options it
 * accepts (cmd-<verb>.c); one parser knows what each option means, so -t
 * is the same thing wherever it is accepted, and the global options work
 * both before and after the verb.  Parsing never exits: it returns a code.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

#define GLOBAL_SHORTOPTS	"u:qvhV"

/* Every long option; is_global marks those valid with any verb. */
static const struct {
	struct option	opt;
	int		is_global;
} options_defs[] = {
	{ { "url", required_argument, NULL, OPT_URL }, 1 },
	{ { "quiet", no_argument, NULL, OPT_QUIET }, 1 },
	{ { "verbose", no_argument, NULL, OPT_VERBOSE }, 1 },
	{ { "help", no_argument, NULL, OPT_HELP }, 1 },
	{ { "version", no_argument, NULL, OPT_VERSION }, 1 },
	{ { "password-file", required_argument, NULL, OPT_PASSWORD_FILE }, 1 },
	{ { "no-auth-warning", no_argument, NULL, OPT_NO_AUTH_WARNING }, 1 },
	{ { "connect-timeout", required_argument, NULL,
	    OPT_CONNECT_TIMEOUT }, 1 },
	{ { "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT }, 1 },
	{ { "prefix", required_argument, NULL, OPT_PREFIX }, 1 },
	{ { "syslog", no_argument, NULL, OPT_SYSLOG }, 1 },
	{ { "wait-replicas", required_argument, NULL, OPT_WAIT_REPLICAS }, 1 },
	{ { "wait-timeout", required_argument, NULL, OPT_WAIT_TIMEOUT }, 1 },
	{ { "user", required_argument, NULL, OPT_USER }, 1 },
	{ { "tls", no_argument, NULL, OPT_TLS }, 1 },
	{ { "cacert", required_argument, NULL, OPT_CACERT }, 1 },
	{ { "cacertdir", required_argument, NULL, OPT_CACERTDIR }, 1 },
	{ { "cert", required_argument, NULL, OPT_CERT }, 1 },
	{ { "key", required_argument, NULL, OPT_KEY }, 1 },
	{ { "sni", required_argument, NULL, OPT_SNI }, 1 },
	{ { "insecure", no_argument, NULL, OPT_INSECURE }, 1 },
	{ { "ttl", required_argument, NULL, OPT_TTL }, 0 },
	{ { "nonblock", no_argument, NULL, OPT_NONBLOCK }, 0 },
	{ { "wait", required_argument, NULL, OPT_WAIT }, 0 },
	{ { "timeout", required_argument, NULL, OPT_WAIT }, 0 },
	{ { "conflict-exit-code", required_argument, NULL,
	    OPT_CONFLICT_CODE }, 0 },
	{ { "token", required_argument, NULL, OPT_TOKEN }, 0 },
	{ { "json", no_argument, NULL, OPT_JSON }, 0 },
	{ { "renew", required_argument, NULL, OPT_RENEW }, 0 },
	{ { "lost-signal", required_argument, NULL, OPT_LOST_SIGNAL }, 0 },
	{ { "kill-after", required_argument, NULL, OPT_KILL_AFTER }, 0 },
	{ { "lost-exit-code", required_argument, NULL,
	    OPT_LOST_EXIT_CODE }, 0 },
	{ { "jitter", required_argument, NULL, OPT_JITTER }, 0 },
	{ { "min-hold", required_argument, NULL, OPT_MIN_HOLD }, 0 },
	{ { "command", required_argument, NULL, OPT_SHELL_COMMAND }, 0 },
	{ { "limit", required_argument, NULL, OPT_LIMIT }, 0 },
	{ { "fair", no_argument, NULL, OPT_FAIR }, 0 },
	{ { "release-on-exit", no_argument, NULL, OPT_RELEASE_ON_EXIT }, 0 },
	{ { NULL, 0, NULL, 0 }, 0 }
};


static struct option	*options_longopts(const struct cmd_entry *);
static int	 options_global(int, const char *, struct global_opts *);
static int	 options_duration(const char *, const char *, int64_t *, int);
static int	 options_ttl(const char *, int64_t *);
static int	 options_count(const char *, const char *, long, long,
		     int64_t *);
static int	 options_getopt_error(const char *, int, char **, int);
static void	 options_print_version(void);

/* The getopt_long array for one verb: its own options plus the globals. */
static struct option *
options_longopts(const struct cmd_entry *e)
{
	struct option	*out;
	size_t		 n = 0, i, j;

	out = xcalloc(sizeof(options_defs) / sizeof(options_defs[0]),
	    sizeof(*out));
	for (i = 0; options_defs[i].opt.name != NULL; i++) {
		int wanted = options_defs[i].is_global;

		for (j = 0; !wanted && e != NULL && e->longopts[j] != 0; j++)
			if (e->longopts[j] == options_defs[i].opt.val)
				wanted = 1;
		if (wanted)
			out[n++] = options_defs[i].opt;
	}
	return (out);
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
options_count(const char *option, const char *value, long min, long max,
    int64_t *out)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (*value < '0' || *value > '9' || *end != '\0' || errno != 0 ||
	    v < min || v > max) {
		log_warnx("invalid %s '%s': not a number from %ld to %ld",
		    option, value, min, max);
		return (EXIT_USAGE);
	}
	*out = v;
	return (0);
}

/* Print the message for a getopt error ('?' or ':'). */
static int
options_getopt_error(const char *verb, int ch, char **argv, int optind_now)
{
	const char	*word = argv[optind_now - 1];
	char		 shortopt[3] = { '-', (char)optopt, '\0' };
	char		 prefix[64] = "";
	int		 len;

	if (verb != NULL)
		(void)snprintf(prefix, sizeof(prefix), "%s: ", verb);
	if (strncmp(word, "--", 2) == 0) {
		/* A long option, perhaps as --name=value. */
		len = (int)strcspn(word, "=");
		if (ch == ':')
			log_warnx("%soption '%.*s' requires an argument",
			    prefix, len, word);
		else if (word[len] == '=' && optopt != 0)
			log_warnx("%soption '%.*s' does not take an argument",
			    prefix, len, word);
		else
			log_warnx("%sunknown option '%.*s'", prefix, len,
			    word);
		return (EXIT_USAGE);
	}
	/* A short option, perhaps inside a cluster: name just that one. */
	if (optopt > 0 && optopt < 128)
		word = shortopt;
	if (ch == ':')
		log_warnx("%soption '%s' requires an argument", prefix, word);
	else
		log_warnx("%sunknown option '%s'", prefix, word);
	return (EXIT_USAGE);
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
	case OPT_TLS:
		g->tls.enabled = 1;
		return (0);
	case OPT_CACERT:
		g->tls.cacert = arg;
		return (0);
	case OPT_CACERTDIR:
		g->tls.cacertdir = arg;
		return (0);
	case OPT_CERT:
		g->tls.cert = arg;
		return (0);
	case OPT_KEY:
		g->tls.key = arg;
		return (0);
	case OPT_SNI:
		g->tls.sni = arg;
		return (0);
	case OPT_INSECURE:
		g->tls.insecure = 1;
		return (0);
	case OPT_WAIT_TIMEOUT:
		return (options_duration("--wait-timeout", arg,
		    &g->wait_timeout_ms, 0));
	default:
		return (-1);	/* not a global option */
	}
}

/*
 * Global options before the verb.  Returns the index of the verb in argv,
 * or -1 - exit code when main should exit (help, version, error).
 */
/* -V: the version and what is inside (hiredis, the libssl TLS would load). */
static void
options_print_version(void)
{
	char tls[64];

	tls_describe(tls, sizeof(tls));
	(void)printf("%s %s (hiredis %s, TLS: %s)\n", PROGNAME, VERSION,
	    conn_hiredis_version(), tls);
}

int
options_parse_globals(int argc, char **argv, struct global_opts *g)
{
	struct option	*longopts = options_longopts(NULL);
	int		 ch, rc;

	optind = 0;	/* glibc: full reset */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:" GLOBAL_SHORTOPTS, longopts,
	    NULL)) != -1) {
		if (ch == OPT_HELP || ch == OPT_VERSION) {
			free(longopts);
			if (ch == OPT_HELP)
				cmd_print_usage(1);
			else
				options_print_version();
			return (-1 - EXIT_OK);
		}
		if (ch == '?' || ch == ':') {
			free(longopts);
			return (-1 - options_getopt_error(NULL, ch, argv, optind));
		}
		if ((rc = options_global(ch, optarg, g)) != 0) {
			free(longopts);
			return (-1 - rc);
		}
	}
	free(longopts);
	if (optind >= argc) {
		log_warnx("missing command (see '%s --help')", PROGNAME);
		return (-1 - EXIT_USAGE);
	}
	return (optind);
}

/*
 * Parse a verb's arguments (argv[0] is the verb).  KEY may stand anywhere
 * among the options; for run everything after "--" is the command.
 * Returns 0, or -1 - exit code when main should exit (help, error).
 */
int
options_parse(const struct cmd_entry *e, int argc, char **argv,
    struct global_opts *g, struct cmd_args *a)
{
	struct option	*longopts = options_longopts(e);
	char		 shortopts[64];
	int		 ch, rc = 0, before, have_n = 0, have_w = 0;
	int		 saw_dashdash = 0;
	int64_t		 v = 0;
	const char	*env;

	(void)snprintf(shortopts, sizeof(shortopts), "+:%s" GLOBAL_SHORTOPTS,
	    e->shortopts);
	memset(a, 0, sizeof(*a));
	a->ttl_ms = DEFAULT_TTL_MS;
	a->wait_ms = WAIT_FOREVER;
	a->conflict_code = EXIT_BUSY;
	a->lost_signal = SIGTERM;
	a->lost_exit_code = EXIT_LOST;

	optind = 0;
	opterr = 0;
	for (;;) {
		before = optind == 0 ? 1 : optind;
		ch = getopt_long(argc, argv, shortopts, longopts, NULL);
		if (ch == -1) {
			if (optind == before + 1 &&
			    strcmp(argv[before], "--") == 0) {
				saw_dashdash = 1;
				break;
			}
			if (optind >= argc)
				break;
			if (a->key == NULL) {
				a->key = argv[optind++];
				continue;
			}
			if (e->takes_command)
				log_warnx("%s: unexpected argument '%s' (put "
				    "the command after '--')", e->name,
				    argv[optind]);
			else
				log_warnx("%s: unexpected argument '%s'",
				    e->name, argv[optind]);
			rc = EXIT_USAGE;
			goto out;
		}
		switch (ch) {
		case '?':
		case ':':
			rc = options_getopt_error(e->name, ch, argv, optind);
			goto out;
		case OPT_HELP:
			cmd_print_help(e, 1);
			free(longopts);
			return (-1 - EXIT_OK);
		case OPT_VERSION:
			options_print_version();
			free(longopts);
			return (-1 - EXIT_OK);
		case OPT_TTL:
			rc = options_ttl(optarg, &a->ttl_ms);
			break;
		case OPT_NONBLOCK:
			have_n = 1;
			break;
		case OPT_WAIT:
			have_w = 1;
			/* -w 0 is -n, as in flock: "fail rather than wait" */
			rc = options_duration("--wait", optarg, &a->wait_ms, 1);
			break;
		case OPT_CONFLICT_CODE:
			rc = options_count("--conflict-exit-code", optarg, 0,
			    255, &v);
			a->conflict_code = (int)v;
			break;
		case OPT_TOKEN:
			a->token = optarg;
			break;
		case OPT_JSON:
			a->json = 1;
			break;
		case OPT_RENEW:
			rc = options_duration("--renew", optarg, &a->renew_ms, 0);
			break;
		case OPT_LOST_SIGNAL:
			if ((a->lost_signal = signame_parse(optarg)) == -1) {
				log_warnx("invalid --lost-signal '%s': not a "
				    "signal name or number", optarg);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_KILL_AFTER:
			rc = options_duration("--kill-after", optarg,
			    &a->kill_after_ms, 0);
			break;
		case OPT_LOST_EXIT_CODE:
			rc = options_count("--lost-exit-code", optarg, 0, 255,
			    &v);
			a->lost_exit_code = (int)v;
			break;
		case OPT_JITTER:
			rc = options_duration("--jitter", optarg, &a->jitter_ms, 1);
			break;
		case OPT_MIN_HOLD:
			rc = options_duration("--min-hold", optarg,
			    &a->min_hold_ms, 1);
			break;
		case OPT_SHELL_COMMAND:
			a->shell_command = optarg;
			break;
		case OPT_LIMIT:
			/* How many holders a semaphore admits. */
			rc = options_count("--limit", optarg, 1, 1000000,
			    &a->limit);
			break;
		case OPT_FAIR:
			a->fair = 1;
			break;
		case OPT_RELEASE_ON_EXIT:
			a->release_on_exit = 1;
			break;
		default:
			rc = options_global(ch, optarg, g);
			if (rc == -1) {
				log_warnx("%s: unknown option", e->name);
				rc = EXIT_USAGE;
			}
			break;
		}
		if (rc != 0)
			goto out;
	}
	if (saw_dashdash && !e->takes_command && a->key == NULL &&
	    optind < argc)
		a->key = argv[optind++];	/* "acquire -- -odd-key" */
	if (a->key == NULL) {
		log_warnx("%s: missing KEY (usage: %s %s %s)", e->name,
		    PROGNAME, e->name, e->usage);
		rc = EXIT_USAGE;
		goto out;
	}
	if (*a->key == '\0') {
		log_warnx("%s: KEY is empty", e->name);
		rc = EXIT_USAGE;
		goto out;
	}
	if (e->takes_command) {
		if (saw_dashdash) {
			a->argv = argv + optind;
			a->argc = argc - optind;
		}
		if (a->argc > 0 && a->shell_command != NULL) {
			log_warnx("%s: give either -c STRING or -- CMD, not "
			    "both", e->name);
			rc = EXIT_USAGE;
			goto out;
		}
		if (a->argc == 0 && a->shell_command == NULL) {
			log_warnx("%s: missing command (usage: %s %s %s)",
			    e->name, PROGNAME, e->name, e->usage);
			rc = EXIT_USAGE;
			goto out;
		}
	} else if (optind < argc) {
		log_warnx("%s: unexpected argument '%s'", e->name,
		    argv[optind]);
		rc = EXIT_USAGE;
		goto out;
	}
	if (have_n && have_w) {
		log_warnx("%s: -n and -w cannot be used together", e->name);
		rc = EXIT_USAGE;
		goto out;
	}
	if (have_n)
		a->wait_ms = 0;
	if (a->renew_ms != 0 && a->renew_ms >= a->ttl_ms) {
		log_warnx("%s: --renew must be shorter than the TTL", e->name);
		rc = EXIT_USAGE;
		goto out;
	}
	/* release and extend may take the token from the environment. */
	if (a->token == NULL && strcmp(e->name, "acquire") != 0 &&
	    (env = getenv("REDLOCK_TOKEN")) != NULL && *env != '\0')
		a->token = env;
	if (a->token != NULL && *a->token == '\0') {
		log_warnx("%s: the token is empty", e->name);
		rc = EXIT_USAGE;
	}
out:
	free(longopts);
	return (rc == 0 ? 0 : -1 - rc);
}
