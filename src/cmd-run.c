/* SPDX-License-Identifier: MIT */
/*
 * run KEY -- CMD: the main job.  Acquire, run CMD while renewing the
 * lock, release when it ends, exit with its status.  See supervise.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redlock.h"

/* What a run that waits starts its guardian with (cmd_run_prefork). */
struct cmd_run_prep {
	struct supervise_pre	*pre;
	char			**argv;
	const char		*key;
	const sigset_t		*caller;
	int			 release_on_exit;
};

static int	 cmd_run_exec(struct global_opts *, struct cmd_args *);
static int	 cmd_run_all(struct global_opts *, struct cmd_args *,
		     struct run_end *);
static char	*cmd_run_describe(const struct cmd_args *, char **);
static void	 cmd_run_jitter(int64_t);
static int	 cmd_run_take(struct global_opts *, struct cmd_args *,
		     struct cmd_run_prep *, struct lock **, struct run_end *);
static void	 cmd_run_prefork(void *);
static int	 cmd_run_supervise(struct lock *, const struct cmd_args *,
		     char **, const sigset_t *, struct supervise_pre *,
		     struct run_end *);
static int	 cmd_run_outdated(struct lock *, void *);

static const int cmd_run_options[] = {
	OPT_TTL, OPT_NONBLOCK, OPT_WAIT, OPT_CONFLICT_CODE, OPT_RENEW,
	OPT_LOST_SIGNAL, OPT_KILL_AFTER, OPT_LOST_EXIT_CODE, OPT_JITTER,
	OPT_MIN_HOLD, OPT_SHELL_COMMAND, OPT_SHARED, OPT_EXCLUSIVE, OPT_LIMIT,
	OPT_FAIR, OPT_RELEASE_ON_EXIT, OPT_QUEUE, OPT_ORDER, OPT_SKIP_OUTDATED,
	OPT_CANCEL_RUNNING, OPT_SUPERSEDED_CODE, OPT_OUTDATED_CODE,
	OPT_CANCELLED_CODE, OPT_RECORD_COMMAND, OPT_METRICS_FILE, 0
};

const struct cmd_entry cmd_run_entry = {
	.name = "run",
	.usage = "KEY [-t TTL] [-n | -w WAIT] [-E CODE] [-s | -x] [--limit N] "
	    "[--fair] [--renew DUR] [--queue MODE] [--order N] "
	    "[--skip-outdated] [--cancel-running[=GRACE]] "
	    "[--lost-signal SIG] [--kill-after DUR] [--lost-exit-code N] "
	    "[--superseded-exit-code N] [--outdated-exit-code N] "
	    "[--cancelled-exit-code N] "
	    "[--release-on-exit] [--jitter DUR] [--min-hold DUR] "
	    "[--record-command HOW] [--metrics-file PATH] "
	    "(-- CMD [ARG...] | -c 'SHELL COMMAND')",
	.summary = "hold the lock while CMD runs, renewing it; exit with "
	    "CMD's status",
	.example = "redlock-cli run nightly-backup -t 5m -n -- "
	    "/usr/local/bin/backup",
	.options = cmd_run_options,
	.flags = CMD_TAKES_KEY | CMD_TAKES_COMMAND | CMD_NEEDS_SERVER,
	.exec = cmd_run_exec
};

/*
 * What the lock records of argv for status (--record-command): masked,
 * since anyone who may read the lock's keys may read it (mask.c).  NULL,
 * after the message, when out of memory: then nothing is recorded, never
 * the unmasked line.
 */
static char *
cmd_run_describe(const struct cmd_args *a, char **argv)
{
	size_t	 argc;
	char	*out;

	for (argc = 0; argv[argc] != NULL; argc++)
		;
	out = mask_record(a->record_command, (const char *const *)argv, argc,
	    CMD_COMMAND_SHOWN);
	if (out == NULL)
		log_warnx("cannot record the command: out of memory");
	return (out);
}

/* Spread a fleet's cron jobs that fire in the same second. */
static void
cmd_run_jitter(int64_t jitter_ms)
{
	int64_t jitter_ns;

	if (jitter_ms <= 0)
		return;
	jitter_ns = (int64_t)(token_random_u64() %
	    (uint64_t)clock_ms_to_ns(jitter_ms));
	log_info("sleeping %lldms (--jitter)",
	    (long long)(jitter_ns / 1000000));
	clock_sleep_ns(jitter_ns);
}

/*
 * run: the lock taken, the command supervised, and how it ended written
 * for a CI step that asks ($GITHUB_OUTPUT) and for monitoring
 * (--metrics-file), which counts the runs that ended, not the errors
 * that kept one from starting.
 */
static int
cmd_run_exec(struct global_opts *g, struct cmd_args *a)
{
	struct run_end	 end = { RUN_ERROR, 0, 0, 0 };
	const char	*metrics = a->metrics_file;
	int		 rc;

	rc = cmd_run_all(g, a, &end);
	outcome_github(end.outcome, a->order);
	if (metrics == NULL)
		metrics = getenv("REDLOCK_METRICS_FILE");
	if (metrics != NULL && *metrics != '\0' && end.outcome != RUN_ERROR)
		metrics_write(metrics, a->key, &end, rc);
	return (rc);
}

static int
cmd_run_all(struct global_opts *g, struct cmd_args *a, struct run_end *end)
{
	struct lock		*l = NULL;
	struct supervise_pre	 pre = { -1, -1 };
	struct cmd_run_prep	 prep;
	sigset_t		 caller;
	char			*shell_argv[4], **argv;
	int64_t			 start;
	int			 rc;
	char			 took[32];

	if (a->shell_command != NULL) {
		shell_argv[0] = "/bin/sh";
		shell_argv[1] = "-c";
		shell_argv[2] = (char *)a->shell_command;
		shell_argv[3] = NULL;
		argv = shell_argv;
	} else
		argv = a->argv;
	cmd_run_jitter(a->jitter_ms);
	if (endsig_hold(&caller) == -1) {
		log_warn("sigprocmask");
		return (EXIT_UNAVAILABLE);
	}
	start = clock_mono_ns();
	end->queued_ms = clock_wall_ms();
	prep.pre = &pre;
	prep.argv = argv;
	prep.key = a->key;
	prep.caller = &caller;
	prep.release_on_exit = a->release_on_exit;
	/* Not taken: run's status, which may be 0 too (-E 0,
	 * --superseded-exit-code 0). */
	rc = cmd_run_take(g, a, &prep, &l, end);
	end->waited_ms = (clock_mono_ns() - start) / 1000000;
	if (l == NULL) {
		supervise_pre_end(&pre);
		return (rc);
	}
	duration_format(end->waited_ms, took, sizeof(took));
	log_info("acquired lock '%s' in %s, fence %lld", a->key, took,
	    (long long)lock_fence(l));
	rc = cmd_run_supervise(l, a, argv, &caller, &pre, end);
	supervise_pre_end(&pre);	/* if it was not used */
	lock_close(l);
	return (rc);
}

/*
 * Take the lock for p->argv, with the end signals held (endsig.c).  EXIT_OK
 * with *lp; else run's exit status, the lock closed and the caller's mask
 * back.
 */
static int
cmd_run_take(struct global_opts *g, struct cmd_args *a,
    struct cmd_run_prep *p, struct lock **lp, struct run_end *end)
{
	const sigset_t		*caller = p->caller;
	struct lock_spec	 spec;
	struct lock		*l;
	char			*described;
	int			 rc, sig;

	if ((described = cmd_run_describe(a, p->argv)) == NULL) {
		endsig_restore(caller);
		return (EXIT_UNAVAILABLE);
	}
	cmd_lock_spec(a, &spec);
	spec.wait_mask = caller;
	spec.before_wait = cmd_run_prefork;
	spec.before_wait_arg = p;
	spec.command = described;
	/* Every run listens while it holds: for an operator's release
	 * --force, and (--queue latest) for a newer run's cancel. */
	spec.listens = 1;
	/* Outdated once taken, after a wait: a newer order ran meanwhile. */
	if (a->skip_outdated) {
		spec.after_take = cmd_run_outdated;
		spec.after_take_arg = a;
	}
	l = lock_open(g, &spec);
	free(described);
	if ((rc = cmd_run_outdated(l, a)) == EXIT_OK)
		rc = lock_acquire(l);
	if (rc == EXIT_OK && (sig = endsig_pending()) == 0) {
		*lp = l;
		return (EXIT_OK);
	}
	if (rc == EXIT_OK) {
		/* Told to end while taking it: no command, lock back. */
		(void)lock_release(l);
		lock_close(l);
		endsig_restore(caller);
		return (EXIT_SIGNAL_BASE + sig);
	}
	endsig_restore(caller);
	if (rc == EXIT_BUSY) {
		cmd_report_busy(l, a);
		end->outcome = RUN_BUSY;
		rc = a->conflict_code;
	} else if (rc == EXIT_SUPERSEDED || rc == EXIT_OUTDATED) {
		end->outcome = rc == EXIT_SUPERSEDED ? RUN_SUPERSEDED :
		    RUN_OUTDATED;
		rc = cmd_queue_code(l, a, rc);
		/* Nothing to release: the history entry goes alone. */
		lock_history_end(l, outcome_name(end->outcome), rc,
		    end->queued_ms);
		lock_history_note(l);
	} else
		log_warnx("%s", lock_error(l));
	lock_close(l);
	return (rc);
}

/*
 * The lock is busy and we wait: start the guardian meanwhile, so that the
 * command starts as soon as the lock is ours (supervise_pre_start).  Not
 * before the first attempt: that would delay what it does (a cancel, a
 * supersede) by the fork; a run that gets the lock at its first attempt
 * forks the guardian once the lock is its own.
 */
static void
cmd_run_prefork(void *arg)
{
	struct cmd_run_prep *p = arg;

	supervise_pre_start(p->pre, p->argv, p->key, p->caller,
	    p->release_on_exit);
}

/* --skip-outdated: EXIT_OUTDATED if a higher order already ran. */
static int
cmd_run_outdated(struct lock *l, void *arg)
{
	const struct cmd_args *a = arg;

	return (a->skip_outdated ? lock_outdated(l, a->order) : EXIT_OK);
}

/* Run argv under the lock (supervise.c), with run's options. */
static int
cmd_run_supervise(struct lock *l, const struct cmd_args *a, char **argv,
    const sigset_t *caller, struct supervise_pre *pre, struct run_end *end)
{
	struct supervise_opts so;

	memset(&so, 0, sizeof(so));
	so.renew_ms = a->renew_ms;
	so.kill_after_ms = a->kill_after_ms;
	so.min_hold_ms = a->min_hold_ms;
	so.lost_signal = a->lost_signal;
	so.lost_exit_code = a->lost_exit_code;
	so.release_on_exit = a->release_on_exit;
	so.cancelled_exit_code = a->cancelled_code;
	so.listens = 1;
	so.record_order = a->order;
	so.caller_mask = caller;
	so.pre = pre;
	so.end = end;
	return (supervise_run(l, &so, argv));
}
