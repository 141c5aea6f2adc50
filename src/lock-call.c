/* SPDX-License-Identifier: MIT */
/*
 * The bottom floor of the lock layer: a script sent to every server of
 * the lock at once (lock_call), with the servers that say "try again"
 * asked again, their answers counted, and the one failure record that
 * the verbs report (lock_failed, lock_fail; see struct lock_failure).
 * WAIT for replicas (--wait-replicas) is such a fan-out too.
 * Every other file of the layer calls this one; it calls none of them,
 * only lock-scripts.c and the connection layer below.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

#define LOCK_RETRY_MIN_MS	20

/* one script call, as lock_call() retries it */
struct lock_script_call {
	struct script	 *script;
	int		  nkeys, nargs;
	const char	**args;		/* keys, then arguments */
	const size_t	 *lens;
	int64_t		  cap_ns;
};

static void	 lock_type_clash(struct lock *);
static void	 lock_retry_transient(struct lock *,
		     const struct lock_script_call *, struct lock_round *);
static size_t	 lock_tally(struct lock *, const struct lock_round *);
static void	 lock_say_silent(struct lock *, const struct lock_round *);
static int64_t	 lock_wait_budget(struct lock *, int64_t);

/* Record a failure: its exit code and its message. */
void
lock_failed(struct lock *l, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(l->fail.text, sizeof(l->fail.text), fmt, ap);
	va_end(ap);
	l->fail.code = code;
}

void
lock_round_free(struct lock *l, struct lock_round *rd)
{
	size_t i;

	for (i = 0; i < l->nconns; i++)
		if (rd->replies[i] != NULL)
			freeReplyObject(rd->replies[i]);
	free(rd->replies);
	free(rd->results);
	memset(rd, 0, sizeof(*rd));
}

/*
 * The arguments of a script call: the lock's first nkeys keys (KEYS),
 * then nargs arguments (ARGV).  The caller frees *all and *lens.
 */
void
lock_script_args(const struct lock *l, int nkeys, int nargs,
    const char **argv, const size_t *argl, const char ***all, size_t **lens)
{
	int i;

	*all = xcalloc((size_t)(nkeys + nargs), sizeof(**all));
	*lens = xcalloc((size_t)(nkeys + nargs), sizeof(**lens));
	for (i = 0; i < nkeys; i++) {
		(*all)[i] = l->keys[i];
		(*lens)[i] = l->keys_len[i];
	}
	for (i = 0; i < nargs; i++) {
		(*all)[nkeys + i] = argv[i];
		(*lens)[nkeys + i] = argl != NULL ? argl[i] : strlen(argv[i]);
	}
}

/*
 * Run a script on every server at once, with the lock's first nkeys keys
 * as KEYS and argv (lengths in argl, or NULL for C strings) as ARGV.
 * Servers that say "try again" (LOADING after a restart, BUSY with a slow
 * script, a failover in progress) are retried until the I/O timeout has
 * passed since the first try, or cap_ns.  Returns the number of servers
 * that answered; l->fail describes the most telling failure.
 */
size_t
lock_call(struct lock *l, struct script *s, int nkeys, int nargs,
    const char **argv, const size_t *argl, int64_t cap_ns,
    struct lock_round *rd)
{
	const char	**all;
	size_t		 *lens, answered;

	lock_script_args(l, nkeys, nargs, argv, argl, &all, &lens);
	answered = lock_call_named(l, s, nkeys, nargs, all, lens, cap_ns, rd);
	free(all);
	free(lens);
	return (answered);
}

/*
 * lock_call() with KEYS of the caller's choosing: args holds nkeys key
 * names (companions of the lock, in its slot), then nargs arguments, with
 * their lengths in lens.
 */
size_t
lock_call_named(struct lock *l, struct script *s, int nkeys, int nargs,
    const char **args, const size_t *lens, int64_t cap_ns,
    struct lock_round *rd)
{
	struct lock_script_call	 call = { s, nkeys, nargs, args, lens, cap_ns };

	rd->replies = xcalloc(l->nconns, sizeof(*rd->replies));
	rd->results = xcalloc(l->nconns, sizeof(*rd->results));
	script_call_many(l->conns, l->nconns, s, nkeys, nargs, args, lens,
	    cap_ns, rd->replies, rd->results);
	lock_retry_transient(l, &call, rd);
	return (lock_tally(l, rd));
}

/*
 * lock_call() on the one server, with lead sent ahead of the script in the
 * same write (conn_set_lead()), and no cap but the servers' own timeouts:
 * the caller judges the reply by when it was sent.
 */
size_t
lock_call_behind(struct lock *l, struct conn_lead *lead, struct script *s,
    int nargs, const char **argv, struct lock_round *rd)
{
	conn_set_lead(l->conns[0], lead);
	return (lock_call(l, s, LOCK_NKEYS, nargs, argv, NULL, 0, rd));
}

/*
 * Servers that said "try again" (LOADING after a restart, BUSY with a slow
 * script, a failover in progress) are asked again, with a growing pause,
 * until the I/O timeout has passed since the first try, or the call's cap.
 */
static void
lock_retry_transient(struct lock *l, const struct lock_script_call *call,
    struct lock_round *rd)
{
	struct conn	**retry;
	redisReply	**rreplies;
	int		 *rresults, tries = 0;
	size_t		  i, n, nretry;
	int64_t		  until, pause_ns;

	until = clock_sooner(clock_mono_ns() +
	    clock_ms_to_ns(l->conf.io_timeout_ms), call->cap_ns);
	retry = xcalloc(l->nconns, sizeof(*retry));
	rreplies = xcalloc(l->nconns, sizeof(*rreplies));
	rresults = xcalloc(l->nconns, sizeof(*rresults));
	for (;;) {
		for (i = 0, nretry = 0; i < l->nconns; i++)
			if (rd->results[i] == CONN_TRANSIENT)
				retry[nretry++] = l->conns[i];
		if (nretry == 0 || clock_mono_ns() >= until)
			break;
		log_debug("%s", conn_error(retry[0]));
		/* Back off, but never so close to the deadline that the try
		 * has no time to be answered: a try cut short would hide the
		 * server's real answer behind a timeout. */
		pause_ns = clock_ms_to_ns(LOCK_RETRY_MIN_MS << (tries < 3 ?
		    tries : 3));
		if (clock_mono_ns() + pause_ns +
		    clock_ms_to_ns(LOCK_RETRY_MIN_MS) >= until)
			break;
		clock_sleep_ns(pause_ns);
		tries++;
		script_call_many(retry, nretry, call->script, call->nkeys,
		    call->nargs, call->args, call->lens, call->cap_ns, rreplies,
		    rresults);
		for (i = 0, n = 0; i < l->nconns; i++) {
			if (rd->results[i] != CONN_TRANSIENT)
				continue;
			rd->replies[i] = rreplies[n];
			rd->results[i] = rresults[n++];
		}
	}
	free(retry);
	free(rreplies);
	free(rresults);
}

/*
 * How many servers answered a round; l->round gets every failed server's
 * message (a quorum failure names each one, not only the first), and the
 * most telling exit code: auth, then protocol, then unavailable.
 */
static size_t
lock_tally(struct lock *l, const struct lock_round *rd)
{
	size_t	i, answered = 0, at = 0;
	int	code;

	l->round.code = 0;
	l->round.text[0] = '\0';
	for (i = 0; i < l->nconns; i++) {
		if (rd->results[i] == CONN_OK) {
			answered++;
			continue;
		}
		code = conn_exit_code(rd->results[i]);
		if (at < sizeof(l->round.text))
			at += (size_t)snprintf(l->round.text + at,
			    sizeof(l->round.text) - at, "%s%s", at > 0 ? "; " :
			    "", conn_error(l->conns[i]));
		if (rd->results[i] == CONN_SERVER_ERROR)
			lock_type_clash(l);
		if (l->round.code == 0 || code > l->round.code)
			l->round.code = code;
	}
	if (l->nconns > 1 && answered >= l->quorum)
		lock_say_silent(l, rd);
	return (answered);
}

/*
 * Quorum mode: a server that did not answer while a majority did leaves
 * the lock one failure closer to lost, which is worth knowing before the
 * next one fails.  Said once per server for the whole run, at
 * LOG_WARNING (-v prints it too), from what the round already tells: it
 * costs no call.  Other failures (a refusal, an error reply) are answers:
 * the operation's own message names them when they matter.
 */
static void
lock_say_silent(struct lock *l, const struct lock_round *rd)
{
	size_t i;

	for (i = 0; i < l->nconns; i++) {
		if (rd->results[i] != CONN_UNAVAILABLE)
			continue;
		if (l->said_silent == NULL)
			l->said_silent = xcalloc(l->nconns, 1);
		if (l->said_silent[i])
			continue;
		l->said_silent[i] = 1;
		log_audit(LOG_WARNING, "lock '%s': server %s did not answer: %s "
		    "(quorum still reached)", l->spec.key,
		    conn_display(l->conns[i]), conn_error(l->conns[i]));
	}
}

/*
 * Run s (status or extend) with the keys the lock's mode needs: a mutex
 * names its own three only, since a slot being migrated answers TRYAGAIN
 * to keys that do not exist there, and readers' keys mostly do not.  A
 * server that finds readers (a reader's token given without -s) answers
 * REDLOCK-SHARED, and the call is made again with every key.
 */
size_t
lock_call_keys(struct lock *l, struct script *s, int nargs,
    const char **argv, int64_t cap_ns, struct lock_round *rd)
{
	size_t	i, n;

	if (l->spec.mode != LOCK_MUTEX)
		return (lock_call(l, s, LOCK_NKEYS, nargs, argv, NULL, cap_ns,
		    rd));
	n = lock_call(l, s, 3, nargs, argv, NULL, cap_ns, rd);
	for (i = 0; i < l->nconns; i++)
		if (rd->results[i] == CONN_SERVER_ERROR &&
		    strstr(conn_error(l->conns[i]), "REDLOCK-SHARED") != NULL)
			break;
	if (i == l->nconns)
		return (n);
	lock_round_free(l, rd);
	return (lock_call(l, s, LOCK_NKEYS, nargs, argv, NULL, cap_ns, rd));
}

/*
 * Our scripts answer "REDLOCK-TYPE <type>" when the key is not the kind of
 * lock the caller takes it for, "REDLOCK-LIMIT <N>" when a semaphore
 * is held with another limit than the caller's, and "REDLOCK-FENCE <N>"
 * when the fence counter is past what a script counts exactly: say so in
 * the caller's terms.
 */
static void
lock_type_clash(struct lock *l)
{
	const char	*p = strstr(l->round.text, ": REDLOCK-TYPE ");
	const char	*lim = strstr(l->round.text, ": REDLOCK-LIMIT ");
	const char	*f = strstr(l->round.text, ": REDLOCK-FENCE ");
	char		 kind[32];
	int		 code;

	if (f != NULL) {
		log_sanitize(kind, sizeof(kind), f + 16, strcspn(f + 16, " ;"));
		lock_failed(l, EXIT_PROTOCOL, "lock '%s': its fence counter is "
		    "at %s, past 2^53 - 1, the last fence a script gives "
		    "exactly: use another lock name", l->spec.key, kind);
		l->fail.type_clash = EXIT_PROTOCOL;
		return;
	}
	if (lim != NULL && p == NULL) {
		log_sanitize(kind, sizeof(kind), lim + 16, strcspn(lim + 16,
		    " ;"));
		lock_failed(l, EXIT_USAGE, "lock '%s' is a semaphore of %s "
		    "slots: --limit %lld does not match it", l->spec.key, kind,
		    (long long)l->spec.limit);
		l->fail.type_clash = EXIT_USAGE;
		return;
	}
	if (p == NULL)
		return;
	/* In quorum mode the text joins every server's answer: the kind is
	 * the first word of the first. */
	log_sanitize(kind, sizeof(kind), p + 15, strcspn(p + 15, " ;"));
	code = l->round.code;
	if (l->spec.mode != LOCK_SEMAPHORE && strcmp(kind, "zset") == 0) {
		lock_failed(l, code, "lock '%s' is a semaphore: use --limit",
		    l->spec.key);
		l->fail.type_clash = EXIT_USAGE;
	} else if (l->spec.mode == LOCK_SEMAPHORE &&
	    strcmp(kind, "string") == 0) {
		lock_failed(l, code, "lock '%s' is a mutex: it cannot be "
		    "used with --limit", l->spec.key);
		l->fail.type_clash = EXIT_USAGE;
	} else {
		lock_failed(l, code, "key '%s' holds a %s, not a lock", l->key,
		    kind);
		l->fail.type_clash = EXIT_PROTOCOL;
	}
}

/*
 * The exit code of a failed operation, whose failure it records: what the
 * last round's servers said, or when none of them failed (a reply we could
 * not use), the failure already recorded.  In quorum mode it also says
 * how far from a majority it was.
 */
int
lock_fail(struct lock *l, size_t ok)
{
	const struct lock_failure *from;
	char	why[sizeof(l->fail.text)];
	int	code;

	if (l->fail.type_clash != 0)
		return (l->fail.type_clash);
	from = l->round.code != 0 ? &l->round : &l->fail;
	code = from->code != 0 ? from->code : EXIT_UNAVAILABLE;
	if (from->text[0] != '\0')
		memcpy(why, from->text, sizeof(why));
	else
		(void)snprintf(why, sizeof(why), "lock '%s': no server gave a "
		    "usable answer", l->spec.key);
	if (l->nconns > 1)
		lock_failed(l, code, "quorum not reached (%zu of %zu servers, "
		    "%zu needed): %.900s", ok, l->nconns, l->quorum, why);
	else
		lock_failed(l, code, "%s", why);
	l->round.code = 0;
	l->round.text[0] = '\0';
	return (code);
}

int
lock_unexpected(struct lock *l, size_t i, const char *what,
    const redisReply *r, const char *expected)
{
	static const char *names[] = { "?", "string", "array", "integer",
	    "nil", "status", "error" };
	int t = r != NULL ? r->type : 0;

	lock_failed(l, EXIT_PROTOCOL,
	    "%s: unexpected reply to %s: expected %s, got %s",
	    conn_display(l->conns[i]), what, expected,
	    r == NULL ? "nothing" : t >= 1 && t <= 6 ? names[t] : "other");
	return (EXIT_PROTOCOL);
}

/*
 * After an acquire attempt that did not give us the lock, or whose outcome
 * is unknown (a reply was lost), make sure our token is left nowhere: give
 * back (compare-and-delete) is harmless where the take never happened.
 * Best effort, on fresh connections where a reply went missing, and within
 * one I/O timeout in all, connecting included: a probe (-n) against a
 * server that does not answer then ends within its attempt and one more
 * I/O timeout.  A give-back that does not make it leaves the take to
 * expire with its TTL.  A queued waiter that will try again (again) gets
 * its place back in line where its take had taken it out: the give-back
 * puts it back at its own rank.
 */
void
lock_forget_attempt(struct lock *l, const char *const *attempt_argv,
    int argc, int again)
{
	struct lock_round	rd;
	const char		*argv[LOCK_ATTEMPT_ARGC];

	memcpy(argv, attempt_argv, sizeof(argv));
	if (!again)
		argv[7] = "0";	/* no lease: out of line */
	(void)lock_call(l, l->scripts->give_back, LOCK_NKEYS, argc, argv,
	    NULL, clock_mono_ns() + clock_ms_to_ns(l->conf.io_timeout_ms), &rd);
	lock_round_free(l, &rd);
}

/*
 * How long WAIT may take before cap_ns: --wait-timeout, or less, leaving
 * the answer time to come back (-v says so once).
 */
static int64_t
lock_wait_budget(struct lock *l, int64_t cap_ns)
{
	int64_t	wait_ms = l->opts->wait_timeout_ms, left_ms;
	char	want[32], got[32];

	left_ms = (cap_ns - clock_mono_ns()) / 1000000;
	left_ms -= left_ms / 8 + 1;
	if (left_ms < 1 || wait_ms <= left_ms)
		return (left_ms < 1 ? left_ms : wait_ms);
	if (!l->said_wait_cap) {
		duration_format(wait_ms, want, sizeof(want));
		duration_format(left_ms, got, sizeof(got));
		log_info("--wait-timeout %s capped to %s: lock '%s' must still "
		    "be valid when WAIT ends", want, got, l->spec.key);
		l->said_wait_cap = 1;
	}
	return (left_ms);
}

/*
 * --wait-replicas N: WAIT until N replicas of each server have what we
 * wrote (WAIT cannot run inside a script, so it follows it).  A majority
 * of servers must report N acknowledgements.  This narrows, but does not
 * close, the window in which a failover loses the lock: WAIT makes the
 * write reach the replicas, it does not make the failover pick one that
 * has it.  The wait ends by cap_ns, the lock's validity minus the margin,
 * on the server's side as well as ours: a WAIT that outlasted the lock
 * would keep a command running on a lock that may be someone else's.
 * Returns 0, or -1 with l->fail set.
 */
int
lock_wait_replicas(struct lock *l, int64_t cap_ns)
{
	const char	*argv[3];
	size_t		 lens[3], i, enough = 0;
	redisReply	**replies;
	int		 *results;
	char		  num[32], ms[32];
	long long	  least = -1;
	int64_t		  wait_ms;
	int		  noted = 0;

	if (l->opts->wait_replicas == 0)
		return (0);
	if ((wait_ms = lock_wait_budget(l, cap_ns)) < 1) {
		lock_failed(l, EXIT_UNAVAILABLE, "lock '%s': no time left to "
		    "WAIT for replicas within its validity", l->spec.key);
		return (-1);
	}
	(void)snprintf(num, sizeof(num), "%d", l->opts->wait_replicas);
	(void)snprintf(ms, sizeof(ms), "%lld", (long long)wait_ms);
	argv[0] = "WAIT";
	argv[1] = num;
	argv[2] = ms;
	for (i = 0; i < 3; i++)
		lens[i] = strlen(argv[i]);
	replies = xcalloc(l->nconns, sizeof(*replies));
	results = xcalloc(l->nconns, sizeof(*results));
	conn_command_many(l->conns, l->nconns, l->nconns, 3, argv, lens,
	    clock_ms_to_ns(wait_ms), cap_ns, replies, results);
	for (i = 0; i < l->nconns; i++) {
		if (results[i] == CONN_OK &&
		    replies[i]->type == REDIS_REPLY_INTEGER) {
			if (replies[i]->integer >= l->opts->wait_replicas)
				enough++;
			if (least == -1 || replies[i]->integer < least)
				least = replies[i]->integer;
		} else if (!noted++ || enough == 0)
			lock_failed(l, EXIT_UNAVAILABLE, "%s",
			    conn_error(l->conns[i]));
		if (replies[i] != NULL)
			freeReplyObject(replies[i]);
	}
	free(replies);
	free(results);
	if (enough >= l->quorum)
		return (0);
	if (least >= 0)
		lock_failed(l, EXIT_UNAVAILABLE, "lock '%s': only %lld of %d "
		    "replicas acknowledged it within %lldms", l->spec.key,
		    least, l->opts->wait_replicas, (long long)wait_ms);
	l->fail.code = EXIT_UNAVAILABLE;
	return (-1);
}
