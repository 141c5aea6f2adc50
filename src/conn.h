/* SPDX-License-Identifier: MIT */
/*
 * The connection layer's public interface (conn*.c): what the rest
 * of the program may ask of a connection; its internals are in
 * conn-impl.h.  Included by redlock.h
 * (which every file includes) at this point, after the types it uses.
 */

#ifndef CONN_H
#define CONN_H

/* conn.c: the only owner of sockets */
enum conn_result {
	CONN_OK = 0,		/* a reply that is not an error reply */
	CONN_UNAVAILABLE,	/* cannot connect, I/O error, EOF, timeout */
	CONN_AUTH,		/* NOAUTH, WRONGPASS, NOPERM */
	CONN_NOSCRIPT,		/* EVALSHA of a script the server lacks */
	CONN_TRANSIENT,		/* LOADING, BUSY, TRYAGAIN, MASTERDOWN */
	CONN_REDIRECT,		/* MOVED, ASK */
	CONN_SERVER_ERROR,	/* another error reply, e.g. WRONGTYPE, OOM */
	CONN_PROTOCOL,		/* the bytes were not RESP, or too large */
	CONN_NO_SCRIPTS		/* the server refuses scripts (an ACL
				 * without @scripting, no Lua engine) */
};
/*
 * What a server was found to lack (conn_lacks()), so that each is asked
 * once per process: scripts, and the native owner-checked commands that
 * stand in for them (scripts-native.c).
 */
enum conn_lack {
	CONN_LACKS_SCRIPTS = 1,
	CONN_LACKS_DELIFEQ = 2,		/* Valkey >= 9.0 */
	CONN_LACKS_DELEX = 4,		/* Redis >= 8.4: DELEX k IFEQ v */
	CONN_LACKS_SET_IFEQ = 8		/* Valkey >= 8.1, Redis >= 8.4 */
};
struct conn_config {
	int64_t		 connect_timeout_ms;
	int64_t		 io_timeout_ms;
	const char	*password;	/* when the URL has none */
	const char	*user;		/* ACL user, when the URL has none */
	const char	*password_from;	/* where password came from (NULL:
					 * --password-file or the environment) */
	int		 use_tls;	/* --tls: every connection */
	/* the signal mask while a blocking command (BZPOPMIN) waits: no
	 * lock is ours then, so the signals that end us may (NULL: ours) */
	const sigset_t	*wait_mask;
};
struct conn;
struct conn *conn_new(const struct redis_url *, const struct conn_config *);
void	 conn_free(struct conn *);
void	 conn_close(struct conn *);
const char *conn_error(const struct conn *);
int	 conn_may_have_run(const struct conn *);
const char *conn_display(const struct conn *);
void	 conn_set_fallback(struct conn *, int, const char **, const size_t *);
/*
 * A blocking command sent ahead of the next command on one connection, in
 * the same write (a waiter's BZPOPMIN, with its next attempt behind it:
 * the server runs the attempt the moment it wakes the waiter, instead of
 * a round trip later).  Its reply is kept here, not checked.  While it
 * blocks, the poll loop holds every signal (the command behind it may
 * take a lock) and watches stop_fd instead: readable, it stops, and the
 * connection is closed with the command's outcome unknown.  Not for
 * Sentinel or Cluster connections: a lead is not resent or redirected.
 */
struct redisReply;
struct conn_lead {
	int		 argc;
	const char	**argv;
	const size_t	*lens;
	int64_t		 block_ns;	/* how long the server may hold it */
	int		 secret_arg;	/* for -v -v, as conn_set_secret() */
	size_t		 secret_from;
	int		 stop_fd;	/* -1: none */
	/* what came back */
	int		 is_stopped;	/* stop_fd was readable */
	int		 result;	/* enum conn_result; -1: no reply */
	struct redisReply *reply;	/* the caller frees it */
};
void	 conn_set_lead(struct conn *, struct conn_lead *);
int	 conn_can_lead(const struct conn *);
void	 conn_set_secret(struct conn *, int, size_t);
void	 conn_set_secret_span(struct conn *, int, int);
void	 conn_set_secret_reply(struct conn *);
int	 conn_exit_code(int);
int	 conn_lacks(const struct conn *, int);
void	 conn_set_lacks(struct conn *, int);
const char *conn_lack_why(const struct conn *);
void	 conn_set_error(struct conn *, int, const char *, ...)
	     printflike(3, 4);
const char *conn_hiredis_version(void);
int	 conn_command(struct conn *, int, const char **, const size_t *,
	     int64_t, struct redisReply **);
int	 conn_cluster_masters(struct conn *, int64_t, struct conn ***,
	     size_t *);
void	 conn_command_many(struct conn **, size_t, size_t, int,
	     const char **, const size_t *, int64_t, int64_t,
	     struct redisReply **, int *);
void	 conn_command_each(struct conn **, size_t, const int *,
	     const char ***, size_t **, int64_t, struct redisReply **,
	     int *);
struct pollfd;
void	 conn_start(struct conn *, int, const char **, const size_t *,
	     int64_t, int64_t);
int	 conn_pending(struct conn *, struct pollfd *, int64_t *);
void	 conn_advance(struct conn *, short);
int	 conn_take(struct conn *, struct redisReply **);

#endif /* CONN_H */
