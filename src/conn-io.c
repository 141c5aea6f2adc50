/* SPDX-License-Identifier: MIT */
/*
 * One connection's request, as a state machine: a command begun
 * (conn_begin), written behind AUTH/SELECT/ROLE or ASKING, its bytes
 * read and fed to the reply parser, its deadlines turned into failures,
 * and every verdict of the steps below carried out (conn_act).  The
 * poll loop over all connections in flight is conn-poll.c's; what the
 * bytes of a command are, conn-resp.c's.
 */

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conn-impl.h"

static void	 conn_reset(struct conn *, int64_t);
static void	 conn_append_setup(struct conn *);
static void	 conn_append_lead(struct conn *);
static enum conn_verdict conn_send(struct conn *);
static enum conn_verdict conn_check_connect(struct conn *);
static void	 conn_on_writable(struct conn *);
static void	 conn_on_readable(struct conn *);
static void	 conn_io_failed(struct conn *, const char *, const char *);
static void	 conn_fail_connect(struct conn *);
static int	 conn_may_be_tls(const struct conn *);
static void	 conn_fail_closed(struct conn *);

/*
 * Start the command on c: ask the sentinels first (conn-sentinel.c), then
 * send it.  argv and lens must live until the poll loop is done.
 */
void
conn_begin(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t cap_ns)
{
	if (c->dial == &c->ask.url) {
		/* The ASK of the last command is over: back to our node. */
		conn_close(c);
		c->dial = c->node.url.display != NULL ? &c->node.url : c->url;
	}
	conn_reset(c, cap_ns);
	c->cmd_argc = argc;
	c->cmd_argv = argv;
	c->cmd_lens = lens;
	c->is_fallback = 0;
	c->hops = 0;
	if (c->url->kind == URL_SENTINEL) {
		if (c->fd != -1) {
			c->probe_was_host = xstrdup(c->master.host);
			c->probe_was_port = c->master.port;
		} else
			c->dial = c->url;
		conn_act(c, conn_probe_begin(c, c->fd != -1, cap_ns));
		return;
	}
	conn_act(c, conn_send(c));
}

/*
 * Do what a step below asked (enum conn_verdict), and what that leads to,
 * until c waits for the poll loop or is done.
 */
void
conn_act(struct conn *c, enum conn_verdict v)
{
	for (;;) {
		switch (v) {
		case CONN_V_PENDING:
		case CONN_V_DONE:
			return;
		case CONN_V_WRITE:
			conn_on_writable(c);
			return;
		case CONN_V_FALLBACK:
			/* The script itself, on this connection, now: the
			 * other servers' answers are not waited for. */
			conn_reset(c, c->cap_ns);
			c->is_fallback = 1;
			conn_act(c, conn_send(c));
			/* Bytes already read would be the start of its
			 * answer. */
			v = c->is_done ? CONN_V_DONE : conn_feed(c, "", 0);
			break;
		case CONN_V_REDIRECT:
			v = conn_redirect(c);
			break;
		case CONN_V_RESEND:
			conn_close(c);
			conn_reset(c, c->cap_ns);
			c->is_fallback = 0;
			v = conn_send(c);
			break;
		case CONN_V_PROBE:
			conn_begin(c->probe, 3, c->probe_argv, c->probe_lens,
			    c->probe_cap_ns);
			/* A sentinel that could not even be dialled is done
			 * already. */
			v = c->probe->is_done ? conn_probe_step(c) :
			    CONN_V_PENDING;
			break;
		case CONN_V_SEND:
			v = conn_send(c);
			break;
		}
	}
}

/* A new request on c: no reply, no error yet. */
static void
conn_reset(struct conn *c, int64_t cap_ns)
{
	c->out_len = c->out_off = 0;
	c->is_written = 0;
	c->setup_replies = 0;
	c->is_done = 0;
	c->in_bytes = 0;
	c->parsed_bytes = 0;
	c->refused[0] = '\0';
	c->started_ns = clock_mono_ns();
	c->result = CONN_OK;
	c->err[0] = '\0';
	if (c->reply != NULL)
		freeReplyObject(c->reply);
	c->reply = NULL;
	c->cap_ns = cap_ns;
}

/* Queue AUTH, SELECT and ROLE in front of a new connection's command. */
static void
conn_append_setup(struct conn *c)
{
	const char	*password, *user, *av[3];
	size_t		 al[3];
	char		 db[16];
	int		 n = 0;

	password = c->dial->password != NULL ? c->dial->password :
	    c->conf.password;
	user = c->dial->user != NULL ? c->dial->user : c->conf.user;
	if (password != NULL) {
		av[n] = "AUTH";
		al[n++] = 4;
		if (user != NULL) {
			av[n] = user;
			al[n++] = strlen(user);
		}
		av[n] = password;
		al[n++] = strlen(password);
		conn_append(c, n, av, al);
		log_debug("%s: > AUTH%s%s ***", c->dial->display,
		    user != NULL ? " " : "", user != NULL ? user : "");
		c->setup[c->nsetup++] = SETUP_AUTH;
	}
	if (c->dial->db != 0) {
		(void)snprintf(db, sizeof(db), "%d", c->dial->db);
		av[0] = "SELECT";
		al[0] = 6;
		av[1] = db;
		al[1] = strlen(db);
		conn_append(c, 2, av, al);
		log_debug("%s: > SELECT %s", c->dial->display, db);
		c->setup[c->nsetup++] = SETUP_SELECT;
	}
	if (c->url->kind == URL_SENTINEL) {
		/* A master demoted since the sentinels answered must not
		 * take a lock. */
		av[0] = "ROLE";
		al[0] = 4;
		conn_append(c, 1, av, al);
		c->setup[c->nsetup++] = SETUP_ROLE;
	}
}

/* Queue the lead (conn_set_lead()) in front of the command. */
static void
conn_append_lead(struct conn *c)
{
	struct conn_lead	*ld = c->lead;

	conn_append(c, ld->argc, ld->argv, ld->lens);
	conn_log_command(c, ld->argc, ld->argv, ld->lens, ld->secret_arg,
	    ld->secret_from);
	c->lead_replies = 1;
}

/*
 * Queue c's command (behind AUTH/SELECT on a new connection, behind
 * ASKING during an ASK) and start: connect, or write on a kept
 * connection.
 */
static enum conn_verdict
conn_send(struct conn *c)
{
	const char	*av[1] = { "ASKING" };
	size_t		 al[1] = { 6 };
	int64_t		 now = clock_mono_ns();
	enum conn_verdict v;

	c->out_len = c->out_off = 0;
	c->nsetup = 0;
	if (c->fd == -1) {
		c->deadline_ns = now +
		    clock_ms_to_ns(c->conf.connect_timeout_ms);
		conn_append_setup(c);
		conn_reader_new(c);
		c->is_silent = 1;
	} else
		c->deadline_ns = now + clock_ms_to_ns(c->conf.io_timeout_ms) +
		    c->block_ns;
	c->deadline_ns = clock_sooner(c->deadline_ns, c->cap_ns);
	if (c->dial == &c->ask.url) {
		conn_append(c, 1, av, al);
		c->setup[c->nsetup++] = SETUP_ASKING;
	}
	c->setup_replies = c->nsetup;
	c->lead_replies = 0;
	if (c->lead != NULL && c->lead->result == -1 && !c->is_fallback)
		conn_append_lead(c);
	if (c->is_fallback) {
		conn_append(c, c->alt_argc, c->alt_argv, c->alt_lens);
		conn_log_command(c, c->alt_argc, c->alt_argv, c->alt_lens,
		    c->secret_arg, c->secret_from);
	} else {
		conn_append(c, c->cmd_argc, c->cmd_argv, c->cmd_lens);
		conn_log_command(c, c->cmd_argc, c->cmd_argv, c->cmd_lens,
		    c->secret_arg, c->secret_from);
	}
	if (c->fd != -1)
		return (CONN_V_WRITE);
	v = conn_start_connect(c);
	return (v == CONN_V_PENDING && !c->is_looking_up ?
	    conn_check_connect(c) : v);
}

/*
 * A TCP connection to a nearby server is often up by the time connect()
 * returns.  Look at once: the request then reaches the server before it
 * has even woken up to accept the connection, so it does both in one go
 * instead of being woken twice, which counts when several servers share
 * a few cores with us.
 */
static enum conn_verdict
conn_check_connect(struct conn *c)
{
	struct pollfd pfd;

	pfd.fd = c->fd;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	return (poll(&pfd, 1, 0) == 1 ? conn_on_connecting(c) :
	    CONN_V_PENDING);
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
			if (errno != EAGAIN && errno != EINTR)
				conn_io_failed(c, "write", err);
			return;
		}
		c->out_off += (size_t)n;
		c->is_written = 1;
	}
}

/*
 * The deadline came while connecting.  It may be the caller's cap rather
 * than the connect timeout: say how long it really had.
 */
static void
conn_fail_connect(struct conn *c)
{
	char	tbuf[32];
	int64_t	ms = (c->deadline_ns - c->started_ns) / 1000000;

	duration_format(ms > 0 ? ms : 0, tbuf, sizeof(tbuf));
	if (c->is_looking_up)
		conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: the name "
		    "lookup did not answer within %s", c->dial->display, tbuf);
	else if (c->tls != NULL)
		/* A plain port reads our ClientHello as a command line that
		 * never ends, and waits: the usual cause. */
		conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: no "
		    "answer to the TLS handshake within %s (not a TLS port? "
		    "try redis://)", c->dial->display, tbuf);
	else
		conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: timed "
		    "out after %s", c->dial->display, tbuf);
}

/* The deadline came: connecting, or waiting for the reply. */
void
conn_fail_late(struct conn *c)
{
	char	tbuf[32];
	int64_t	ms;

	if (c->is_connecting) {
		conn_fail_connect(c);
		return;
	}
	/* The window it really had: a cap may have cut the I/O timeout. */
	ms = c->deadline_ns > c->started_ns ? (c->deadline_ns -
	    c->started_ns) / 1000000 : 0;
	duration_format(ms, tbuf, sizeof(tbuf));
	conn_fail(c, CONN_UNAVAILABLE, "%s: no reply within %s",
	    c->dial->display, tbuf);
}

/*
 * A connection for a redis:// URL that the server closed before answering
 * a byte: it may well be a TLS port that could make no sense of our
 * request (Redis resets such a connection).  A sentinel's is not told to
 * try rediss://: its URL has no such form.
 */
static int
conn_may_be_tls(const struct conn *c)
{
	return (c->is_silent && c->tls == NULL && c->url->kind == URL_TCP &&
	    strncmp(c->url->display, "redis://", 8) == 0);
}

static void
conn_fail_closed(struct conn *c)
{
	conn_fail(c, CONN_UNAVAILABLE, "%s: connection closed by the server%s",
	    c->dial->display, conn_may_be_tls(c) ?
	    " (is it a TLS port? try rediss://)" : "");
}

/* A read or write failed: TLS has said why in tls_err, a socket in errno. */
static void
conn_io_failed(struct conn *c, const char *what, const char *tls_err)
{
	if (conn_may_be_tls(c) && (errno == ECONNRESET || errno == EPIPE))
		conn_fail_closed(c);
	else if (c->tls != NULL)
		conn_fail(c, CONN_UNAVAILABLE, "%s: %s", c->dial->display,
		    tls_err);
	else
		conn_fail(c, CONN_UNAVAILABLE, "%s: %s failed: %s",
		    c->dial->display, what, strerror(errno));
}

static void
conn_on_readable(struct conn *c)
{
	char			 buf[16384], err[sizeof(c->err)];
	ssize_t			 n;
	enum conn_verdict	 v;

	for (;;) {
		if (c->tls != NULL)
			n = tls_read(c->tls, buf, sizeof(buf),
			    &c->tls_want_write, err, sizeof(err));
		else
			n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == -1) {
			if (errno != EAGAIN && errno != EINTR)
				conn_io_failed(c, "read", err);
			return;
		}
		if (n == 0) {
			conn_fail_closed(c);
			return;
		}
		c->is_silent = 0;
		v = conn_feed(c, buf, (size_t)n);
		if (v != CONN_V_PENDING) {
			conn_act(c, v);
			return;
		}
	}
}

/* What poll() saw on c's descriptor. */
void
conn_on_events(struct conn *c, short revents)
{
	if (c->is_connecting) {
		conn_act(c, conn_on_connecting(c));
		return;
	}
	if (revents & (POLLOUT | POLLERR | POLLHUP) && c->out_off < c->out_len)
		conn_on_writable(c);
	if (!c->is_done && c->fd != -1 &&
	    revents & (POLLIN | POLLERR | POLLHUP))
		conn_on_readable(c);
}

