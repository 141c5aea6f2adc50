/* SPDX-License-Identifier: MIT */
/*
 * Opening a connection: resolve, connect without blocking (each address,
 * and a cluster URL's seeds, in turn), ask the sentinels where the master
 * is, then the TLS handshake.  Everything here runs inside the poll loop
 * of conn-io.c and is bounded by the connect timeout.
 */

#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn-impl.h"

static int	 conn_resolve(struct conn *);
static int	 conn_try_addr(struct conn *);
static void	 conn_connected(struct conn *);
static void	 conn_ready(struct conn *);

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
int
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

int
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
	c->started_ns = now;
	c->deadline_ns = now + clock_ms_to_ns(c->conf.io_timeout_ms) +
	    c->block_ns;
	if (c->cap_ns > 0 && c->cap_ns < c->deadline_ns)
		c->deadline_ns = c->cap_ns;
}

/* Progress on a connection under way: TCP connect, then TLS handshake. */
void
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
