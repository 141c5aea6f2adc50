/* SPDX-License-Identifier: MIT */
/*
 * Redis Cluster redirects, as a state of the one poll loop of conn-poll.c.
 * A node that does not own the slot of a command's keys answers
 * "MOVED <slot> <host>:<port>" (the slot lives there now: this conn talks
 * to that node from now on) or "ASK <slot> <host>:<port>" (the slot is
 * being migrated: this one command goes there, behind ASKING, and its
 * answer stands; the next command goes back to the conn's own node).
 * conn_redirect() re-targets c->dial; conn-io.c redials and sends the
 * same command again, bounded by the same cap, while the other servers'
 * commands are in flight.  All keys of a lock share one slot, so one
 * node answers for all of them.  The nodes' addresses are the conn's
 * (c->node, c->ask).
 */

#include <stdlib.h>
#include <string.h>

#include "conn-impl.h"

/* Redirects one command may follow. */
#define CONN_MAX_HOPS	5

static int	 conn_redirect_parse(const char *, int *, char **, int *);

/*
 * "MOVED 3999 127.0.0.1:6381" or "ASK 3999 10.0.0.2:6381@16381" (the bus
 * port is checked, not used): *is_ask, the host (allocated; empty means
 * the node asked) and the port.  -1 when it names no usable address.
 */
static int
conn_redirect_parse(const char *text, int *is_ask, char **host, int *port)
{
	const char	*addr, *colon, *end;

	*is_ask = strncmp(text, "ASK ", 4) == 0;
	addr = strchr(text, ' ');
	addr = addr != NULL ? strchr(addr + 1, ' ') : NULL;
	colon = addr != NULL ? strrchr(addr, ':') : NULL;
	if (colon == NULL ||
	    (*port = conn_parse_port(colon + 1, &end)) == -1)
		return (-1);
	if (*end == '@' && conn_parse_port(end + 1, &end) == -1)
		return (-1);
	if (*end != '\0')
		return (-1);
	addr++;
	*host = xasprintf("%.*s", (int)(colon - addr), addr);
	return (0);
}

/*
 * Point n at host:port (host is taken over), with c's credentials; also
 * for the masters that conn-masters.c finds.
 */
void
conn_node_set(struct conn *c, struct conn_node *n, char *host, int port)
{
	conn_node_free(n);
	n->host = host;
	n->url.kind = URL_TCP;
	n->url.host = host;
	n->url.port = port;
	n->url.user = c->url->user;
	n->url.password = c->url->password;
	n->url.is_tls = c->url->is_tls;
	n->url.display = conn_hostport("redis://", host, port);
}

/*
 * A MOVED or ASK came (c failed with CONN_REDIRECT, the text in
 * c->server_error): re-target c->dial and ask for the command to be sent
 * again (CONN_V_RESEND), or let the failure stand (CONN_V_DONE): a
 * redirect that names no usable address, one too many, or one that
 * answers an ASK, which is unavailable (the slot is in no usable state).
 */
enum conn_verdict
conn_redirect(struct conn *c)
{
	char	*host;
	int	 is_ask, port;

	if (c->dial == &c->ask.url) {
		c->result = CONN_UNAVAILABLE;
		return (CONN_V_DONE);
	}
	if (c->hops >= CONN_MAX_HOPS || conn_redirect_parse(c->server_error,
	    &is_ask, &host, &port) == -1)
		return (CONN_V_DONE);
	c->hops++;
	log_debug("%s: %s", c->dial->display, c->server_error);
	if (*host == '\0') {
		free(host);
		host = xstrdup(conn_host(c));
	}
	conn_node_set(c, is_ask ? &c->ask : &c->node, host, port);
	c->dial = is_ask ? &c->ask.url : &c->node.url;
	return (CONN_V_RESEND);
}
