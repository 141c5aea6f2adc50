/* SPDX-License-Identifier: MIT */
/*
 * list's second half: the servers' views of each lock found merged into
 * the majority's (lock-list.c scans), and for list --all, the names under
 * the prefix that nobody holds but that have
 * a history (issue 36), each with its last run, beside the held locks of
 * lock-list.c.  A history key is found by SCAN as "{KEY}:history" (the
 * companion of a KEY without braces: keyslot.c); its KEY is read back
 * from it, and its last run read as `history` reads it, merged over a
 * quorum.  Names with braces in them are listed only while held.
 */

#include <stdlib.h>
#include <string.h>

#include "lock-impl.h"

#define LIST_HISTORY_SUFFIX	"}:history"

static int	 list_cmp(const void *, const void *);

/* The glob of the history keys of the names that pattern matches. */
char *
list_history_glob(const char *prefix, const char *pattern)
{
	char	*out = xmalloc(2 * strlen(prefix) + strlen(pattern) +
		    sizeof(LIST_HISTORY_SUFFIX) + 2), *p = out;

	*p++ = '\\';		/* a literal '{' */
	*p++ = '{';
	for (; *prefix != '\0'; prefix++) {
		if (strchr("*?[]\\{}", *prefix) != NULL)
			*p++ = '\\';
		*p++ = *prefix;
	}
	(void)strcpy(p, pattern);
	(void)strcat(p, LIST_HISTORY_SUFFIX);
	return (out);
}

/*
 * The KEY (the prefix left out) whose history key is k, or NULL: k must
 * be exactly "{PREFIX KEY}:history", KEY without braces.
 */
char *
list_history_name(const char *k, size_t len, const char *prefix)
{
	size_t	plen = prefix != NULL ? strlen(prefix) : 0;
	size_t	slen = strlen(LIST_HISTORY_SUFFIX), n;

	if (len < 1 + plen + slen + 1 || k[0] != '{' ||
	    memcmp(k + len - slen, LIST_HISTORY_SUFFIX, slen) != 0 ||
	    (plen > 0 && memcmp(k + 1, prefix, plen) != 0))
		return (NULL);
	n = len - 1 - plen - slen;
	if (memchr(k + 1 + plen, '{', n) != NULL ||
	    memchr(k + 1 + plen, '}', n) != NULL)
		return (NULL);
	return (xasprintf("%.*s", (int)n, k + 1 + plen));
}

static int
list_entry_cmp(const void *a, const void *b)
{
	const struct lock_entry *x = a, *y = b;

	return (strcmp(x->key, y->key));
}

/* Whether out already lists key (held: lock-list.c found it). */
static int
list_has(const struct lock_listing *out, size_t held, const char *key)
{
	size_t i;

	for (i = 0; i < held; i++)
		if (strcmp(out->entries[i].key, key) == 0)
			return (1);
	return (0);
}

/*
 * Add to out each of the n names (taken over) that is not held, with its
 * last run; out stays sorted by key.  A name whose history cannot be read
 * by a majority, or has gone meanwhile, is left out.
 */
void
list_add_free(const struct global_opts *opts, char **names, size_t n,
    struct lock_listing *out)
{
	struct lock_spec	 spec;
	struct lock		*l;
	struct lock_entry	*e;
	struct lock_run		*runs;
	size_t			 i, held = out->n, nruns;

	for (i = 0; i < n; i++) {
		if (list_has(out, held, names[i]) ||
		    (i > 0 && strcmp(names[i], names[i - 1]) == 0)) {
			free(names[i]);
			continue;
		}
		memset(&spec, 0, sizeof(spec));
		spec.key = names[i];
		l = lock_open(opts, &spec);
		if (lock_history(l, 1, &runs, &nruns) != EXIT_OK ||
		    nruns == 0) {
			lock_runs_free(runs, nruns);
			lock_close(l);
			free(names[i]);
			continue;
		}
		lock_close(l);
		out->entries = xreallocarray(out->entries, out->n + 1,
		    sizeof(*out->entries));
		e = &out->entries[out->n++];
		memset(e, 0, sizeof(*e));
		e->key = names[i];
		e->st.last = runs;
		e->st.mode = "exclusive";
		(void)snprintf(e->st.queue, sizeof(e->st.queue), "any");
	}
	free(names);
	if (out->n > 0)
		qsort(out->entries, out->n, sizeof(*out->entries),
		    list_entry_cmp);
}

static int
list_cmp(const void *a, const void *b)
{
	const struct list_found *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return (c);
	return (x->server < y->server ? -1 : x->server > y->server);
}

/*
 * Each key's views, one per URL (a server that failed: its error; one
 * that has no such lock: free), and the majority's view of them; only the
 * keys held on a majority are listed.  Takes lr->found over.
 */
void
list_merge(struct list_run *lr, struct lock_listing *out)
{
	struct lock		*l = lr->l;
	struct lock_entry	*e;
	struct list_found	*f;
	size_t			 i, j, s;

	/* qsort() may not be given NULL, even for no element. */
	if (lr->nfound > 0)
		qsort(lr->found, lr->nfound, sizeof(*lr->found), list_cmp);
	for (i = 0; i < lr->nfound; i = j) {
		out->entries = xreallocarray(out->entries, out->n + 1,
		    sizeof(*out->entries));
		e = &out->entries[out->n];
		memset(e, 0, sizeof(*e));
		e->key = lr->found[i].key;
		e->st.nviews = l->nconns;
		e->st.views = xcalloc(l->nconns, sizeof(*e->st.views));
		for (s = 0; s < l->nconns; s++) {
			e->st.views[s].display = conn_display(l->conns[s]);
			if (lr->errors[s] != NULL)
				e->st.views[s].error = xstrdup(lr->errors[s]);
		}
		for (j = i; j < lr->nfound &&
		    strcmp(lr->found[j].key, e->key) == 0; j++) {
			f = &lr->found[j];
			if (j > i)
				free(f->key);
			/* SCAN may return a key twice: the first counts. */
			if (lr->errors[f->server] != NULL ||
			    e->st.views[f->server].holders != NULL) {
				lock_holders_free(f->view.holders,
				    f->view.nholders);
				lock_waiters_free(f->view.waiters,
				    f->view.nwaiters);
				continue;
			}
			f->view.display = e->st.views[f->server].display;
			e->st.views[f->server] = f->view;
			if (f->view.nholders > 0)
				e->st.mode = f->view.mode;
			if (f->limit != 0 && (e->limit <= 0 || f->limit > 0))
				e->limit = f->limit;
		}
		lock_state_majority(&e->st, l->quorum);
		if (e->st.nholders > 0)
			out->n++;
		else {
			free(e->key);
			lock_state_free(&e->st);
		}
	}
	free(lr->found);
	lr->found = NULL;
	lr->nfound = 0;
}
