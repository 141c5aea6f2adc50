/* SPDX-License-Identifier: MIT */
/*
 * The bottom floor of the scripts played with native commands
 * (scripts-native.c): the commands, sent through the connection layer
 * within the play's cap, and the reply its script would have sent, built
 * as RESP and parsed by hiredis as a server's would be.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "native-impl.h"

static void	 nat_out(struct nat *, const char *, size_t);
static void	 nat_outf(struct nat *, const char *, ...) printflike(2, 3);

/*----- the reply, as its script would have sent it -----*/

static void
nat_out(struct nat *n, const char *s, size_t len)
{
	if (n->rlen + len > n->rcap) {
		n->rcap = (n->rlen + len) * 2 + 64;
		n->rbuf = xreallocarray(n->rbuf, n->rcap, 1);
	}
	memcpy(n->rbuf + n->rlen, s, len);
	n->rlen += len;
}

static void
nat_outf(struct nat *n, const char *fmt, ...)
{
	char	buf[64];
	va_list	ap;
	int	len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len > 0)
		nat_out(n, buf, (size_t)len < sizeof(buf) ? (size_t)len :
		    sizeof(buf) - 1);
}

void
nat_int(struct nat *n, long long v)
{
	nat_outf(n, ":%lld\r\n", v);
}

void
nat_arr(struct nat *n, size_t count)
{
	nat_outf(n, "*%zu\r\n", count);
}

void
nat_str(struct nat *n, const char *s, size_t len)
{
	nat_outf(n, "$%zu\r\n", len);
	nat_out(n, s, len);
	nat_out(n, "\r\n", 2);
}

/* A string element of r, or "" (a nil, or no such element). */
void
nat_str_of(struct nat *n, const redisReply *r)
{
	if (r != NULL && r->type == REDIS_REPLY_STRING)
		nat_str(n, r->str, r->len);
	else
		nat_str(n, "", 0);
}

/* The reply built, parsed as the server's would be.  NULL: not RESP. */
redisReply *
nat_reply(struct nat *n)
{
	redisReader	*rd;
	void		*r = NULL;

	if ((rd = redisReaderCreate()) == NULL)
		return (NULL);
	if (redisReaderFeed(rd, n->rbuf, n->rlen) != REDIS_OK ||
	    redisReaderGetReply(rd, &r) != REDIS_OK)
		r = NULL;
	redisReaderFree(rd);
	return (r);
}

/*----- commands -----*/

const char *
nat_key(const struct nat *n, int k, size_t *len)
{
	*len = k < n->nkeys ? n->lens[k] : 0;
	return (k < n->nkeys ? n->args[k] : "");
}

/* ARGV[i + 1] of the script, or "" if it was not sent. */
const char *
nat_arg(const struct nat *n, int i, size_t *len)
{
	size_t dummy;

	if (len == NULL)
		len = &dummy;
	*len = i < n->nargs ? n->lens[n->nkeys + i] : 0;
	return (i < n->nargs ? n->args[n->nkeys + i] : "");
}

void
cmd_b(struct nat_cmd *m, const char *s, size_t len)
{
	if (m->n < NAT_ARGC) {
		m->v[m->n] = s;
		m->l[m->n++] = len;
	}
}

void
cmd_s(struct nat_cmd *m, const char *s)
{
	cmd_b(m, s, strlen(s));
}

void
cmd_key(struct nat_cmd *m, const struct nat *n, int k)
{
	size_t		 len;
	const char	*s = nat_key(n, k, &len);

	cmd_b(m, s, len);
}

void
cmd_arg(struct nat_cmd *m, const struct nat *n, int i)
{
	size_t		 len;
	const char	*s = nat_arg(n, i, &len);

	cmd_b(m, s, len);
}

/* The token (ARGV[1]), shortened by -v -v as the scripts' is. */
void
cmd_token(struct nat_cmd *m, const struct nat *n)
{
	m->secret = m->n;
	cmd_arg(m, n, 0);
}

/*
 * Send m, bounded by the play's cap.  The reply, or NULL after a failure
 * (n->failed, conn_error() says why; an error reply too, unless soft: the
 * caller then looks at conn_error() and goes on).
 */
redisReply *
nat_send(struct nat *n, struct nat_cmd *m, int soft)
{
	redisReply	*r = NULL;
	int		 result;

	if (n->failed)
		return (NULL);
	if (m->secret > 0)
		conn_set_secret(n->c, m->secret, m->secret_from);
	if (m->is_token)
		conn_set_secret_reply(n->c);
	result = conn_command(n->c, m->n, m->v, m->l, n->cap_ns, &r);
	if (result == CONN_OK)
		return (r);
	if (r != NULL)
		freeReplyObject(r);
	/* soft: the caller tells a command the server lacks, or that the
	 * user may not run (a Redis 7 ACL on a newer server), from the rest */
	if (!(soft && (result == CONN_SERVER_ERROR || (result == CONN_AUTH &&
	    strstr(conn_error(n->c), "NOPERM") != NULL))))
		n->failed = result;
	return (NULL);
}

/* Send m, for its effect only.  0, or -1 after a failure. */
int
nat_do(struct nat *n, struct nat_cmd *m)
{
	redisReply *r = nat_send(n, m, 0);

	if (r == NULL)
		return (-1);
	freeReplyObject(r);
	return (0);
}

/* The last command failed for want of what (unknown command, syntax,
 * or one the user may not run). */
int
nat_lacked(struct nat *n, int what)
{
	const char *e = conn_error(n->c);

	if (strcasestr(e, "unknown command") == NULL &&
	    strcasestr(e, "syntax error") == NULL &&
	    strstr(e, "NOPERM") == NULL)
		return (0);
	conn_set_lacks(n->c, what);
	return (1);
}

int
nat_same(const redisReply *r, const char *s, size_t len)
{
	return (r != NULL && r->type == REDIS_REPLY_STRING && r->len == len &&
	    memcmp(r->str, s, len) == 0);
}

/* GET of key k; its reply (NULL after a failure).  -v -v shortens a
 * lock's token in it. */
redisReply *
nat_get(struct nat *n, int k)
{
	struct nat_cmd m = { .n = 0 };

	cmd_s(&m, "GET");
	cmd_key(&m, n, k);
	m.is_token = k == LK_LOCK;
	return (nat_send(n, &m, 0));
}

/* CMD KEY ARG: a command of one key and an integer. */
int
nat_key_int(struct nat *n, const char *cmd, int k, long long v)
{
	struct nat_cmd	m = { .n = 0 };
	char		num[32];

	(void)snprintf(num, sizeof(num), "%lld", v);
	cmd_s(&m, cmd);
	cmd_key(&m, n, k);
	cmd_s(&m, num);
	return (nat_do(n, &m));
}

int
nat_word(struct nat *n, const char *w)
{
	struct nat_cmd m = { .n = 0 };

	cmd_s(&m, w);
	return (nat_do(n, &m));
}
