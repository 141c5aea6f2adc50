/* SPDX-License-Identifier: MIT */
/*
 * extend KEY: reset the lock's TTL, if our token still holds it.
 */

#include <stdio.h>

#include "redlock.h"

static int	cmd_extend_exec(struct global_opts *, struct cmd_args *);

static const int cmd_extend_options[] = { OPT_TOKEN, OPT_TTL, OPT_LIMIT, 0 };

const struct cmd_entry cmd_extend_entry = {
	.name = "extend",
	.usage = "KEY [--token TOK] [-t TTL] [--limit N]",
	.summary = "give the lock held by TOK a new TTL; exit 3 if TOK does "
	    "not hold it",
	.example = "redlock-cli extend deploy --token \"$TOKEN\" -t 10m",
	.options = cmd_extend_options,
	.flags = CMD_TAKES_KEY | CMD_TOKEN_FROM_ENV | CMD_NEEDS_SERVER,
	.exec = cmd_extend_exec
};

static int
cmd_extend_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec spec;
	struct lock	*l;
	char		 ttl[32];
	int		rc;

	if (a->token == NULL) {
		log_warnx("extend: missing token: give --token or set "
		    "REDLOCK_TOKEN");
		return (EXIT_USAGE);
	}
	cmd_lock_spec(a, &spec);
	spec.token = a->token;
	l = lock_open(g, &spec);
	/* Without -t, the TTL the lock was taken with: not the default,
	 * which would shorten a lock taken with -t 5m. */
	rc = lock_extend(l, a->ttl_given ? a->ttl_ms : 0, 0);
	if (rc == EXIT_OK) {
		duration_format(lock_ttl_ms(l), ttl, sizeof(ttl));
		log_info("extended lock '%s' to %s", a->key, ttl);
	} else if (rc == EXIT_NOT_OWNER)
		cmd_report_not_owner(l, "extend");
	else
		log_warnx("%s", lock_error(l));
	lock_close(l);
	return (rc);
}
