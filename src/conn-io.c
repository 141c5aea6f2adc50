/* SPDX-License-Identifier: MIT */
/*
 * Sending commands and waiting for replies: one poll() loop over every
 * connection in flight, each bounded by its own deadlines.
 */

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conn-impl.h"

static void	 conn_append(struct conn *, int, const char **,
		     const size_t *);
static void	 conn_log_command(struct conn *, int, const char **,
		     const size_t *);
static void	 conn_on_readable(struct conn *);
static void	 conn_io_failed(struct conn *, const char *, const char *);
static void	 conn_check_connect(struct conn *);
static void	 conn_append_setup(struct conn *);
static void	 conn_reset(struct conn *, int, const char **,
		     const size_t *, int64_t);
static void	 conn_on_events(struct conn *, short);
static void	 conn_fail_connect(struct conn *);

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

/*
 * Start the command on c: ask the sentinels first (conn-sentinel.c), then
 * conn_send().  argv and lens must live until the poll loop is done.
 */
void
conn_begin(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t cap_ns)
{
	conn_reset(c, argc, argv, lens, cap_ns);
	if (c->url->kind == URL_SENTINEL) {
		if (c->fd != -1) {
			c->probe_was_host = xstrdup(c->master.host);
			c->probe_was_port = c->master.port;
		} else
			c->dial = c->url;
		conn_probe_begin(c, c->fd != -1, cap_ns);
		return;
	}
	conn_send(c);
}

/*
 * NOSCRIPT: send the script itself on this connection now, without
 * waiting for the other servers' answers or asking the sentinels again.
 */
void
conn_resend(struct conn *c, int argc, const char **argv, const size_t *lens)
{
	conn_reset(c, argc, argv, lens, c->cap_ns);
	conn_send(c);
}

/* A new command on c: no reply, no error yet. */
static void
conn_reset(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t cap_ns)
{
	c->out_len = c->out_off = 0;
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
	c->cmd_argc = argc;
	c->cmd_argv = argv;
	c->cmd_lens = lens;
}

/* Queue AUTH, SELECT and ROLE in front of a new connection's command. */
static void
conn_append_setup(struct conn *c)
{
	const char	*password, *user, *av[3];
	size_t		 al[3];
	char		 db[16];
	int		 n = 0;

	password = c->url->password != NULL ? c->url->password :
	    c->conf.password;
	user = c->url->user != NULL ? c->url->user : c->conf.user;
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
		/* A master demoted since the sentinels answered must not
		 * take a lock. */
		av[0] = "ROLE";
		al[0] = 4;
		conn_append(c, 1, av, al);
		c->setup[c->nsetup++] = SETUP_ROLE;
	}
}

/*
 * Queue c's command (behind AUTH/SELECT on a new connection) and start:
 * connect, or write on a kept connection.
 */
void
conn_send(struct conn *c)
{
	const char	*av[1];
	size_t		 al[1];
	int64_t		 now = clock_mono_ns();

	c->out_len = c->out_off = 0;
	c->nsetup = 0;
	if (c->fd == -1) {
		c->deadline_ns = now +
		    clock_ms_to_ns(c->conf.connect_timeout_ms);
		conn_append_setup(c);
		conn_reader_new(c);
	} else
		c->deadline_ns = now + clock_ms_to_ns(c->conf.io_timeout_ms) +
		    c->block_ns;
	if (c->cap_ns > 0 && c->cap_ns < c->deadline_ns)
		c->deadline_ns = c->cap_ns;
	c->sent_asking = c->want_asking;
	if (c->want_asking) {
		av[0] = "ASKING";
		al[0] = 6;
		conn_append(c, 1, av, al);
		c->setup[c->nsetup++] = SETUP_ASKING;
		c->want_asking = 0;
	}
	c->setup_replies = c->nsetup;
	conn_append(c, c->cmd_argc, c->cmd_argv, c->cmd_lens);
	conn_log_command(c, c->cmd_argc, c->cmd_argv, c->cmd_lens);
	if (c->fd == -1 && conn_start_connect(c) == 0 && c->is_connecting &&
	    !c->is_looking_up)
		conn_check_connect(c);
	/* Push what we can now: the common case is done in one go. */
	if (!c->is_done && !c->is_connecting && c->fd != -1)
		conn_on_writable(c);
}

/*
 * A TCP connection to a nearby server is often up by the time connect()
 * returns.  Look at once: the request then reaches the server before it
 * has even woken up to accept the connection, so it does both in one go
 * instead of being woken twice, which counts when several servers share
 * a few cores with us.
 */
static void
conn_check_connect(struct conn *c)
{
	struct pollfd pfd;

	pfd.fd = c->fd;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) == 1)
		conn_on_connecting(c);
}

void
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
		    "lookup did not answer within %s", c->url->display, tbuf);
	else
		conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: timed "
		    "out after %s", c->url->display, tbuf);
}

/* A read or write failed: TLS has said why in tls_err, a socket in errno. */
static void
conn_io_failed(struct conn *c, const char *what, const char *tls_err)
{
	if (c->tls != NULL)
		conn_fail(c, CONN_UNAVAILABLE, "%s: %s", c->url->display,
		    tls_err);
	else
		conn_fail(c, CONN_UNAVAILABLE, "%s: %s failed: %s",
		    c->url->display, what, strerror(errno));
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
			if (errno != EAGAIN && errno != EINTR)
				conn_io_failed(c, "read", err);
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
 * Send the same command to n servers at once and wait in one poll() loop
 * until `need` of them have answered without error (n: all of them), each
 * bounded by its own connect and I/O timeouts (the I/O timeout counts from
 * the end of block_ns, the time a blocking command such as BZPOPMIN may
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
			/* While the sentinels are asked, wait on that. */
			if (c->is_probing)
				c = c->probe;
			if (c != cs[i] && c->is_done) {
				conn_probe_step(cs[i]);
				i--;
				continue;
			}
			if (now >= c->deadline_ns) {
				if (c->is_connecting) {
					conn_fail_connect(c);
				} else {
					/* The window it really had: a cap
					 * may have cut the I/O timeout. */
					ms = c->deadline_ns > c->started_ns ?
					    (c->deadline_ns - c->started_ns) /
					    1000000 : 0;
					duration_format(ms, tbuf,
					    sizeof(tbuf));
					conn_fail(c, CONN_UNAVAILABLE,
					    "%s: no reply within %s",
					    c->url->display, tbuf);
				}
				if (c != cs[i])
					conn_probe_step(cs[i]);
				/* Again from the top: what is next may
				 * have a deadline of its own. */
				i--;
				continue;
			}
			pfd[i].fd = c->fd;
			if (c->is_looking_up) {
				pfd[i].fd = c->lookup_fd;
				pfd[i].events = POLLIN;
			} else if (c->is_connecting && c->tls != NULL)
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
			struct conn *c = cs[i]->is_probing ? cs[i]->probe :
			    cs[i];

			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			conn_on_events(c, pfd[i].revents);
			if (c != cs[i] && c->is_done)
				conn_probe_step(cs[i]);
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

/* What poll() saw on c's descriptor. */
static void
conn_on_events(struct conn *c, short revents)
{
	if (c->is_connecting) {
		conn_on_connecting(c);
		return;
	}
	if (revents & (POLLOUT | POLLERR | POLLHUP) && c->out_off < c->out_len)
		conn_on_writable(c);
	if (!c->is_done && !c->is_connecting && c->fd != -1 &&
	    revents & (POLLIN | POLLERR | POLLHUP))
		conn_on_readable(c);
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
