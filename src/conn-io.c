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

static size_t	 conn_resp_len(int, const size_t *);
static size_t	 conn_digits(size_t);
static char	*conn_resp_header(char *, char, size_t);
static void	 conn_append(struct conn *, int, const char **,
		     const size_t *);
static void	 conn_log_secret(char *, size_t, const char *, size_t,
		     size_t);
static void	 conn_log_command(struct conn *, int, const char **,
		     const size_t *, int, size_t);
static void	 conn_begin(struct conn *, int, const char **,
		     const size_t *, int64_t);
static void	 conn_reset(struct conn *, int64_t);
static void	 conn_append_setup(struct conn *);
static void	 conn_append_lead(struct conn *);
static void	 conn_stop(struct conn *);
static enum conn_verdict conn_send(struct conn *);
static enum conn_verdict conn_check_connect(struct conn *);
static void	 conn_on_writable(struct conn *);
static void	 conn_on_readable(struct conn *);
static void	 conn_on_events(struct conn *, short);
static void	 conn_io_failed(struct conn *, const char *, const char *);
static void	 conn_fail_connect(struct conn *);
static void	 conn_fail_late(struct conn *);
static int	 conn_may_be_tls(const struct conn *);
static void	 conn_fail_closed(struct conn *);
static struct conn *conn_waited(struct conn *);
static int	 conn_poll_set(struct conn *, struct pollfd *, int64_t,
		     int64_t *);

/* Append one formatted command to the output buffer. */
static void
conn_append(struct conn *c, int argc, const char **argv, const size_t *lens)
{
	size_t	 n = conn_resp_len(argc, lens);
	char	*p;
	int	 i;

	c->out = xreallocarray(c->out, c->out_len + n, 1);
	p = c->out + c->out_len;
	p = conn_resp_header(p, '*', (size_t)argc);
	for (i = 0; i < argc; i++) {
		p = conn_resp_header(p, '$', lens[i]);
		memcpy(p, argv[i], lens[i]);
		p += lens[i];
		*p++ = '\r';
		*p++ = '\n';
	}
	c->out_len += n;
}

/*
 * The bytes of a command in RESP, an array of bulk strings: "*ARGC\r\n",
 * then "$LEN\r\nARG\r\n" for each.  Written here rather than by hiredis's
 * redisFormatCommandArgv, whose sprintf for every header was a tenth of an
 * acquire's instructions, the lock's keys and arguments being many.
 */
static size_t
conn_resp_len(int argc, const size_t *lens)
{
	size_t	n = 1 + conn_digits((size_t)argc) + 2;
	int	i;

	for (i = 0; i < argc; i++)
		n += 1 + conn_digits(lens[i]) + 2 + lens[i] + 2;
	return (n);
}

static size_t
conn_digits(size_t v)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return (n);
}

/* "<kind><v>\r\n" at p; returns the end. */
static char *
conn_resp_header(char *p, char kind, size_t v)
{
	size_t	n = conn_digits(v), i;

	*p++ = kind;
	for (i = n; i > 0; i--) {
		p[i - 1] = (char)('0' + v % 10);
		v /= 10;
	}
	p += n;
	*p++ = '\r';
	*p++ = '\n';
	return (p);
}

/*
 * A secret argument, for -v -v: its public start (secret_from bytes),
 * then the secret cut.
 */
static void
conn_log_secret(char *dst, size_t dstlen, const char *arg, size_t len,
    size_t secret_from)
{
	size_t from = secret_from < len ? secret_from : 0;
	size_t used;

	log_sanitize(dst, dstlen, arg, from);
	used = strlen(dst);
	log_shorten(dst + used, dstlen - used, arg + from, len - from);
}

/* -v -v: a command, its argument secret_arg (0: none) cut. */
static void
conn_log_command(struct conn *c, int argc, const char **argv,
    const size_t *lens, int secret_arg, size_t secret_from)
{
	char	 line[1024], arg[128];
	size_t	 used = 0;
	int	 i, n;

	if (log_verbosity < 2)
		return;
	line[0] = '\0';
	for (i = 0; i < argc && used < sizeof(line) - 1; i++) {
		if (i == secret_arg && i > 0)
			conn_log_secret(arg, sizeof(arg), argv[i], lens[i],
			    secret_from);
		else
			/* Script bodies are long and secret-free: show their
			 * start. */
			log_sanitize(arg, lens[i] > 40 && i == 1 &&
			    strcasecmp(argv[0], "EVAL") == 0 ? 44 :
			    sizeof(arg), argv[i], lens[i]);
		n = snprintf(line + used, sizeof(line) - used, "%s%s",
		    i ? " " : "", arg);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	log_debug("%s: > %s", c->dial->display, line);
}

/*
 * Start the command on c: ask the sentinels first (conn-sentinel.c), then
 * send it.  argv and lens must live until the poll loop is done.
 */
static void
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
	else
		conn_fail(c, CONN_UNAVAILABLE, "cannot connect to %s: timed "
		    "out after %s", c->dial->display, tbuf);
}

/* The deadline came: connecting, or waiting for the reply. */
static void
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

/*
 * The conn the poll loop waits on in c's place: while the sentinels are
 * asked, the one to the sentinel asked.  When that is done, its answer
 * is taken first (and may lead to another).
 */
static struct conn *
conn_waited(struct conn *c)
{
	while (c->is_probing && c->probe->is_done)
		conn_act(c, conn_probe_step(c));
	return (c->is_probing ? c->probe : c);
}

/*
 * What to poll for c at now (its deadline may have come: then it fails,
 * and what follows may have a deadline of its own).  Returns 1 with *pfd
 * set and *wait_ns lowered to c's deadline, 0 when c is done.
 */
static int
conn_poll_set(struct conn *c0, struct pollfd *pfd, int64_t now,
    int64_t *wait_ns)
{
	struct conn *c;

	for (;;) {
		c = conn_waited(c0);
		if (c0->is_done)
			return (0);
		if (now < c->deadline_ns)
			break;
		conn_fail_late(c);
	}
	pfd->fd = c->fd;
	if (c->is_looking_up) {
		pfd->fd = c->lookup_fd;
		pfd->events = POLLIN;
	} else if (c->is_connecting && c->tls != NULL)
		pfd->events = c->tls_want_write ? POLLOUT : POLLIN;
	else if (c->is_connecting)
		pfd->events = POLLOUT;
	else
		pfd->events = POLLIN | (c->out_off < c->out_len ||
		    c->tls_want_write ? POLLOUT : 0);
	if (*wait_ns == -1 || c->deadline_ns - now < *wait_ns)
		*wait_ns = c->deadline_ns - now;
	return (1);
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
	struct timespec	 ts;
	size_t		 i, active, answered;
	int64_t		 now, wait_ns;
	/* While a blocking command waits, the caller's signals may end us;
	 * not with a lead, which has a command behind it (conn_set_lead). */
	const sigset_t	*mask = block_ns > 0 && n > 0 ?
			     cs[0]->conf.wait_mask : NULL;
	struct conn_lead *lead = n == 1 ? cs[0]->lead : NULL;

	pfd = xcalloc(n + 1, sizeof(*pfd));
	for (i = 0; i < n; i++) {
		cs[i]->block_ns = block_ns + (cs[i]->lead != NULL ?
		    cs[i]->lead->block_ns : 0);
		conn_begin(cs[i], argc, argv, lens, cap_ns);
	}
	for (;;) {
		now = clock_mono_ns();
		wait_ns = -1;
		for (i = 0, answered = 0; i < n; i++)
			if (cs[i]->is_done && cs[i]->result == CONN_OK)
				answered++;
		for (i = 0, active = 0; i < n; i++) {
			pfd[i].fd = -1;
			pfd[i].events = pfd[i].revents = 0;
			if (!cs[i]->is_done && answered >= need)
				conn_fail(cs[i], CONN_UNAVAILABLE, "%s: not "
				    "waited for", cs[i]->dial->display);
			if (!cs[i]->is_done)
				active += (size_t)conn_poll_set(cs[i], &pfd[i],
				    now, &wait_ns);
		}
		if (active == 0)
			break;
		/* Round up so that we never wake just before a deadline. */
		if (wait_ns >= 0)
			wait_ns = (wait_ns + 999999) / 1000000 * 1000000;
		ts.tv_sec = wait_ns / 1000000000;
		ts.tv_nsec = wait_ns % 1000000000;
		pfd[n].fd = lead != NULL ? lead->stop_fd : -1;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		if (ppoll(pfd, n + 1, wait_ns >= 0 ? &ts : NULL, mask) == -1) {
			if (errno == EINTR)
				continue;
			fatal(EXIT_UNAVAILABLE, "poll");
		}
		for (i = 0; i < n; i++)
			if (pfd[i].fd != -1 && pfd[i].revents != 0)
				conn_on_events(cs[i]->is_probing ?
				    cs[i]->probe : cs[i], pfd[i].revents);
		/* A reply that came with the signal is taken first. */
		if (pfd[n].revents != 0 && !cs[0]->is_done) {
			conn_stop(cs[0]);
			break;
		}
	}
	for (i = 0; i < n; i++) {
		replies[i] = cs[i]->reply;
		cs[i]->reply = NULL;
		results[i] = cs[i]->result;
		cs[i]->block_ns = 0;
		cs[i]->lead = NULL;
		cs[i]->alt_argc = 0;
		cs[i]->secret_arg = 0;
		cs[i]->secret_from = 0;
	}
	free(pfd);
}

/*
 * The lead's stop_fd became readable: give up on c, whose command's
 * outcome is now unknown (the caller makes sure of it elsewhere).
 */
static void
conn_stop(struct conn *c)
{
	c->lead->is_stopped = 1;
	if (!c->is_done)
		conn_fail(c, CONN_UNAVAILABLE, "%s: interrupted",
		    c->dial->display);
	conn_close(c);
}

/* What poll() saw on c's descriptor. */
static void
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

/*
 * The same one command without waiting for it, for a caller that waits on
 * other things too (run's supervisor: signals, and a BZPOPMIN between
 * renewals): conn_start() sends it, conn_pending() says what to poll for
 * (and fails it once its deadline has passed), conn_advance() takes what
 * poll() saw, conn_take() the reply once it is in.  argv and lens must
 * live until then.
 */
void
conn_start(struct conn *c, int argc, const char **argv, const size_t *lens,
    int64_t block_ns, int64_t cap_ns)
{
	c->block_ns = block_ns;
	conn_begin(c, argc, argv, lens, cap_ns);
}

/* 1 with *pfd set and *wait_ns lowered to c's deadline; 0 when done. */
int
conn_pending(struct conn *c, struct pollfd *pfd, int64_t *wait_ns)
{
	return (c->is_done ? 0 : conn_poll_set(c, pfd, clock_mono_ns(),
	    wait_ns));
}

void
conn_advance(struct conn *c, short revents)
{
	if (!c->is_done && revents != 0)
		conn_on_events(c->is_probing ? c->probe : c, revents);
}

/* The result of a command that conn_pending() says is done. */
int
conn_take(struct conn *c, redisReply **reply)
{
	*reply = c->reply;
	c->reply = NULL;
	c->block_ns = 0;
	c->alt_argc = 0;
	c->secret_arg = 0;
	return (c->result);
}
