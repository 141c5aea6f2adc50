/* SPDX-License-Identifier: MIT */
/*
 * release --force: an operator removes whoever holds a lock (every slot
 * of a semaphore), ours or not, a foreign client's included.  The mode's
 * force script does it atomically on each server; the fence counter and
 * the waiters stay, and one waiter is woken.  A removed run hears it at
 * once, from the note the script leaves in its cancel key
 * (lock-listen.c), and stops its command.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static char	*force_str(const redisReply *);
static int	 force_parse(const redisReply *, struct lock_holder **,
		     size_t *, size_t *);
static void	 force_add(const redisReply *, struct lock_holder **,
		     size_t *);
static size_t	 force_call(struct lock *, struct lock_round *);

static char *
force_str(const redisReply *r)
{
	if (r->len == 0)
		return (NULL);
	return (xasprintf("%.*s", (int)r->len, r->str));
}

/* One removed holder {token, host, pid, command, since}, once each. */
static void
force_add(const redisReply *e, struct lock_holder **hs, size_t *n)
{
	struct lock_holder	*h;
	char			*tok = force_str(e->element[0]);
	size_t			 i;

	for (i = 0; tok != NULL && i < *n; i++)
		if (strcmp((*hs)[i].token, tok) == 0) {
			free(tok);
			return;		/* the same holder on another server */
		}
	if (tok == NULL)
		return;
	*hs = xreallocarray(*hs, *n + 1, sizeof(**hs));
	h = &(*hs)[(*n)++];
	memset(h, 0, sizeof(*h));
	h->token = tok;
	h->host = force_str(e->element[1]);
	h->pid = e->element[2]->len > 0 ? strtoll(e->element[2]->str, NULL,
	    10) : -1;
	h->command = force_str(e->element[3]);
	h->since_ms = e->element[4]->len > 0 ? strtoll(e->element[4]->str,
	    NULL, 10) : 0;
	h->fence = -1;
}

/*
 * A force reply: an array of 5-string arrays, the last one {'', 'more',
 * N} when the server listed only some (LUA_DROP_LIST): *more is the
 * largest such N of any server.  -1 if not.
 */
static int
force_parse(const redisReply *r, struct lock_holder **hs, size_t *n,
    size_t *more)
{
	const redisReply	*e;
	size_t			 i, j;
	long long		 rest;

	if (r->type != REDIS_REPLY_ARRAY)
		return (-1);
	for (i = 0; i < r->elements; i++) {
		if (r->element[i]->type != REDIS_REPLY_ARRAY ||
		    r->element[i]->elements != 5)
			return (-1);
		for (j = 0; j < 5; j++)
			if (r->element[i]->element[j]->type !=
			    REDIS_REPLY_STRING)
				return (-1);
	}
	for (i = 0; i < r->elements; i++) {
		e = r->element[i];
		if (e->element[0]->len == 0 && e->element[1]->len == 4 &&
		    memcmp(e->element[1]->str, "more", 4) == 0) {
			rest = strtoll(e->element[2]->str, NULL, 10);
			if (rest > 0 && (size_t)rest > *more)
				*more = (size_t)rest;
			continue;
		}
		force_add(e, hs, n);
	}
	return (0);
}

/*
 * The force script everywhere.  It leaves each removed holder a note in
 * its cancel key, naming us, where a run hears it at once (lock-listen.c).
 */
static size_t
force_call(struct lock *l, struct lock_round *rd)
{
	const char	*argv[5];
	char		 host[256], pid[32], size[16];
	size_t		 len;

	if (l->q.cancel_prefix == NULL)
		l->q.cancel_prefix = keyslot_companion(l->key, l->key_len,
		    "cancel:", &len);
	if (gethostname(host, sizeof(host)) == -1)
		(void)snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(pid, sizeof(pid), "%lld", (long long)getpid());
	argv[0] = l->q.wake_prefix;
	argv[1] = l->q.cancel_prefix;
	argv[2] = host;
	argv[3] = pid;
	/* Each holder removed gets its history entry: 'forced'. */
	(void)snprintf(size, sizeof(size), "%d", l->opts->history_size);
	argv[4] = size;
	return (lock_call(l, l->scripts->force, LOCK_NKEYS, 5, argv, NULL, 0,
	    rd));
}

/*
 * Remove every holder of l wherever it is held; *hs gets who they were
 * (lock_holder_clear() each, then free).  The operator need not know the
 * mode: a key that is of the other mode (a semaphore given without
 * --limit) is taken as what it is.  *more: how many more were removed
 * than listed (a server lists at most 1000).  Returns EXIT_OK when some
 * holder was removed, EXIT_BUSY when nothing held it, or the failure's
 * exit code.
 */
int
lock_force_release(struct lock *l, struct lock_holder **hs, size_t *n,
    size_t *more)
{
	struct lock_round	rd;
	size_t			i, answered = 0;

	*hs = NULL;
	*n = 0;
	*more = 0;
	(void)force_call(l, &rd);
	if (l->fail.type_clash == EXIT_USAGE) {
		lock_round_free(l, &rd);
		l->fail.type_clash = 0;
		l->spec.mode = l->spec.mode == LOCK_MUTEX ? LOCK_SEMAPHORE :
		    LOCK_MUTEX;
		l->scripts = l->spec.mode == LOCK_MUTEX ? &scripts_mutex :
		    &scripts_semaphore;
		(void)force_call(l, &rd);
	}
	for (i = 0; i < l->nconns; i++) {
		if (rd.results[i] != CONN_OK)
			continue;
		if (force_parse(rd.replies[i], hs, n, more) == -1) {
			(void)lock_unexpected(l, i, "release --force",
			    rd.replies[i], "array of removed holders");
			continue;
		}
		answered++;
	}
	lock_round_free(l, &rd);
	if (answered < l->quorum)
		return (lock_fail(l, answered));
	return (*n > 0 ? EXIT_OK : EXIT_BUSY);
}
