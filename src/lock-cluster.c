/* SPDX-License-Identifier: MIT */
/*
 * Redis Cluster redirects, for lock_call().
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static struct conn *lock_redirect_conn(struct lock *, size_t, int *);

/*
 * The connection a MOVED or ASK from server i leads to (it replaces the
 * server's own for a MOVED; *is_ask: a one-off, the caller frees it), or
 * NULL when the redirect names no usable address.
 */
static struct conn *
lock_redirect_conn(struct lock *l, size_t i, int *is_ask)
{
	const struct redis_url	*given = &l->opts->urls[i < l->opts->nurls ?
				    i : 0];
	const char		*text, *addr, *colon;
	struct lock_node	*node;
	struct redis_url	*u;
	struct conn		*c;
	long long		 port;
	char			*end;

	text = conn_server_error(l->conns[i]);
	*is_ask = strncmp(text, "ASK ", 4) == 0;
	addr = strchr(text, ' ');
	addr = addr != NULL ? strchr(addr + 1, ' ') : NULL;
	colon = addr != NULL ? strrchr(addr, ':') : NULL;
	if (colon == NULL)
		return (NULL);
	errno = 0;
	port = strtoll(colon + 1, &end, 10);
	if (errno != 0 || end == colon + 1 || (*end != '\0' && *end != '@') ||
	    port <= 0 || port > 65535)
		return (NULL);
	addr++;
	node = xcalloc(1, sizeof(*node));
	u = &node->url;
	u->kind = URL_TCP;
	/* An empty host means "the one you asked". */
	node->host = colon > addr ? xasprintf("%.*s", (int)(colon - addr),
	    addr) : xstrdup(conn_host(l->conns[i]));
	u->host = node->host;
	u->port = (int)port;
	u->is_tls = given->is_tls;
	u->user = given->user;
	u->password = given->password;
	u->display = xasprintf(strchr(u->host, ':') != NULL ?
	    "redis://[%s]:%d" : "redis://%s:%d", u->host, u->port);
	l->nodes = xreallocarray(l->nodes, l->nnodes + 1, sizeof(*l->nodes));
	l->nodes[l->nnodes++] = node;
	log_debug("%s: %s", conn_display(l->conns[i]), text);
	c = conn_new(u, &l->conf);
	if (*is_ask)
		conn_set_asking(c);
	else {
		conn_free(l->conns[i]);
		l->conns[i] = c;
	}
	return (c);
}

/*
 * Redis Cluster: a server that does not own the lock's slot answers
 * "MOVED <slot> <host>:<port>" (the slot lives there now: talk to that node
 * from now on) or "ASK <slot> <host>:<port>" (the slot is being migrated:
 * ask that node once, behind ASKING).  All keys of a lock share one slot,
 * so one node answers for all of them.  Every server redirected in a hop
 * is asked again in one round, in parallel, each bounded by cap_ns; a few
 * hops at most.
 */
void
lock_follow_redirects(struct lock *l, struct script *s, int nkeys,
    int nargs, const char **args, const size_t *lens, int64_t cap_ns,
    struct lock_round *rd)
{
	struct conn	**cs;
	size_t		 *at, i, n;
	int		 *asks, *results, hops, is_ask;
	redisReply	**replies;

	cs = xcalloc(l->nconns, sizeof(*cs));
	at = xcalloc(l->nconns, sizeof(*at));
	asks = xcalloc(l->nconns, sizeof(*asks));
	replies = xcalloc(l->nconns, sizeof(*replies));
	results = xcalloc(l->nconns, sizeof(*results));
	for (hops = 0; hops < 5; hops++) {
		for (i = 0, n = 0; i < l->nconns; i++) {
			if (rd->results[i] != CONN_REDIRECT ||
			    (cs[n] = lock_redirect_conn(l, i, &is_ask)) ==
			    NULL)
				continue;
			asks[n] = is_ask;
			at[n++] = i;
		}
		if (n == 0)
			break;
		script_call_many(cs, n, s, nkeys, nargs, args, lens, cap_ns,
		    replies, results);
		for (i = 0; i < n; i++) {
			if (rd->replies[at[i]] != NULL)
				freeReplyObject(rd->replies[at[i]]);
			rd->replies[at[i]] = replies[i];
			rd->results[at[i]] = results[i];
			if (!asks[i])
				continue;
			/* An ASK is followed once: its answer stands. */
			if (results[i] != CONN_OK)
				conn_copy_error(l->conns[at[i]], cs[i]);
			if (results[i] == CONN_REDIRECT)
				rd->results[at[i]] = CONN_UNAVAILABLE;
			conn_free(cs[i]);
		}
	}
	free(cs);
	free(at);
	free(asks);
	free(replies);
	free(results);
}
