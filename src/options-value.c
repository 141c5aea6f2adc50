/* SPDX-License-Identifier: MIT */
/*
 * What each option's value means: it is parsed into struct global_opts or
 * struct cmd_args here, once for every verb that takes the option.  A bad
 * value is a usage error whose message names the option and the value.
 */

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "redlock.h"
#include "options-impl.h"

static int	 options_duration(const char *, const char *, int64_t *, int);
static int	 options_ttl(const char *, int64_t *);
static int	 options_count(const char *, const char *, long long,
		     long long, int64_t *);
static int	 options_tls(int, const char *, struct tls_options *);
static int	 options_queue(int, const char *, struct cmd_args *);
static int	 options_run(int, const char *, struct cmd_args *);
static int	 options_record(const char *, struct cmd_args *);

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

int
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
	case OPT_HISTORY_SIZE:
		if (options_count("--history-size", arg, 0, LOCK_HISTORY_MAX,
		    &v) != 0)
			return (EXIT_USAGE);
		g->history_size = (int)v;
		return (0);
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

/* One of the verbs' options.  Returns 0, EXIT_USAGE, or -1 if none. */
int
options_verb(int ch, const char *arg, struct cmd_args *a,
    struct options_seen *seen)
{
	int64_t	 v = 0;
	int	 rc = 0;

	switch (ch) {
	case OPT_TTL:
		a->ttl_given = 1;
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
	case OPT_ALL:
		a->all = 1;
		return (0);
	case OPT_COUNT:
		return (options_count("--count", arg, 1, LOCK_HISTORY_MAX,
		    &a->count));
	case OPT_LIMIT:
		/* How many holders a semaphore admits. */
		return (options_count("--limit", arg, 1, 1000000, &a->limit));
	case OPT_SHARED:
	case OPT_EXCLUSIVE:
		/* The last one given counts, as with flock's -s and -x. */
		a->shared = ch == OPT_SHARED;
		return (0);
	case OPT_FORCE:
		a->force = 1;
		return (0);
	case OPT_RECORD_COMMAND:
		return (options_record(arg, a));
	default:
		return (options_run(ch, arg, a));
	}
}

/*
 * --record-command: what a holder leaves on the server of its command,
 * for anyone who may read the lock's keys (see mask.c).
 */
static int
options_record(const char *arg, struct cmd_args *a)
{
	static const struct {
		const char		*name;
		enum mask_record	 how;
	} hows[] = {
		{ "full", MASK_RECORD_FULL }, { "name", MASK_RECORD_NAME },
		{ "none", MASK_RECORD_NONE }
	};
	size_t i;

	for (i = 0; i < sizeof(hows) / sizeof(hows[0]); i++)
		if (strcmp(arg, hows[i].name) == 0) {
			a->record_command = hows[i].how;
			return (0);
		}
	log_warnx("invalid --record-command '%s': not full, name or none",
	    arg);
	return (EXIT_USAGE);
}

/* run's own options: what to do with the command and a lost lock. */
static int
options_run(int ch, const char *arg, struct cmd_args *a)
{
	int64_t	 v = 0;
	int	 rc;

	switch (ch) {
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
	case OPT_RELEASE_ON_EXIT:
		a->release_on_exit = 1;
		return (0);
	case OPT_METRICS_FILE:
		if (*arg == '\0') {
			log_warnx("invalid --metrics-file '': empty");
			return (EXIT_USAGE);
		}
		a->metrics_file = arg;
		return (0);
	default:
		return (options_queue(ch, arg, a));
	}
}

/*
 * The queue's options.  An order is a sorted set's score: exact up to
 * 2^53.  Returns 0, EXIT_USAGE, or -1 if ch is none of them.
 */
static int
options_queue(int ch, const char *arg, struct cmd_args *a)
{
	static const char *modes[] = { "any", "fifo", "latest", NULL };
	int64_t		 v = 0;
	int		 i, rc;

	switch (ch) {
	case OPT_FAIR:
		a->queue = LOCK_QUEUE_FIFO;
		return (0);
	case OPT_QUEUE:
		for (i = 0; modes[i] != NULL; i++)
			if (strcmp(arg, modes[i]) == 0) {
				a->queue = i;
				return (0);
			}
		log_warnx("invalid --queue '%s': not any, fifo or latest", arg);
		return (EXIT_USAGE);
	case OPT_ORDER:
		rc = options_count("--order", arg, 0, 9007199254740992LL, &v);
		a->order = v;
		return (rc);
	case OPT_SKIP_OUTDATED:
		a->skip_outdated = 1;
		return (0);
	case OPT_CANCEL_RUNNING:
		a->cancel_grace_ms = DEFAULT_CANCEL_GRACE_MS;
		return (arg == NULL ? 0 : options_duration("--cancel-running",
		    arg, &a->cancel_grace_ms, 1));
	case OPT_SUPERSEDED_CODE:
		rc = options_count("--superseded-exit-code", arg, 0, 255, &v);
		a->superseded_code = (int)v;
		return (rc);
	case OPT_OUTDATED_CODE:
		rc = options_count("--outdated-exit-code", arg, 0, 255, &v);
		a->outdated_code = (int)v;
		return (rc);
	case OPT_CANCELLED_CODE:
		rc = options_count("--cancelled-exit-code", arg, 0, 255, &v);
		a->cancelled_code = (int)v;
		return (rc);
	default:
		return (-1);
	}
}
