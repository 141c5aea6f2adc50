/* SPDX-License-Identifier: MIT */
/*
 * Sentinel: where is the master now?  Nobody tells the clients of a
 * master that a failover replaced it, and it keeps taking writes until
 * Sentinel demotes it seconds later; so before every command, on a new
 * connection and on a kept one alike, the sentinels are asked again, in
 * the order the URL gives, until one names the master.
 *
 * The question is a state of the one poll loop of conn-io.c, not a loop
 * of its own: while c->probe (the connection to the sentinel being asked)
 * is in flight, the poll loop waits on it in c's place, and when it is
 * done conn_probe_step() takes the answer, asks the next sentinel, or
 * goes on with c's own command (conn_send).  So the servers of a quorum
 * are asked in parallel, and every question ends by the caller's cap.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn-impl.h"

static void	 conn_probe_ask(struct conn *);
static int	 conn_probe_answer(struct conn *, const redisReply *);
static void	 conn_probe_finish(struct conn *, int);

/*
 * Start asking the sentinels for c's master, before c's command.  On a
 * kept connection (is_recheck) the question gets at most half of what is
 * left to cap_ns: sentinels that stopped answering must not use up the
 * time in which the kept connection can still do its work.
 */
void
conn_probe_begin(struct conn *c, int is_recheck, int64_t cap_ns)
{
	int64_t	now = clock_mono_ns();
	size_t	i;

	c->probe_is_recheck = is_recheck;
	c->probe_cap_ns = is_recheck && cap_ns > now ? now + (cap_ns - now) /
	    2 : cap_ns;
	c->probe_next = 0;
	(void)snprintf(c->probe_last, sizeof(c->probe_last),
	    "no sentinel answered");
	/* Sentinels have their own credentials, if any. */
	c->probe_conf = c->conf;
	c->probe_conf.password = getenv("REDLOCK_SENTINEL_PASSWORD");
	if (c->probe_conf.password != NULL && *c->probe_conf.password == '\0')
		c->probe_conf.password = NULL;
	c->probe_conf.user = getenv("REDLOCK_SENTINEL_USER");
	if (c->probe_conf.user != NULL && *c->probe_conf.user == '\0')
		c->probe_conf.user = NULL;
	c->probe_argv[0] = "SENTINEL";
	c->probe_argv[1] = "get-master-addr-by-name";
	c->probe_argv[2] = c->url->master_name;
	for (i = 0; i < 3; i++)
		c->probe_lens[i] = strlen(c->probe_argv[i]);
	c->is_probing = 1;
	conn_probe_ask(c);
}

/* Ask the next sentinel; with none left, give up (conn_probe_finish). */
static void
conn_probe_ask(struct conn *c)
{
	struct redis_url	*su = &c->probe_url;
	const struct url_host	*h;

	conn_free(c->probe);
	c->probe = NULL;
	free(su->display);
	memset(su, 0, sizeof(*su));
	if (c->probe_next >= c->url->nhosts) {
		conn_probe_finish(c, -1);
		return;
	}
	h = &c->url->hosts[c->probe_next++];
	su->kind = URL_TCP;
	su->host = h->host;
	su->port = h->port;
	su->display = xasprintf(strchr(h->host, ':') != NULL ?
	    "sentinel [%s]:%d" : "sentinel %s:%d", h->host, h->port);
	c->probe = conn_new(su, &c->probe_conf);
	conn_begin(c->probe, 3, c->probe_argv, c->probe_lens,
	    c->probe_cap_ns);
	/* A sentinel that could not even be dialled is done already. */
	if (c->probe->is_done)
		conn_probe_step(c);
	else if (!c->probe->is_connecting)
		conn_on_writable(c->probe);
}

/* A sentinel's answer: 0 when it named the master (now c->dial). */
static int
conn_probe_answer(struct conn *c, const redisReply *r)
{
	long long	 port;
	char		*end;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_STRING) {
		(void)snprintf(c->probe_last, sizeof(c->probe_last), "%s does "
		    "not know master '%s'", c->probe_url.display,
		    c->url->master_name);
		return (-1);
	}
	errno = 0;
	port = strtoll(r->element[1]->str, &end, 10);
	if (errno != 0 || *end != '\0' || port <= 0 || port > 65535) {
		(void)snprintf(c->probe_last, sizeof(c->probe_last), "%s names "
		    "master '%s' at a bad port", c->probe_url.display,
		    c->url->master_name);
		return (-1);
	}
	free(c->master_host);
	c->master_host = xmalloc(r->element[0]->len + 1);
	memcpy(c->master_host, r->element[0]->str, r->element[0]->len);
	c->master_host[r->element[0]->len] = '\0';
	c->master = *c->url;
	c->master.kind = URL_TCP;
	c->master.host = c->master_host;
	c->master.port = (int)port;
	c->dial = &c->master;
	log_debug("%s: master '%s' is at %s:%d", c->probe_url.display,
	    c->url->master_name, c->master.host, c->master.port);
	return (0);
}

/*
 * The sentinel being asked is done (answered, failed or timed out): take
 * its answer, or ask the next one.
 */
void
conn_probe_step(struct conn *c)
{
	struct conn	*p = c->probe;
	redisReply	*r = p->reply;

	if (p->result == CONN_OK && r != NULL) {
		if (conn_probe_answer(c, r) == 0) {
			conn_probe_finish(c, 0);
			return;
		}
	} else
		(void)snprintf(c->probe_last, sizeof(c->probe_last), "%s",
		    p->err);
	conn_probe_ask(c);
}

/*
 * The question is over (found: 0, or -1): on a kept connection, a master
 * that moved means a new connection; if no sentinel could say, the kept
 * connection carries on (ROLE and READONLY still guard it).  A new
 * connection without a master fails.  Then c's own command goes out.
 */
static void
conn_probe_finish(struct conn *c, int found)
{
	char	*was = c->probe_was_host;

	c->is_probing = 0;
	conn_free(c->probe);
	c->probe = NULL;
	free(c->probe_url.display);
	memset(&c->probe_url, 0, sizeof(c->probe_url));
	c->probe_was_host = NULL;
	if (c->probe_is_recheck && found == 0 && was != NULL &&
	    (strcmp(was, c->master.host) != 0 ||
	    c->probe_was_port != c->master.port)) {
		log_debug("%s: the master moved to %s:%d", c->url->display,
		    c->master.host, c->master.port);
		conn_close(c);
	}
	free(was);
	if (!c->probe_is_recheck && found == -1) {
		conn_fail(c, CONN_UNAVAILABLE, "%s: cannot find the master: "
		    "%.300s", c->url->display, c->probe_last);
		return;
	}
	conn_send(c);
}

/* For conn_close(): a question under way is dropped with the socket. */
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
