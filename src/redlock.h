/* SPDX-License-Identifier: MIT */
/*
 * redlock-cli: a distributed lock for shell scripts, on Redis.
 *
 * The one project header every file includes.  Each section below is the
 * public interface of one source file or module, those of the connection
 * and lock layers in conn.h and lock.h; everything not declared here is
 * static in its file, or private to its module behind the module's own
 * header.
 *
 * The map, top down; each layer calls only the ones below it:
 *   main.c            argv to a command: options, then the command's exec
 *   cmd.c, cmd-*.c    the command table and one file per verb; help.c and
 *                     cmd-help.c print help from the tables
 *   options*.c        options from the table (options-impl.h), checked
 *                     with the one integer parser (number.c); settings.c
 *                     adds the environment, URLs and the password
 *   supervise*.c      run's job: the supervisor in phases (start, hold,
 *                     drain, lose, release), the guardian process and the
 *                     process tree (supervise-impl.h)
 *   lock*.c           the lock protocol: lock.c opens a lock from a struct
 *                     lock_spec; lock-call.c fans each operation out to
 *                     every server; lock-acquire.c, -wait, -status, -list,
 *                     -list-all, -force, -queue, -listen, -history
 *                     (private: lock-impl.h); status-print.c and
 *                     history-print.c (print.h) word what they find
 *   lock-scripts.c    the Lua scripts, one per purpose and mode, put
 *                     together at build time (scripts-*.h; their SHA-1s
 *                     in scripts-sha.h, written by src/tools/script-sha.c)
 *   conn*.c           the only owner of sockets and the only place that
 *                     starts I/O (conn-io.c, driven by conn-poll.c's
 *                     loop): connect, TLS (tls.c), name
 *                     lookups, Sentinel and Cluster as states of one poll
 *                     loop, reply bounds (private: conn-impl.h)
 *   url.c, duration.c, timefmt.c, cursor.c, clock.c, token.c, log.c, xmalloc.c,
 *   keyslot.c, signame.c, endsig.c, json.c, sha1.c: small parts with no
 *   state; mask.c (mask.h): a command as a holder records it, secrets
 *   masked; outcome.c and metrics.c: how a run ended, told to a CI step
 *   ($GITHUB_OUTPUT) and to monitoring (--metrics-file, which reads its
 *   previous file back with metrics-read.c; private: metrics-impl.h)
 */

#ifndef REDLOCK_H
#define REDLOCK_H

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sysexits.h>

#include "mask.h"	/* mask.c: pure, with a header of its own for tests */

#define PROGNAME	"redlock-cli"
#ifndef VERSION
#define VERSION		"0.2.0"
#endif

#define printflike(a, b) __attribute__((format(printf, a, b)))
#define deadfn __attribute__((noreturn))

/* Exit status, as in the contract.  Never a bare number in return or exit. */
enum exit_code {
	EXIT_OK = EX_OK,
	EXIT_BUSY = 1,
	EXIT_NOT_OWNER = 3,
	EXIT_USAGE = EX_USAGE,			/* 64 */
	EXIT_UNAVAILABLE = EX_UNAVAILABLE,	/* 69 */
	EXIT_LOST = EX_TEMPFAIL,		/* 75 */
	EXIT_PROTOCOL = EX_PROTOCOL,		/* 76 */
	EXIT_NOPERM = EX_NOPERM,		/* 77 */
	EXIT_SUPERSEDED = 80,	/* --queue latest: a newer waiter came */
	EXIT_OUTDATED = 81,	/* --skip-outdated: a newer order ran */
	EXIT_CANCELLED = 82,	/* --cancel-running: a newer run came */
	EXIT_NOEXEC = 126,
	EXIT_NOTFOUND = 127,
	EXIT_SIGNAL_BASE = 128
};

#define DEFAULT_TTL_MS		30000
/* A lock's history: the most entries kept (the default), and shown. */
#define LOCK_HISTORY_MAX	1000
#define LOCK_HISTORY_SHOWN	20
#define DEFAULT_TIMEOUT_MS	1000
#define DEFAULT_CANCEL_GRACE_MS	10000	/* --cancel-running without =GRACE */
#define DEFAULT_URL		"redis://127.0.0.1:6379"
#define TOKEN_HEX_LEN		32	/* 128 random bits */
#define TOKEN_SHOWN		8	/* status and -v -v show no more */
#define WAIT_FOREVER		(-1)
/* Below this, drift and the safety margin leave no time to hold a lock. */
#define LOCK_MIN_TTL_MS		10

/* url.c */
enum url_kind {
	URL_TCP,
	URL_UNIX,
	URL_SENTINEL,	/* the master that sentinels name */
	URL_CLUSTER	/* any node of a cluster; MOVED leads on */
};
struct url_host {
	char		*host;		/* brackets stripped */
	int		 port;
};
struct redis_url {
	enum url_kind	 kind;
	struct url_host	*hosts;		/* sentinels, seeds, or the one */
	size_t		 nhosts;
	char		*master_name;	/* URL_SENTINEL */
	const char	*host;		/* hosts[0], for URL_TCP */
	int		 port;
	char		*path;		/* URL_UNIX */
	char		*user;		/* ACL user, or NULL */
	char		*password;	/* NULL if none */
	int		 db;
	char		*display;	/* for messages: password as *** */
	int		 is_tls;	/* rediss:// */
	int		 tls_insecure;	/* ?ssl_cert_reqs=none: --insecure */
};
int	 url_parse(const char *, struct redis_url *, const char **);
void	 url_free(struct redis_url *);
char	*url_redact(const char *);

/* url-guess.c */
char	*url_guess(const char *);

/* duration.c */
int	 duration_parse(const char *, int64_t *, const char **);
void	 duration_format(int64_t, char *, size_t);
void	 duration_span(int64_t, char *, size_t);

/* cursor.c */
/*
 * SCAN calls one scan may take before it is taken for one that never
 * ends.  A real one needs about one call per 1000 keys, or per 10,000
 * buckets of a sparse table: room for billions of keys.
 */
#define CURSOR_MAX_CALLS	10000000
struct cursor {
	uint64_t	value;		/* the one to send next */
	uint64_t	mark;		/* one seen, that must not come back */
	uint64_t	steps;		/* since mark was taken */
	uint64_t	power;		/* steps before the next mark */
	uint64_t	calls;
};
enum cursor_verdict {
	CURSOR_MORE,		/* go on with cur->value */
	CURSOR_END,		/* 0: the scan is over */
	CURSOR_BAD,		/* not a decimal number of 64 bits */
	CURSOR_AGAIN,		/* one seen before: it would loop */
	CURSOR_ENDLESS		/* CURSOR_MAX_CALLS reached */
};
void	 cursor_start(struct cursor *);
enum cursor_verdict cursor_next(struct cursor *, const char *, size_t);

/* number.c */
int	 number_parse(const char *, long long, long long, long long *,
	     const char **);

/* clock.c */
int64_t	 clock_mono_ns(void);
int64_t	 clock_wall_ms(void);
void	 clock_sleep_ns(int64_t);
void	 clock_sleep_masked_ns(int64_t, const sigset_t *);
int64_t	 clock_sooner(int64_t, int64_t);
int64_t	 clock_ms_to_ns(int64_t);
/* The longest poll() of clock_poll_ms(): an hour, far under INT_MAX ms. */
#define CLOCK_POLL_MAX_MS	3600000
int	 clock_poll_ms(int64_t);

/* token.c */
void	 token_new(char [TOKEN_HEX_LEN + 1]);
uint64_t token_random_u64(void);

/* sha1.c */
void	 sha1_hex(const void *, size_t, char [41]);

/* log.c */
extern int log_verbosity;	/* -1 quiet, 0 normal, 1.. verbose */
void	 log_open_syslog(void);
void	 log_name_lock(const char *);
void	 log_warn(const char *, ...) printflike(1, 2);
void	 log_warnx(const char *, ...) printflike(1, 2);
void	 log_info(const char *, ...) printflike(1, 2);
void	 log_debug(const char *, ...) printflike(1, 2);
void	 log_busy(const char *, ...) printflike(1, 2);
void	 log_notice(const char *, ...) printflike(1, 2);
/* log_audit's levels are syslog(3)'s: LOG_INFO, LOG_WARNING, LOG_ERR */
void	 log_audit(int, const char *, ...) printflike(2, 3);
deadfn void fatal(int, const char *, ...) printflike(2, 3);
deadfn void fatalx(int, const char *, ...) printflike(2, 3);
void	 log_sanitize(char *, size_t, const char *, size_t);
void	 log_shorten(char *, size_t, const char *, size_t);

/* xmalloc.c */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xasprintf(const char *, ...) printflike(1, 2);
void	 freezero_str(char *);

/* tls.c */
struct tls_options {
	int		 enabled;	/* --tls */
	const char	*cacert;
	const char	*cacertdir;
	const char	*cert;
	const char	*key;
	const char	*sni;
	int		 insecure;
};
struct tls_conn;
int	 tls_setup(const struct tls_options *, char *, size_t);
struct tls_conn *tls_new(int, const char *, char *, size_t);
void	 tls_free(struct tls_conn *);
int	 tls_handshake(struct tls_conn *, int *, char *, size_t);
long	 tls_read(struct tls_conn *, void *, size_t, int *, char *, size_t);
void	 tls_describe(char *, size_t);
long	 tls_write(struct tls_conn *, const void *, size_t, int *, char *,
	     size_t);

/* options shared by every command: connection, logging */
struct global_opts {
	char		**url_strings;	/* as given by -u, in order */
	size_t		  nurl_strings;
	struct redis_url *urls;		/* parsed from the above or env */
	size_t		  nurls;
	char		 *password;	/* --password-file or env, owned */
	const char	 *password_from;	/* which of them, for messages */
	const char	 *user;		/* --user or $REDLOCK_USER */
	const char	 *password_file;
	int		  no_auth_warning;
	int64_t		  connect_timeout_ms;
	int64_t		  io_timeout_ms;
	const char	 *prefix;
	int		  quiet;
	int		  verbose;
	int		  use_syslog;
	int		  wait_replicas;	/* WAIT for this many, 0: no */
	int		  history_size;	/* --history-size: entries kept */
	int64_t		  wait_timeout_ms;
	struct tls_options tls;
};

/* what one command was asked to do; each verb uses the fields it accepts */
struct cmd_args {
	const char	 *key;
	int64_t		  ttl_ms;
	int		  ttl_given;	/* -t: extend keeps the TTL without */
	int64_t		  wait_ms;	/* WAIT_FOREVER, 0 = -n, or a limit */
	int		  conflict_code;
	const char	 *token;
	int		  json;
	int64_t		  renew_ms;	/* 0 = ttl/3 */
	int64_t		  kill_after_ms;	/* 0 = at the lock's expiry */
	int64_t		  jitter_ms;
	int64_t		  min_hold_ms;
	int		  lost_signal;
	int		  lost_exit_code;
	int64_t		  limit;	/* --limit N, 0 = mutex */
	int64_t		  count;	/* history -n N */
	int		  all;		/* list --all */
	int		  queue;	/* enum lock_queue: --queue, --fair */
	int64_t		  order;	/* --order N, -1 when not given */
	int		  skip_outdated;	/* run --skip-outdated */
	int64_t		  cancel_grace_ms;	/* --cancel-running, -1 none */
	int		  superseded_code;
	int		  outdated_code;
	int		  cancelled_code;
	int		  shared;	/* -s; -x (the default) clears it */
	int		  release_on_exit;	/* run --release-on-exit */
	int		  force;	/* release --force */
	const char	 *shell_command;	/* run -c */
	char		**argv;		/* run -- CMD... */
	int		  argc;
	enum mask_record  record_command;	/* acquire, run */
	const char	 *metrics_file;	/* run --metrics-file, or NULL */
};

/* The command line stored for `status`: enough to recognise the job. */
#define CMD_COMMAND_SHOWN	1024
/* How much of a manual lock's caller's command line is read to mask it. */
#define CMD_CALLER_READ_MAX	(1024 * 1024)

/* cmd.c */
/*
 * What a verb takes, for the parser (options.c), main and help:
 *   CMD_TAKES_KEY	exactly one KEY, required
 *   CMD_TAKES_TOPIC	at most one word, optional (help COMMAND), in ->key
 *   CMD_TAKES_COMMAND	CMD after "--", or -c STRING (run)
 *   CMD_TOKEN_FROM_ENV	--token defaults to $REDLOCK_TOKEN (release, extend)
 *   CMD_NEEDS_SERVER	resolve the URLs, password and TLS before exec
 */
#define CMD_TAKES_KEY		0x01
#define CMD_TAKES_TOPIC		0x02
#define CMD_TAKES_COMMAND	0x04
#define CMD_TOKEN_FROM_ENV	0x08
#define CMD_NEEDS_SERVER	0x10
struct cmd_entry {
	const char		*name;
	const char		*usage;		/* after "redlock-cli NAME " */
	const char		*summary;	/* one line, for help */
	const char		*example;	/* one command line, for help */
	const int		*options;	/* ids from enum cmd_option, 0-ended;
						   the verb's own, without globals */
	int			 flags;		/* CMD_* above */
	int			(*exec)(struct global_opts *, struct cmd_args *);
};
enum cmd_option {
	OPT_URL = 'u',
	OPT_QUIET = 'q',
	OPT_VERBOSE = 'v',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_TTL = 't',
	OPT_NONBLOCK = 'n',
	OPT_WAIT = 'w',
	OPT_CONFLICT_CODE = 'E',
	OPT_SHELL_COMMAND = 'c',
	OPT_SHARED = 's',
	OPT_EXCLUSIVE = 'x',
	OPT_TOKEN = 256,
	OPT_JSON,
	OPT_RENEW,
	OPT_LOST_SIGNAL,
	OPT_KILL_AFTER,
	OPT_LOST_EXIT_CODE,
	OPT_JITTER,
	OPT_MIN_HOLD,
	OPT_PASSWORD_FILE,
	OPT_NO_AUTH_WARNING,
	OPT_CONNECT_TIMEOUT,
	OPT_IO_TIMEOUT,
	OPT_PREFIX,
	OPT_SYSLOG,
	OPT_LIMIT,
	OPT_FAIR,
	OPT_WAIT_REPLICAS,
	OPT_WAIT_TIMEOUT,
	OPT_TLS,
	OPT_CACERT,
	OPT_CACERTDIR,
	OPT_CERT,
	OPT_KEY,
	OPT_SNI,
	OPT_INSECURE,
	OPT_USER,
	OPT_RELEASE_ON_EXIT,
	OPT_QUEUE,
	OPT_ORDER,
	OPT_SKIP_OUTDATED,
	OPT_CANCEL_RUNNING,
	OPT_SUPERSEDED_CODE,
	OPT_OUTDATED_CODE,
	OPT_CANCELLED_CODE,
	OPT_FORCE,
	OPT_RECORD_COMMAND,
	OPT_METRICS_FILE,
	OPT_HISTORY_SIZE,
	OPT_COUNT,
	OPT_ALL
};
const struct cmd_entry *cmd_find(const char *);
const struct cmd_entry *cmd_at(size_t);
struct lock;
struct lock_spec;
void	 cmd_lock_spec(const struct cmd_args *, struct lock_spec *);
void	 cmd_report_busy(const struct lock *, const struct cmd_args *);
void	 cmd_report_not_owner(const struct lock *, const char *);
int	 cmd_flush_stdout(void);
int	 cmd_queue_code(const struct lock *, const struct cmd_args *, int);

/* help.c: help text, generated from the command and option tables */
void	 help_print_all(void);
void	 help_print_command(const struct cmd_entry *);

/* options-table.c */
/*
 * One row per option: the getopt half first (tests/man.bats reads rows of
 * that shape), then what help says of it.  The short letter is the id
 * itself when the id is below 256.
 */
struct options_def {
	struct {
		struct option	 opt;
		int		 is_global;	/* valid with every verb */
	}		 getopt;
	const char	*arg;		/* the argument's name, or NULL */
	const char	*help;		/* one line; NULL for an alias */
	const char	*dflt;		/* the default, or NULL */
};
extern const struct options_def options_defs[];
const struct options_def *options_find(int);
const char *options_default(const struct options_def *,
	     const struct cmd_entry *);

/* options-error.c: a first word that is no command */
void	 options_unknown_command(int, char **);

/* options.c */
/* What a parser tells main: go on, or exit now with code. */
struct options_status {
	int	 exit_now;	/* help, version or a usage error */
	int	 code;		/* the exit code when exit_now */
};
struct options_status options_parse_globals(int, char **, struct global_opts *,
	     int *);
struct options_status options_parse(const struct cmd_entry *, int, char **,
	     struct global_opts *, struct cmd_args *);

/* settings.c */
int	 settings_setup(struct global_opts *);
void	 settings_free(struct global_opts *);

/* signame.c */
int	 signame_parse(const char *);
const char *signame_name(int);

/* endsig.c */
extern const int endsig_list[];
int	 endsig_hold(sigset_t *);
int	 endsig_pending(void);
void	 endsig_restore(const sigset_t *);
void	 endsig_ignore_sigpipe(void);
void	 endsig_restore_sigpipe(void);

#include "conn.h"
#include "lock.h"

/* keyslot.c */
unsigned int keyslot(const char *, size_t);
char	*keyslot_companion(const char *, size_t, const char *, size_t *);

/*
 * How a run ended, as CI steps ($GITHUB_OUTPUT, outcome.c) and the
 * history see it: what happened, whatever exit status it was mapped to.
 */
enum run_outcome {
	RUN_OK,		/* the command ran and exited 0 */
	RUN_FAILED,	/* the command ran and exited non-zero */
	RUN_SIGNAL,	/* the command ran and was killed by a signal */
	RUN_LOST,	/* the lock was lost while it ran */
	RUN_FORCED,	/* an operator's release --force */
	RUN_CANCELLED,	/* a newer run's --cancel-running */
	RUN_SUPERSEDED,	/* never ran: a newer run came first */
	RUN_OUTDATED,	/* never ran: --skip-outdated */
	RUN_BUSY,	/* never ran: the lock stayed busy */
	RUN_ERROR	/* never ran: a usage, server or system error */
};
/* How a run ended, in full: for $GITHUB_OUTPUT and --metrics-file. */
struct run_end {
	enum run_outcome outcome;
	int64_t		 waited_ms;	/* for the lock, until taken or not */
	int64_t		 queued_ms;	/* when it began, by the wall clock */
	int64_t		 held_ms;	/* from the take to the release; 0 */
};

/* outcome.c */
const char *outcome_name(enum run_outcome);
void	 outcome_github(enum run_outcome, int64_t);

/* metrics.c: run --metrics-file, Prometheus's text format */
void	 metrics_write(const char *, const char *, const struct run_end *,
	     int);

/* supervise.c */
struct supervise_opts {
	int64_t		 renew_ms;
	int64_t		 kill_after_ms;
	int64_t		 min_hold_ms;
	int		 lost_signal;
	int		 lost_exit_code;
	int		 release_on_exit;	/* flock -o: not the leftovers */
	int		 cancelled_exit_code;
	int		 listens;	/* for a cancel between renewals */
	int64_t		 record_order;	/* on exit 0 (--skip-outdated), or -1 */
	const sigset_t	*caller_mask;	/* endsig_hold()'s: the command's */
	struct supervise_pre *pre;	/* its guardian, if started already */
	struct run_end	*end;		/* waited_ms given; outcome and
					 * held_ms set at the end */
};
int	 supervise_run(struct lock *, const struct supervise_opts *, char **);

/* A guardian started before the lock is taken (supervise-guard.c). */
struct supervise_pre {
	pid_t	 pid;		/* -1: none */
	int	 fd;		/* our end of its socket pair */
};
void	 supervise_pre_start(struct supervise_pre *, char **, const char *,
	     const sigset_t *, int);
void	 supervise_pre_end(struct supervise_pre *);

/* timefmt.c: times as output shows them; json.c */
void	 timefmt_utc(int64_t, char *, size_t);
void	 timefmt_age(int64_t, char *, size_t);
void	 json_string(const char *);

#endif /* REDLOCK_H */
