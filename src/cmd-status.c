/* SPDX-License-Identifier: MIT */
/*
 * status KEY: who holds the lock.  Exit 0 when held, 1 when free, like
 * `systemctl is-active`, so scripts can test it directly.  With --limit,
 * every holder of the semaphore; of a shared lock, every reader (status
 * needs no -s: the lock says which mode it is in).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"
#include "print.h"

static int	cmd_status_exec(struct global_opts *, struct cmd_args *);
static void	cmd_status_last(struct lock *, struct lock_state *);
static void	cmd_status_hint(const struct global_opts *, const char *);

static const int cmd_status_options[] = { OPT_JSON, OPT_LIMIT, 0 };

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "KEY [--limit N] [--json]",
	.summary = "show who holds the lock; exit 0 if it is held, 1 if it "
	    "is free",
	.example = "redlock-cli status deploy --json",
	.options = cmd_status_options,
	.flags = CMD_TAKES_KEY | CMD_NEEDS_SERVER,
	.exec = cmd_status_exec
};

static int
cmd_status_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec	 spec;
	struct lock		*l;
	struct lock_state	 st;
	int64_t			 limit;
	int			 rc;

	cmd_lock_spec(a, &spec);
	l = lock_open(g, &spec);
	if ((rc = lock_status(l, &st)) != EXIT_OK) {
		log_warnx("%s", lock_error(l));
		lock_state_free(&st);
		lock_close(l);
		return (rc);
	}
	/* A semaphore's limit is stored with it: a --limit that disagrees
	 * is a mistake, and without one the stored limit is shown. */
	if (a->limit > 0 && st.limit > 0 && st.limit != a->limit) {
		log_warnx("lock '%s' is a semaphore of %lld slots: --limit "
		    "%lld does not match it", a->key, (long long)st.limit,
		    (long long)a->limit);
		lock_state_free(&st);
		lock_close(l);
		return (EXIT_USAGE);
	}
	limit = a->limit > 0 ? a->limit : st.limit;
	cmd_status_last(l, &st);
	if (a->json) {
		status_print_json(a->key, limit, &st);
		(void)putchar('\n');
	} else
		status_print_text(a->key, limit, &st);
	/* 1 means "free", as the contract says. */
	rc = st.nholders > 0 ? EXIT_OK : EXIT_BUSY;
	if (rc == EXIT_BUSY && st.last == NULL && g->prefix == NULL &&
	    !g->quiet)
		cmd_status_hint(g, a->key);
	if (cmd_flush_stdout() == -1 && rc == EXIT_OK)
		rc = EXIT_UNAVAILABLE;
	if (st.last != NULL)
		lock_runs_free(st.last, 1);
	lock_state_free(&st);
	lock_close(l);
	return (rc);
}

/*
 * A free lock: how its last run ended, from its history.  A history that
 * cannot be read leaves the answer as it is: the lock is free either way.
 */
static void
cmd_status_last(struct lock *l, struct lock_state *st)
{
	struct lock_run	*runs;
	size_t		 n;

	if (st->nholders > 0 || lock_history(l, 1, &runs, &n) != EXIT_OK)
		return;
	if (n > 0)
		st->last = runs;
	else
		lock_runs_free(runs, n);
}

/*
 * A free name that has never run here (no history), asked without
 * --prefix: a lock held under some prefix with this name is likely what
 * was meant, as list shows it ('app:k').  Said on stderr; the answer
 * stays "free".  A bounded look (the first SCAN pages: LOCK_LIST_FEW),
 * so a large keyspace costs a status a few milliseconds at most.
 */
static void
cmd_status_hint(const struct global_opts *g, const char *key)
{
	struct lock_listing	 ls;
	char			*glob, *p;
	const char		*held;
	char			 shown[600];
	size_t			 i, n, klen = strlen(key);

	glob = xmalloc(2 * klen + 2);
	p = glob;
	*p++ = '*';
	for (; *key != '\0'; key++) {
		if (strchr("*?[]\\", *key) != NULL)
			*p++ = '\\';
		*p++ = *key;
	}
	*p = '\0';
	key -= klen;
	if (lock_list(g, glob, LOCK_LIST_FEW, &ls) == EXIT_OK)
		for (i = 0; i < ls.n; i++) {
			held = ls.entries[i].key;
			if ((n = strlen(held)) <= klen ||
			    strcmp(held + n - klen, key) != 0)
				continue;
			/* What a server sent is made printable. */
			log_sanitize(shown, sizeof(shown), held, n);
			log_warnx("lock '%s' is free, but '%s' is held: did you "
			    "mean --prefix '%.*s'?", key, shown,
			    (int)(strlen(shown) - klen), shown);
			break;
		}
	lock_listing_free(&ls);
	free(glob);
}
