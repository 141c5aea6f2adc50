/* SPDX-License-Identifier: MIT */
/*
 * list [PATTERN]: every lock held under the prefix whose KEY matches the
 * glob PATTERN, one line each (sorted by KEY), or one JSON array of the
 * objects status --json prints.  Exit 0, also when nothing is held: an
 * operator's view, not a test.
 */

#include <stdio.h>

#include "redlock.h"
#include "print.h"

static int	cmd_list_exec(struct global_opts *, struct cmd_args *);

static const int cmd_list_options[] = { OPT_ALL, OPT_JSON, 0 };

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.usage = "[PATTERN] [--all] [--json]",
	.summary = "show every held lock whose KEY matches PATTERN (a glob, "
	    "default *)",
	.example = "redlock-cli list 'deploy-*'",
	.options = cmd_list_options,
	.flags = CMD_TAKES_TOPIC | CMD_NEEDS_SERVER,
	.exec = cmd_list_exec
};

static int
cmd_list_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_listing	ls;
	size_t			i;
	int			rc;

	if ((rc = lock_list(g, a->key != NULL ? a->key : "*",
	    a->all ? LOCK_LIST_ALL : 0, &ls)) != EXIT_OK) {
		log_warnx("%s", ls.error);
		lock_listing_free(&ls);
		return (rc);
	}
	log_debug("list: %zu commands sent", ls.commands);
	if (a->json)
		(void)putchar('[');
	for (i = 0; i < ls.n; i++) {
		if (a->json) {
			if (i > 0)
				(void)putchar(',');
			status_print_json(ls.entries[i].key,
			    ls.entries[i].limit, &ls.entries[i].st);
		} else
			status_print_entry(ls.entries[i].key,
			    ls.entries[i].limit, &ls.entries[i].st);
	}
	if (a->json)
		(void)puts("]");
	lock_listing_free(&ls);
	return (cmd_flush_stdout() == -1 ? EXIT_UNAVAILABLE : EXIT_OK);
}
