/*
 * The command table, and the option parsing every command shares.
 *
 * Each verb is described by data in its own cmd-<verb>.c: its usage line,
 * its short options and the ids of its long options.  One parser serves
 * them all, so -t means the same thing wherever it is accepted, and the
 * global options work both before and after the verb.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define GLOBAL_SHORTOPTS	"u:qvhV"
#define MAX_PASSWORD_LEN	4096

/* Every long option; is_global marks those valid with any verb. */
static const struct {
	struct option	opt;
	int		is_global;
} cmd_optdefs[] = {
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
	{ { NULL, 0, NULL, 0 }, 0 }
};

static struct option	*cmd_longopts(const struct cmd_entry *);
static int	 cmd_global_option(int, const char *, struct global_opts *);
static int	 cmd_duration(const char *, const char *, int64_t *, int);
static int	 cmd_exit_code(const char *, const char *, int *);
static int	 cmd_limit(const char *, int64_t *);
static int	 cmd_getopt_error(const char *, int, char **, int);
static int	 cmd_read_password_file(struct global_opts *);
static void	 cmd_split_urls(struct global_opts *, const char *);

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
	    "  -u, --url URL            redis://[[user]:pass@]host[:port][/db]"
	    " or unix:///path[?db=N]\n"
	    "      --password-file FILE read the password from FILE "
	    "(mode 0600)\n"
	    "      --no-auth-warning    no warning for a password in -u\n"
	    "      --connect-timeout DUR, --io-timeout DUR (default 1s)\n"
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

/* The getopt_long array for one verb: its own options plus the globals. */
static struct option *
cmd_longopts(const struct cmd_entry *e)
{
	struct option	*out;
	size_t		 n = 0, i, j;

	out = xcalloc(sizeof(cmd_optdefs) / sizeof(cmd_optdefs[0]),
	    sizeof(*out));
	for (i = 0; cmd_optdefs[i].opt.name != NULL; i++) {
		int wanted = cmd_optdefs[i].is_global;

		for (j = 0; !wanted && e != NULL && e->longopts[j] != 0; j++)
			if (e->longopts[j] == cmd_optdefs[i].opt.val)
				wanted = 1;
		if (wanted)
			out[n++] = cmd_optdefs[i].opt;
	}
	return (out);
}

/*
 * Parse a duration option.  allow_zero: 0 is meaningful (-w 0, --jitter 0).
 * Returns 0, or EXIT_USAGE after the message naming option and value.
 */
static int
cmd_duration(const char *option, const char *value, int64_t *ms,
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

/* An exit code option: a whole number 0..255. */
static int
cmd_exit_code(const char *option, const char *value, int *code)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (*value < '0' || *value > '9' || *end != '\0' || errno != 0 ||
	    v < 0 || v > 255) {
		log_warnx("invalid %s '%s': not a number from 0 to 255",
		    option, value);
		return (EXIT_USAGE);
	}
	*code = (int)v;
	return (0);
}

/* --limit: how many holders a semaphore admits, 1 to a million. */
static int
cmd_limit(const char *value, int64_t *limit)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (*value < '0' || *value > '9' || *end != '\0' || errno != 0 ||
	    v < 1 || v > 1000000) {
		log_warnx("invalid --limit '%s': not a number from 1 to "
		    "1000000", value);
		return (EXIT_USAGE);
	}
	*limit = v;
	return (0);
}

/* Print the message for a getopt error ('?' or ':'). */
static int
cmd_getopt_error(const char *verb, int ch, char **argv, int optind_now)
{
	const char	*word = argv[optind_now - 1];
	char		 shortopt[3] = { '-', (char)optopt, '\0' };
	char		 prefix[64] = "";

	if (verb != NULL)
		(void)snprintf(prefix, sizeof(prefix), "%s: ", verb);
	/* For a short option inside a cluster, name just that letter. */
	if (optopt != 0)
		word = shortopt;
	if (ch == ':')
		log_warnx("%soption '%s' requires an argument", prefix, word);
	else
		log_warnx("%sunknown option '%s'", prefix, word);
	return (EXIT_USAGE);
}

static int
cmd_global_option(int ch, const char *arg, struct global_opts *g)
{
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
		return (cmd_duration("--connect-timeout", arg,
		    &g->connect_timeout_ms, 0));
	case OPT_IO_TIMEOUT:
		return (cmd_duration("--io-timeout", arg, &g->io_timeout_ms,
		    0));
	case OPT_PREFIX:
		g->prefix = arg;
		return (0);
	case OPT_SYSLOG:
		g->use_syslog = 1;
		return (0);
	default:
		return (-1);	/* not a global option */
	}
}

/*
 * Global options before the verb.  Returns the index of the verb in argv,
 * or -1 - exit code when main should exit (help, version, error).
 */
int
cmd_parse_globals(int argc, char **argv, struct global_opts *g)
{
	struct option	*longopts = cmd_longopts(NULL);
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
				(void)printf("%s %s\n", PROGNAME, VERSION);
			return (-1 - EXIT_OK);
		}
		if (ch == '?' || ch == ':') {
			free(longopts);
			return (-1 - cmd_getopt_error(NULL, ch, argv, optind));
		}
		if ((rc = cmd_global_option(ch, optarg, g)) != 0) {
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
cmd_parse(const struct cmd_entry *e, int argc, char **argv,
    struct global_opts *g, struct cmd_args *a)
{
	struct option	*longopts = cmd_longopts(e);
	char		 shortopts[64];
	int		 ch, rc = 0, before, have_n = 0, have_w = 0;
	int		 saw_dashdash = 0;
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
			rc = cmd_getopt_error(e->name, ch, argv, optind);
			goto out;
		case OPT_HELP:
			cmd_print_help(e, 1);
			free(longopts);
			return (-1 - EXIT_OK);
		case OPT_VERSION:
			(void)printf("%s %s\n", PROGNAME, VERSION);
			free(longopts);
			return (-1 - EXIT_OK);
		case OPT_TTL:
			rc = cmd_duration("--ttl", optarg, &a->ttl_ms, 0);
			break;
		case OPT_NONBLOCK:
			have_n = 1;
			break;
		case OPT_WAIT:
			have_w = 1;
			/* -w 0 is -n, as in flock: "fail rather than wait" */
			rc = cmd_duration("--wait", optarg, &a->wait_ms, 1);
			break;
		case OPT_CONFLICT_CODE:
			rc = cmd_exit_code("--conflict-exit-code", optarg,
			    &a->conflict_code);
			break;
		case OPT_TOKEN:
			a->token = optarg;
			break;
		case OPT_JSON:
			a->json = 1;
			break;
		case OPT_RENEW:
			rc = cmd_duration("--renew", optarg, &a->renew_ms, 0);
			break;
		case OPT_LOST_SIGNAL:
			if ((a->lost_signal = signame_parse(optarg)) == -1) {
				log_warnx("invalid --lost-signal '%s': not a "
				    "signal name or number", optarg);
				rc = EXIT_USAGE;
			}
			break;
		case OPT_KILL_AFTER:
			rc = cmd_duration("--kill-after", optarg,
			    &a->kill_after_ms, 0);
			break;
		case OPT_LOST_EXIT_CODE:
			rc = cmd_exit_code("--lost-exit-code", optarg,
			    &a->lost_exit_code);
			break;
		case OPT_JITTER:
			rc = cmd_duration("--jitter", optarg, &a->jitter_ms, 1);
			break;
		case OPT_MIN_HOLD:
			rc = cmd_duration("--min-hold", optarg,
			    &a->min_hold_ms, 1);
			break;
		case OPT_SHELL_COMMAND:
			a->shell_command = optarg;
			break;
		case OPT_LIMIT:
			rc = cmd_limit(optarg, &a->limit);
			break;
		case OPT_FAIR:
			a->fair = 1;
			break;
		default:
			rc = cmd_global_option(ch, optarg, g);
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

/* $REDLOCK_URL may list several URLs, separated by commas or spaces. */
static void
cmd_split_urls(struct global_opts *g, const char *list)
{
	const char	*p = list;
	size_t		 len;

	while (*p != '\0') {
		p += strspn(p, ", \t\n");
		len = strcspn(p, ", \t\n");
		if (len == 0)
			break;
		g->url_strings = xreallocarray(g->url_strings,
		    g->nurl_strings + 1, sizeof(*g->url_strings));
		g->url_strings[g->nurl_strings] = xmalloc(len + 1);
		memcpy(g->url_strings[g->nurl_strings], p, len);
		g->url_strings[g->nurl_strings][len] = '\0';
		g->nurl_strings++;
		p += len;
	}
}

/*
 * Read the first line of --password-file.  Refused when group or others
 * may read it, as ssh refuses such a private key: the secret is already
 * exposed and the user should know.
 */
static int
cmd_read_password_file(struct global_opts *g)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 len = 0;
	int		 fd;

	fd = open(g->password_file, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		log_warn("cannot open password file '%s'", g->password_file);
		return (EXIT_USAGE);
	}
	if (fstat(fd, &st) == -1) {
		log_warn("cannot stat password file '%s'", g->password_file);
		(void)close(fd);
		return (EXIT_USAGE);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		log_warnx("password file '%s' is accessible by group or "
		    "others (mode %04o): chmod 600 it", g->password_file,
		    (unsigned)(st.st_mode & 07777));
		(void)close(fd);
		return (EXIT_USAGE);
	}
	buf = xmalloc(MAX_PASSWORD_LEN + 1);
	while (len < MAX_PASSWORD_LEN) {
		n = read(fd, buf + len, MAX_PASSWORD_LEN - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			log_warn("cannot read password file '%s'",
			    g->password_file);
			(void)close(fd);
			freezero_str(buf);
			return (EXIT_USAGE);
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	buf[len] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (*buf == '\0') {
		log_warnx("password file '%s' is empty", g->password_file);
		freezero_str(buf);
		return (EXIT_USAGE);
	}
	g->password = buf;
	return (0);
}

/*
 * After parsing: URLs from -u or the environment, the password, logging.
 * Returns 0 or an exit code (the message printed).
 */
int
cmd_setup_globals(struct global_opts *g)
{
	const char	*env, *errstr;
	char		*shown;
	size_t		 i;
	int		 rc, from_command_line = g->nurl_strings > 0;

	log_verbosity = g->quiet ? -1 : g->verbose;
	if (g->use_syslog)
		log_open_syslog();
	if (g->prefix == NULL && (env = getenv("REDLOCK_PREFIX")) != NULL)
		g->prefix = env;
	if (g->nurl_strings == 0) {
		if ((env = getenv("REDLOCK_URL")) != NULL && *env != '\0')
			cmd_split_urls(g, env);
		else if ((env = getenv("REDIS_URL")) != NULL && *env != '\0')
			cmd_split_urls(g, env);
		else
			cmd_split_urls(g, DEFAULT_URL);
		if (g->nurl_strings == 0) {
			log_warnx("invalid URL list in the environment");
			return (EXIT_USAGE);
		}
	}
	g->urls = xcalloc(g->nurl_strings, sizeof(*g->urls));
	for (i = 0; i < g->nurl_strings; i++) {
		if (url_parse(g->url_strings[i], &g->urls[i], &errstr) == -1) {
			shown = url_redact(g->url_strings[i]);
			log_warnx("invalid URL '%s': %s", shown, errstr);
			free(shown);
			return (EXIT_USAGE);
		}
		g->nurls++;
		if (from_command_line && g->urls[i].password != NULL &&
		    !g->no_auth_warning)
			log_warnx("warning: a password in -u on the command "
			    "line may be seen by other users; use "
			    "--password-file or REDISCLI_AUTH");
	}
	if (g->nurls > 1) {
		log_warnx("several URLs (a Redlock quorum) are not supported "
		    "by this version");
		return (EXIT_USAGE);
	}
	if (g->password_file != NULL) {
		if ((rc = cmd_read_password_file(g)) != 0)
			return (rc);
	} else if ((env = getenv("REDLOCK_PASSWORD")) != NULL && *env != '\0')
		g->password = xstrdup(env);
	else if ((env = getenv("REDISCLI_AUTH")) != NULL && *env != '\0')
		g->password = xstrdup(env);
	return (0);
}

void
cmd_free_globals(struct global_opts *g)
{
	size_t i;

	for (i = 0; i < g->nurl_strings; i++)
		freezero_str(g->url_strings[i]);
	free(g->url_strings);
	for (i = 0; i < g->nurls; i++)
		url_free(&g->urls[i]);
	free(g->urls);
	freezero_str(g->password);
	memset(g, 0, sizeof(*g));
}

/* The lock is busy: say so (unless -q), for acquire and run alike. */
void
cmd_report_busy(const struct lock *l, const struct cmd_args *a)
{
	char waited[32];

	if (a->limit > 0 && a->wait_ms == 0) {
		log_busy("lock '%s' has no free slot (limit %lld)", l->user_key,
		    (long long)a->limit);
		return;
	}
	if (a->limit > 0) {
		duration_format(a->wait_ms, waited, sizeof(waited));
		log_busy("lock '%s' still has no free slot (limit %lld) after "
		    "%s", l->user_key, (long long)a->limit, waited);
		return;
	}
	if (a->wait_ms == 0) {
		log_busy("lock '%s' is held by another owner", l->user_key);
		return;
	}
	duration_format(a->wait_ms, waited, sizeof(waited));
	log_busy("lock '%s' is still held by another owner after %s",
	    l->user_key, waited);
}

/* release or extend found that our token does not hold the lock. */
void
cmd_report_not_owner(const struct lock *l, const char *verb)
{
	if (l->not_owner == LOCK_OTHER)
		log_warnx("cannot %s lock '%s': it is held by another owner",
		    verb, l->user_key);
	else
		log_warnx("cannot %s lock '%s': it is not held (expired or "
		    "never taken)", verb, l->user_key);
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
