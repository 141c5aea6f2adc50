/* SPDX-License-Identifier: MIT */
/*
 * The connection layer: the only code that owns sockets (conn*.c).
 *
 * A conn is one Redis server reached by TCP or a unix socket.  It is opened
 * lazily by the first command, non-blocking, with a deadline; AUTH and
 * SELECT are pipelined in front of that first command so that a fresh
 * connection costs one round trip, not three.  Commands are written as
 * RESP arrays of bulk strings from an argv (binary-safe, never a format
 * string built from user input: conn_append) and replies parsed by
 * hiredis's redisReader; hiredis's redisContext is not used, so the
 * transport (and TLS under it) stays ours.
 *
 * conn_command_many() sends one command to several servers and waits for
 * all of them in one poll() loop, so N servers cost one round trip, not N.
 *
 * After any transport failure the socket is closed and the next command
 * reconnects: a stream in an unknown state is never reused.
 *
 * This file: a conn's life and its accessors, the bottom of the layer
 * (conn-impl.h has who calls whom).  Opening: conn-connect.c; a
 * command's steps: conn-io.c, its bytes: conn-resp.c, the poll loop:
 * conn-poll.c; replies: conn-reply.c, and the bounds on what they may
 * cost: conn-bounds.c; sentinels: conn-sentinel.c; Cluster redirects:
 * conn-redirect.c, a Cluster's masters: conn-masters.c; TLS under all of
 * them: tls.c.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn-impl.h"

struct conn *
conn_new(const struct redis_url *url, const struct conn_config *conf)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->url = url;
	c->dial = url;
	c->conf = *conf;
	c->fd = -1;
	c->lookup_fd = -1;
	c->lookup_pid = -1;
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
	c->is_connecting = 0;
	if (c->reader != NULL)
		redisReaderFree(c->reader);
	c->reader = NULL;
	/* The addresses stay for the next connection: conn-resolve.c. */
	conn_lookup_abort(c);
	conn_probe_free(c);
}

/*
 * Drop the question to a sentinel under way, if any (with the socket, or
 * when the question is over: conn-sentinel.c).
 */
void
conn_probe_free(struct conn *c)
{
	conn_free(c->probe);
	c->probe = NULL;
	free(c->probe_url.display);
	memset(&c->probe_url, 0, sizeof(c->probe_url));
	free(c->probe_was_host);
	c->probe_was_host = NULL;
	c->is_probing = 0;
}

void
conn_node_free(struct conn_node *n)
{
	free(n->host);
	free(n->url.display);
	memset(n, 0, sizeof(*n));
}

void
conn_free(struct conn *c)
{
	if (c == NULL)
		return;
	conn_close(c);
	conn_addrs_free(c);
	conn_node_free(&c->node);
	conn_node_free(&c->ask);
	free(c->master_host);
	free(c->out);
	free(c->lookup_buf);
	if (c->reply != NULL)
		freeReplyObject(c->reply);
	free(c);
}

const char *
conn_error(const struct conn *c)
{
	return (c->err);
}

/*
 * Whether the last request may have reached the server: some of it went
 * out.  One that never did (no connection, a TLS handshake that never
 * ended) cannot have run there.
 */
int
conn_may_have_run(const struct conn *c)
{
	return (c->is_written);
}

/* The server c stands for: its URL, or the node a MOVED named. */
const char *
conn_display(const struct conn *c)
{
	return (c->node.url.display != NULL ? c->node.url.display :
	    c->url->display);
}

/*
 * A port (1..65535) at s, digits only, as a server names one (MOVED, a
 * sentinel's answer); *end is set after it.  -1 if bad.
 */
int
conn_parse_port(const char *s, const char **end)
{
	char	*e;
	long	 port;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	port = strtol(s, &e, 10);
	if (errno != 0 || port < 1 || port > 65535)
		return (-1);
	*end = e;
	return ((int)port);
}

/*
 * How an address reads in messages: prefix, then host:port, or
 * [host]:port for an IPv6 address.  Allocated.
 */
char *
conn_hostport(const char *prefix, const char *host, int port)
{
	return (xasprintf(strchr(host, ':') != NULL ? "%s[%s]:%d" :
	    "%s%s:%d", prefix, host, port));
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
	case CONN_NO_SCRIPTS:
		return (EXIT_UNAVAILABLE);
	default:
		return (EXIT_PROTOCOL);
	}
}

/* Whether the server was found to lack any of what (enum conn_lack). */
int
conn_lacks(const struct conn *c, int what)
{
	return ((c->lacks & what) != 0);
}

void
conn_set_lacks(struct conn *c, int what)
{
	c->lacks |= what;
}

/* The server's own words when it refused scripts ('' if it did not). */
const char *
conn_lack_why(const struct conn *c)
{
	return (c->lack_why);
}

/*
 * A failure found above the connection layer (scripts-native.c: a mode
 * that needs the scripts the server refuses), recorded as the layer's own.
 */
void
conn_set_error(struct conn *c, int result, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->result = result;
}

/* Record a failure; transport failures also close the socket. */
void
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

/* The host this connection dials (for TLS, and a MOVED that names none). */
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

/*
 * For the next command only (conn_command_many() clears it): send lead
 * ahead of it (see struct conn_lead).  lead->result and reply are set
 * here, and when its reply comes.
 */
void
conn_set_lead(struct conn *c, struct conn_lead *lead)
{
	lead->is_stopped = 0;
	lead->result = -1;
	lead->reply = NULL;
	c->lead = lead;
}

/*
 * Whether c may take a lead: one server of its own, the same one for the
 * whole request (no sentinel to ask first, no cluster redirect to follow,
 * both of which would resend the command without it).
 */
int
conn_can_lead(const struct conn *c)
{
	return ((c->url->kind == URL_TCP || c->url->kind == URL_UNIX) &&
	    c->dial == c->url);
}

/*
 * For the next command only: its argument i (0: none) is a secret from
 * byte `from` on, shown shortened by -v -v (the token, which would let
 * anyone release the lock; a fair waiter's wake key ends with it).
 */
void
conn_set_secret(struct conn *c, int i, size_t from)
{
	c->secret_arg = i;
	c->secret_from = from;
}

/*
 * For the next command only: arguments first to first + n - 1 are keys
 * whose names end with a token (the poke script's), each shown shortened
 * by -v -v, from its start.
 */
void
conn_set_secret_span(struct conn *c, int first, int n)
{
	c->secret_arg = first;
	c->secret_from = 0;
	c->secret_span = n;
}

/* For the next command only: a string reply is a token (GET of a lock). */
void
conn_set_secret_reply(struct conn *c)
{
	c->secret_reply = 1;
}

/* The hiredis this binary was built against ("1.2.0"), for --version. */
#define CONN_STR(x)	CONN_STR_(x)
#define CONN_STR_(x)	#x
const char *
conn_hiredis_version(void)
{
	return (CONN_STR(HIREDIS_MAJOR) "." CONN_STR(HIREDIS_MINOR) "."
	    CONN_STR(HIREDIS_PATCH));
}
