/* SPDX-License-Identifier: MIT */
/*
 * Sentinel: where is the master now?  Nobody tells the clients of a
 * master that a failover replaced it, and it keeps taking writes until
 * Sentinel demotes it seconds later; so before every command, on a new
 * connection and on a kept one alike, the sentinels are asked again, in
 * the order the URL gives, until one names the master.
 *
 * The question is a state of the one poll loop of conn-poll.c, not a loop
 * of its own: while c->probe (the connection to the sentinel being asked)
 * is in flight, the poll loop waits on it in c's place, and when it is
 * done conn_probe_step() takes the answer and says what is next: ask the
 * next sentinel (CONN_V_PROBE), go on with c's own command (CONN_V_SEND)
 * or give up (CONN_V_DONE); conn-io.c does it.  So the servers of a
 * quorum are asked in parallel, and every question ends by the caller's
 * cap.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn-impl.h"

static enum conn_verdict conn_probe_ask(struct conn *);
static int	 conn_probe_answer(struct conn *, const redisReply *);
static enum conn_verdict conn_probe_finish(struct conn *, int);
static const char *conn_probe_env(const char *);

/*
 * Start asking the sentinels for c's master, before c's command.  On a
 * kept connection (is_recheck) the question gets at most half of what is
 * left to cap_ns: sentinels that stopped answering must not use up the
 * time in which the kept connection can still do its work.
 */
enum conn_verdict
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
	/* Sentinels have their own password, if any, and the --user name
	 * unless REDLOCK_SENTINEL_USER names another. */
	c->probe_conf = c->conf;
	c->probe_conf.password = conn_probe_env("REDLOCK_SENTINEL_PASSWORD");
	c->probe_conf.password_from = "REDLOCK_SENTINEL_PASSWORD";
	if (conn_probe_env("REDLOCK_SENTINEL_USER") != NULL)
		c->probe_conf.user = conn_probe_env("REDLOCK_SENTINEL_USER");
	c->probe_argv[0] = "SENTINEL";
	c->probe_argv[1] = "get-master-addr-by-name";
	c->probe_argv[2] = c->url->master_name;
	for (i = 0; i < 3; i++)
		c->probe_lens[i] = strlen(c->probe_argv[i]);
	c->is_probing = 1;
	return (conn_probe_ask(c));
}

/* A variable of the environment, NULL when unset or empty. */
static const char *
conn_probe_env(const char *name)
{
	const char *s = getenv(name);

	return (s != NULL && *s != '\0' ? s : NULL);
}

/*
 * The next sentinel to ask, in c->probe (CONN_V_PROBE: conn-io.c sends
 * the question); with none left, give up (conn_probe_finish).
 */
static enum conn_verdict
conn_probe_ask(struct conn *c)
{
	struct redis_url	*su = &c->probe_url;
	const struct url_host	*h;

	conn_free(c->probe);
	c->probe = NULL;
	free(su->display);
	memset(su, 0, sizeof(*su));
	if (c->probe_next >= c->url->nhosts)
		return (conn_probe_finish(c, -1));
	h = &c->url->hosts[c->probe_next++];
	su->kind = URL_TCP;
	su->host = h->host;
	su->port = h->port;
	su->display = conn_hostport("sentinel ", h->host, h->port);
	c->probe = conn_new(su, &c->probe_conf);
	return (CONN_V_PROBE);
}

/* A sentinel's answer: 0 when it named the master (now c->dial). */
static int
conn_probe_answer(struct conn *c, const redisReply *r)
{
	const char	*end;
	int		 port;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_STRING) {
		(void)snprintf(c->probe_last, sizeof(c->probe_last), "%s does "
		    "not know master '%s'", c->probe_url.display,
		    c->url->master_name);
		return (-1);
	}
	if ((port = conn_parse_port(r->element[1]->str, &end)) == -1 ||
	    *end != '\0') {
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
	if (log_verbosity >= 2) {
		char *at = conn_hostport("", c->master.host, c->master.port);

		log_debug("%s: master '%s' is at %s", c->probe_url.display,
		    c->url->master_name, at);
		free(at);
	}
	return (0);
}

/*
 * The sentinel being asked is done (answered, failed or timed out): take
 * its answer, or ask the next one.
 */
enum conn_verdict
conn_probe_step(struct conn *c)
{
	struct conn	*p = c->probe;

	if (p->result != CONN_OK)
		(void)snprintf(c->probe_last, sizeof(c->probe_last), "%s",
		    p->err);
	else if (conn_probe_answer(c, p->reply) == 0)
		return (conn_probe_finish(c, 0));
	return (conn_probe_ask(c));
}

/*
 * The question is over (found: 0, or -1): on a kept connection, a master
 * that moved means a new connection; if no sentinel could say, the kept
 * connection carries on (ROLE and READONLY still guard it).  A new
 * connection without a master fails.  Then c's own command goes out.
 */
static enum conn_verdict
conn_probe_finish(struct conn *c, int found)
{
	int moved = c->probe_is_recheck && found == 0 &&
	    c->probe_was_host != NULL &&
	    (strcmp(c->probe_was_host, c->master.host) != 0 ||
	    c->probe_was_port != c->master.port);

	conn_probe_free(c);
	if (moved && log_verbosity >= 2) {
		char *at = conn_hostport("", c->master.host, c->master.port);

		log_debug("%s: the master moved to %s", c->url->display, at);
		free(at);
	}
	if (moved)
		conn_close(c);
	if (!c->probe_is_recheck && found == -1) {
		conn_fail(c, CONN_UNAVAILABLE, "%s: cannot find the master: "
		    "%.300s", c->url->display, c->probe_last);
		return (CONN_V_DONE);
	}
	return (CONN_V_SEND);
}
