/* SPDX-License-Identifier: MIT */
/*
 * history KEY: who ran under the lock lately, and how each run ended,
 * newest first: the answer to "which host ran nightly-backup last night,
 * and did it work?" once the job is over and status says free.  Exit 0,
 * or 1 when there is no history (as status says 1 for free).
 */

#include <stdio.h>

#include "redlock.h"
#include "print.h"

static int	cmd_history_exec(struct global_opts *, struct cmd_args *);

static const int cmd_history_options[] = { OPT_COUNT, OPT_JSON, 0 };

const struct cmd_entry cmd_history_entry = {
	.name = "history",
	.usage = "KEY [-n COUNT] [--json]",
	.summary = "show how the lock's last runs ended; exit 1 if none did",
	.example = "redlock-cli history nightly-backup -n 5",
	.options = cmd_history_options,
	.flags = CMD_TAKES_KEY | CMD_NEEDS_SERVER,
	.exec = cmd_history_exec
};

static int
cmd_history_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec	 spec;
	struct lock		*l;
	struct lock_run	*es;
	size_t			 n;
	int			 rc;

	cmd_lock_spec(a, &spec);
	l = lock_open(g, &spec);
	if ((rc = lock_history(l, a->count, &es, &n)) != EXIT_OK) {
		log_warnx("%s", lock_error(l));
		lock_close(l);
		return (rc);
	}
	lock_close(l);
	if (a->json)
		history_print_json(es, n);
	else if (n > 0)
		history_print_text(es, n);
	if (n == 0 && !a->json)
		log_warnx("lock '%s': no history (nothing has ended under it "
		    "in the last 7 days, or --history-size 0)", a->key);
	lock_runs_free(es, n);
	rc = n > 0 ? EXIT_OK : EXIT_BUSY;
	if (cmd_flush_stdout() == -1 && rc == EXIT_OK)
		rc = EXIT_UNAVAILABLE;
	return (rc);
}
