/* SPDX-License-Identifier: MIT */
/*
 * release KEY: give the lock up, if our token still holds it.
 */

#include <stdio.h>

#include "redlock.h"

static int	cmd_release_exec(struct global_opts *, struct cmd_args *);

static const int cmd_release_options[] = { OPT_TOKEN, OPT_LIMIT, 0 };

const struct cmd_entry cmd_release_entry = {
	.name = "release",
	.usage = "KEY [--token TOK] [--limit N]",
	.summary = "release the lock held by TOK; exit 3 if TOK does not "
	    "hold it",
	.example = "redlock-cli release deploy --token \"$TOKEN\"",
	.options = cmd_release_options,
	.flags = CMD_TAKES_KEY | CMD_TOKEN_FROM_ENV | CMD_NEEDS_SERVER,
	.exec = cmd_release_exec
};

static int
cmd_release_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec spec;
	struct lock	*l;
	int		 rc;

	if (a->token == NULL) {
		log_warnx("release: missing token: give --token or set "
		    "REDLOCK_TOKEN");
		return (EXIT_USAGE);
	}
	cmd_lock_spec(a, &spec);
	spec.token = a->token;
	l = lock_open(g, &spec);
	rc = lock_release(l);
	if (rc == EXIT_OK)
		log_info("released lock '%s'", a->key);
	else if (rc == EXIT_NOT_OWNER)
		cmd_report_not_owner(l, "release");
	else
		log_warnx("%s", lock_error(l));
	lock_close(l);
	return (rc);
}
