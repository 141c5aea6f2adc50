/* SPDX-License-Identifier: MIT */
/*
 * The connection layer's own header: struct conn and the functions its
 * files share.  Nothing outside the connection layer includes it; the
 * rest of the program sees struct conn as opaque, through redlock.h.
 *
 * Only conn-io.c starts I/O, driven by the poll loop of conn-poll.c.
 * The steps below it (a reply classified, a connect or TLS handshake
 * advanced, a sentinel's answer taken, a redirect followed) return an
 * enum conn_verdict saying what is to happen next, and conn-io.c does it.
 * Who calls whom (tests/lint/floors.py checks that no file calls one
 * above it, so there is no circle):
 *
 *	conn-masters.c	-> conn-poll.c conn-redirect.c conn.c
 *	conn-poll.c	-> conn-io.c conn-sentinel.c conn.c
 *	conn-io.c	-> conn-resp.c conn-connect.c conn-reply.c
 *			   conn-sentinel.c conn-redirect.c conn-bounds.c
 *			   conn.c
 *	conn-connect.c	-> conn-resolve.c conn.c
 *	conn-sentinel.c	-> conn.c
 *	conn-redirect.c	-> conn.c
 *	conn-reply.c	-> conn-bounds.c conn.c
 *	conn.c		-> conn-resolve.c (a lookup child dies with the
 *			   connection)
 *	conn-resp.c, conn-resolve.c, conn-bounds.c: none
 */

#ifndef CONN_IMPL_H
#define CONN_IMPL_H

#include <sys/socket.h>
#include <sys/un.h>

#include <netdb.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

/*
 * What one command's replies may make us hold (contract, Safety: "a few
 * MB"), whatever the server sends.  hiredis buffers a value's bytes until
 * the value is complete, so the bytes read bound its buffer; the objects
 * it builds from them are charged, as it creates them, against the second
 * bound (conn-bounds.c), so a header that asks for more is refused before
 * hiredis allocates for it.  About 7 MB in all, at worst.  Our largest
 * legitimate reply is status of a semaphore: per holder about 400 bytes
 * read and 1.5 KB parsed, so about 2500 holders fit (1400 with command
 * lines of 1 KB, the most that is kept): see SEMAPHORES and EXIT STATUS in
 * redlock-cli(1).  The 8 MB read and 2 million elements allowed before
 * were no bound at all: 2 million elements are 150 MB once parsed.
 */
#define CONN_MAX_REPLY_BYTES	(2 * 1024 * 1024)
#define CONN_MAX_REPLY_ALLOC	(4 * 1024 * 1024)
/*
 * Aggregates nested deeper are refused.  hiredis 0.14 stops there itself;
 * 1.x grows its stack of tasks for every level, outside what we charge,
 * and frees a reply by recursion.
 */
#define CONN_MAX_DEPTH		8

/* More addresses than any host has; the rest would never be tried. */
#define CONN_MAX_ADDRS		64

/* What a lookup child may write: CONN_MAX_ADDRS records. */
#define CONN_LOOKUP_BUF	(CONN_MAX_ADDRS * (sizeof(struct conn_addr_record) + \
			    sizeof(struct sockaddr_storage)))

/* One address as a lookup child writes it; addrlen bytes follow. */
struct conn_addr_record {
	int32_t		family;		/* -1: the lookup failed */
	int32_t		socktype;
	int32_t		protocol;	/* family -1: getaddrinfo's code */
	uint32_t	addrlen;
};

/*
 * What a step below conn-io.c asks it to do next.  Only PENDING and DONE
 * leave c to the poll loop; conn_act() (conn-io.c) carries out the rest.
 */
enum conn_verdict {
	CONN_V_PENDING,		/* wait for the poll loop */
	CONN_V_DONE,		/* c->is_done: result, reply or err are set */
	CONN_V_WRITE,		/* connected: write the request now */
	CONN_V_FALLBACK,	/* NOSCRIPT: send alt_* on this connection */
	CONN_V_REDIRECT,	/* MOVED or ASK came: conn_redirect() */
	CONN_V_RESEND,		/* c->dial re-targeted: redial, resend */
	CONN_V_PROBE,		/* sentinel: start c->probe's question */
	CONN_V_SEND		/* the sentinels said: send c's command */
};

/* A cluster node that a MOVED or ASK named, owned by its conn. */
struct conn_node {
	struct redis_url	 url;
	char			*host;
};

enum conn_setup {
	SETUP_AUTH,
	SETUP_SELECT,
	SETUP_ROLE,	/* sentinel: is the named master still one? */
	SETUP_ASKING	/* cluster: the next command is for a slot moving in */
};
#define CONN_MAX_SETUP	4

struct conn {
	const struct redis_url	*url;		/* as the user gave it */
	const struct redis_url	*dial;		/* where to connect */
	struct redis_url	 master;	/* sentinel: the master now */
	char			*master_host;
	struct conn_node	 node;		/* cluster: MOVED, for good */
	struct conn_node	 ask;		/* cluster: ASK, this command */
	int			 hops;		/* redirects, this command */
	size_t			 seed;		/* cluster: seed being tried */
	struct conn_config	 conf;
	int			 fd;
	redisReader		*reader;
	struct addrinfo		*addrs;		/* ours: conn-resolve.c */
	struct addrinfo		*addr;		/* being tried */
	char			*addrs_host;	/* what addrs are of */
	int			 addrs_port;
	int			 is_looking_up;	/* a lookup child runs */
	int			 lookup_fd;	/* its pipe */
	pid_t			 lookup_pid;
	size_t			 lookup_len;
	/* its records: CONN_LOOKUP_BUF bytes, allocated by the first lookup
	 * (a numeric address, the usual case, needs none) */
	char			*lookup_buf;
	struct addrinfo		 unix_ai;	/* unix: addr points here */
	struct sockaddr_un	 unix_sa;

	/* sentinel: the question in flight before the command (the
	 * poll loop waits on probe in c's place) */
	int			 is_probing;
	struct conn		*probe;		/* to the sentinel asked */
	struct redis_url	 probe_url;
	struct conn_config	 probe_conf;
	size_t			 probe_next;	/* the sentinel after it */
	int			 probe_is_recheck;	/* a kept connection */
	int64_t			 probe_cap_ns;
	const char		*probe_argv[3];
	size_t			 probe_lens[3];
	char			*probe_was_host;	/* the master before */
	int			 probe_was_port;
	char			 probe_last[512];	/* the last no */

	/* the command of conn_begin(), sent once the sentinels said */
	int			 cmd_argc;
	const char		**cmd_argv;
	const size_t		*cmd_lens;

	/* the request in flight */
	char			*out;
	size_t			 out_len;
	size_t			 out_off;
	int			 is_written;	/* some of the request went out */
	int			 setup_replies;	/* AUTH/SELECT still to read */
	enum conn_setup		 setup[CONN_MAX_SETUP];
	int			 nsetup;	/* queued, in order */
	int			 alt_argc;	/* on NOSCRIPT, send this */
	const char		**alt_argv;
	const size_t		*alt_lens;
	int			 is_fallback;	/* alt_* went out */
	int			 lacks;		/* enum conn_lack, found */
	char			 lack_why[256];	/* the refusal of scripts */
	struct conn_lead	*lead;		/* sent ahead: conn_set_lead() */
	int			 lead_replies;	/* its reply still to read */
	int			 secret_arg;	/* -v -v shows it shortened */
	int			 secret_span;	/* and the args after it */
	int			 secret_reply;	/* and a string reply (a token) */
	size_t			 secret_from;	/* from this byte of it on */
	char			 server_error[256];	/* last error reply */
	int			 is_connecting;	/* TCP, then TLS handshake */
	int			 is_silent;	/* nothing read on it yet */
	struct tls_conn		*tls;
	int			 tls_want_write;
	int			 is_done;
	int64_t			 deadline_ns;
	int64_t			 cap_ns;
	int64_t			 block_ns;	/* server may hold the reply */
	size_t			 in_bytes;	/* read for this command */
	size_t			 parsed_bytes;	/* its replies' cost so far */
	char			 refused[96];	/* why a reply was refused */
	/* the reader's object functions: hiredis's own, and ours that check
	 * each value first (conn_reader_new()) */
	redisReplyObjectFunctions fn_hiredis;
	redisReplyObjectFunctions fn_checked;
	int64_t			 started_ns;	/* this command's start */
	int			 result;
	redisReply		*reply;
	char			 err[512];
};

/* conn.c */
void	 conn_fail(struct conn *, int, const char *, ...) printflike(3, 4);
const char *conn_host(const struct conn *);
char	*conn_hostport(const char *, const char *, int);
int	 conn_parse_port(const char *, const char **);
void	 conn_node_free(struct conn_node *);
void	 conn_probe_free(struct conn *);

/* conn-connect.c */
enum conn_verdict conn_start_connect(struct conn *);
enum conn_verdict conn_on_connecting(struct conn *);

/* conn-resolve.c */
int	 conn_lookup_start(struct conn *, const char *, int);
int	 conn_lookup_readable(struct conn *);
void	 conn_lookup_abort(struct conn *);
void	 conn_addrs_free(struct conn *);

/* conn-sentinel.c */
enum conn_verdict conn_probe_begin(struct conn *, int, int64_t);
enum conn_verdict conn_probe_step(struct conn *);

/* conn-redirect.c */
enum conn_verdict conn_redirect(struct conn *);
void	 conn_node_set(struct conn *, struct conn_node *, char *, int);

/* conn-io.c */
void	 conn_act(struct conn *, enum conn_verdict);
void	 conn_begin(struct conn *, int, const char **, const size_t *,
	     int64_t);
void	 conn_fail_late(struct conn *);
void	 conn_on_events(struct conn *, short);

/* conn-resp.c */
void	 conn_append(struct conn *, int, const char **, const size_t *);
void	 conn_log_command(struct conn *, int, const char **, const size_t *,
	     int, size_t);

/* conn-bounds.c */
void	 conn_reader_new(struct conn *);
int	 conn_check_pending(struct conn *);

/* conn-reply.c */
enum conn_verdict conn_feed(struct conn *, const char *, size_t);

#endif /* CONN_IMPL_H */
