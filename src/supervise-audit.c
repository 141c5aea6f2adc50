/* SPDX-License-Identifier: MIT */
/*
 * What --syslog keeps of every run, even without -v (log_audit): a line
 * when the command starts, and one when the run ends, each at the level
 * of what happened, so that a filter on the level finds the runs that
 * went wrong: LOG_INFO for a start and a success, LOG_WARNING for a
 * command that failed (an exit status other than 0, or a signal),
 * LOG_ERR for a lock that was lost, forced away or cancelled.
 */

#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>

#include "redlock.h"
#include "supervise-impl.h"

/*
 * The command started: which lock, under which fence, and what ran, its
 * secrets masked as a holder records them (mask.c), whatever
 * --record-command says: that is what the server keeps for everyone who
 * may read the lock's keys, and this line stays on the host, as ps(1)
 * shows the command there anyway.
 */
void
supervise_audit_start(const struct supervisor *s, char **argv)
{
	char	*shown;
	size_t	 argc;

	for (argc = 0; argv[argc] != NULL; argc++)
		;
	shown = mask_record(MASK_RECORD_FULL, (const char *const *)argv,
	    argc, CMD_COMMAND_SHOWN);
	log_audit(LOG_INFO, "run '%s' start: fence %lld, command: %s",
	    lock_name(s->lock), (long long)lock_fence(s->lock),
	    shown != NULL ? shown : "(out of memory)");
	free(shown);
}

/*
 * How long the lock was ours, in milliseconds: from the take (the wait
 * before it is the waiting) to the release, the end of --min-hold, or the
 * moment it was lost.
 */
int64_t
supervise_held_ms(const struct supervisor *s)
{
	return ((s->held_until_ns - lock_taken_ns(s->lock)) / 1000000);
}

/* The level of a run's last line: see the top of this file. */
static int
supervise_audit_level(enum run_outcome o)
{
	switch (o) {
	case RUN_OK:
		return (LOG_INFO);
	case RUN_FAILED:
	case RUN_SIGNAL:
		return (LOG_WARNING);
	default:
		return (LOG_ERR);
	}
}

/*
 * The run's last line: what ran under which fence, how long it waited
 * for and held the lock, and how the command ended.
 */
void
supervise_audit(const struct supervisor *s, enum run_outcome o)
{
	char	waited[32], held[32], how[64];

	duration_span(s->opts->end->waited_ms, waited, sizeof(waited));
	duration_span(supervise_held_ms(s), held, sizeof(held));
	if (s->code_sig != 0)
		(void)snprintf(how, sizeof(how), "killed by SIG%s",
		    signame_name(s->code_sig));
	else
		(void)snprintf(how, sizeof(how), "exit %d", s->code);
	log_audit(supervise_audit_level(o), "run '%s' done: fence %lld, "
	    "waited %s, held %s, %s%s", lock_name(s->lock),
	    (long long)lock_fence(s->lock), waited, held, how,
	    s->is_lost ? ", lock lost" : "");
}
