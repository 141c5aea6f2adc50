/* SPDX-License-Identifier: MIT */
/*
 * acquire KEY: take the lock and print its token, for scripts that hold a
 * lock across several steps and release it themselves.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "redlock.h"

static int	 cmd_acquire_exec(struct global_opts *, struct cmd_args *);
static char	*cmd_acquire_caller(pid_t);
static void	 cmd_acquire_print(const struct lock *,
		     const struct cmd_args *);

static const int cmd_acquire_options[] = {
	OPT_TTL, OPT_NONBLOCK, OPT_WAIT, OPT_CONFLICT_CODE, OPT_TOKEN,
	OPT_JSON, OPT_SHARED, OPT_EXCLUSIVE, OPT_LIMIT, OPT_FAIR, OPT_QUEUE,
	OPT_ORDER, OPT_CANCEL_RUNNING, 0
};

const struct cmd_entry cmd_acquire_entry = {
	.name = "acquire",
	.usage = "KEY [-t TTL] [-n | -w WAIT] [-E CODE] [--token TOK] "
	    "[-s | -x] [--limit N] [--fair] [--queue MODE] [--order N] "
	    "[--cancel-running[=GRACE]] [--json]",
	.summary = "take the lock and print its token; wait for it unless -n "
	    "or -w",
	.example = "TOKEN=$(redlock-cli acquire deploy -t 10m -w 30s)",
	.options = cmd_acquire_options,
	.flags = CMD_TAKES_KEY | CMD_NEEDS_SERVER,
	.exec = cmd_acquire_exec
};

/*
 * What status shows as the holder of a manual lock: the script that
 * called us, which holds it across its steps and releases it, not this
 * process, gone as soon as the token is printed.  "manual: " and its
 * command line (/proc/PID/cmdline, the arguments joined by spaces), cut
 * at CMD_COMMAND_SHOWN bytes as run's; plain "manual" if it cannot be
 * read.
 */
static char *
cmd_acquire_caller(pid_t pid)
{
	static const char	 prefix[] = "manual: ";
	char			*path, *out;
	size_t			 used = sizeof(prefix) - 1, i;
	ssize_t			 n;
	int			 fd;

	path = xasprintf("/proc/%ld/cmdline", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return (xstrdup("manual"));
	out = xmalloc(CMD_COMMAND_SHOWN + 1);
	memcpy(out, prefix, used);
	while (used < CMD_COMMAND_SHOWN) {
		n = read(fd, out + used, CMD_COMMAND_SHOWN - used);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	(void)close(fd);
	/* The arguments end in NULs: the last one is no separator. */
	while (used > sizeof(prefix) - 1 && out[used - 1] == '\0')
		used--;
	if (used == sizeof(prefix) - 1) {
		free(out);
		return (xstrdup("manual"));	/* unreadable, or a zombie */
	}
	for (i = sizeof(prefix) - 1; i < used; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[used] = '\0';
	return (out);
}

/* The token for the caller, alone or as JSON (--json). */
static void
cmd_acquire_print(const struct lock *l, const struct cmd_args *a)
{
	int64_t validity_ms;

	if (!a->json) {
		(void)printf("%s\n", lock_token(l));
		return;
	}
	validity_ms = (lock_valid_until_ns(l) - clock_mono_ns()) / 1000000;
	(void)fputs("{\"key\":", stdout);
	json_string(a->key);
	(void)fputs(",\"token\":", stdout);
	json_string(lock_token(l));
	(void)printf(",\"ttl_ms\":%lld,\"validity_ms\":%lld,"
	    "\"fence\":%lld}\n", (long long)a->ttl_ms,
	    (long long)(validity_ms > 0 ? validity_ms : 0),
	    (long long)lock_fence(l));
}

static int
cmd_acquire_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock_spec spec;
	struct lock	*l;
	sigset_t	 caller;
	char		 took[32], *command;
	int64_t		 start = clock_mono_ns();
	int		 rc, sig;

	if (endsig_hold(&caller) == -1) {
		log_warn("sigprocmask");
		return (EXIT_UNAVAILABLE);
	}
	cmd_lock_spec(a, &spec);
	spec.wait_mask = &caller;
	spec.pid = getppid();
	spec.command = command = cmd_acquire_caller(getppid());
	spec.token = a->token;
	l = lock_open(g, &spec);
	free(command);
	rc = lock_acquire(l);
	if (rc != EXIT_OK)
		endsig_restore(&caller);
	if (rc == EXIT_BUSY) {
		cmd_report_busy(l, a);
		rc = a->conflict_code;
		goto out;
	}
	if (rc == EXIT_SUPERSEDED) {
		rc = cmd_queue_code(l, a, rc);
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
	cmd_acquire_print(l, a);
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
