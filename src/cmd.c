/* SPDX-License-Identifier: MIT */
/*
 * The command table: lookup, and the messages the verbs share.  Each verb
 * is described by data in its own cmd-<verb>.c (usage, summary, example,
 * the ids of its options, what it takes; see options.c and help.c);
 * adding a verb means one file, one extern line and one table line here.
 */

#include <stdio.h>
#include <string.h>

#include "redlock.h"

extern const struct cmd_entry cmd_acquire_entry;
extern const struct cmd_entry cmd_extend_entry;
extern const struct cmd_entry cmd_help_entry;
extern const struct cmd_entry cmd_history_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_release_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_status_entry;

static const struct cmd_entry *cmd_table[] = {
	&cmd_acquire_entry,
	&cmd_extend_entry,
	&cmd_history_entry,
	&cmd_list_entry,
	&cmd_release_entry,
	&cmd_run_entry,
	&cmd_status_entry,
	&cmd_help_entry,	/* last in the list that help prints */
	NULL
};

const struct cmd_entry *
cmd_find(const char *name)
{
	int i;

	/* Exact names only: a script's "ext" must not change meaning. */
	for (i = 0; cmd_table[i] != NULL; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return (cmd_table[i]);
	return (NULL);
}

/* The i-th entry of the table, or NULL past its end. */
const struct cmd_entry *
cmd_at(size_t i)
{
	if (i >= sizeof(cmd_table) / sizeof(cmd_table[0]))
		return (NULL);
	return (cmd_table[i]);
}

/* The lock a verb was asked for, as the lock layer takes it. */
void
cmd_lock_spec(const struct cmd_args *a, struct lock_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->key = a->key;
	spec->mode = a->limit > 0 ? LOCK_SEMAPHORE : a->shared ? LOCK_SHARED :
	    LOCK_MUTEX;
	spec->limit = a->limit;
	spec->queue = a->queue;
	spec->is_fair = a->queue != LOCK_QUEUE_ANY;
	spec->order = a->order;
	spec->cancel_grace_ms = a->cancel_grace_ms;
	spec->ttl_ms = a->ttl_ms;
	spec->wait_ms = a->wait_ms;
}

/*
 * The lock is busy: say so (unless -q), for acquire and run alike, naming
 * the holder when it left its metadata.
 */
void
cmd_report_busy(const struct lock *l, const struct cmd_args *a)
{
	char waited[32], holder[512];

	if (a->limit > 0 && a->wait_ms == 0) {
		log_busy("lock '%s' has no free slot (limit %lld)", lock_name(l),
		    (long long)a->limit);
		return;
	}
	if (a->limit > 0) {
		duration_format(a->wait_ms, waited, sizeof(waited));
		log_busy("lock '%s' still has no free slot (limit %lld) after "
		    "%s", lock_name(l), (long long)a->limit, waited);
		return;
	}
	lock_describe_holder(l, holder, sizeof(holder));
	/* A reader kept out by a writer that waits: name the writer. */
	if (lock_busy_writer(l) && a->wait_ms == 0) {
		log_busy("lock '%s' is wanted by %s, a waiting writer: no new "
		    "reader gets in", lock_name(l), holder);
		return;
	}
	if (lock_busy_writer(l)) {
		duration_format(a->wait_ms, waited, sizeof(waited));
		log_busy("lock '%s' is still wanted by %s, a waiting writer, "
		    "after %s", lock_name(l), holder, waited);
		return;
	}
	if (a->wait_ms == 0) {
		log_busy("lock '%s' is held by %s", lock_name(l), holder);
		return;
	}
	duration_format(a->wait_ms, waited, sizeof(waited));
	log_busy("lock '%s' is still held by %s after %s", lock_name(l),
	    holder, waited);
}

/* release or extend found that our token does not hold the lock. */
void
cmd_report_not_owner(const struct lock *l, const char *verb)
{
	if (lock_not_owner(l) == LOCK_OTHER)
		log_warnx("cannot %s lock '%s': it is held by another owner",
		    verb, lock_name(l));
	else
		log_warnx("cannot %s lock '%s': it is not held (expired or "
		    "never taken)", verb, lock_name(l));
}

/*
 * A queue's ending (superseded, outdated): its one line, and the exit
 * status chosen for it (--superseded-exit-code, --outdated-exit-code).
 */
int
cmd_queue_code(const struct lock *l, const struct cmd_args *a, int rc)
{
	/* Not run because a newer order came or ran: expected, as a busy
	 * lock is, and as quiet under -q. */
	log_busy("%s", lock_error(l));
	if (rc == EXIT_SUPERSEDED)
		return (a->superseded_code);
	if (rc == EXIT_OUTDATED)
		return (a->outdated_code);
	return (rc);
}

/* Results written to stdout must arrive; a lost token is a lost lock. */
int
cmd_flush_stdout(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		log_warn("cannot write to standard output");
		return (-1);
	}
	return (0);
}
