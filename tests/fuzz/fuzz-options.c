/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the option parser (src/options.c) and the command
 * table (src/cmd.c), driven as main() drives them.
 *
 * The input is split on NUL bytes into at most 64 arguments behind
 * "redlock-cli".  Parsing never exits: it says whether to go on (with the
 * verb's index), or to exit with a code for help, version and usage
 * errors.  settings_setup() is not called (it reads the environment and
 * files); settings_free() is.  No verb is run, help's neither.
 */

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/redlock.h"
#include "fuzz.h"

#define FUZZ_MAX_ARGS	64

int	 LLVMFuzzerInitialize(int *, char ***);
int	 LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What every successful options_parse() promises to the verb. */
static void
fuzz_check_args(const struct cmd_entry *e, int argc, char **argv,
    const struct cmd_args *a)
{
	if (e->flags & CMD_TAKES_KEY)
		FUZZ_CHECK(a->key != NULL && *a->key != '\0', "%s: no KEY",
		    e->name);
	FUZZ_CHECK(a->ttl_ms >= 1 && a->ttl_ms <= 1000000000000LL,
	    "ttl %lld", (long long)a->ttl_ms);
	FUZZ_CHECK(a->wait_ms == WAIT_FOREVER || (a->wait_ms >= 0 &&
	    a->wait_ms <= 1000000000000LL), "wait %lld",
	    (long long)a->wait_ms);
	FUZZ_CHECK(a->conflict_code >= 0 && a->conflict_code <= 255,
	    "conflict code %d", a->conflict_code);
	FUZZ_CHECK(a->lost_exit_code >= 0 && a->lost_exit_code <= 255,
	    "lost exit code %d", a->lost_exit_code);
	FUZZ_CHECK(a->lost_signal > 0 && a->lost_signal < NSIG,
	    "lost signal %d", a->lost_signal);
	FUZZ_CHECK(a->renew_ms == 0 || a->renew_ms < a->ttl_ms,
	    "renew %lld, ttl %lld", (long long)a->renew_ms,
	    (long long)a->ttl_ms);
	FUZZ_CHECK(a->limit == 0 || (a->limit >= 1 && a->limit <= 1000000),
	    "limit %lld", (long long)a->limit);
	FUZZ_CHECK(a->token == NULL || *a->token != '\0', "empty token");
	if (e->flags & CMD_TAKES_COMMAND) {
		FUZZ_CHECK((a->argc > 0) != (a->shell_command != NULL),
		    "%s: argc %d, -c %s", e->name, a->argc,
		    a->shell_command != NULL ? "set" : "unset");
		if (a->argc > 0)
			FUZZ_CHECK(a->argv >= argv && a->argv + a->argc ==
			    argv + argc && a->argv[a->argc] == NULL,
			    "the command is not the tail of argv");
	} else
		FUZZ_CHECK(a->argc == 0 && a->argv == NULL,
		    "%s took a command", e->name);
}

/* An exit the parser asks for is with a code main() may exit with. */
static void
fuzz_check_code(const char *what, struct options_status st)
{
	FUZZ_CHECK(st.exit_now && (st.code == EXIT_OK ||
	    st.code == EXIT_USAGE), "%s returned %d, %d", what, st.exit_now,
	    st.code);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* release and extend read it; the fuzzer must not depend on it. */
	(void)unsetenv("REDLOCK_TOKEN");
	fuzz_quiet();
	return (0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char		 progname[] = PROGNAME;
	char			*buf, *p, *end, *argv[FUZZ_MAX_ARGS + 2];
	struct global_opts	 g;
	struct cmd_args		 a;
	const struct cmd_entry	*e;
	struct options_status	 st;
	int			 argc = 0, i = 0, ok = 0;

	buf = malloc(size + 1);
	if (buf == NULL)
		return (0);
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = progname;
	for (p = buf, end = buf + size; size > 0 && p <= end &&
	    argc < FUZZ_MAX_ARGS + 1; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;

	/* As main() does. */
	memset(&g, 0, sizeof(g));
	g.connect_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.io_timeout_ms = DEFAULT_TIMEOUT_MS;
	g.wait_timeout_ms = DEFAULT_TIMEOUT_MS;
	st = options_parse_globals(argc, argv, &g, &i);
	if (st.exit_now)
		fuzz_check_code("options_parse_globals", st);
	else {
		FUZZ_CHECK(i >= 1 && i < argc, "verb index %d of %d", i, argc);
		if ((e = cmd_find(argv[i])) != NULL) {
			FUZZ_CHECK(strcmp(e->name, argv[i]) == 0,
			    "cmd_find('%s') found %s", argv[i], e->name);
			st = options_parse(e, argc - i, argv + i, &g, &a);
			if (!st.exit_now) {
				fuzz_check_args(e, argc - i, argv + i, &a);
				ok = 1;
			} else
				fuzz_check_code(e->name, st);
		}
	}
	/* After an error the values are half set; main() exits then. */
	if (ok) {
		FUZZ_CHECK(g.connect_timeout_ms >= 1 &&
		    g.io_timeout_ms >= 1 && g.wait_timeout_ms >= 1,
		    "a timeout below 1ms");
		FUZZ_CHECK(g.wait_replicas >= 0 && g.wait_replicas <= 1000,
		    "wait-replicas %d", g.wait_replicas);
	}
	settings_free(&g);
	free(buf);
	return (0);
}
