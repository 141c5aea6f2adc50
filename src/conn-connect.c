/* SPDX-License-Identifier: MIT */
/*
 * Opening a connection: look the host up (conn-resolve.c), connect without
 * blocking (each address, and a cluster URL's seeds, in turn), then the
 * TLS handshake; the sentinels were asked where the master is before
 * (conn-sentinel.c).  Everything here
 * runs inside the poll loop of conn-poll.c and is bounded by the connect
 * timeout and the caller's cap.
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

static int	 conn_dial_host(struct conn *);
static int	 conn_next_host(struct conn *);
static int	 conn_try_addr(struct conn *);
static int	 conn_connect_result(struct conn *);
static enum conn_verdict conn_connected(struct conn *);
static void	 conn_ready(struct conn *);

/*
 * The static steps below return -1 when the address or host failed
 * (c->err says why, and the next one is tried), else a verdict for
 * conn-io.c: CONN_V_PENDING (under way), CONN_V_WRITE (connected) or
 * CONN_V_DONE (failed for good).
 */

/*
 * Dial the current host (the URL's, or a cluster URL's current seed):
 * look it up (conn-resolve.c), then connect to its addresses in turn.
 */
static int
conn_dial_host(struct conn *c)
{
	const struct url_host	*h = c->dial->kind == URL_CLUSTER ?
				    &c->dial->hosts[c->seed] : NULL;
	int			 rc;

	rc = conn_lookup_start(c, h != NULL ? h->host : c->dial->host,
	    h != NULL ? h->port : c->dial->port);
	if (rc == 1) {
		c->is_connecting = 1;	/* the poll loop waits for it */
		return (CONN_V_PENDING);
	}
	return (rc == 0 ? conn_try_addr(c) : -1);
}

/*
 * The current host failed: its addresses are stale.  A cluster URL lists
 * seeds, and the first that answers will do.
 */
static int
conn_next_host(struct conn *c)
{
	int rc;

	conn_addrs_free(c);
	while (c->dial->kind == URL_CLUSTER && ++c->seed < c->dial->nhosts)
		if ((rc = conn_dial_host(c)) != -1)
			return (rc);
	return (-1);
}

/* Open the socket and start a non-blocking connect to the next address. */
static int
conn_try_addr(struct conn *c)
{
	int one = 1;

	for (; c->addr != NULL; c->addr = c->addr->ai_next) {
		c->fd = socket(c->addr->ai_family, c->addr->ai_socktype |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, c->addr->ai_protocol);
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
		    c->addr->ai_addrlen) == 0)
			return (conn_connected(c));
		if (errno == EINPROGRESS || errno == EAGAIN) {
			c->is_connecting = 1;
			return (CONN_V_PENDING);
		}
		(void)snprintf(c->err, sizeof(c->err),
		    "cannot connect to %s: %s", c->dial->display,
		    strerror(errno));
		(void)close(c->fd);
		c->fd = -1;
	}
	return (-1);
}

/* Start connecting c (conn-io.c has queued the request). */
enum conn_verdict
conn_start_connect(struct conn *c)
{
	int rc;

	c->err[0] = '\0';
	/* A sentinel URL's master (c->dial) is known by now:
	 * conn-sentinel.c asked before conn_send() came here. */
	if (c->dial->kind == URL_UNIX) {
		if (strlen(c->dial->path) >= sizeof(c->unix_sa.sun_path)) {
			conn_fail(c, CONN_UNAVAILABLE,
			    "cannot connect to %s: socket path too long",
			    c->dial->display);
			return (CONN_V_DONE);
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
		c->seed = 0;
		rc = conn_dial_host(c);
		if (rc == -1)
			rc = conn_next_host(c);
	}
	if (rc == -1) {
		char msg[sizeof(c->err)];

		(void)snprintf(msg, sizeof(msg), "%s", c->err[0] ? c->err :
		    "cannot connect");
		conn_fail(c, CONN_UNAVAILABLE, "%s", msg);
		return (CONN_V_DONE);
	}
	return ((enum conn_verdict)rc);
}

/*
 * The TCP connection is up: start TLS if this URL wants it (the handshake
 * counts against the connect timeout), else get going.
 */
static enum conn_verdict
conn_connected(struct conn *c)
{
	char err[sizeof(c->err)];

	if (c->url->is_tls || c->conf.use_tls) {
		if ((c->tls = tls_new(c->fd, conn_host(c), err,
		    sizeof(err))) == NULL) {
			conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: "
			    "%s", c->dial->display, err);
			return (CONN_V_DONE);
		}
		c->is_connecting = 1;
		return (conn_on_connecting(c));
	}
	conn_ready(c);
	return (CONN_V_WRITE);
}

/* Connected (and TLS done): the I/O timeout bounds the exchange. */
static void
conn_ready(struct conn *c)
{
	int64_t now = clock_mono_ns();

	c->is_connecting = 0;
	c->started_ns = now;
	c->deadline_ns = clock_sooner(now + clock_ms_to_ns(
	    c->conf.io_timeout_ms) + c->block_ns, c->cap_ns);
}

/* The non-blocking connect() is over: connected, or the next address. */
static int
conn_connect_result(struct conn *c)
{
	int		soerr = 0;
	socklen_t	len = sizeof(soerr);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1)
		soerr = errno;
	if (soerr == 0)
		return (conn_connected(c));
	(void)snprintf(c->err, sizeof(c->err), "cannot connect to %s: %s",
	    c->dial->display, strerror(soerr));
	(void)close(c->fd);
	c->fd = -1;
	c->addr = c->addr->ai_next;
	return (conn_try_addr(c));
}

/* Progress on a connection under way: lookup, TCP connect, TLS. */
enum conn_verdict
conn_on_connecting(struct conn *c)
{
	char	err[sizeof(c->err)];
	int	rc;

	if (c->tls != NULL) {
		rc = tls_handshake(c->tls, &c->tls_want_write, err,
		    sizeof(err));
		if (rc == 1) {
			log_debug("%s: TLS established", c->dial->display);
			conn_ready(c);
			return (CONN_V_WRITE);
		}
		if (rc == -1) {
			conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: "
			    "%s", c->dial->display, err);
			return (CONN_V_DONE);
		}
		return (CONN_V_PENDING);
	}
	if (c->is_looking_up) {
		if ((rc = conn_lookup_readable(c)) == 1)
			return (CONN_V_PENDING);
		if (rc == 0)
			rc = conn_try_addr(c);
	} else
		rc = conn_connect_result(c);
	if (rc == -1 && (rc = conn_next_host(c)) == -1) {
		memcpy(err, c->err, sizeof(err));
		conn_fail(c, CONN_UNAVAILABLE, "%s", err);
		return (CONN_V_DONE);
	}
	return ((enum conn_verdict)rc);
}
