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

static struct lock *cmd_acquire_open(struct global_opts *, struct cmd_args *,
		     sigset_t *);
static int	 cmd_acquire_exec(struct global_opts *, struct cmd_args *);
static char	*cmd_acquire_caller(pid_t, enum mask_record);
static char	*cmd_acquire_cmdline(pid_t, size_t *);
static char	**cmd_acquire_split(char *, size_t, size_t *);
static void	 cmd_acquire_print(const struct lock *,
		     const struct cmd_args *);

static const int cmd_acquire_options[] = {
	OPT_TTL, OPT_NONBLOCK, OPT_WAIT, OPT_CONFLICT_CODE, OPT_TOKEN,
	OPT_JSON, OPT_SHARED, OPT_EXCLUSIVE, OPT_LIMIT, OPT_FAIR, OPT_QUEUE,
	OPT_ORDER, OPT_CANCEL_RUNNING, OPT_RECORD_COMMAND, 0
};

const struct cmd_entry cmd_acquire_entry = {
	.name = "acquire",
	.usage = "KEY [-t TTL] [-n | -w WAIT] [-E CODE] [--token TOK] "
	    "[-s | -x] [--limit N] [--fair] [--queue MODE] [--order N] "
	    "[--cancel-running[=GRACE]] [--record-command HOW] [--json]",
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
 * command line (/proc/PID/cmdline) as --record-command says, masked
 * (mask.c): the caller's words may hold our own -u URL, password and
 * all.  Plain "manual" if it cannot be read; "" for --record-command
 * none.  NULL, after the message, when out of memory: nothing is
 * recorded then, never the unmasked line.
 */
static char *
cmd_acquire_caller(pid_t pid, enum mask_record how)
{
	static const char	 prefix[] = "manual: ";
	char			*line, *words_shown, *out;
	char			**words;
	size_t			 len, n;

	if (how == MASK_RECORD_NONE)
		return (xstrdup(""));
	if ((line = cmd_acquire_cmdline(pid, &len)) == NULL)
		return (xstrdup("manual"));	/* unreadable, or a zombie */
	words = cmd_acquire_split(line, len, &n);
	words_shown = mask_record(how, (const char *const *)words, n,
	    CMD_COMMAND_SHOWN - (sizeof(prefix) - 1));
	free(words);
	free(line);
	if (words_shown == NULL) {
		log_warnx("cannot record the command: out of memory");
		return (NULL);
	}
	out = xasprintf("%s%s", prefix, words_shown);
	free(words_shown);
	return (out);
}

/*
 * PID's command line: its words, each ended by a NUL, in *lenp bytes
 * (one more NUL after them).  NULL if it cannot be read or is empty.  A
 * line longer than CMD_CALLER_READ_MAX loses its last, cut word rather
 * than keep a piece of it (half a URL would not be known for one).
 */
static char *
cmd_acquire_cmdline(pid_t pid, size_t *lenp)
{
	char	*path, *buf;
	size_t	 len = 0, cap = 4096;
	ssize_t	 n;
	int	 fd, is_cut = 0;

	path = xasprintf("/proc/%ld/cmdline", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return (NULL);
	buf = xmalloc(cap + 1);
	for (;;) {
		if (len == cap && cap >= CMD_CALLER_READ_MAX) {
			is_cut = 1;
			break;
		}
		if (len == cap) {
			cap *= 2;
			buf = xreallocarray(buf, cap + 1, 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			is_cut = n == -1;
			break;
		}
		len += (size_t)n;
	}
	(void)close(fd);
	while (is_cut && len > 0 && buf[len - 1] != '\0')
		len--;
	/* The words end in NULs: the last one is no separator. */
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	if (len == 0) {
		free(buf);
		return (NULL);
	}
	buf[len] = '\0';
	*lenp = len;
	return (buf);
}

/* The NUL-separated words of line[0..len), in an array to free. */
static char **
cmd_acquire_split(char *line, size_t len, size_t *np)
{
	char	**words;
	size_t	  i, n = 1;

	for (i = 0; i < len; i++)
		if (line[i] == '\0')
			n++;
	words = xreallocarray(NULL, n, sizeof(*words));
	words[0] = line;
	for (i = 0, n = 1; i < len; i++)
		if (line[i] == '\0')
			words[n++] = line + i + 1;
	*np = n;
	return (words);
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

/*
 * The lock as acquire takes it, for the caller that holds it: its pid and
 * its command line, recorded as --record-command says; the end signals
 * held from here on.  NULL (logged) if either could not be done.
 */
static struct lock *
cmd_acquire_open(struct global_opts *g, struct cmd_args *a, sigset_t *caller)
{
	struct lock_spec spec;
	struct lock	*l;
	char		*command;

	if ((command = cmd_acquire_caller(getppid(), a->record_command)) ==
	    NULL)
		return (NULL);
	if (endsig_hold(caller) == -1) {
		log_warn("sigprocmask");
		free(command);
		return (NULL);
	}
	cmd_lock_spec(a, &spec);
	spec.wait_mask = caller;
	spec.pid = getppid();
	spec.command = command;
	spec.token = a->token;
	l = lock_open(g, &spec);
	free(command);
	return (l);
}

static int
cmd_acquire_exec(struct global_opts *g, struct cmd_args *a)
{
	struct lock	*l;
	sigset_t	 caller;
	char		 took[32];
	int64_t		 start = clock_mono_ns();
	int		 rc, sig;

	if ((l = cmd_acquire_open(g, a, &caller)) == NULL)
		return (EXIT_UNAVAILABLE);
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
