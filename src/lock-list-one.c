/* SPDX-License-Identifier: MIT */
/*
 * list in a Cluster slot that is being migrated.  There a call whose keys
 * partly do not exist is refused (TRYAGAIN), and of the six keys list's
 * script names for each candidate, the waiters' and readers' mostly do
 * not exist.  So lock-list.c hands such a slot's candidates here, to be
 * looked at one at a time, as status looks at one lock: a candidate whose
 * metadata, or readers' metadata, exists is a lock (EXISTS of one key,
 * which a migrating slot serves, or sends on with ASK), and lock_status()
 * reads it (its own three keys, then its waiters, one key a call).  A few
 * calls a candidate, but only while a slot migrates.  The status of a
 * semaphore or a shared lock names every key, so such a lock still fails
 * the list of its server until the migration ends.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static int	 one_is_lock(struct list_run *, struct conn *, const char *,
		     size_t, int *);
static int	 one_status(struct list_run *, size_t, char *);

/*
 * Whether key (as SCAN found it, the prefix included) has the metadata of
 * a lock: *is_lock.  0, or an exit code with lr->l's failure set.
 */
static int
one_is_lock(struct list_run *lr, struct conn *c, const char *key,
    size_t len, int *is_lock)
{
	static const char *const suffixes[] = { "meta", "rmeta" };
	const char	*argv[2] = { "EXISTS", NULL };
	size_t		 lens[2] = { 6, 0 }, i;
	redisReply	*r;
	char		*name;
	int		 result, rc = 0;

	*is_lock = 0;
	for (i = 0; rc == 0 && !*is_lock && i < 2; i++) {
		name = keyslot_companion(key, len, suffixes[i], &lens[1]);
		argv[1] = name;
		r = NULL;
		result = conn_command(c, 2, argv, lens, 0, &r);
		lr->commands++;
		free(name);
		if (result != CONN_OK) {
			rc = conn_exit_code(result);
			lock_failed(lr->l, rc, "%s", conn_error(c));
		} else if (r->type != REDIS_REPLY_INTEGER) {
			rc = EXIT_PROTOCOL;
			lock_failed(lr->l, rc, "%s: unexpected reply to EXISTS",
			    conn_display(c));
		} else
			*is_lock = r->integer > 0;
		if (r != NULL)
			freeReplyObject(r);
	}
	return (rc);
}

/*
 * The lock name (the prefix left out; taken over) as the server-th URL
 * sees it, into lr->found when it is held there.  0 or an exit code.
 */
static int
one_status(struct list_run *lr, size_t server, char *name)
{
	struct lock_spec	 spec;
	struct lock_state	 st;
	struct list_found	*f;
	struct lock		*l;
	struct lock_view	*v;
	int			 rc;

	memset(&spec, 0, sizeof(spec));
	spec.key = name;
	l = lock_open(lr->opts, &spec);
	rc = lock_status(l, &st);
	lr->commands++;
	v = st.views != NULL ? &st.views[server] : NULL;
	if (v == NULL || v->error != NULL) {
		rc = rc != EXIT_OK ? rc : EXIT_UNAVAILABLE;
		lock_failed(lr->l, rc, "%s", v != NULL ? v->error :
		    lock_error(l));
		free(name);
	} else if (v->nholders == 0)
		free(name);
	else {
		lr->found = xreallocarray(lr->found, lr->nfound + 1,
		    sizeof(*lr->found));
		f = &lr->found[lr->nfound++];
		memset(f, 0, sizeof(*f));
		f->key = name;
		f->server = server;
		f->view = *v;
		f->limit = v->mode == NULL ||
		    strcmp(v->mode, "semaphore") != 0 ? 0 :
		    v->limit > 0 ? v->limit : -1;
		memset(v, 0, sizeof(*v));	/* f has it now */
		rc = EXIT_OK;
	}
	lock_state_free(&st);
	lock_close(l);
	return (rc);
}

/*
 * The n keys SCAN found on c, of one slot that migrates, for the
 * server-th URL, one at a time.  0, or an exit code with lr->l's failure
 * set.
 */
int
list_one_by_one(struct list_run *lr, size_t server, struct conn *c,
    const char *const *keys, const size_t *lens, size_t n)
{
	size_t	i;
	int	rc = 0, is_lock;

	for (i = 0; rc == 0 && i < n; i++) {
		if (lens[i] < lr->prefix_len)
			continue;
		rc = one_is_lock(lr, c, keys[i], lens[i], &is_lock);
		if (rc == 0 && is_lock)
			rc = one_status(lr, server, xasprintf("%.*s",
			    (int)(lens[i] - lr->prefix_len),
			    keys[i] + lr->prefix_len));
	}
	return (rc);
}
