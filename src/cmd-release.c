/* SPDX-License-Identifier: MIT */
/*
 * release KEY: give the lock up, if our token still holds it; --force:
 * remove whoever holds it (an operator's release, for a stale lock), one
 * line each on stderr.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"
#include "print.h"

static int	cmd_release_exec(struct global_opts *, struct cmd_args *);
static int	cmd_release_force(struct global_opts *, struct cmd_args *);
static void	cmd_release_removed(const char *, const struct lock_holder *);

static const int cmd_release_options[] = { OPT_TOKEN, OPT_FORCE, OPT_LIMIT,
	0 };

const struct cmd_entry cmd_release_entry = {
	.name = "release",
	.usage = "KEY [--token TOK | --force] [--limit N]",
	.summary = "release the lock held by TOK; exit 3 if TOK does not "
	    "hold it",
	.example = "redlock-cli release deploy --token \"$TOKEN\"",
	.options = cmd_release_options,
	.flags = CMD_TAKES_KEY | CMD_TOKEN_FROM_ENV | CMD_NEEDS_SERVER,
	.exec = cmd_release_exec
};

/*
 * The line for a holder that --force removed: at LOG_NOTICE, since the
 * operator meant it; the run that held it says its end at LOG_ERR.
 */
static void
cmd_release_removed(const char *key, const struct lock_holder *h)
{
	char	tok[64], since[64], host[256];

	if (h->host == NULL || h->pid <= 0) {
		status_print_token(h->token, tok, sizeof(tok));
		log_notice("lock '%s': forced release of a lock set by another "
		    "client (value %s)", key, tok);
		return;
	}
	log_sanitize(host, sizeof(host), h->host, strlen(h->host));
	timefmt_utc(h->since_ms, since, sizeof(since));
	log_notice("lock '%s': forced release of %s pid %lld, held since %s",
	    key, host, (long long)h->pid, since[0] != '\0' ? since :
	    "an unknown time");
}

static int
cmd_release_force(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec	 spec;
	struct lock		*l;
	struct lock_holder	*hs;
	size_t			 i, n, more;
	int			 rc;

	cmd_lock_spec(a, &spec);
	l = lock_open(g, &spec);
	rc = lock_force_release(l, &hs, &n, &more);
	for (i = 0; i < n; i++)
		cmd_release_removed(a->key, &hs[i]);
	if (more > 0)
		log_notice("lock '%s': ... and %zu more", a->key, more);
	lock_holders_free(hs, n);
	if (rc == EXIT_BUSY)
		log_warnx("lock '%s': nothing to release: nobody holds it",
		    a->key);
	else if (rc != EXIT_OK)
		log_warnx("%s", lock_error(l));
	lock_close(l);
	return (rc);
}

static int
cmd_release_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec spec;
	struct lock	*l;
	int		 rc;

	if (a->force)
		return (cmd_release_force(g, a));
	if (a->token == NULL) {
		log_warnx("release: missing token: give --token or set "
		    "REDLOCK_TOKEN");
		return (EXIT_USAGE);
	}
	cmd_lock_spec(a, &spec);
	spec.token = a->token;
	l = lock_open(g, &spec);
	/* The hold's history entry: the server takes who it was from the
	 * holder's metadata. */
	lock_history_end(l, "released", -1, 0);
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
