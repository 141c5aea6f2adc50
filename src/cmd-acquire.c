/* SPDX-License-Identifier: MIT */
/*
 * acquire KEY: take the lock and print its token, for scripts that hold a
 * lock across several steps and release it themselves.
 */

#include <stdio.h>
#include <string.h>

#include "redlock.h"

static int	cmd_acquire_exec(struct global_opts *, struct cmd_args *);

static const int cmd_acquire_options[] = {
	OPT_TTL, OPT_NONBLOCK, OPT_WAIT, OPT_CONFLICT_CODE, OPT_TOKEN,
	OPT_JSON, OPT_LIMIT, OPT_FAIR, 0
};

const struct cmd_entry cmd_acquire_entry = {
	.name = "acquire",
	.usage = "KEY [-t TTL] [-n | -w WAIT] [-E CODE] [--token TOK] "
	    "[--limit N] [--fair] [--json]",
	.summary = "take the lock and print its token; wait for it unless -n "
	    "or -w",
	.example = "TOKEN=$(redlock-cli acquire deploy -t 10m -w 30s)",
	.options = cmd_acquire_options,
	.flags = CMD_TAKES_KEY | CMD_NEEDS_SERVER,
	.exec = cmd_acquire_exec
};

static int
cmd_acquire_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec spec;
	struct lock	*l;
	sigset_t	 caller;
	char		 took[32];
	int64_t		 start = clock_mono_ns(), validity_ms;
	int		 rc, sig;

	if (endsig_hold(&caller) == -1) {
		log_warn("sigprocmask");
		return (EXIT_UNAVAILABLE);
	}
	cmd_lock_spec(a, &spec);
	spec.wait_mask = &caller;
	spec.command = "manual";
	spec.token = a->token;
	l = lock_open(g, &spec);
	rc = lock_acquire(l);
	if (rc != EXIT_OK)
		endsig_restore(&caller);
	if (rc == EXIT_BUSY) {
		cmd_report_busy(l, a);
		rc = a->conflict_code;
		goto out;
	}
	if (rc != EXIT_OK) {
		log_warnx("%s", lock_error(l));
		goto out;
	}
	if ((sig = endsig_pending()) != 0)
		goto told_to_end;
	duration_format((clock_mono_ns() - start) / 1000000, took,
	    sizeof(took));
	log_info("acquired lock '%s' in %s, fence %lld", a->key, took,
	    (long long)lock_fence(l));
	if (a->json) {
		validity_ms = (lock_valid_until_ns(l) - clock_mono_ns()) /
		    1000000;
		(void)fputs("{\"key\":", stdout);
		json_string(a->key);
		(void)fputs(",\"token\":", stdout);
		json_string(lock_token(l));
		(void)printf(",\"ttl_ms\":%lld,\"validity_ms\":%lld,"
		    "\"fence\":%lld}\n", (long long)a->ttl_ms,
		    (long long)(validity_ms > 0 ? validity_ms : 0),
		    (long long)lock_fence(l));
	} else
		(void)printf("%s\n", lock_token(l));
	if (cmd_flush_stdout() == -1) {
		/* Nobody got the token, so nobody could release the lock. */
		(void)lock_release(l);
		rc = EXIT_UNAVAILABLE;
	} else if ((sig = endsig_pending()) != 0)
		goto told_to_end;
out:
	/* A signal after the last look finds us done: dropped at exit. */
	lock_close(l);
	return (rc);
told_to_end:
	/* Told to end while taking it (or printing it): the caller sees us
	 * die of it and will not use the token, so give the lock back. */
	(void)lock_release(l);
	lock_close(l);
	endsig_restore(&caller);
	return (EXIT_SIGNAL_BASE + sig);
}
