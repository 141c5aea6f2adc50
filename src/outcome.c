/* SPDX-License-Identifier: MIT */
/*
 * How a run ended, by name, and told to the CI step that runs it: when
 * $GITHUB_OUTPUT names a file (GitHub Actions sets it for every step),
 * run appends "outcome=NAME" and "order=N" to it, so that the steps after
 * can tell a superseded deploy (skipped) from a failed one with `if:`,
 * whatever exit status --superseded-exit-code and the like mapped it to.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"

static const char *const outcome_names[] = {
	[RUN_OK] = "ok",
	[RUN_FAILED] = "failed",
	[RUN_SIGNAL] = "signal",
	[RUN_LOST] = "lost",
	[RUN_FORCED] = "forced",
	[RUN_CANCELLED] = "cancelled",
	[RUN_SUPERSEDED] = "superseded",
	[RUN_OUTDATED] = "outdated",
	[RUN_BUSY] = "busy",
	[RUN_ERROR] = "error"
};

const char *
outcome_name(enum run_outcome o)
{
	if ((unsigned)o >= sizeof(outcome_names) / sizeof(outcome_names[0]))
		return ("error");
	return (outcome_names[o]);
}

/*
 * Append the outcome and the order (empty without --order) to
 * $GITHUB_OUTPUT, if set.  One write, so that a step's other outputs are
 * never cut in two.  A failure is said, and changes no exit status: the
 * job's own result stands.
 */
void
outcome_github(enum run_outcome o, int64_t order)
{
	const char	*path = getenv("GITHUB_OUTPUT");
	char		 buf[96], num[32] = "";
	int		 fd, n;

	if (path == NULL || *path == '\0')
		return;
	if (order >= 0)
		(void)snprintf(num, sizeof(num), "%lld", (long long)order);
	n = snprintf(buf, sizeof(buf), "outcome=%s\norder=%s\n",
	    outcome_name(o), num);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (fd == -1 || write(fd, buf, (size_t)n) != n) {
		log_warnx("cannot write the outcome to $GITHUB_OUTPUT (%s): "
		    "%s", path, strerror(errno));
		if (fd != -1)
			(void)close(fd);
		return;
	}
	if (close(fd) == -1)
		log_warnx("cannot write the outcome to $GITHUB_OUTPUT (%s): "
		    "%s", path, strerror(errno));
}
