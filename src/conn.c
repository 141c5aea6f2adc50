/*
 * The connection layer: the only code that owns sockets.
 *
 * A conn is one Redis server reached by TCP or a unix socket.  It is opened
 * lazily by the first command, non-blocking, with a deadline; AUTH and
 * SELECT are pipelined in front of that first command so that a fresh
 * connection costs one round trip, not three.  Commands are formatted by
 * hiredis's redisFormatCommandArgv (binary-safe argv, never a format string
 * built from user input) and replies parsed by its redisReader; hiredis's
 * redisContext is not used, so the transport (and TLS under it) stays ours.
 *
 * conn_command_many() sends one command to several servers and waits for
 * all of them in one poll() loop, so N servers cost one round trip, not N.
 *
 * After any transport failure the socket is closed and the next command
 * reconnects: a stream in an unknown state is never reused.
 */

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

/* Our replies are tiny; a server sending more than this is broken. */
#define CONN_MAX_REPLY_BYTES	(8 * 1024 * 1024)

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
	int			 is_ready;	/* AUTH and SELECT done */
	redisReader		*reader;
	struct addrinfo		*addrs;
	struct addrinfo		*addr;		/* being tried */
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
	int			 result;
	redisReply		*reply;
	char			 err[512];
};

static void	 conn_fail(struct conn *, int, const char *, ...)
		     printflike(3, 4);
static void	 conn_append(struct conn *, int, const char **,
		     const size_t *);
static int	 conn_start_connect(struct conn *);
static int	 conn_try_addr(struct conn *);
static void	 conn_ready(struct conn *);
static void	 conn_on_connecting(struct conn *);
static int	 conn_resolve(struct conn *);
static int	 conn_find_master(struct conn *);
static void	 conn_connected(struct conn *);
static void	 conn_begin(struct conn *, int, const char **,
		     const size_t *, int64_t);
static void	 conn_on_writable(struct conn *);
static void	 conn_on_readable(struct conn *);
static void	 conn_feed(struct conn *, const char *, size_t);
static void	 conn_on_reply(struct conn *, redisReply *);
static int	 conn_classify_error(const char *, size_t);
static void	 conn_log_command(struct conn *, int, const char **,
		     const size_t *);
static void	 conn_timeout_text(int64_t, char *, size_t);

struct conn *
conn_new(const struct redis_url *url, const struct conn_config *conf)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->url = url;
	c->dial = url;
	c->conf = *conf;
	c->fd = -1;
	return (c);
}

void
conn_close(struct conn *c)
{
	if (c->fd != -1)
		(void)close(c->fd);
	tls_free(c->tls);
	c->tls = NULL;
	c->tls_want_write = 0;
	c->fd = -1;
	c->is_ready = 0;
	c->is_connecting = 0;
	if (c->reader != NULL)
		redisReaderFree(c->reader);
	c->reader = NULL;
	if (c->addrs != NULL)
		freeaddrinfo(c->addrs);
	c->addrs = c->addr = NULL;
}

void
conn_free(struct conn *c)
{
	if (c == NULL)
		return;
	conn_close(c);
	free(c->master_host);
	free(c->out);
	if (c->reply != NULL)
		freeReplyObject(c->reply);
	free(c);
}

const char *
conn_error(const struct conn *c)
{
	return (c->err);
}

const char *
conn_display(const struct conn *c)
{
	return (c->url->display);
}

/* How a conn_result reads as an exit status. */
int
conn_exit_code(int result)
{
	switch (result) {
	case CONN_OK:
		return (EXIT_OK);
	case CONN_AUTH:
		return (EXIT_NOPERM);
	case CONN_UNAVAILABLE:
	case CONN_TRANSIENT:
		return (EXIT_UNAVAILABLE);
	default:
		return (EXIT_PROTOCOL);
	}
}

/* Record a failure; transport failures also close the socket. */
static void
conn_fail(struct conn *c, int result, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->result = result;
	c->is_done = 1;
	if (result == CONN_UNAVAILABLE || result == CONN_PROTOCOL ||
	    result == CONN_AUTH)
		conn_close(c);
}

static void
conn_timeout_text(int64_t ms, char *buf, size_t len)
{
	duration_format(ms, buf, len);
}

/* Append one formatted command to the output buffer. */
static void
conn_append(struct conn *c, int argc, const char **argv, const size_t *lens)
{
	char		*cmd = NULL;
	long long	 n;

	/* Returns int in hiredis 0.14 and long long in 1.x. */
	n = redisFormatCommandArgv(&cmd, argc, argv, lens);
	if (n < 0 || cmd == NULL)
		fatalx(EXIT_UNAVAILABLE, "out of memory");
	c->out = xreallocarray(c->out, c->out_len + (size_t)n, 1);
	memcpy(c->out + c->out_len, cmd, (size_t)n);
	c->out_len += (size_t)n;
	redisFreeCommand(cmd);
}

static void
conn_log_command(struct conn *c, int argc, const char **argv,
    const size_t *lens)
{
	char	 line[1024], arg[128];
	size_t	 used = 0;
	int	 i, n;

	if (log_verbosity < 2)
		return;
	line[0] = '\0';
	for (i = 0; i < argc && used < sizeof(line) - 1; i++) {
		/* Script bodies are long and secret-free; show their start. */
		log_sanitize(arg, lens[i] > 40 && i == 1 &&
		    strcasecmp(argv[0], "EVAL") == 0 ? 44 : sizeof(arg),
		    argv[i], lens[i]);
		n = snprintf(line + used, sizeof(line) - used, "%s%s",
		    i ? " " : "", arg);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	log_debug("%s: > %s", c->url->display, line);
}

/* Resolve the current seed (the one host of a plain URL) into c->addrs. */
static int
conn_resolve(struct conn *c)
{
	struct addrinfo	 hints;
	const char	*host = c->dial->kind == URL_CLUSTER ?
			    c->dial->hosts[c->seed].host : c->dial->host;
	char		 port[16];
	int		 rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	(void)snprintf(port, sizeof(port), "%d", c->dial->kind == URL_CLUSTER ?
	    c->dial->hosts[c->seed].port : c->dial->port);
	if (c->addrs != NULL)
		freeaddrinfo(c->addrs);
	c->addrs = c->addr = NULL;
	if ((rc = getaddrinfo(host, port, &hints, &c->addrs)) != 0) {
		c->addrs = NULL;
		(void)snprintf(c->err, sizeof(c->err), "cannot connect to %s: "
		    "cannot resolve host: %s", c->url->display,
		    gai_strerror(rc));
		return (-1);
	}
	c->addr = c->addrs;
	return (0);
}

/*
 * Open the socket and start a non-blocking connect to the next address;
 * when a host's addresses are used up, a cluster URL's next seed.
 */
static int
conn_try_addr(struct conn *c)
{
	int one = 1;

	for (;;) {
		for (; c->addr != NULL; c->addr = c->addr->ai_next) {
			c->fd = socket(c->addr->ai_family,
			    c->addr->ai_socktype | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, c->addr->ai_protocol);
			if (c->fd == -1)
				continue;
			if (c->dial->kind != URL_UNIX &&
			    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one)) == -1) {
				(void)close(c->fd);
				c->fd = -1;
				continue;
			}
			if (connect(c->fd, c->addr->ai_addr,
			    c->addr->ai_addrlen) == 0) {
				conn_connected(c);
				return (0);
			}
			if (errno == EINPROGRESS || errno == EAGAIN) {
				c->is_connecting = 1;
				return (0);
			}
			(void)snprintf(c->err, sizeof(c->err),
			    "cannot connect to %s: %s", c->url->display,
			    strerror(errno));
			(void)close(c->fd);
			c->fd = -1;
		}
		if (c->dial->kind != URL_CLUSTER)
			return (-1);
		do {
			if (++c->seed >= c->dial->nhosts)
				return (-1);
		} while (conn_resolve(c) == -1);
	}
}

/*
 * Sentinel: ask the sentinels, in the order given, where the master named
 * in the URL is now, and dial that.  Done for every new connection, so a
 * failover is followed as soon as the old master fails us once.
 */
static int
conn_find_master(struct conn *c)
{
	struct redis_url	 su;
	struct conn_config	 sconf = c->conf;
	struct conn		*sc;
	redisReply		*r;
	const char		*argv[3] = { "SENTINEL", "get-master-addr-by-name",
				     c->url->master_name };
	size_t			 lens[3], i;
	char			 last[sizeof(c->err)] = "no sentinel answered";
	int			 result;

	for (i = 0; i < 3; i++)
		lens[i] = strlen(argv[i]);
	/* Sentinels have their own credentials, if any. */
	sconf.password = getenv("REDLOCK_SENTINEL_PASSWORD");
	if (sconf.password != NULL && *sconf.password == '\0')
		sconf.password = NULL;
	sconf.user = getenv("REDLOCK_SENTINEL_USER");
	if (sconf.user != NULL && *sconf.user == '\0')
		sconf.user = NULL;
	for (i = 0; i < c->url->nhosts; i++) {
		memset(&su, 0, sizeof(su));
		su.kind = URL_TCP;
		su.host = c->url->hosts[i].host;
		su.port = c->url->hosts[i].port;
		su.display = xasprintf(strchr(su.host, ':') != NULL ?
		    "sentinel [%s]:%d" : "sentinel %s:%d", su.host, su.port);
		sc = conn_new(&su, &sconf);
		r = NULL;
		result = conn_command(sc, 3, argv, lens, c->cap_ns, &r);
		if (result == CONN_OK && r->type == REDIS_REPLY_ARRAY &&
		    r->elements == 2 &&
		    r->element[0]->type == REDIS_REPLY_STRING &&
		    r->element[1]->type == REDIS_REPLY_STRING) {
			free(c->master_host);
			c->master_host = xmalloc(r->element[0]->len + 1);
			memcpy(c->master_host, r->element[0]->str,
			    r->element[0]->len);
			c->master_host[r->element[0]->len] = '\0';
			c->master = *c->url;
			c->master.kind = URL_TCP;
			c->master.host = c->master_host;
			c->master.port = atoi(r->element[1]->str);
			c->dial = &c->master;
			log_debug("%s: master '%s' is at %s:%d", su.display,
			    c->url->master_name, c->master.host,
			    c->master.port);
		} else if (result == CONN_OK)
			(void)snprintf(last, sizeof(last), "%s does not know "
			    "master '%s'", su.display, c->url->master_name);
		else
			(void)snprintf(last, sizeof(last), "%s",
			    conn_error(sc));
		if (r != NULL)
			freeReplyObject(r);
		conn_free(sc);
		free(su.display);
		if (c->dial == &c->master)
			return (0);
	}
	(void)snprintf(c->err, sizeof(c->err), "%s: cannot find the master: "
	    "%.300s", c->url->display, last);
	return (-1);
}

static int
conn_start_connect(struct conn *c)
{
	int rc;

	c->err[0] = '\0';
	if (c->url->kind == URL_SENTINEL) {
		c->dial = c->url;
		if (conn_find_master(c) == -1) {
			char msg[sizeof(c->err)];

			memcpy(msg, c->err, sizeof(msg));
			conn_fail(c, CONN_UNAVAILABLE, "%s", msg);
			return (-1);
		}
		/* Asking took time of its own: the master gets a full
		 * connect timeout. */
		c->deadline_ns = clock_mono_ns() +
		    clock_ms_to_ns(c->conf.connect_timeout_ms);
		if (c->cap_ns > 0 && c->cap_ns < c->deadline_ns)
			c->deadline_ns = c->cap_ns;
	}
	if (c->dial->kind == URL_UNIX) {
		if (strlen(c->dial->path) >= sizeof(c->unix_sa.sun_path)) {
			conn_fail(c, CONN_UNAVAILABLE,
			    "cannot connect to %s: socket path too long",
			    c->url->display);
			return (-1);
		}
		memset(&c->unix_sa, 0, sizeof(c->unix_sa));
		c->unix_sa.sun_family = AF_UNIX;
		memcpy(c->unix_sa.sun_path, c->dial->path,
		    strlen(c->dial->path) + 1);
		memset(&c->unix_ai, 0, sizeof(c->unix_ai));
		c->unix_ai.ai_family = AF_UNIX;
		c->unix_ai.ai_socktype = SOCK_STREAM;
		c->unix_ai.ai_addr = (struct sockaddr *)&c->unix_sa;
		c->unix_ai.ai_addrlen = sizeof(c->unix_sa);
		c->addr = &c->unix_ai;
		rc = conn_try_addr(c);
	} else {
		/* A cluster URL lists seeds: the first that answers will do. */
		c->seed = 0;
		rc = conn_resolve(c);
		while (rc == -1 && c->dial->kind == URL_CLUSTER &&
		    ++c->seed < c->dial->nhosts)
			rc = conn_resolve(c);
		if (rc == 0)
			rc = conn_try_addr(c);
	}
	if (rc == -1) {
		char msg[sizeof(c->err)];

		(void)snprintf(msg, sizeof(msg), "%s", c->err[0] ? c->err :
		    "cannot connect");
		conn_fail(c, CONN_UNAVAILABLE, "%s", msg);
		return (-1);
	}
	return (0);
}

/*
 * The TCP connection is up: start TLS if this URL wants it (the handshake
 * counts against the connect timeout), else get going.
 */
static void
conn_connected(struct conn *c)
{
	char err[sizeof(c->err)];

	if (c->addrs != NULL)
		freeaddrinfo(c->addrs);
	c->addrs = c->addr = NULL;
	if (c->url->is_tls || c->conf.use_tls) {
		if ((c->tls = tls_new(c->fd, conn_host(c), err,
		    sizeof(err))) == NULL) {
			conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: "
			    "%s", c->url->display, err);
			return;
		}
		c->is_connecting = 1;
		conn_on_connecting(c);
		return;
	}
	conn_ready(c);
}

/* Connected (and TLS done): the I/O timeout bounds the exchange. */
static void
conn_ready(struct conn *c)
{
	int64_t now = clock_mono_ns();

	c->is_connecting = 0;
	c->deadline_ns = now + clock_ms_to_ns(c->conf.io_timeout_ms) +
	    c->block_ns;
	if (c->cap_ns > 0 && c->cap_ns < c->deadline_ns)
		c->deadline_ns = c->cap_ns;
}

/* Progress on a connection under way: TCP connect, then TLS handshake. */
static void
conn_on_connecting(struct conn *c)
{
	char		err[sizeof(c->err)];
	int		soerr = 0, rc;
	socklen_t	len = sizeof(soerr);

	if (c->tls != NULL) {
		rc = tls_handshake(c->tls, &c->tls_want_write, err,
		    sizeof(err));
		if (rc == 1) {
			log_debug("%s: TLS established", c->url->display);
			conn_ready(c);
			conn_on_writable(c);
		} else if (rc == -1)
			conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: "
			    "%s", c->url->display, err);
		return;
	}
	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1)
		soerr = errno;
	if (soerr != 0) {
		(void)snprintf(c->err, sizeof(c->err), "cannot connect to %s: "
		    "%s", c->url->display, strerror(soerr));
		(void)close(c->fd);
		c->fd = -1;
		c->addr = c->addr->ai_next;
		if (conn_try_addr(c) == -1) {
			memcpy(err, c->err, sizeof(err));
			conn_fail(c, CONN_UNAVAILABLE, "%s", err);
		}
		return;
	}
	conn_connected(c);
	if (!c->is_done && !c->is_connecting)
		conn_on_writable(c);
}

/* Queue the command (behind AUTH/SELECT on a new connection) and start. */
static void
conn_begin(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t cap_ns)
{
	const char	*password, *user;
	const char	*av[3];
	size_t		 al[3];
	char		 db[16];
	int64_t		 now = clock_mono_ns();

	c->out_len = c->out_off = 0;
	c->setup_replies = 0;
	c->is_done = 0;
	c->in_bytes = 0;
	c->result = CONN_OK;
	c->err[0] = '\0';
	if (c->reply != NULL)
		freeReplyObject(c->reply);
	c->reply = NULL;
	c->cap_ns = cap_ns;

	c->nsetup = 0;
	/*
	 * Sentinel: nobody tells the clients of a master that a failover
	 * replaced it, and it keeps taking writes until Sentinel demotes it
	 * seconds later.  So before every command on a kept connection, ask
	 * again, and move when the master moved.  (When the sentinels cannot
	 * be asked, carry on: ROLE and READONLY still guard.)
	 */
	if (c->fd != -1 && c->url->kind == URL_SENTINEL) {
		char	*was = xstrdup(c->master.host);
		int	 port = c->master.port;

		if (conn_find_master(c) == 0 &&
		    (strcmp(was, c->master.host) != 0 ||
		    port != c->master.port)) {
			log_debug("%s: the master moved to %s:%d",
			    c->url->display, c->master.host, c->master.port);
			conn_close(c);
		}
		c->err[0] = '\0';
		free(was);
	}
	if (c->fd == -1) {
		c->deadline_ns = now +
		    clock_ms_to_ns(c->conf.connect_timeout_ms);
		if (cap_ns > 0 && cap_ns < c->deadline_ns)
			c->deadline_ns = cap_ns;
		password = c->url->password != NULL ? c->url->password :
		    c->conf.password;
		user = c->url->user != NULL ? c->url->user : c->conf.user;
		if (password != NULL) {
			int n = 0;

			av[n] = "AUTH";
			al[n++] = 4;
			if (user != NULL) {
				av[n] = user;
				al[n] = strlen(user);
				n++;
			}
			av[n] = password;
			al[n] = strlen(password);
			n++;
			conn_append(c, n, av, al);
			log_debug("%s: > AUTH%s%s ***", c->url->display,
			    user != NULL ? " " : "", user != NULL ? user : "");
			c->setup[c->nsetup++] = SETUP_AUTH;
		}
		if (c->url->db != 0) {
			(void)snprintf(db, sizeof(db), "%d", c->url->db);
			av[0] = "SELECT";
			al[0] = 6;
			av[1] = db;
			al[1] = strlen(db);
			conn_append(c, 2, av, al);
			log_debug("%s: > SELECT %s", c->url->display, db);
			c->setup[c->nsetup++] = SETUP_SELECT;
		}
		if (c->url->kind == URL_SENTINEL) {
			/* A master demoted since the sentinels answered
			 * must not take a lock. */
			av[0] = "ROLE";
			al[0] = 4;
			conn_append(c, 1, av, al);
			c->setup[c->nsetup++] = SETUP_ROLE;
		}
		if ((c->reader = redisReaderCreate()) == NULL)
			fatalx(EXIT_UNAVAILABLE, "out of memory");
	} else {
		c->deadline_ns = now + clock_ms_to_ns(c->conf.io_timeout_ms) +
		    c->block_ns;
		if (cap_ns > 0 && cap_ns < c->deadline_ns)
			c->deadline_ns = cap_ns;
	}
	c->sent_asking = c->want_asking;
	if (c->want_asking) {
		av[0] = "ASKING";
		al[0] = 6;
		conn_append(c, 1, av, al);
		c->setup[c->nsetup++] = SETUP_ASKING;
		c->want_asking = 0;
	}
	c->setup_replies = c->nsetup;
	conn_append(c, argc, argv, lens);
	conn_log_command(c, argc, argv, lens);
	if (c->fd == -1)
		(void)conn_start_connect(c);
}

/* The host this connection dials (for a MOVED that names no host). */
const char *
conn_host(const struct conn *c)
{
	return (c->dial->kind == URL_UNIX ? "localhost" : c->dial->host);
}

/*
 * For the next command only: if the server answers NOSCRIPT, send this
 * instead at once (EVAL after EVALSHA).
 */
void
conn_set_fallback(struct conn *c, int argc, const char **argv,
    const size_t *lens)
{
	c->alt_argc = argc;
	c->alt_argv = argv;
	c->alt_lens = lens;
}

/* Cluster ASK: send ASKING in front of the next command. */
void
conn_set_asking(struct conn *c)
{
	c->want_asking = 1;
}

/* The text of the last error reply (for MOVED and ASK), sanitized. */
const char *
conn_server_error(const struct conn *c)
{
	return (c->server_error);
}

static void
conn_on_writable(struct conn *c)
{
	char	err[sizeof(c->err)];
	ssize_t	n;

	while (c->out_off < c->out_len) {
		if (c->tls != NULL)
			n = tls_write(c->tls, c->out + c->out_off, c->out_len -
			    c->out_off, &c->tls_want_write, err, sizeof(err));
		else
			n = send(c->fd, c->out + c->out_off, c->out_len -
			    c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			if (c->tls != NULL)
				conn_fail(c, CONN_UNAVAILABLE, "%s: %s",
				    c->url->display, err);
			else
				conn_fail(c, CONN_UNAVAILABLE, "%s: write "
				    "failed: %s", c->url->display,
				    strerror(errno));
			return;
		}
		c->out_off += (size_t)n;
	}
}

static void
conn_on_readable(struct conn *c)
{
	char	 buf[16384], err[sizeof(c->err)];
	ssize_t	 n;

	for (;;) {
		if (c->tls != NULL)
			n = tls_read(c->tls, buf, sizeof(buf),
			    &c->tls_want_write, err, sizeof(err));
		else
			n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			if (c->tls != NULL)
				conn_fail(c, CONN_UNAVAILABLE, "%s: %s",
				    c->url->display, err);
			else
				conn_fail(c, CONN_UNAVAILABLE, "%s: read "
				    "failed: %s", c->url->display,
				    strerror(errno));
			return;
		}
		if (n == 0) {
			conn_fail(c, CONN_UNAVAILABLE,
			    "%s: connection closed by the server",
			    c->url->display);
			return;
		}
		conn_feed(c, buf, (size_t)n);
		if (c->is_done)
			return;
	}
}

/*
 * Bytes from the server: parse every complete reply in them.  The only
 * place server bytes are interpreted (tests/fuzz drives it directly).
 */
static void
conn_feed(struct conn *c, const char *buf, size_t n)
{
	void *r;

	c->in_bytes += n;
	if (c->in_bytes > CONN_MAX_REPLY_BYTES) {
		conn_fail(c, CONN_PROTOCOL, "%s: protocol error: reply too "
		    "large", c->url->display);
		return;
	}
	if (redisReaderFeed(c->reader, buf, n) != REDIS_OK)
		fatalx(EXIT_UNAVAILABLE, "out of memory");
	for (;;) {
		r = NULL;
		if (redisReaderGetReply(c->reader, &r) != REDIS_OK) {
			char text[128];

			log_sanitize(text, sizeof(text), c->reader->errstr,
			    strlen(c->reader->errstr));
			conn_fail(c, CONN_PROTOCOL, "%s: protocol error: %s",
			    c->url->display, text);
			return;
		}
		if (r == NULL)
			return;
		conn_on_reply(c, r);
		if (c->is_done)
			return;
	}
}

/* Map an error reply's first word to a conn_result. */
static int
conn_classify_error(const char *s, size_t len)
{
	static const struct {
		const char	*word;
		int		 result;
	} words[] = {
		{ "NOAUTH", CONN_AUTH },
		{ "WRONGPASS", CONN_AUTH },
		{ "NOPERM", CONN_AUTH },
		{ "NOSCRIPT", CONN_NOSCRIPT },
		{ "LOADING", CONN_TRANSIENT },
		{ "BUSY", CONN_TRANSIENT },
		{ "TRYAGAIN", CONN_TRANSIENT },
		{ "MASTERDOWN", CONN_TRANSIENT },
		{ "MOVED", CONN_REDIRECT },
		{ "ASK", CONN_REDIRECT },
		{ NULL, 0 }
	};
	size_t	 wl, i;

	for (i = 0; words[i].word != NULL; i++) {
		wl = strlen(words[i].word);
		if (len >= wl && memcmp(s, words[i].word, wl) == 0 &&
		    (len == wl || s[wl] == ' '))
			return (words[i].result);
	}
	return (CONN_SERVER_ERROR);
}

static void
conn_on_reply(struct conn *c, redisReply *r)
{
	char	text[256];
	int	result;

	if (r->type == REDIS_REPLY_ERROR)
		log_sanitize(text, sizeof(text), r->str, r->len);
	if (c->setup_replies > 0) {
		enum conn_setup what = c->setup[c->nsetup -
		    c->setup_replies--];

		if (r->type == REDIS_REPLY_ERROR) {
			result = conn_classify_error(r->str, r->len);
			freeReplyObject(r);
			if (result == CONN_AUTH)
				conn_fail(c, CONN_AUTH,
				    "%s: authentication failed: %s",
				    c->url->display, text);
			else
				/* AUTH, SELECT or ASKING refused. */
				conn_fail(c, CONN_PROTOCOL, "%s: %s",
				    c->url->display, text);
			return;
		}
		if (what == SETUP_ROLE && (r->type != REDIS_REPLY_ARRAY ||
		    r->elements < 1 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    strcmp(r->element[0]->str, "master") != 0)) {
			freeReplyObject(r);
			/* Mid-failover: ask the sentinels again. */
			conn_fail(c, CONN_TRANSIENT, "%s: %s:%d is no longer "
			    "the master", c->url->display, c->dial->host,
			    c->dial->port);
			conn_close(c);
			return;
		}
		freeReplyObject(r);
		return;
	}
	c->is_ready = 1;
	if (r->type == REDIS_REPLY_ERROR) {
		result = conn_classify_error(r->str, r->len);
		freeReplyObject(r);
		(void)snprintf(c->server_error, sizeof(c->server_error), "%s",
		    text);
		if (result == CONN_NOSCRIPT && c->alt_argc > 0) {
			/*
			 * Send the script itself on this connection now,
			 * without waiting for the other servers' answers.
			 */
			int argc = c->alt_argc;

			c->alt_argc = 0;
			/* An ASK still applies to the EVAL that follows. */
			c->want_asking = c->sent_asking;
			conn_begin(c, argc, c->alt_argv, c->alt_lens,
			    c->cap_ns);
			conn_on_writable(c);
			return;
		}
		if (result == CONN_SERVER_ERROR &&
		    strncmp(text, "READONLY ", 9) == 0 &&
		    c->url->kind == URL_SENTINEL) {
			/* The master we knew was demoted: find the new one. */
			conn_fail(c, CONN_TRANSIENT, "%s: %s",
			    c->url->display, text);
			conn_close(c);
			return;
		}
		if (result == CONN_SERVER_ERROR && strstr(text,
		    "Protocol error: unauthenticated") != NULL)
			/* Redis refuses a long request before AUTH with this
			 * instead of NOAUTH: it means the same. */
			conn_fail(c, CONN_AUTH, "%s: authentication required: "
			    "%s", c->url->display, text);
		else if (result == CONN_SERVER_ERROR && strstr(text,
		    "user executing the script can't run") != NULL)
			/* Redis 7.0's answer for a command refused by ACL
			 * inside a script: it is a permission problem. */
			conn_fail(c, CONN_AUTH, "%s: permission denied to a "
			    "command inside the lock script (see ACCESS "
			    "CONTROL in redlock-cli(1)): %s", c->url->display,
			    text);
		else if (result == CONN_AUTH && strncmp(text, "NOPERM", 6) == 0)
			conn_fail(c, result, "%s: permission denied: %s",
			    c->url->display, text);
		else if (result == CONN_AUTH)
			conn_fail(c, result,
			    "%s: authentication required: %s",
			    c->url->display, text);
		else
			conn_fail(c, result, "%s: %s", c->url->display, text);
		return;
	}
	if (log_verbosity >= 2) {
		if (r->type == REDIS_REPLY_INTEGER)
			log_debug("%s: < %lld", c->url->display, r->integer);
		else if (r->type == REDIS_REPLY_ARRAY)
			log_debug("%s: < (array of %zu)", c->url->display,
			    (size_t)r->elements);
		else if (r->type == REDIS_REPLY_NIL)
			log_debug("%s: < (nil)", c->url->display);
		else if (r->type == REDIS_REPLY_STRING ||
		    r->type == REDIS_REPLY_STATUS) {
			log_sanitize(text, sizeof(text), r->str, r->len);
			log_debug("%s: < %s", c->url->display, text);
		}
	}
	c->reply = r;
	c->result = CONN_OK;
	c->is_done = 1;
}

/*
 * Send the same command to n servers at once and wait in one poll() loop
 * until `need` of them have answered without error (n: all of them), each
 * bounded by its own connect and I/O timeouts (the I/O timeout counts from
 * the end of block_ns, the time a blocking command such as BLPOP may
 * legitimately take) and by cap_ns, an absolute CLOCK_MONOTONIC deadline
 * (0: none).  Servers still pending when enough have answered are
 * disconnected.  replies[i] gets the reply (the caller frees it) or NULL;
 * results[i] a conn_result, with the message in conn_error(cs[i]).
 */
void
conn_command_many(struct conn **cs, size_t n, size_t need, int argc,
    const char **argv, const size_t *lens, int64_t block_ns, int64_t cap_ns,
    redisReply **replies, int *results)
{
	struct pollfd	*pfd;
	size_t		 i, active, answered;
	int64_t		 now, wait_ns, ms;
	char		 tbuf[32];
	int		 rc;

	pfd = xcalloc(n, sizeof(*pfd));
	for (i = 0; i < n; i++) {
		cs[i]->block_ns = block_ns;
		conn_begin(cs[i], argc, argv, lens, cap_ns);
		/* Push what we can now: the common case is done in one go. */
		if (!cs[i]->is_done && !cs[i]->is_connecting)
			conn_on_writable(cs[i]);
	}
	for (;;) {
		now = clock_mono_ns();
		wait_ns = -1;
		active = answered = 0;
		for (i = 0; i < n; i++)
			if (cs[i]->is_done && cs[i]->result == CONN_OK)
				answered++;
		for (i = 0; i < n; i++) {
			struct conn *c = cs[i];

			pfd[i].fd = -1;
			pfd[i].events = 0;
			pfd[i].revents = 0;
			if (c->is_done)
				continue;
			if (answered >= need) {
				conn_fail(c, CONN_UNAVAILABLE, "%s: not waited "
				    "for", c->url->display);
				conn_close(c);
				continue;
			}
			if (now >= c->deadline_ns) {
				if (c->is_connecting) {
					ms = c->conf.connect_timeout_ms;
					conn_timeout_text(ms, tbuf,
					    sizeof(tbuf));
					conn_fail(c, CONN_UNAVAILABLE,
					    "cannot connect to %s: timed out "
					    "after %s", c->url->display, tbuf);
				} else {
					ms = c->conf.io_timeout_ms;
					conn_timeout_text(ms, tbuf,
					    sizeof(tbuf));
					conn_fail(c, CONN_UNAVAILABLE,
					    "%s: no reply within %s",
					    c->url->display, tbuf);
				}
				continue;
			}
			pfd[i].fd = c->fd;
			if (c->is_connecting && c->tls != NULL)
				pfd[i].events = c->tls_want_write ? POLLOUT :
				    POLLIN;
			else if (c->is_connecting)
				pfd[i].events = POLLOUT;
			else
				pfd[i].events = POLLIN |
				    (c->out_off < c->out_len ||
				    c->tls_want_write ? POLLOUT : 0);
			if (wait_ns == -1 || c->deadline_ns - now < wait_ns)
				wait_ns = c->deadline_ns - now;
			active++;
		}
		if (active == 0)
			break;
		/* Round up so that we never wake just before a deadline. */
		rc = poll(pfd, n, (int)((wait_ns + 999999) / 1000000));
		if (rc == -1) {
			if (errno == EINTR)
				continue;
			fatal(EXIT_UNAVAILABLE, "poll");
		}
		for (i = 0; i < n; i++) {
			struct conn *c = cs[i];

			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (c->is_connecting) {
				conn_on_connecting(c);
				continue;
			}
			if (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP) &&
			    c->out_off < c->out_len)
				conn_on_writable(c);
			if (!c->is_done && !c->is_connecting &&
			    c->fd != -1 &&
			    pfd[i].revents & (POLLIN | POLLERR | POLLHUP))
				conn_on_readable(c);
		}
	}
	for (i = 0; i < n; i++) {
		replies[i] = cs[i]->reply;
		cs[i]->reply = NULL;
		results[i] = cs[i]->result;
		cs[i]->block_ns = 0;
		cs[i]->alt_argc = 0;
	}
	free(pfd);
}

/* One command to one server; see conn_command_many(). */
int
conn_command(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t cap_ns, redisReply **reply)
{
	int result;

	conn_command_many(&c, 1, 1, argc, argv, lens, 0, cap_ns, reply,
	    &result);
	return (result);
}
