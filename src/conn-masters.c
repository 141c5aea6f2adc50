/* SPDX-License-Identifier: MIT */
/*
 * The masters of a Redis Cluster, for the commands that must see every
 * key (list: SCAN walks one node's keys only).  A lock's own commands
 * need none of this: they go where MOVED leads.  Above conn-io.c: it
 * sends CLUSTER NODES through conn_command() like any caller.
 */

#include <stdlib.h>
#include <string.h>

#include "conn-impl.h"

static int	 conn_nodes_parse(struct conn *, const char *, size_t,
		     struct conn ***, size_t *);
static int	 conn_nodes_master(struct conn *, char *, struct conn ***,
		     size_t *);

/*
 * One line of CLUSTER NODES: "id host:port@cport[,hostname] flags master
 * ping pong epoch link slot...".  A master that is not failing and serves
 * slots gets a conn (appended to *cs).  Returns -1 if the line makes no
 * sense.
 */
static int
conn_nodes_master(struct conn *c, char *line, struct conn ***cs, size_t *n)
{
	char		*f[9], *save = NULL, *colon, *host;
	const char	*end;
	struct conn	*m;
	size_t		 i;
	int		 port;

	for (i = 0; i < 9; i++)
		if ((f[i] = strtok_r(i == 0 ? line : NULL, " ", &save)) ==
		    NULL)
			return (i >= 8 ? 0 : -1);	/* 8: no slots */
	if (strstr(f[2], "master") == NULL || strstr(f[2], "fail") != NULL ||
	    strstr(f[2], "noaddr") != NULL)
		return (0);
	if ((colon = strrchr(strtok_r(f[1], "@,", &save), ':')) == NULL ||
	    (port = conn_parse_port(colon + 1, &end)) == -1 || *end != '\0')
		return (-1);
	/* A node that knows no address of its own names none. */
	host = colon == f[1] ? xstrdup(conn_host(c)) :
	    xasprintf("%.*s", (int)(colon - f[1]), f[1]);
	m = conn_new(c->url, &c->conf);
	conn_node_set(m, &m->node, host, port);
	m->dial = &m->node.url;
	*cs = xreallocarray(*cs, *n + 1, sizeof(**cs));
	(*cs)[(*n)++] = m;
	return (0);
}

static int
conn_nodes_parse(struct conn *c, const char *text, size_t len,
    struct conn ***cs, size_t *n)
{
	char	*copy = xasprintf("%.*s", (int)len, text), *line, *save = NULL;
	int	 rc = 0;

	for (line = strtok_r(copy, "\n", &save); line != NULL && rc == 0;
	    line = strtok_r(NULL, "\n", &save))
		rc = conn_nodes_master(c, line, cs, n);
	free(copy);
	return (rc);
}

/*
 * The masters of the cluster that c's server is a node of: one new conn
 * to each in *cs (the caller conn_free()s them and frees *cs), *n of
 * them; *n is 0 when the server is not in a cluster (or is reached by a
 * unix socket or through sentinels, which no cluster is).  Returns a
 * conn_result, with the message in conn_error(c).
 */
int
conn_cluster_masters(struct conn *c, int64_t cap_ns, struct conn ***cs,
    size_t *n)
{
	const char	*argv[2] = { "CLUSTER", "NODES" };
	size_t		 lens[2] = { 7, 5 };
	redisReply	*r = NULL;
	int		 result;

	*cs = NULL;
	*n = 0;
	if (c->url->kind == URL_UNIX || c->url->kind == URL_SENTINEL)
		return (CONN_OK);
	result = conn_command(c, 2, argv, lens, cap_ns, &r);
	if (result == CONN_SERVER_ERROR &&
	    strstr(c->server_error, "cluster support disabled") != NULL)
		result = CONN_OK;
	else if (result == CONN_OK && (r->type != REDIS_REPLY_STRING ||
	    conn_nodes_parse(c, r->str, r->len, cs, n) == -1 || *n == 0)) {
		conn_fail(c, CONN_PROTOCOL, "%s: CLUSTER NODES: unexpected "
		    "reply", conn_display(c));
		result = CONN_PROTOCOL;
	}
	if (r != NULL)
		freeReplyObject(r);
	if (result != CONN_OK) {
		while (*n > 0)
			conn_free((*cs)[--(*n)]);
		free(*cs);
		*cs = NULL;
	}
	return (result);
}
