/* SPDX-License-Identifier: MIT */
/*
 * Server bytes to replies, and replies to results: the one place that
 * interprets what a server sent, and classifies every error reply
 * (NOAUTH and friends, NOSCRIPT, LOADING and friends, MOVED/ASK, the
 * rest).  tests/fuzz drives conn_feed() directly.  What a reply may
 * cost is checked as hiredis builds it: conn-bounds.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn-impl.h"

static const char *conn_password_from(const struct conn *);
static int	 conn_classify_error(const char *, size_t);
static int	 conn_refuses_scripts(const char *);
static const char *conn_protocol_hint(const char *);
static enum conn_verdict conn_on_reply(struct conn *, redisReply *);
static enum conn_verdict conn_on_setup_reply(struct conn *, redisReply *,
		     const char *);
static enum conn_verdict conn_on_error_reply(struct conn *, int,
		     const char *);
static void	 conn_log_reply(const struct conn *, const redisReply *);

/*
 * What a reply that is not RESP says of the port: an HTTP server answers
 * "HTTP/1.1 400" or an HTML page.  hiredis quotes the first byte.
 */
static const char *
conn_protocol_hint(const char *text)
{
	if (strstr(text, "got \"H\"") != NULL ||
	    strstr(text, "got \"<\"") != NULL)
		return (" (an HTTP server, not Redis or Valkey? check the "
		    "port)");
	return ("");
}

/*
 * Bytes from the server: parse every complete reply in them.  The only
 * place server bytes are interpreted (tests/fuzz drives it directly).
 * Returns CONN_V_PENDING until the command's reply is complete, then what
 * it calls for (conn_on_reply()).
 */
enum conn_verdict
conn_feed(struct conn *c, const char *buf, size_t n)
{
	enum conn_verdict	 v;
	void			*r;

	c->in_bytes += n;
	if (c->in_bytes > CONN_MAX_REPLY_BYTES) {
		conn_fail(c, CONN_PROTOCOL, "%s: protocol error: reply too "
		    "large (more than %d MiB)", c->dial->display,
		    CONN_MAX_REPLY_BYTES / (1024 * 1024));
		return (CONN_V_DONE);
	}
	if (redisReaderFeed(c->reader, buf, n) != REDIS_OK)
		fatalx(EXIT_UNAVAILABLE, "out of memory");
	for (;;) {
		r = NULL;
		if (redisReaderGetReply(c->reader, &r) != REDIS_OK) {
			char text[128];

			/* Ours, or hiredis's own (sanitized: it may quote
			 * the byte that came). */
			if (c->refused[0] != '\0')
				(void)snprintf(text, sizeof(text), "%s",
				    c->refused);
			else
				log_sanitize(text, sizeof(text),
				    c->reader->errstr,
				    strlen(c->reader->errstr));
			conn_fail(c, CONN_PROTOCOL, "%s: protocol error: %s%s",
			    c->dial->display, text, conn_protocol_hint(text));
			return (CONN_V_DONE);
		}
		if (r == NULL) {
			if (conn_check_pending(c) == -1) {
				conn_fail(c, CONN_PROTOCOL,
				    "%s: protocol error: %s", c->dial->display,
				    c->refused);
				return (CONN_V_DONE);
			}
			return (CONN_V_PENDING);
		}
		if ((v = conn_on_reply(c, r)) == CONN_V_PENDING)
			continue;
		/*
		 * More bytes than the answer to our one command: the stream
		 * cannot be trusted for the next one.
		 */
		if (c->is_done && c->reader != NULL &&
		    c->reader->pos < c->reader->len) {
			log_debug("%s: %zu unexpected bytes after the reply; "
			    "reconnecting next time", c->dial->display,
			    c->reader->len - c->reader->pos);
			conn_close(c);
		}
		return (v);
	}
}

/* Map an error reply's first word to a conn_result. */
static int
conn_classify_error(const char *s, size_t len)
{
	static const struct {
		const char	*word;
		int		 result;
	} words[] = {
		{ "NOAUTH", CONN_AUTH },
		{ "WRONGPASS", CONN_AUTH },
		{ "NOPERM", CONN_AUTH },
		{ "NOSCRIPT", CONN_NOSCRIPT },
		{ "LOADING", CONN_TRANSIENT },
		{ "BUSY", CONN_TRANSIENT },
		{ "TRYAGAIN", CONN_TRANSIENT },
		{ "MASTERDOWN", CONN_TRANSIENT },
		{ "MOVED", CONN_REDIRECT },
		{ "ASK", CONN_REDIRECT },
		{ NULL, 0 }
	};
	size_t	 wl, i;

	for (i = 0; words[i].word != NULL; i++) {
		wl = strlen(words[i].word);
		if (len >= wl && memcmp(s, words[i].word, wl) == 0 &&
		    (len == wl || s[wl] == ' '))
			return (words[i].result);
	}
	return (CONN_SERVER_ERROR);
}

/*
 * One reply: a setup reply is taken (CONN_V_PENDING: the command's own is
 * next), the command's ends it (CONN_V_DONE), unless it asks for the
 * script itself (CONN_V_FALLBACK) or names another cluster node
 * (CONN_V_REDIRECT, with c failed in case it is not followed).
 */
static enum conn_verdict
conn_on_reply(struct conn *c, redisReply *r)
{
	char	text[256];
	int	result;

	if (r->type == REDIS_REPLY_ERROR)
		log_sanitize(text, sizeof(text), r->str, r->len);
	if (r->type == REDIS_REPLY_ERROR && text[0] == '\0')
		(void)snprintf(text, sizeof(text), "(an empty error reply)");
	if (c->setup_replies > 0)
		return (conn_on_setup_reply(c, r, text));
	if (c->lead_replies > 0) {
		/* The lead's, kept as it is: the command's is next. */
		c->lead_replies = 0;
		if (r->type == REDIS_REPLY_ERROR)
			(void)snprintf(c->server_error,
			    sizeof(c->server_error), "%s", text);
		else
			conn_log_reply(c, r);
		c->lead->result = r->type == REDIS_REPLY_ERROR ?
		    conn_classify_error(r->str, r->len) : CONN_OK;
		c->lead->reply = r;
		return (CONN_V_PENDING);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		result = conn_classify_error(r->str, r->len);
		freeReplyObject(r);
		(void)snprintf(c->server_error, sizeof(c->server_error), "%s",
		    text);
		return (conn_on_error_reply(c, result, text));
	}
	conn_log_reply(c, r);
	c->reply = r;
	c->result = CONN_OK;
	c->is_done = 1;
	return (CONN_V_DONE);
}

/* The reply to AUTH, SELECT, ROLE or ASKING in front of the command. */
static enum conn_verdict
conn_on_setup_reply(struct conn *c, redisReply *r, const char *text)
{
	enum conn_setup	 what = c->setup[c->nsetup - c->setup_replies--];
	int		 result;

	if (r->type == REDIS_REPLY_ERROR) {
		result = conn_classify_error(r->str, r->len);
		freeReplyObject(r);
		if (what == SETUP_AUTH && (strstr(text, "without any password "
		    "configured") != NULL || strstr(text, "no password is set") !=
		    NULL))
			/* Redis 6 and later, and Redis 5: a password the
			 * server does not want.  Say where ours came from. */
			conn_fail(c, CONN_AUTH, "%s: the server has no password "
			    "set; drop %s", c->dial->display,
			    c->dial->password != NULL ? "it from the URL" :
			    c->conf.password_from != NULL ?
			    c->conf.password_from :
			    "--password-file, REDLOCK_PASSWORD or REDISCLI_AUTH");
		else if (result == CONN_AUTH)
			conn_fail(c, CONN_AUTH, "%s: authentication failed: %s "
			    "(the password came from %s)", c->dial->display,
			    text, conn_password_from(c));
		else
			/* AUTH, SELECT or ASKING refused. */
			conn_fail(c, CONN_PROTOCOL, "%s: %s", c->dial->display,
			    text);
		return (CONN_V_DONE);
	}
	if (what == SETUP_ROLE && (r->type != REDIS_REPLY_ARRAY ||
	    r->elements < 1 || r->element[0]->type != REDIS_REPLY_STRING ||
	    strcmp(r->element[0]->str, "master") != 0)) {
		char *at = conn_hostport("", c->dial->host, c->dial->port);

		freeReplyObject(r);
		/* Mid-failover: ask the sentinels again. */
		conn_fail(c, CONN_TRANSIENT, "%s: %s is no longer the master",
		    c->dial->display, at);
		free(at);
		conn_close(c);
		return (CONN_V_DONE);
	}
	freeReplyObject(r);
	return (CONN_V_PENDING);
}

/* Where the password we sent came from, for a message. */
static const char *
conn_password_from(const struct conn *c)
{
	if (c->dial->password != NULL)
		return ("the URL");
	return (c->conf.password_from != NULL ? c->conf.password_from :
	    "the environment");
}

/*
 * Whether an error reply to EVAL or EVALSHA says that the server runs no
 * scripts at all for us: an ACL without @scripting (NOPERM naming the
 * command), scripting commands renamed away, or a server without a Lua
 * engine (Valkey 9 built without its module).  Not a script's own error.
 */
static int
conn_refuses_scripts(const char *text)
{
	static const char *const says[] = {
	    "'evalsha' command", "'eval' command",	/* NOPERM, Redis 7 */
	    "unknown command 'evalsha'", "unknown command 'eval'",
	    "Could not find scripting engine",	/* Valkey 9, no Lua */
	    NULL };
	size_t i;

	for (i = 0; says[i] != NULL; i++)
		if (strcasestr(text, says[i]) != NULL)
			return (1);
	return (0);
}

/* An error reply to the command itself: result is its class. */
static enum conn_verdict
conn_on_error_reply(struct conn *c, int result, const char *text)
{
	const char *d = c->dial->display;

	if (result == CONN_NOSCRIPT && c->alt_argc > 0 && !c->is_fallback)
		return (CONN_V_FALLBACK);
	if (c->cmd_argc > 0 && (strcasecmp(c->cmd_argv[0], "EVALSHA") == 0 ||
	    strcasecmp(c->cmd_argv[0], "EVAL") == 0) &&
	    conn_refuses_scripts(text)) {
		/* Not closed: the native commands follow on it. */
		c->lacks |= CONN_LACKS_SCRIPTS;
		(void)snprintf(c->lack_why, sizeof(c->lack_why), "%s", text);
		conn_fail(c, CONN_NO_SCRIPTS, "%s: the server refuses scripts: "
		    "%s", d, text);
		return (CONN_V_DONE);
	}
	if (result == CONN_SERVER_ERROR && strncmp(text, "READONLY ", 9) == 0 &&
	    c->url->kind == URL_SENTINEL) {
		/* The master we knew was demoted: find the new one. */
		conn_fail(c, CONN_TRANSIENT, "%s: %s", d, text);
		conn_close(c);
	} else if (result == CONN_SERVER_ERROR && strstr(text,
	    "Protocol error: unauthenticated") != NULL)
		/* Redis refuses a long request before AUTH with this instead
		 * of NOAUTH: it means the same. */
		conn_fail(c, CONN_AUTH, "%s: authentication required: %s (give "
		    "the password in the URL, redis://:PASSWORD@host, or in "
		    "--password-file FILE or REDLOCK_PASSWORD)", d, text);
	else if (result == CONN_SERVER_ERROR && strstr(text,
	    "user executing the script can't run") != NULL)
		/* Redis 7.0's answer for a command refused by ACL inside a
		 * script: it is a permission problem. */
		conn_fail(c, CONN_AUTH, "%s: permission denied to a command "
		    "inside the lock script (see ACCESS CONTROL in "
		    "redlock-cli(1)): %s", d, text);
	else if (result == CONN_AUTH && strncmp(text, "NOPERM", 6) == 0)
		conn_fail(c, result, "%s: permission denied: %s", d, text);
	else if (result == CONN_AUTH)
		conn_fail(c, result, "%s: authentication required: %s (give "
		    "the password in the URL, redis://:PASSWORD@host, or in "
		    "--password-file FILE or REDLOCK_PASSWORD)", d, text);
	else
		conn_fail(c, result, "%s: %s", d, text);
	return (result == CONN_REDIRECT ? CONN_V_REDIRECT : CONN_V_DONE);
}

/* -v -v: what came back. */
static void
conn_log_reply(const struct conn *c, const redisReply *r)
{
	char text[256];

	if (log_verbosity < 2)
		return;
	if (r->type == REDIS_REPLY_INTEGER)
		log_debug("%s: < %lld", c->dial->display, r->integer);
	else if (r->type == REDIS_REPLY_ARRAY)
		log_debug("%s: < (array of %zu)", c->dial->display,
		    (size_t)r->elements);
	else if (r->type == REDIS_REPLY_NIL)
		log_debug("%s: < (nil)", c->dial->display);
	else if (r->type == REDIS_REPLY_STRING && c->secret_reply) {
		log_shorten(text, sizeof(text), r->str, r->len);
		log_debug("%s: < %s", c->dial->display, text);
	} else if (r->type == REDIS_REPLY_STRING ||
	    r->type == REDIS_REPLY_STATUS) {
		log_sanitize(text, sizeof(text), r->str, r->len);
		log_debug("%s: < %s", c->dial->display, text);
	}
}
