/*
 * The connection layer's own header: struct conn and the functions its
 * files (conn.c, conn-connect.c, conn-io.c, conn-reply.c) share.  Nothing
 * outside the connection layer includes it; the rest of the program sees
 * struct conn as opaque, through redlock.h.
 */

#ifndef CONN_IMPL_H
#define CONN_IMPL_H

#include <sys/socket.h>
#include <sys/un.h>

#include <netdb.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

/* Our replies are tiny; a server sending more than this is broken. */
#define CONN_MAX_REPLY_BYTES	(8 * 1024 * 1024)
/* No reply of ours has more elements (status of a 1e6-slot semaphore). */
#define CONN_MAX_ELEMENTS	(2 * 1000 * 1000 + 16)

/* More addresses than any host has; the rest would never be tried. */
#define CONN_MAX_ADDRS		64

/* One address as a lookup child writes it; addrlen bytes follow. */
struct conn_addr_record {
	int32_t		family;		/* -1: the lookup failed */
	int32_t		socktype;
	int32_t		protocol;	/* family -1: getaddrinfo's code */
	uint32_t	addrlen;
};

enum conn_scan {
	SCAN_TYPE,	/* the next byte starts a value */
	SCAN_LINE,	/* in a header or simple line, up to \n */
	SCAN_BULK	/* in a bulk string's bytes */
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
	char			 lookup_buf[CONN_MAX_ADDRS *
				     (sizeof(struct conn_addr_record) +
				     sizeof(struct sockaddr_storage))];
	struct addrinfo		 unix_ai;	/* unix: addr points here */
	struct sockaddr_un	 unix_sa;

	/* the request in flight */
	char			*out;
	size_t			 out_len;
	size_t			 out_off;
	int			 setup_replies;	/* AUTH/SELECT still to read */
	enum conn_setup		 setup[CONN_MAX_SETUP];
	int			 nsetup;	/* queued, in order */
	int			 want_asking;	/* next command: ASKING */
	int			 sent_asking;	/* this command went so */
	int			 alt_argc;	/* on NOSCRIPT, send this */
	const char		**alt_argv;
	const size_t		*alt_lens;
	char			 server_error[256];	/* last error reply */
	int			 is_connecting;	/* TCP, then TLS handshake */
	struct tls_conn		*tls;
	int			 tls_want_write;
	int			 is_done;
	int64_t			 deadline_ns;
	int64_t			 cap_ns;
	int64_t			 block_ns;	/* server may hold the reply */
	size_t			 in_bytes;
	enum conn_scan		 scan;		/* see conn_scan() */
	char			 scan_type;
	char			 scan_num[24];
	size_t			 scan_len;
	long long		 scan_left;
	int64_t			 started_ns;	/* this command's start */
	int			 result;
	redisReply		*reply;
	char			 err[512];
};

/* conn.c */
void	 conn_fail(struct conn *, int, const char *, ...) printflike(3, 4);

/* conn-connect.c */
int	 conn_start_connect(struct conn *);
int	 conn_find_master(struct conn *, int64_t);
void	 conn_on_connecting(struct conn *);

/* conn-resolve.c */
int	 conn_lookup_start(struct conn *, const char *, int);
int	 conn_lookup_readable(struct conn *);
void	 conn_lookup_abort(struct conn *);
void	 conn_addrs_free(struct conn *);

/* conn-io.c */
void	 conn_begin(struct conn *, int, const char **, const size_t *,
	     int64_t);
void	 conn_on_writable(struct conn *);

/* conn-reply.c */
void	 conn_feed(struct conn *, const char *, size_t);

#endif /* CONN_IMPL_H */
