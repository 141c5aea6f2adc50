/* SPDX-License-Identifier: MIT */
/*
 * list: every held lock under the prefix whose KEY matches a glob, on
 * every server (every master of a Cluster), and the majority's view of
 * each in quorum mode.  Keys are found with SCAN (never KEYS, which
 * blocks the server for as long as it has keys), a page of a bounded
 * COUNT at a time; each page's candidates go to the list script in one
 * call, which returns the snapshot of those that are locks, so 10,000
 * locks cost tens of round trips, not 10,000.  Read only.
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

/* A SCAN page's candidates: each key's name and its companions'. */
struct list_page {
	const char	**args;		/* the two bounds, then 3 per key */
	size_t		 *lens;
	char		**owned;	/* the companions' names */
	size_t		  n;		/* keys */
};

static int	 list_server(struct list_run *, size_t, const char *);
static int	 list_scan(struct list_run *, size_t, struct conn *,
		     const char *);
static int	 list_cursor_next(struct list_run *, struct conn *,
		     struct cursor *, const redisReply *);
static int	 list_scan_page(struct list_run *, size_t, struct conn *, int,
		     const redisReply *);
static void	 list_page_fill(struct list_page *, const redisReply *);
static void	 list_page_free(struct list_page *);
static int	 list_call(struct list_run *, size_t, struct conn *,
		     struct list_page *, size_t, size_t *);
static int	 list_take(struct list_run *, size_t, const redisReply *);
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

/*
 * The names each candidate key comes with (see scripts-list.h): the key,
 * then its companions: metadata, queue's leases, readers and the
 * readers' metadata, and the queue's ':who' hash (its mode).
 */
static const char *const list_companions[] = { "meta", "leases", "readers",
    "rmeta", "queue:who" };
#define LIST_OWNED	(sizeof(list_companions) / sizeof(list_companions[0]))
#define LIST_STRIDE	(1 + LIST_OWNED)

/* The candidates of one SCAN page (keys: its array of key names). */
static void
list_page_fill(struct list_page *pg, const redisReply *keys)
{
	static char	 listed[16], budget[] = LIST_REPLY_BUDGET;
	size_t		 i, j, c;
	const redisReply *k;
	char		**owned;

	(void)snprintf(listed, sizeof(listed), "%d", LOCK_STATUS_LISTED);
	memset(pg, 0, sizeof(*pg));
	pg->args = xcalloc(2 + LIST_STRIDE * keys->elements, sizeof(*pg->args));
	pg->lens = xcalloc(2 + LIST_STRIDE * keys->elements, sizeof(*pg->lens));
	pg->owned = xcalloc(LIST_OWNED * keys->elements, sizeof(*pg->owned));
	pg->args[0] = listed;
	pg->lens[0] = strlen(listed);
	pg->args[1] = budget;
	pg->lens[1] = strlen(budget);
	for (i = 0, j = 2; i < keys->elements; i++) {
		k = keys->element[i];
		if (k->type != REDIS_REPLY_STRING)
			continue;
		pg->args[j] = k->str;
		pg->lens[j++] = k->len;
		owned = &pg->owned[LIST_OWNED * pg->n];
		for (c = 0; c < LIST_OWNED; c++) {
			owned[c] = keyslot_companion(k->str, k->len,
			    list_companions[c], &pg->lens[j]);
			pg->args[j++] = owned[c];
		}
		pg->n++;
	}
}

static void
list_page_free(struct list_page *pg)
{
	size_t i;

	for (i = 0; i < LIST_OWNED * pg->n; i++)
		free(pg->owned[i]);
	free(pg->owned);
	free(pg->args);
	free(pg->lens);
}

/*
 * One list call for the page's keys from the start-th on; *next gets the
 * first key it did not look at (the byte budget ran out), or pg->n.
 * Returns 0 or an exit code, with lr->l's failure set.
 */
static int
list_call(struct list_run *lr, size_t server, struct conn *c,
    struct list_page *pg, size_t start, size_t *next)
{
	size_t		 at = LIST_STRIDE * start;
	const char	*a0 = pg->args[at], *a1 = pg->args[at + 1];
	size_t		 l0 = pg->lens[at], l1 = pg->lens[at + 1];
	redisReply	*r = NULL;
	int		 result, rc = 0;

	*next = pg->n;
	/* The two bounds go right in front of the start-th key. */
	pg->args[at] = pg->args[0];
	pg->lens[at] = pg->lens[0];
	pg->args[at + 1] = pg->args[1];
	pg->lens[at + 1] = pg->lens[1];
	script_call_many(&c, 1, scripts_list, 0, (int)(2 + LIST_STRIDE *
	    (pg->n - start)), pg->args + at, pg->lens + at, 0, &r, &result);
	if (start > 0) {
		pg->args[at] = a0;
		pg->lens[at] = l0;
		pg->args[at + 1] = a1;
		pg->lens[at + 1] = l1;
	}
	lr->commands++;
	if (result != CONN_OK) {
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
		/* ARGV[i] (from 1) is the ((i - 3) / LIST_STRIDE)-th key of
		 * this call */
		*next = start + (size_t)(r->element[0]->integer - 3) /
		    LIST_STRIDE;
	if (*next <= start)
		*next = start + 1;	/* never loop on one key */
	if (r != NULL)
		freeReplyObject(r);
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
	size_t			start, next;
	int			rc = 0;

	if (result != CONN_OK) {
		lock_failed(lr->l, conn_exit_code(result), "%s",
		    conn_error(c));
		return (conn_exit_code(result));
	}
	if (lr->history_pass)
		return (list_names(lr, r->element[1]));
	list_page_fill(&pg, r->element[1]);
	for (start = 0; rc == 0 && start < pg.n; start = next)
		rc = list_call(lr, server, c, &pg, start, &next);
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
