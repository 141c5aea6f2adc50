/* SPDX-License-Identifier: MIT */
/*
 * redlock-cli: a distributed lock for shell scripts, on Redis.
 *
 * The one project header.  Each section below is the public interface of
 * one source file; everything not declared here is static in its file.
 */

#ifndef REDLOCK_H
#define REDLOCK_H

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sysexits.h>

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
	EXIT_NOEXEC = 126,
	EXIT_NOTFOUND = 127,
	EXIT_SIGNAL_BASE = 128
};

#define DEFAULT_TTL_MS		30000
#define DEFAULT_TIMEOUT_MS	1000
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
};
int	 url_parse(const char *, struct redis_url *, const char **);
void	 url_free(struct redis_url *);
char	*url_redact(const char *);

/* duration.c */
int	 duration_parse(const char *, int64_t *, const char **);
void	 duration_format(int64_t, char *, size_t);

/* clock.c */
int64_t	 clock_mono_ns(void);
int64_t	 clock_wall_ms(void);
void	 clock_sleep_ns(int64_t);
int64_t	 clock_ms_to_ns(int64_t);

/* token.c */
void	 token_new(char [TOKEN_HEX_LEN + 1]);
uint64_t token_random_u64(void);

/* sha1.c */
void	 sha1_hex(const void *, size_t, char [41]);

/* log.c */
extern int log_verbosity;	/* -1 quiet, 0 normal, 1.. verbose */
void	 log_open_syslog(void);
void	 log_warn(const char *, ...) printflike(1, 2);
void	 log_warnx(const char *, ...) printflike(1, 2);
void	 log_info(const char *, ...) printflike(1, 2);
void	 log_debug(const char *, ...) printflike(1, 2);
void	 log_busy(const char *, ...) printflike(1, 2);
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
	int64_t		  wait_timeout_ms;
	struct tls_options tls;
};

/* what one command was asked to do; each verb uses the fields it accepts */
struct cmd_args {
	const char	 *key;
	int64_t		  ttl_ms;
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
	int		  fair;		/* --fair */
	int		  release_on_exit;	/* run --release-on-exit */
	const char	 *shell_command;	/* run -c */
	char		**argv;		/* run -- CMD... */
	int		  argc;
};

/* cmd.c */
struct cmd_entry {
	const char		*name;
	const char		*usage;		/* after "redlock-cli NAME " */
	const char		*summary;
	const char		*shortopts;	/* the verb's own, without globals */
	const int		*longopts;	/* ids from enum cmd_option, 0-ended */
	int			 takes_command;	/* run: CMD after -- or -c */
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
	OPT_RELEASE_ON_EXIT
};
const struct cmd_entry *cmd_find(const char *);
void	 cmd_print_usage(int);
void	 cmd_print_help(const struct cmd_entry *, int);
int	 cmd_help(const char *);
struct lock;
void	 cmd_report_busy(const struct lock *, const struct cmd_args *);
void	 cmd_report_not_owner(const struct lock *, const char *);
int	 cmd_flush_stdout(void);

/* options.c */
int	 options_parse_globals(int, char **, struct global_opts *);
int	 options_parse(const struct cmd_entry *, int, char **,
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

/* conn.c: the only owner of sockets */
enum conn_result {
	CONN_OK = 0,		/* a reply that is not an error reply */
	CONN_UNAVAILABLE,	/* cannot connect, I/O error, EOF, timeout */
	CONN_AUTH,		/* NOAUTH, WRONGPASS, NOPERM */
	CONN_NOSCRIPT,		/* EVALSHA of a script the server lacks */
	CONN_TRANSIENT,		/* LOADING, BUSY, TRYAGAIN, MASTERDOWN */
	CONN_REDIRECT,		/* MOVED, ASK */
	CONN_SERVER_ERROR,	/* another error reply, e.g. WRONGTYPE, OOM */
	CONN_PROTOCOL		/* the bytes were not RESP, or too large */
};
struct conn_config {
	int64_t		 connect_timeout_ms;
	int64_t		 io_timeout_ms;
	const char	*password;	/* when the URL has none */
	const char	*user;		/* ACL user, when the URL has none */
	const char	*password_from;	/* where password came from (NULL:
					 * --password-file or the environment) */
	int		 use_tls;	/* --tls: every connection */
};
struct conn;
struct conn *conn_new(const struct redis_url *, const struct conn_config *);
void	 conn_free(struct conn *);
void	 conn_close(struct conn *);
const char *conn_error(const struct conn *);
const char *conn_display(const struct conn *);
void	 conn_set_fallback(struct conn *, int, const char **, const size_t *);
void	 conn_set_secret(struct conn *, int);
int	 conn_exit_code(int);
const char *conn_hiredis_version(void);
struct redisReply;
int	 conn_command(struct conn *, int, const char **, const size_t *,
	     int64_t, struct redisReply **);
void	 conn_command_many(struct conn **, size_t, size_t, int,
	     const char **, const size_t *, int64_t, int64_t,
	     struct redisReply **, int *);

/* scripts.c */
struct script;
extern struct script script_acquire;
extern struct script script_release;
extern struct script script_extend;
extern struct script script_status;
extern struct script script_leave;
extern struct script script_raise_fence;
int	 script_call(struct conn *, struct script *, int, int, const char **,
	     const size_t *, int64_t, struct redisReply **);
void	 script_call_many(struct conn **, size_t, struct script *, int, int,
	     const char **, const size_t *, int64_t, struct redisReply **,
	     int *);

/* lock.c: the protocol, on top of conn.c and scripts.c */
enum lock_not_owner {
	LOCK_GONE = 1,		/* the key no longer exists: expired */
	LOCK_OTHER		/* someone else holds it now */
};
struct lock_holder {
	int		 ours;
	char		*token;
	int64_t		 ttl_ms;
	int64_t		 fence;		/* -1 when unknown (foreign client) */
	char		*host;
	int64_t		 pid;
	char		*command;
	int64_t		 since_ms;	/* wall clock, 0 when unknown */
};
/*
 * The lock's key and its companions (all in one Cluster slot), in the
 * order every script takes them as KEYS; a script takes the first n.
 */
enum lock_key {
	LK_LOCK,	/* PREFIX KEY itself: the token, or a semaphore */
	LK_FENCE,	/* fence counter, never expires */
	LK_META,	/* holder metadata */
	LK_QUEUE,	/* --fair: waiters in arrival order */
	LK_LEASES,	/* --fair: each waiter's lease */
	LK_WAKE,	/* release pushes, one waiter pops */
	LOCK_NKEYS
};
/* a cluster node that a MOVED or ASK led to */
struct lock_node {
	struct redis_url url;
	char		*host;
};
struct lock {
	const struct global_opts *opts;
	struct conn_config conf;
	struct conn	**conns;	/* one per server */
	size_t		 nconns;
	size_t		 quorum;	/* nconns / 2 + 1 */
	struct lock_node **nodes;	/* owned by the lock */
	size_t		 nnodes;
	char		*user_key;	/* KEY as given */
	char		*key;		/* PREFIX KEY: the lock itself */
	size_t		 key_len;
	char		*keys[LOCK_NKEYS];	/* KEYS[1..] of every script */
	size_t		 keys_len[LOCK_NKEYS];
	char		*wake_prefix;	/* --fair: + token = its wake key */
	size_t		 wake_prefix_len;
	int64_t		 limit;		/* --limit N: semaphore; 0 = mutex */
	int		 is_fair;	/* --fair */
	char		*token;		/* ours: generated or given */
	int64_t		 ttl_ms;
	int64_t		 fence;
	int64_t		 acquired_ns;	/* CLOCK_MONOTONIC, start of attempt */
	int64_t		 valid_until_ns;	/* our view of the expiry */
	int64_t		 busy_ttl_ms;	/* holder's PTTL on the last busy */
	int		 not_owner;	/* enum lock_not_owner */
	int		 cannot_block;	/* server without fractional BZPOPMIN */
	int		 said_wait_cap;	/* -v: --wait-timeout was capped */
	size_t		 holders_unlisted;	/* status: beyond the list */
	const sigset_t	*wait_mask;	/* endsig: the mask while waiting */
	int		 fail_code;	/* exit code of the last failure */
	int		 type_clash;	/* exit code if the key's type is wrong */
	char		 err[512];	/* the last failure, for the caller */
};
/* one server's view of a lock, for status */
struct lock_view {
	const char	   *display;	/* the server's URL, redacted */
	char		   *error;	/* NULL if it answered */
	struct lock_holder *holders;
	size_t		    nholders;	/* listed */
	size_t		    nholding;	/* in all */
};
/* the replies of one operation sent to every server */
struct lock_round {
	struct redisReply **replies;
	int		  *results;	/* enum conn_result */
};
void	 lock_init(struct lock *, const struct global_opts *, const char *);
void	 lock_free(struct lock *);
int	 lock_set_token(struct lock *, const char *);
int	 lock_acquire(struct lock *, int64_t, int64_t, const char *);
int	 lock_release(struct lock *);
int	 lock_extend(struct lock *, int64_t, int64_t);
int	 lock_status(struct lock *, struct lock_holder **, size_t *,
	     struct lock_view **);
void	 lock_holders_free(struct lock_holder *, size_t);
void	 lock_views_free(struct lock_view *, size_t);
int64_t	 lock_drift_ms(int64_t);
int64_t	 lock_margin_ns(int64_t);
int64_t	 lock_cap_ns(int64_t, int64_t);
/* for lock-*.c */
#define LOCK_FAIR_LEASE_MS	3000
/*
 * status lists at most this many holders of a semaphore, and counts the
 * rest: with command lines of 1 KB, the most kept, 1000 holders are about
 * 3 MB once parsed, within the reply bounds of conn-impl.h.
 */
#define LOCK_STATUS_LISTED	1000
size_t	 lock_call(struct lock *, struct script *, int, int, const char **,
	     const size_t *, int64_t, struct lock_round *);
void	 lock_round_free(struct lock *, struct lock_round *);
int	 lock_fail(struct lock *, size_t);
int	 lock_unexpected(struct lock *, size_t, const char *,
	     const struct redisReply *, const char *);
size_t	 lock_release_call(struct lock *, struct lock_round *);
void	 lock_script_args(const struct lock *, int, int, const char **,
	     const size_t *, const char ***, size_t **);
int	 lock_wait_replicas(struct lock *, int64_t);

/* lock-wait.c */
int	 lock_wait_for_release(struct lock *, int64_t);
void	 lock_leave_queue(struct lock *);

/* keyslot.c */
unsigned int keyslot(const char *, size_t);
char	*keyslot_companion(const char *, size_t, const char *, size_t *);

/* supervise.c */
struct supervise_opts {
	int64_t		 renew_ms;
	int64_t		 kill_after_ms;
	int64_t		 min_hold_ms;
	int		 lost_signal;
	int		 lost_exit_code;
	int		 release_on_exit;	/* flock -o: not the leftovers */
	const sigset_t	*caller_mask;	/* endsig_hold()'s: the command's */
};
int	 supervise_run(struct lock *, const struct supervise_opts *, char **);

void	 supervise_ignore_sigpipe(void);
void	 supervise_restore_sigpipe(void);

/* json.c */
void	 json_string(const char *);

#endif /* REDLOCK_H */
