/* SPDX-License-Identifier: MIT */
/*
 * How a lock's history reads: the table of the history verb, newest
 * first, in columns that fit 80 of them; its JSON array; and the one
 * line that status prints for a free lock.  Times are UTC ISO 8601, the
 * durations human in text and milliseconds in JSON.
 */

#include <stdio.h>
#include <string.h>

#include "redlock.h"
#include "print.h"

/* The JSON of one optional number: null when unknown (< 0). */
static void
history_print_num(const char *name, int64_t v)
{
	if (v < 0)
		(void)printf(",\"%s\":null", name);
	else
		(void)printf(",\"%s\":%lld", name, (long long)v);
}

static void
history_print_time(const char *name, int64_t ms)
{
	char buf[32];

	timefmt_utc(ms, buf, sizeof(buf));
	if (buf[0] == '\0')
		(void)printf(",\"%s\":null", name);
	else
		(void)printf(",\"%s\":\"%s\"", name, buf);
}

/* How long it waited and held, in ms: -1 where a time is missing. */
static int64_t
history_span(int64_t from, int64_t to)
{
	return (from > 0 && to >= from ? to - from : -1);
}

/* Until the take, or until the end for a run that never took it. */
static int64_t
history_waited(const struct lock_run *e)
{
	return (history_span(e->queued_ms, e->started_ms > 0 ?
	    e->started_ms : e->ended_ms));
}

void
history_print_run_json(const struct lock_run *e)
{
	(void)fputs("{\"outcome\":", stdout);
	json_string(e->outcome);
	history_print_num("exit", e->exit_code);
	(void)fputs(",\"host\":", stdout);
	if (e->host[0] != '\0')
		json_string(e->host);
	else
		(void)fputs("null", stdout);
	history_print_num("pid", e->pid);
	history_print_num("order", e->order);
	(void)fputs(",\"command\":", stdout);
	json_string(e->command);
	history_print_time("queued", e->queued_ms);
	history_print_time("started", e->started_ms);
	history_print_time("ended", e->ended_ms);
	history_print_num("waited_ms", history_waited(e));
	history_print_num("held_ms", history_span(e->started_ms,
	    e->ended_ms));
	history_print_num("fence", e->fence);
	(void)fputs("}", stdout);
}

void
history_print_json(const struct lock_run *es, size_t n)
{
	size_t i;

	(void)fputs("[", stdout);
	for (i = 0; i < n; i++) {
		if (i > 0)
			(void)fputs(",", stdout);
		history_print_run_json(&es[i]);
	}
	(void)fputs("]\n", stdout);
}

/* A duration for a column: '-' when unknown. */
static void
history_print_span(int64_t ms, char *buf, size_t size)
{
	if (ms < 0)
		(void)snprintf(buf, size, "-");
	else
		duration_span(ms, buf, size);
}

/*
 * One line per entry under a header.  The command comes last, so that a
 * long one runs on rather than breaking the columns.
 */
void
history_print_text(const struct lock_run *es, size_t n)
{
	char	ended[32], held[32], waited[32], exitb[16], pid[24];
	char	host[64], cmd[1100];
	size_t	i;

	(void)printf("%-20s %-10s %4s %-6s %-6s %-12s %6s  %s\n", "ENDED",
	    "OUTCOME", "EXIT", "HELD", "WAITED", "HOST", "PID", "COMMAND");
	for (i = 0; i < n; i++) {
		const struct lock_run *e = &es[i];

		timefmt_utc(e->ended_ms, ended, sizeof(ended));
		history_print_span(history_span(e->started_ms, e->ended_ms),
		    held, sizeof(held));
		history_print_span(history_waited(e), waited, sizeof(waited));
		(void)snprintf(exitb, sizeof(exitb), "%d", e->exit_code);
		(void)snprintf(pid, sizeof(pid), "%lld", (long long)e->pid);
		log_sanitize(host, sizeof(host), e->host, strlen(e->host));
		log_sanitize(cmd, sizeof(cmd), e->command, strlen(e->command));
		(void)printf("%-20s %-10s %4s %-6s %-6s %-12s %6s  %s\n",
		    ended[0] != '\0' ? ended : "-", e->outcome,
		    e->exit_code >= 0 ? exitb : "-", held, waited,
		    host[0] != '\0' ? host : "-", e->pid >= 0 ? pid : "-",
		    cmd[0] != '\0' ? cmd : "-");
	}
}

/* status of a free lock: "last: ok, exit 0, HOST, ended TIME, held D". */
void
history_print_last(const struct lock_run *e)
{
	char	ended[32], held[32], host[64], exitb[24] = "";

	timefmt_utc(e->ended_ms, ended, sizeof(ended));
	history_print_span(history_span(e->started_ms, e->ended_ms), held,
	    sizeof(held));
	log_sanitize(host, sizeof(host), e->host, strlen(e->host));
	if (e->exit_code >= 0)
		(void)snprintf(exitb, sizeof(exitb), ", exit %d", e->exit_code);
	(void)printf("last: %s%s, %s, ended %s, held %s\n", e->outcome, exitb,
	    host[0] != '\0' ? host : "unknown host",
	    ended[0] != '\0' ? ended : "unknown", held);
}
