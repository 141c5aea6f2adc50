/* SPDX-License-Identifier: MIT */
/*
 * Option parsing, shared by every command: the parse of one command line,
 * from the table of every option (options-table.c).  Each verb lists the
 * options it accepts
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

static struct options_status options_exit(int);
static void	 options_getopt_tables(const struct cmd_entry *, char **,
		     struct option **);
static void	 options_print_version(void);
static void	 options_defaults(struct cmd_args *);
static int	 options_swallowed(const struct cmd_entry *, char **);
static void	 options_alias_letters(const struct cmd_entry *, char *,
		     size_t *);
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

	*longopts = xcalloc(options_ndefs, sizeof(**longopts));
	/* Room for every row's letter and ":", and the alias letters. */
	*shortopts = xcalloc(options_ndefs + 8, 3);
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
	options_alias_letters(e, *shortopts, &ns);
}

/* flock's short spellings of the options verb e takes, onto shortopts. */
static void
options_alias_letters(const struct cmd_entry *e, char *shortopts, size_t *ns)
{
	const struct options_alias *a;

	for (a = options_short_aliases; a->letter != 0; a++) {
		if (!options_takes(e, a->id))
			continue;
		shortopts[(*ns)++] = (char)a->letter;
		if (options_find(a->id)->getopt.opt.has_arg ==
		    required_argument)
			shortopts[(*ns)++] = ':';
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
	a->count = LOCK_HISTORY_SHOWN;
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
	if (options_optional_before(argv, optind) != NULL)
		log_warnx("%s: unexpected argument '%s' (an argument of %s "
		    "goes after '=': %s=%s)", e->name, argv[optind],
		    argv[optind - 1], argv[optind - 1], argv[optind]);
	else if (e->flags & CMD_TAKES_COMMAND)
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
		log_warnx("%s: missing KEY (see '%s help %s')", e->name,
		    PROGNAME, e->name);
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
 * "-u -- cmd": getopt gave "--" to -u as its URL; the option was typed
 * without its argument.  The option's word is the one before "--", or
 * "--url=--" itself.
 */
static int
options_swallowed(const struct cmd_entry *e, char **argv)
{
	const char *w = argv[optind - 1];

	if (strcmp(w, "--") == 0)
		w = argv[optind - 2];
	log_warnx("%s: option '%.*s' requires an argument", e->name,
	    (int)strcspn(w, "="), w);
	return (EXIT_USAGE);
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
		ch = options_canonical(e, getopt_long(argc, argv, shortopts,
		    longopts, NULL));
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
		} else if (optarg != NULL && strcmp(optarg, "--") == 0)
			rc = options_swallowed(e, argv);
		else if ((rc = options_verb(ch, optarg, a, &seen)) == -1 &&
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
