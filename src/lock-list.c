/* SPDX-License-Identifier: MIT */
/*
 * list: every held lock under the prefix whose KEY matches a glob, on
 * every server (every master of a Cluster), and the majority's view of
 * each in quorum mode.  Keys are found with SCAN (never KEYS, which
 * blocks the server for as long as it has keys), a page of a bounded
 * COUNT at a time; each page's candidates go to the list script in one
 * call, which returns the snapshot of those that are locks, so 10,000
 * locks cost tens of round trips, not 10,000.  The candidates and their
 * companions are the script's KEYS, and a Cluster wants one slot a call:
 * there a page's candidates are sorted by slot, and each slot's go in a
 * call of their own.  Read only.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

/* Keys SCAN looks at per call: each call stays well under a millisecond. */
#define LIST_SCAN_COUNT		"1000"
/* LOCK_LIST_FEW: SCAN pages per server, a bounded look for a hint. */
#define LIST_FEW_PAGES		10
/* Metadata bytes one list call may return (conn-impl.h's bounds). */
#define LIST_REPLY_BUDGET	"600000"

/*
 * The names each candidate key comes with (see scripts-list.h): the key,
 * then its companions: metadata, queue's leases, readers and the
 * readers' metadata, and the queue's ':who' hash (its mode).
 */
static const char *const list_companions[] = { "meta", "leases", "readers",
    "rmeta", "queue:who" };
#define LIST_OWNED	(sizeof(list_companions) / sizeof(list_companions[0]))
#define LIST_STRIDE	(1 + LIST_OWNED)

/* One candidate: its names, the key's (in the SCAN reply) first. */
struct list_candidate {
	const char	*names[LIST_STRIDE];
	size_t		 lens[LIST_STRIDE];
	char		*owned[LIST_OWNED];	/* the companions' */
	unsigned int	 slot;		/* in a Cluster */
};

/* A SCAN page's candidates, by slot in a Cluster. */
struct list_page {
	struct list_candidate *c;
	size_t		  n;
};

static int	 list_server(struct list_run *, size_t, const char *);
static int	 list_scan(struct list_run *, size_t, struct conn *,
		     const char *);
static int	 list_cursor_next(struct list_run *, struct conn *,
		     struct cursor *, const redisReply *);
static int	 list_scan_page(struct list_run *, size_t, struct conn *, int,
		     const redisReply *);
static void	 list_page_fill(struct list_run *, struct list_page *,
		     const redisReply *);
static int	 list_slot_cmp(const void *, const void *);
static void	 list_page_free(struct list_page *);
static int	 list_call(struct list_run *, size_t, struct conn *,
		     struct list_page *, size_t, size_t, size_t *);
static int	 list_take(struct list_run *, size_t, const redisReply *);
static int	 list_slot_migrating(struct list_run *, size_t, struct conn *,
		     const struct list_page *, size_t, size_t);
static char	*list_glob(const char *, const char *);
static int	 list_names(struct list_run *, const redisReply *);
static void	 list_all(struct list_run *, const char *,
		     struct lock_listing *);
static int	 list_strcmp(const void *, const void *);

/* PREFIX with the glob's special characters escaped, then PATTERN. */
static char *
list_glob(const char *prefix, const char *pattern)
{
	char	*out = xmalloc(2 * strlen(prefix) + strlen(pattern) + 1), *p;

	for (p = out; *prefix != '\0'; prefix++) {
		if (strchr("*?[]\\", *prefix) != NULL)
			*p++ = '\\';
		*p++ = *prefix;
	}
	(void)strcpy(p, pattern);
	return (out);
}

/* The candidates of one SCAN page (keys: its array of key names). */
static void
list_page_fill(struct list_run *lr, struct list_page *pg,
    const redisReply *keys)
{
	struct list_candidate	*cand;
	const redisReply	*k;
	size_t			 i, c;

	pg->c = xcalloc(keys->elements + 1, sizeof(*pg->c));
	pg->n = 0;
	for (i = 0; i < keys->elements; i++) {
		k = keys->element[i];
		if (k->type != REDIS_REPLY_STRING)
			continue;
		cand = &pg->c[pg->n++];
		cand->names[0] = k->str;
		cand->lens[0] = k->len;
		for (c = 0; c < LIST_OWNED; c++) {
			cand->owned[c] = keyslot_companion(k->str, k->len,
			    list_companions[c], &cand->lens[1 + c]);
			cand->names[1 + c] = cand->owned[c];
		}
		cand->slot = lr->cluster ? keyslot(k->str, k->len) : 0;
	}
	if (lr->cluster)
		qsort(pg->c, pg->n, sizeof(*pg->c), list_slot_cmp);
}

static int
list_slot_cmp(const void *a, const void *b)
{
	const struct list_candidate *x = a, *y = b;

	return (x->slot < y->slot ? -1 : x->slot > y->slot);
}

static void
list_page_free(struct list_page *pg)
{
	size_t i, c;

	for (i = 0; i < pg->n; i++)
		for (c = 0; c < LIST_OWNED; c++)
			free(pg->c[i].owned[c]);
	free(pg->c);
}

/*
 * One list call for the page's candidates from the start-th to the one
 * before end (one slot's, in a Cluster); *next gets the first it did not
 * look at (the byte budget ran out), or end.  Returns 0 or an exit code,
 * with lr->l's failure set.
 */
static int
list_call(struct list_run *lr, size_t server, struct conn *c,
    struct list_page *pg, size_t start, size_t end, size_t *next)
{
	static char	 budget[] = LIST_REPLY_BUDGET;
	char		 listed[16];
	size_t		 nkeys = LIST_STRIDE * (end - start), i, *lens;
	const char	**args;
	redisReply	*r = NULL;
	int		 result, rc = 0;

	(void)snprintf(listed, sizeof(listed), "%d", LOCK_STATUS_LISTED);
	args = xcalloc(nkeys + 2, sizeof(*args));
	lens = xcalloc(nkeys + 2, sizeof(*lens));
	for (i = 0; i < nkeys; i++) {
		args[i] = pg->c[start + i / LIST_STRIDE].names[i % LIST_STRIDE];
		lens[i] = pg->c[start + i / LIST_STRIDE].lens[i % LIST_STRIDE];
	}
	args[nkeys] = listed;
	lens[nkeys] = strlen(listed);
	args[nkeys + 1] = budget;
	lens[nkeys + 1] = strlen(budget);
	*next = end;
	script_call_many(&c, 1, scripts_list, (int)nkeys, 2, args, lens, 0, &r,
	    &result);
	free(args);
	free(lens);
	lr->commands++;
	if (result == CONN_TRANSIENT && lr->cluster &&
	    strstr(conn_error(c), "TRYAGAIN") != NULL)
		rc = list_slot_migrating(lr, server, c, pg, start, end);
	else if (result != CONN_OK) {
		lock_failed(lr->l, conn_exit_code(result), "%s",
		    conn_error(c));
		rc = conn_exit_code(result);
	} else if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
	    r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[0]->integer < 0 ||
	    list_take(lr, server, r) == -1) {
		lock_failed(lr->l, EXIT_PROTOCOL, "%s: unexpected reply to "
		    "list", conn_display(c));
		rc = EXIT_PROTOCOL;
	} else if (r->element[0]->integer > 0)
		/* KEYS[i] (from 1) is the ((i - 1) / LIST_STRIDE)-th
		 * candidate of this call */
		*next = start + (size_t)(r->element[0]->integer - 1) /
		    LIST_STRIDE;
	if (*next <= start)
		*next = start + 1;	/* never loop on one key */
	if (r != NULL)
		freeReplyObject(r);
	return (rc);
}

/*
 * The candidates from start to end of a slot that migrates, whose call
 * came back TRYAGAIN: a lock at a time (lock-list-one.c).
 */
static int
list_slot_migrating(struct list_run *lr, size_t server, struct conn *c,
    const struct list_page *pg, size_t start, size_t end)
{
	const char	**keys = xcalloc(end - start, sizeof(*keys));
	size_t		 *lens = xcalloc(end - start, sizeof(*lens)), i;
	int		  rc;

	log_debug("list: %s", conn_error(c));
	for (i = start; i < end; i++) {
		keys[i - start] = pg->c[i].names[0];
		lens[i - start] = pg->c[i].lens[0];
	}
	rc = list_one_by_one(lr, server, c, keys, lens, end - start);
	free(keys);
	free(lens);
	return (rc);
}

/* The locks of one list reply, into lr->found.  -1 if malformed. */
static int
list_take(struct list_run *lr, size_t server, const redisReply *r)
{
	const redisReply	*e;
	struct list_found	*f;
	size_t			 i;
	int			 is_sem;

	for (i = 1; i < r->elements; i++) {
		e = r->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 9 ||
		    e->element[0]->type != REDIS_REPLY_STRING ||
		    e->element[0]->len < lr->prefix_len ||
		    e->element[6]->type != REDIS_REPLY_STRING)
			return (-1);
		is_sem = strcmp(e->element[6]->str, "semaphore") == 0;
		lr->found = xreallocarray(lr->found, lr->nfound + 1,
		    sizeof(*lr->found));
		f = &lr->found[lr->nfound];
		memset(f, 0, sizeof(*f));
		if (lock_view_parse(e->element + 1, 8, NULL, &f->view) == -1) {
			lock_holders_free(f->view.holders, f->view.nholders);
			lock_waiters_free(f->view.waiters, f->view.nwaiters);
			return (-1);
		}
		f->key = xasprintf("%.*s", (int)(e->element[0]->len -
		    lr->prefix_len), e->element[0]->str + lr->prefix_len);
		f->server = server;
		f->limit = !is_sem ? 0 : f->view.limit > 0 ? f->view.limit : -1;
		lr->nfound++;
	}
	return (0);
}

/*
 * The cursor of the SCAN reply k into cur (cursor_next()).  Returns 1 for
 * another page, 0 at the end, or -1 with lr->l's failure set.
 */
static int
list_cursor_next(struct list_run *lr, struct conn *c, struct cursor *cur,
    const redisReply *k)
{
	char shown[48];

	switch (cursor_next(cur, k->str, k->len)) {
	case CURSOR_MORE:
		return (1);
	case CURSOR_END:
		return (0);
	case CURSOR_BAD:
		log_sanitize(shown, sizeof(shown), k->str, k->len);
		lock_failed(lr->l, EXIT_PROTOCOL, "list: %s returned a bad "
		    "SCAN cursor '%s'", conn_display(c), shown);
		break;
	case CURSOR_AGAIN:
		lock_failed(lr->l, EXIT_PROTOCOL, "list: %s returned SCAN "
		    "cursor '%.*s' again: the scan would loop",
		    conn_display(c), (int)k->len, k->str);
		break;
	case CURSOR_ENDLESS:
		lock_failed(lr->l, EXIT_PROTOCOL, "list: %s: SCAN did not end "
		    "after %d calls", conn_display(c), CURSOR_MAX_CALLS);
		break;
	}
	return (-1);
}

/* One SCAN reply r (result: conn_command()'s): its page of keys listed. */
static int
list_scan_page(struct list_run *lr, size_t server, struct conn *c,
    int result, const redisReply *r)
{
	struct list_page	pg;
	size_t			start, end, next;
	int			rc = 0;

	if (result != CONN_OK) {
		lock_failed(lr->l, conn_exit_code(result), "%s",
		    conn_error(c));
		return (conn_exit_code(result));
	}
	if (lr->history_pass)
		return (list_names(lr, r->element[1]));
	list_page_fill(lr, &pg, r->element[1]);
	for (start = 0; rc == 0 && start < pg.n; start = next) {
		/* a Cluster's call: one slot's candidates */
		for (end = start + 1; end < pg.n &&
		    pg.c[end].slot == pg.c[start].slot; end++)
			;
		rc = list_call(lr, server, c, &pg, start, end, &next);
	}
	list_page_free(&pg);
	return (rc);
}

/*
 * Every page of SCAN on c, for the server-th URL, until the cursor comes
 * back 0 (list_cursor_next says when it never would).  0 or an exit code.
 */
static int
list_scan(struct list_run *lr, size_t server, struct conn *c,
    const char *glob)
{
	const char		*argv[6] = { "SCAN", NULL, "MATCH", glob, "COUNT",
				    LIST_SCAN_COUNT };
	struct cursor		 cur;
	char			 sent[24];
	size_t			 lens[6], i;
	redisReply		*r;
	int			 result, rc, more = 0, few_left = LIST_FEW_PAGES;

	cursor_start(&cur);
	do {
		(void)snprintf(sent, sizeof(sent), "%llu",
		    (unsigned long long)cur.value);
		argv[1] = sent;
		for (i = 0; i < 6; i++)
			lens[i] = strlen(argv[i]);
		r = NULL;
		result = conn_command(c, 6, argv, lens, 0, &r);
		lr->commands++;
		if (result == CONN_OK && (r->type != REDIS_REPLY_ARRAY ||
		    r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_STRING ||
		    r->element[1]->type != REDIS_REPLY_ARRAY)) {
			lock_failed(lr->l, EXIT_PROTOCOL, "%s: unexpected "
			    "reply to SCAN", conn_display(c));
			rc = EXIT_PROTOCOL;
		} else if (result == CONN_OK && (more = list_cursor_next(lr, c,
		    &cur, r->element[0])) == -1)
			rc = EXIT_PROTOCOL;
		else
			rc = list_scan_page(lr, server, c, result, r);
		if (r != NULL)
			freeReplyObject(r);
	} while (rc == 0 && more && (!lr->few || --few_left > 0));
	return (rc);
}

/* The server-th URL: its one server, or every master of its Cluster. */
static int
list_server(struct list_run *lr, size_t server, const char *glob)
{
	struct conn	*c = lr->l->conns[server], **masters;
	size_t		 i, n;
	int		 result, rc = 0;

	result = conn_cluster_masters(c, 0, &masters, &n);
	lr->commands++;
	if (result != CONN_OK) {
		lock_failed(lr->l, conn_exit_code(result), "%s",
		    conn_error(c));
		return (conn_exit_code(result));
	}
	lr->cluster = n > 0;
	if (n == 0)
		return (list_scan(lr, server, c, glob));
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = list_scan(lr, server, masters[i], glob);
		conn_free(masters[i]);
	}
	free(masters);
	return (rc);
}

/*
 * Every lock held under the prefix whose KEY matches pattern, sorted by
 * KEY, each as a majority of the servers sees it.  Returns EXIT_OK (also
 * when none is held) when a majority answered, or the failure's exit
 * code, with its message in out->error; lock_listing_free() frees out
 * either way.
 */
int
lock_list(const struct global_opts *opts, const char *pattern, int flags,
    struct lock_listing *out)
{
	struct lock_spec	 spec;
	struct list_run		 lr;
	char			*glob;
	size_t			 s, answered = 0;
	int			 rc = EXIT_OK;

	memset(out, 0, sizeof(*out));
	memset(&spec, 0, sizeof(spec));
	memset(&lr, 0, sizeof(lr));
	spec.key = "";
	lr.l = lock_open(opts, &spec);
	lr.opts = opts;
	lr.prefix = opts->prefix != NULL ? opts->prefix : "";
	lr.few = flags & LOCK_LIST_FEW;
	lr.prefix_len = strlen(lr.prefix);
	lr.errors = xcalloc(lr.l->nconns, sizeof(*lr.errors));
	glob = list_glob(opts->prefix != NULL ? opts->prefix : "", pattern);
	for (s = 0; s < lr.l->nconns; s++) {
		if (list_server(&lr, s, glob) == 0) {
			answered++;
			continue;
		}
		lr.errors[s] = xstrdup(lr.l->fail.text);
	}
	free(glob);
	if (answered < lr.l->quorum) {
		rc = lock_fail(lr.l, answered);
		(void)snprintf(out->error, sizeof(out->error), "%s",
		    lock_error(lr.l));
	}
	list_merge(&lr, out);
	if ((flags & LOCK_LIST_ALL) && rc == EXIT_OK)
		list_all(&lr, pattern, out);
	out->commands = lr.commands;
	for (s = 0; s < lr.l->nconns; s++)
		free(lr.errors[s]);
	free(lr.errors);
	lock_close(lr.l);
	return (rc);
}

/* --all: each server's history keys, then the free names' last runs. */
static void
list_all(struct list_run *lr, const char *pattern, struct lock_listing *out)
{
	char	*glob = list_history_glob(lr->prefix, pattern);
	size_t	 s;

	lr->history_pass = 1;
	for (s = 0; s < lr->l->nconns; s++)
		if (lr->errors[s] == NULL)
			(void)list_server(lr, s, glob);
	free(glob);
	if (lr->nnames > 0)
		qsort(lr->names, lr->nnames, sizeof(*lr->names), list_strcmp);
	list_add_free(lr->l->opts, lr->names, lr->nnames, out);
	lr->names = NULL;
}

/* A SCAN page of history keys: their names, into lr->names. */
static int
list_names(struct list_run *lr, const redisReply *keys)
{
	size_t	 i;
	char	*name;

	for (i = 0; i < keys->elements; i++) {
		if (keys->element[i]->type != REDIS_REPLY_STRING ||
		    (name = list_history_name(keys->element[i]->str,
		    keys->element[i]->len, lr->prefix)) == NULL)
			continue;
		lr->names = xreallocarray(lr->names, lr->nnames + 1,
		    sizeof(*lr->names));
		lr->names[lr->nnames++] = name;
	}
	return (0);
}

static int
list_strcmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

void
lock_listing_free(struct lock_listing *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->entries[i].key);
		if (ls->entries[i].st.last != NULL)
			lock_runs_free(ls->entries[i].st.last, 1);
		lock_state_free(&ls->entries[i].st);
	}
	free(ls->entries);
	memset(ls, 0, sizeof(*ls));
}
