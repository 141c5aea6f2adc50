/*
 * status: who holds a lock (or the slots of a semaphore), from one atomic
 * snapshot taken by the status script.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

static char	*status_str(const redisReply *);
static int	 status_is(const redisReply *, const char *, size_t,
		     const char *);
static void	 status_meta(struct lock_holder *, const redisReply *,
		     int);

static char *
status_str(const redisReply *r)
{
	char *s;

	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)
		return (NULL);
	s = xmalloc(r->len + 1);
	memcpy(s, r->str, r->len);
	s[r->len] = '\0';
	return (s);
}

/* Is r the string prefix + name ("<token>:host" for a semaphore)? */
static int
status_is(const redisReply *r, const char *prefix, size_t plen,
    const char *name)
{
	size_t nlen = strlen(name);

	return (r->type == REDIS_REPLY_STRING && r->len == plen + nlen &&
	    memcmp(r->str, prefix, plen) == 0 &&
	    memcmp(r->str + plen, name, nlen) == 0);
}

/*
 * Fill h's metadata from the hash's field/value list.  A mutex's fields
 * are plain and describe h only if their "token" field names h; a
 * semaphore's are "<token>:field".
 */
static void
status_meta(struct lock_holder *h, const redisReply *meta, int is_sem)
{
	static const char *numeric[] = { "fence", "pid", "since", NULL };
	const redisReply *f, *v;
	char		 prefix_buf[512], num[32], *end;
	const char	*prefix = "";
	size_t		 plen = 0, i, tlen = strlen(h->token);
	long long	 n;
	int		 j;

	if (is_sem) {
		if (tlen + 2 > sizeof(prefix_buf))
			return;
		(void)snprintf(prefix_buf, sizeof(prefix_buf), "%s:",
		    h->token);
		prefix = prefix_buf;
		plen = tlen + 1;
	} else {
		for (i = 0; i + 1 < meta->elements; i += 2)
			if (status_is(meta->element[i], "", 0, "token") &&
			    meta->element[i + 1]->type == REDIS_REPLY_STRING &&
			    meta->element[i + 1]->len == tlen &&
			    memcmp(meta->element[i + 1]->str, h->token,
			    tlen) == 0)
				break;
		if (i + 1 >= meta->elements)
			return;		/* a foreign client's lock */
	}
	for (i = 0; i + 1 < meta->elements; i += 2) {
		f = meta->element[i];
		v = meta->element[i + 1];
		if (v->type != REDIS_REPLY_STRING)
			continue;
		if (status_is(f, prefix, plen, "host") && h->host == NULL)
			h->host = status_str(v);
		else if (status_is(f, prefix, plen, "command") &&
		    h->command == NULL)
			h->command = status_str(v);
		for (j = 0; numeric[j] != NULL; j++) {
			if (!status_is(f, prefix, plen, numeric[j]) ||
			    v->len == 0 || v->len >= sizeof(num) ||
			    !isdigit((unsigned char)v->str[0]))
				continue;
			memcpy(num, v->str, v->len);
			num[v->len] = '\0';
			errno = 0;
			n = strtoll(num, &end, 10);
			if (*end != '\0' || errno != 0)
				continue;
			if (j == 0)
				h->fence = n;
			else if (j == 1)
				h->pid = n;
			else
				h->since_ms = n;
		}
	}
}

/*
 * The holders of l: *out gets an array of *n (0 when free; the caller
 * frees it with lock_holders_free).  Returns EXIT_OK or a failure's code.
 */
int
lock_status(struct lock *l, struct lock_holder **out, size_t *n)
{
	const char		*args[4];
	size_t			 lens[4], i;
	char			 limit[32];
	redisReply		*r, *list, *e;
	struct lock_holder	*hs;
	int			 result;

	*out = NULL;
	*n = 0;
	(void)snprintf(limit, sizeof(limit), "%lld", (long long)l->limit);
	args[0] = l->key;
	lens[0] = l->key_len;
	args[1] = l->fence_key;
	lens[1] = l->fence_key_len;
	args[2] = l->meta_key;
	lens[2] = l->meta_key_len;
	args[3] = limit;
	lens[3] = strlen(limit);
	result = lock_call(l, &script_status, 3, 1, args, lens, 0, &r);
	if (result != CONN_OK)
		return (lock_fail_code(l, result));
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY ||
	    r->element[1]->type != REDIS_REPLY_ARRAY)
		return (lock_unexpected(l, "status", r,
		    "array of holders and metadata"));
	list = r->element[0];
	for (i = 0; i < list->elements; i++) {
		e = list->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[1]->type != REDIS_REPLY_INTEGER)
			return (lock_unexpected(l, "status", r,
			    "token and TTL for each holder"));
	}
	hs = xcalloc(list->elements, sizeof(*hs));
	for (i = 0; i < list->elements; i++) {
		e = list->element[i];
		hs[i].fence = -1;
		hs[i].pid = -1;
		hs[i].token = status_str(e->element[0]);
		hs[i].ttl_ms = e->element[1]->integer;
		hs[i].ours = l->token != NULL &&
		    strcmp(hs[i].token, l->token) == 0;
		status_meta(&hs[i], r->element[1], l->limit > 0);
	}
	*out = hs;
	*n = list->elements;
	freeReplyObject(r);
	return (EXIT_OK);
}

void
lock_holders_free(struct lock_holder *hs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(hs[i].token);
		free(hs[i].host);
		free(hs[i].command);
	}
	free(hs);
}
