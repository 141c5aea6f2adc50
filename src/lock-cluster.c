/* SPDX-License-Identifier: MIT */
/*
 * Redis Cluster redirects, for lock_call().
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

/*
 * Redis Cluster: a server that does not own the lock's slot answers
 * "MOVED <slot> <host>:<port>" (the slot lives there now: talk to that node
 * from now on) or "ASK <slot> <host>:<port>" (the slot is being migrated:
 * ask that node once, behind ASKING).  All keys of a lock share one slot,
 * so one node answers for all of them.  Followed a few times at most.
 */
void
lock_follow_redirects(struct lock *l, struct script *s, int nkeys,
    int nargs, const char **args, const size_t *lens, int64_t cap_ns,
    struct lock_round *rd)
{
	const char		*text, *addr, *colon;
	struct lock_node	*node;
	struct redis_url	*u;
	struct conn		*c, *tmp;
	size_t			 i;
	int			 hops, is_ask;

	for (i = 0; i < l->nconns; i++) {
		for (hops = 0; hops < 5 && rd->results[i] == CONN_REDIRECT;
		    hops++) {
			text = conn_server_error(l->conns[i]);
			is_ask = strncmp(text, "ASK ", 4) == 0;
			addr = strchr(text, ' ');
			addr = addr != NULL ? strchr(addr + 1, ' ') : NULL;
			colon = addr != NULL ? strrchr(addr, ':') : NULL;
			if (colon == NULL || atoi(colon + 1) <= 0)
				break;
			addr++;
			node = xcalloc(1, sizeof(*node));
			u = &node->url;
			u->kind = URL_TCP;
			/* An empty host means "the one you asked". */
			node->host = colon > addr ? xasprintf("%.*s",
			    (int)(colon - addr), addr) :
			    xstrdup(conn_host(l->conns[i]));
			u->host = node->host;
			u->port = atoi(colon + 1);
			u->is_tls = l->conns[i] != NULL &&
			    l->opts->urls[i < l->opts->nurls ? i : 0].is_tls;
			u->user = l->opts->urls[i < l->opts->nurls ? i : 0].user;
			u->password = l->opts->urls[i < l->opts->nurls ? i :
			    0].password;
			u->display = xasprintf(strchr(u->host, ':') != NULL ?
			    "redis://[%s]:%d" : "redis://%s:%d", u->host,
			    u->port);
			l->nodes = xreallocarray(l->nodes, l->nnodes + 1,
			    sizeof(*l->nodes));
			l->nodes[l->nnodes++] = node;
			log_debug("%s: %s", conn_display(l->conns[i]), text);
			c = conn_new(u, &l->conf);
			if (is_ask) {
				conn_set_asking(c);
				tmp = c;
			} else {
				conn_free(l->conns[i]);
				l->conns[i] = c;
				tmp = NULL;
			}
			if (rd->replies[i] != NULL)
				freeReplyObject(rd->replies[i]);
			rd->replies[i] = NULL;
			rd->results[i] = script_call(c, s, nkeys, nargs, args,
			    lens, cap_ns, &rd->replies[i]);
			if (tmp != NULL) {
				if (rd->results[i] != CONN_OK)
					conn_copy_error(l->conns[i], tmp);
				conn_free(tmp);
				break;
			}
		}
	}
}
