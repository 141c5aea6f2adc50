/* SPDX-License-Identifier: MIT */
/*
 * The bounds on what a server's reply can make us allocate (contract,
 * Safety: a few MB, whatever it sends), with hiredis 0.14 and 1.x alike:
 * the reader, whose object functions charge every value to the command's
 * replies before hiredis allocates it, and the check of a bulk string's
 * length while hiredis waits for its bytes.  The caps are in conn-impl.h;
 * conn_feed() (conn-reply.c) turns a refusal into the error.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn-impl.h"

/*
 * hiredis 1.x passes an aggregate's count as a size_t (a map's already
 * doubled: keys and values), 0.14 as an int; both pass a count only once
 * they have parsed it as >= 0 (-1 is a nil, below that an error).
 */
#if HIREDIS_MAJOR >= 1
#define CONN_COUNT	size_t
#else
#define CONN_COUNT	int
#endif

/*
 * What hiredis allocates for a value, as we charge it: every value is a
 * redisReply (plus malloc's header, CONN_MALLOC_COST), a string adds its
 * bytes and a terminator, an aggregate its array of slots.  An aggregate
 * is charged at once for the redisReply of each of its elements, so one
 * whose elements could never fit is refused at its header, before they
 * come; each element then pays only for what it adds to that.
 */
#define CONN_MALLOC_COST	16
#define CONN_VALUE_COST		(sizeof(redisReply) + CONN_MALLOC_COST)
/* A bulk length line: at most 19 digits (LLONG_MAX), then \r\n. */
#define CONN_LENGTH_LINE	21

static void	 conn_refuse(struct conn *, const char *, ...)
		     printflike(2, 3);
static int	 conn_charge(struct conn *, const redisReadTask *, size_t);
static void	*conn_create_string(const redisReadTask *, char *, size_t);
static void	*conn_create_array(const redisReadTask *, CONN_COUNT);
#if HIREDIS_MAJOR >= 1
static void	*conn_create_double(const redisReadTask *, double, char *,
		     size_t);
#endif

/*
 * A reader for c.  It is hiredis's, with hiredis's own object functions
 * (redisReaderCreate() points the reader at them; they are not exported)
 * behind ours, which charge each value to the command's replies before
 * hiredis allocates it, and refuse what does not fit: a refusal is the
 * NULL of a failed allocation to hiredis, which stops with "Out of
 * memory", and conn_feed() says what was refused instead.  Checking the
 * values hiredis is about to create, rather than scanning the bytes
 * ahead of it, cannot lose track of where values start: it sees exactly
 * what hiredis parsed, with its line rules and its RESP3 types, in 0.14
 * and 1.x alike.  (A scanner of ours ended a line at a bare \n, where
 * hiredis needs \r\n, and knew no RESP3 verbatim string; either let a
 * header of 300 million elements through.)
 */
void
conn_reader_new(struct conn *c)
{
	redisReader *r;

	if ((r = redisReaderCreate()) == NULL)
		fatalx(EXIT_UNAVAILABLE, "out of memory");
	if (r->fn == NULL || r->fn->createString == NULL ||
	    r->fn->createArray == NULL)
		fatalx(EXIT_PROTOCOL, "hiredis reader without reply objects");
	c->fn_hiredis = *r->fn;
	c->fn_checked = c->fn_hiredis;
	c->fn_checked.createString = conn_create_string;
	c->fn_checked.createArray = conn_create_array;
#if HIREDIS_MAJOR >= 1
	if (c->fn_hiredis.createDouble != NULL)
		c->fn_checked.createDouble = conn_create_double;
#endif
	r->fn = &c->fn_checked;
	/* hiredis hands it to every value's task. */
	r->privdata = c;
	c->reader = r;
}

/* Stop the reader: c->refused says why, for conn_feed()'s message. */
static void
conn_refuse(struct conn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(c->refused, sizeof(c->refused), fmt, ap);
	va_end(ap);
}

/*
 * Charge cost (what a value adds to its redisReply, which its aggregate
 * has paid for unless it is the top of a reply) to c's replies.  Returns
 * 0, or -1 when the command's replies would pass CONN_MAX_REPLY_ALLOC;
 * the caller has checked that cost alone is below it.
 */
static int
conn_charge(struct conn *c, const redisReadTask *task, size_t cost)
{
	if (task->parent == NULL)
		cost += CONN_VALUE_COST;
	if (cost > CONN_MAX_REPLY_ALLOC - c->parsed_bytes) {
		conn_refuse(c, "reply too large (more than %d MiB once parsed)",
		    CONN_MAX_REPLY_ALLOC / (1024 * 1024));
		return (-1);
	}
	c->parsed_bytes += cost;
	return (0);
}

/* Strings: bulk, simple, error, verbatim and big number alike. */
static void *
conn_create_string(const redisReadTask *task, char *str, size_t len)
{
	struct conn *c = task->privdata;

	if (len >= CONN_MAX_REPLY_ALLOC) {
		conn_refuse(c, "reply too large (a string of %zu bytes)", len);
		return (NULL);
	}
	if (conn_charge(c, task, len + 1 + CONN_MALLOC_COST) == -1)
		return (NULL);
	return (c->fn_hiredis.createString(task, str, len));
}

/*
 * Arrays, and in hiredis 1.x maps, sets and pushes (an attribute too,
 * in versions that parse them): all of them are created here, with the
 * number of slots hiredis is about to calloc().
 */
static void *
conn_create_array(const redisReadTask *task, CONN_COUNT count)
{
	struct conn		*c = task->privdata;
	const redisReadTask	*t;
	const char		*kind = "an array", *unit = "elements";
	size_t			 n = (size_t)count, depth = 0, each;

	for (t = task->parent; t != NULL; t = t->parent)
		depth++;
	if (depth >= CONN_MAX_DEPTH) {
		conn_refuse(c, "reply nested too deep (more than %d levels)",
		    CONN_MAX_DEPTH);
		return (NULL);
	}
	each = sizeof(redisReply *) + CONN_VALUE_COST;
	if (n >= (CONN_MAX_REPLY_ALLOC - CONN_MALLOC_COST) / each) {
#if HIREDIS_MAJOR >= 1
		if (task->type == REDIS_REPLY_MAP) {
			kind = "a map";
			unit = "pairs";
			n /= 2;
		} else if (task->type == REDIS_REPLY_SET)
			kind = "a set";
		else if (task->type == REDIS_REPLY_PUSH)
			kind = "a push";
		else if (task->type == REDIS_REPLY_ATTR)
			kind = "an attribute";
#endif
		conn_refuse(c, "reply too large (%s of %zu %s)", kind, n, unit);
		return (NULL);
	}
	if (conn_charge(c, task, CONN_MALLOC_COST + n * each) == -1)
		return (NULL);
	return (c->fn_hiredis.createArray(task, count));
}

#if HIREDIS_MAJOR >= 1
/* hiredis 1.x keeps a double's text too (at most 325 bytes: it checks). */
static void *
conn_create_double(const redisReadTask *task, double value, char *str,
    size_t len)
{
	struct conn *c = task->privdata;

	if (len >= CONN_MAX_REPLY_ALLOC) {
		conn_refuse(c, "reply too large (a number of %zu bytes)", len);
		return (NULL);
	}
	if (conn_charge(c, task, len + 1 + CONN_MALLOC_COST) == -1)
		return (NULL);
	return (c->fn_hiredis.createDouble(task, value, str, len));
}
#endif

/*
 * hiredis creates a bulk string ($, and RESP3's = and !) only once all
 * its bytes are buffered, so its length reaches no object function until
 * they have come: a length no reply of ours can have would be read up to
 * CONN_MAX_REPLY_BYTES, or time out, rather than be refused at once.  But
 * when hiredis waits with a complete line in its buffer, that line can
 * only be such a length: every other line (a simple value, an aggregate's
 * header, a nil) is consumed as soon as its \r\n is there.  So the length
 * is read here, where hiredis left it, ending at the first \r\n as
 * hiredis's lines do.  hiredis has accepted it already, by the same strict
 * rules in 0.14.1 as in 1.x (decimal digits, no sign, no leading zero, at
 * most 19 of them), so it fits CONN_LENGTH_LINE and reads the same here;
 * should a hiredis ever accept more, what this cannot read is refused as
 * unclear.  Returns 0, or -1 with c->refused set.
 */
int
conn_check_pending(struct conn *c)
{
	const redisReader	*r = c->reader;
	const char		*p, *nl;
	size_t			 avail, i, len = 0;

	if (r->buf == NULL || r->len <= r->pos)
		return (0);
	p = r->buf + r->pos;
	avail = r->len - r->pos;
	if (avail > CONN_LENGTH_LINE)
		avail = CONN_LENGTH_LINE;
	if ((nl = memmem(p, avail, "\r\n", 2)) == NULL)
		return (0);
	if (nl == p || (p[0] == '0' && nl - p > 1))
		goto bad;
	for (i = 0; p + i < nl; i++) {
		if (p[i] < '0' || p[i] > '9' || len > (SIZE_MAX - 9) / 10)
			goto bad;
		len = len * 10 + (size_t)(p[i] - '0');
	}
	if (len >= CONN_MAX_REPLY_BYTES ||
	    len >= CONN_MAX_REPLY_ALLOC - c->parsed_bytes) {
		conn_refuse(c, "reply too large (a string of %zu bytes)", len);
		return (-1);
	}
	return (0);
bad:
	conn_refuse(c, "bad bulk string length");
	return (-1);
}
