/* SPDX-License-Identifier: MIT */
/*
 * The lock protocol for one key, on one server or on a Redlock quorum of
 * independent servers, on top of conn.c (transport) and scripts.c (the
 * atomic steps): the lock's keys, the fan-out of a script to every server
 * (lock_call), and release and extend.  Acquire is in lock-acquire.c,
 * status in lock-status.c, waiting in lock-wait.c.  Every operation goes
 * to all servers at once and counts the answers; with one server the
 * quorum is one.
 *
 * Nothing here prints: a failure leaves its exit code and message in
 * l->fail, which lock_error() gives the caller, because the same failure
 * is fatal for `release` but only a retry for `run`'s renewal.  A round
 * only notes what its servers said (l->round); it never touches l->fail.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

#define LOCK_RETRY_MIN_MS	20

/* one script call, as lock_call() retries it */
struct lock_script_call {
	struct script	 *script;
	int		  nkeys, nargs;
	const char	**args;		/* keys, then arguments */
	size_t		 *lens;
	int64_t		  cap_ns;
};

static void	 lock_type_clash(struct lock *);
static void	 lock_retry_transient(struct lock *,
		     const struct lock_script_call *, struct lock_round *);
static size_t	 lock_tally(struct lock *, const struct lock_round *);
static int64_t	 lock_wait_budget(struct lock *, int64_t);
static int	 lock_owner_answers(struct lock *, const char *,
		     struct lock_round *);

/*
 * The drift allowance of the Redlock algorithm: clocks of client and
 * servers may run at slightly different rates during one TTL.
 */
int64_t
lock_drift_ms(int64_t ttl_ms)
{
	return (ttl_ms / 100 + 2);
}

/*
 * The safety margin: the part of the validity kept back so that a holder
 * that finds its lock going still has time to stop its command before the
 * lock may be someone else's.  No step may block past the validity minus
 * this, and no command starts with less than this left.
 */
int64_t
lock_margin_ns(int64_t ttl_ms)
{
	return (clock_ms_to_ns(ttl_ms) / 4);
}

/*
 * The instant by which every step of an operation begun at start_ns on a
 * lock of ttl_ms must be over: its validity minus the margin.
 */
int64_t
lock_cap_ns(int64_t start_ns, int64_t ttl_ms)
{
	return (start_ns + clock_ms_to_ns(ttl_ms - lock_drift_ms(ttl_ms)) -
	    lock_margin_ns(ttl_ms));
}

struct lock *
lock_open(const struct global_opts *opts, const struct lock_spec *spec)
{
	static const char *suffixes[LOCK_NKEYS] = { "", "fence", "meta",
	    "queue", "leases", "wake", "readers", "rmeta", "writers",
	    "rwait" };
	const char	*prefix = opts->prefix != NULL ? opts->prefix : "";
	struct lock	*l;
	size_t		 i;

	l = xcalloc(1, sizeof(*l));
	l->opts = opts;
	l->spec = *spec;
	l->spec.key = xstrdup(spec->key);
	l->spec.token = NULL;		/* l->token is the one kept */
	l->spec.command = xstrdup(spec->command != NULL ? spec->command :
	    "manual");
	l->scripts = spec->mode == LOCK_SEMAPHORE ? &scripts_semaphore :
	    spec->mode == LOCK_SHARED ? &scripts_shared : &scripts_mutex;
	(void)snprintf(l->limit_arg, sizeof(l->limit_arg), "%lld",
	    spec->mode == LOCK_SEMAPHORE ? (long long)spec->limit : 0LL);
	if (spec->token != NULL)
		l->token = xstrdup(spec->token);
	l->ttl_ms = spec->ttl_ms;
	l->conf.connect_timeout_ms = opts->connect_timeout_ms;
	l->conf.io_timeout_ms = opts->io_timeout_ms;
	l->conf.password = opts->password;
	l->conf.user = opts->user;
	/* --tls is every connection; rediss:// marks its own URL. */
	l->conf.use_tls = opts->tls.enabled == 1;
	l->conf.wait_mask = spec->wait_mask;
	l->nconns = opts->nurls;
	l->quorum = l->nconns / 2 + 1;
	l->conns = xcalloc(l->nconns, sizeof(*l->conns));
	for (i = 0; i < l->nconns; i++)
		l->conns[i] = conn_new(&opts->urls[i], &l->conf);
	l->key = xasprintf("%s%s", prefix, spec->key);
	l->key_len = strlen(l->key);
	l->keys[LK_LOCK] = xstrdup(l->key);
	l->keys_len[LK_LOCK] = l->key_len;
	for (i = 1; i < LOCK_NKEYS; i++)
		l->keys[i] = keyslot_companion(l->key, l->key_len,
		    suffixes[i], &l->keys_len[i]);
	l->wake_prefix = keyslot_companion(l->key, l->key_len, "wake:",
	    &l->wake_prefix_len);
	lock_queue_open(l);
	l->fence = -1;
	return (l);
}

void
lock_close(struct lock *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->nconns; i++)
		conn_free(l->conns[i]);
	free(l->conns);
	free((char *)l->spec.key);
	free((char *)l->spec.command);
	free(l->key);
	for (i = 0; i < LOCK_NKEYS; i++)
		free(l->keys[i]);
	free(l->wake_prefix);
	lock_queue_close(l);
	freezero_str(l->token);
	lock_holder_clear(&l->busy);
	free(l);
}

/* What the verbs may read of a lock. */
/*
 * Never an empty line: a failure code without a message would be a bug,
 * and the user would still get one line that names the lock.
 */
const char *
lock_error(const struct lock *l)
{
	static char	generic[sizeof(l->fail.text)];

	if (l->fail.text[0] != '\0')
		return (l->fail.text);
	(void)snprintf(generic, sizeof(generic), "lock '%s': failed (exit %d)",
	    l->spec.key, l->fail.code != 0 ? l->fail.code : EXIT_UNAVAILABLE);
	return (generic);
}

const char *
lock_name(const struct lock *l)
{
	return (l->spec.key);
}

const char *
lock_token(const struct lock *l)
{
	return (l->token);
}

int64_t
lock_fence(const struct lock *l)
{
	return (l->fence);
}

int64_t
lock_ttl_ms(const struct lock *l)
{
	return (l->ttl_ms);
}

int64_t
lock_acquired_ns(const struct lock *l)
{
	return (l->acquired_ns);
}

/* When the answer that made the lock ours came in (CLOCK_MONOTONIC). */
int64_t
lock_taken_ns(const struct lock *l)
{
	return (l->taken_ns);
}

int64_t
lock_valid_until_ns(const struct lock *l)
{
	return (l->valid_until_ns);
}

int
lock_not_owner(const struct lock *l)
{
	return (l->not_owner);
}

size_t
lock_nservers(const struct lock *l)
{
	return (l->nconns);
}

void
lock_holder_clear(struct lock_holder *h)
{
	free(h->token);
	free(h->host);
	free(h->command);
	memset(h, 0, sizeof(*h));
}

/* Whether the last busy attempt was a reader kept out by a waiting writer. */
int
lock_busy_writer(const struct lock *l)
{
	return (l->busy.writer);
}

/*
 * Who held the lock at the last busy attempt, for messages: "HOST pid P
 * (COMMAND, since HH:MM:SS, 25s left)", or "another owner" when the holder
 * left no metadata (a foreign client, or one from before it was kept).
 * For a reader kept out by a waiting writer (lock_busy_writer()), the
 * writer: "HOST pid P (waiting since HH:MM:SS)", or "another owner".
 */
void
lock_describe_holder(const struct lock *l, char *buf, size_t len)
{
	const struct lock_holder *h = &l->busy;
	char		 cmd[96], what[160], part[200], at[16], left[32];
	struct tm	 tm;
	time_t		 t = (time_t)(h->since_ms / 1000);

	if (h->writer && h->host != NULL && h->pid > 0) {
		if (h->since_ms > 0 && localtime_r(&t, &tm) != NULL &&
		    strftime(at, sizeof(at), "%H:%M:%S", &tm) > 0)
			(void)snprintf(buf, len, "%s pid %lld (waiting since "
			    "%s)", h->host, (long long)h->pid, at);
		else
			(void)snprintf(buf, len, "%s pid %lld", h->host,
			    (long long)h->pid);
		return;
	}
	if (h->host == NULL || h->pid <= 0) {
		(void)snprintf(buf, len, "another owner");
		return;
	}
	log_sanitize(cmd, sizeof(cmd), h->command != NULL ? h->command : "?",
	    h->command != NULL ? strlen(h->command) : 1);
	(void)snprintf(what, sizeof(what), "%s", cmd);
	if (h->since_ms > 0 && localtime_r(&t, &tm) != NULL &&
	    strftime(at, sizeof(at), "%H:%M:%S", &tm) > 0) {
		(void)snprintf(part, sizeof(part), "%.150s, since %s", what,
		    at);
		memcpy(what, part, sizeof(what));
		what[sizeof(what) - 1] = '\0';
	}
	if (l->busy_ttl_ms > 0) {
		duration_span(l->busy_ttl_ms, left, sizeof(left));
		(void)snprintf(part, sizeof(part), "%.150s, %s left", what,
		    left);
		memcpy(what, part, sizeof(what));
		what[sizeof(what) - 1] = '\0';
	}
	(void)snprintf(buf, len, "%s pid %lld (%s)", h->host,
	    (long long)h->pid, what);
}

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
	struct lock_script_call	 call;

	call.script = s;
	call.nkeys = nkeys;
	call.nargs = nargs;
	call.cap_ns = cap_ns;
	lock_script_args(l, nkeys, nargs, argv, argl, &call.args, &call.lens);
	rd->replies = xcalloc(l->nconns, sizeof(*rd->replies));
	rd->results = xcalloc(l->nconns, sizeof(*rd->results));
	script_call_many(l->conns, l->nconns, s, nkeys, nargs, call.args,
	    call.lens, cap_ns, rd->replies, rd->results);
	lock_retry_transient(l, &call, rd);
	free(call.args);
	free(call.lens);
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
	return (answered);
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
 * lock the caller takes it for, and "REDLOCK-LIMIT <N>" when a semaphore
 * is held with another limit than the caller's: say so in the caller's
 * terms.
 */
static void
lock_type_clash(struct lock *l)
{
	const char	*p = strstr(l->round.text, ": REDLOCK-TYPE ");
	const char	*lim = strstr(l->round.text, ": REDLOCK-LIMIT ");
	char		 kind[32];
	int		 code;

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
	log_sanitize(kind, sizeof(kind), p + 15, strlen(p + 15));
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
 * Count release or extend answers (1 or more done, 0 not held, -1 held by
 * another token): done on a majority is success; "not owner" when enough
 * servers say so that a majority is out of reach; otherwise a failure.
 */
static int
lock_owner_answers(struct lock *l, const char *what, struct lock_round *rd)
{
	size_t	i, done = 0, gone = 0, other = 0;

	for (i = 0; i < l->nconns; i++) {
		if (rd->results[i] != CONN_OK)
			continue;
		if (rd->replies[i]->type != REDIS_REPLY_INTEGER) {
			(void)lock_unexpected(l, i, what, rd->replies[i],
			    "integer");
			rd->results[i] = CONN_PROTOCOL;
			continue;
		}
		if (rd->replies[i]->integer >= 1)
			done++;
		else if (rd->replies[i]->integer == 0)
			gone++;
		else
			other++;
	}
	if (done >= l->quorum)
		return (EXIT_OK);
	if (gone + other > l->nconns - l->quorum) {
		l->not_owner = other > 0 ? LOCK_OTHER : LOCK_GONE;
		return (EXIT_NOT_OWNER);
	}
	return (lock_fail(l, done));
}

/* Run the release script everywhere; the caller reads the round. */
size_t
lock_release_call(struct lock *l, struct lock_round *rd)
{
	const char *argv[3];

	argv[0] = l->token;
	argv[1] = l->limit_arg;
	argv[2] = l->wake_prefix;
	return (lock_call(l, l->scripts->release, LOCK_NKEYS, 3, argv, NULL, 0,
	    rd));
}

int
lock_release(struct lock *l)
{
	struct lock_round	rd;
	int			rc;

	(void)lock_release_call(l, &rd);
	rc = lock_owner_answers(l, "release", &rd);
	lock_round_free(l, &rd);
	return (rc);
}

/*
 * The TTL an extend set: its answers are the TTL, which the servers agree
 * on (the one asked for, or the one the lock was taken with).
 */
static int64_t
lock_extended_ttl(const struct lock *l, const struct lock_round *rd)
{
	size_t i;

	for (i = 0; i < l->nconns; i++)
		if (rd->results[i] == CONN_OK &&
		    rd->replies[i]->type == REDIS_REPLY_INTEGER &&
		    rd->replies[i]->integer >= LOCK_MIN_TTL_MS)
			return (rd->replies[i]->integer);
	return (DEFAULT_TTL_MS);
}

/*
 * The extend script on every server: ttl_ms from now (0: the TTL the lock
 * was taken with), every answer by cap_ns (0: the I/O timeout).  Returns
 * what the owners answered; *set_ms gets the TTL set.
 */
static int
lock_extend_call(struct lock *l, int64_t ttl_ms, int64_t cap_ns,
    int64_t *set_ms)
{
	struct lock_round	 rd;
	const char		*argv[4];
	char			 ttl[32], dflt[32];
	int			 rc;

	(void)snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	(void)snprintf(dflt, sizeof(dflt), "%d", DEFAULT_TTL_MS);
	argv[0] = l->token;
	argv[1] = ttl;
	argv[2] = l->limit_arg;
	argv[3] = dflt;
	(void)lock_call_keys(l, l->scripts->extend, 4, argv, cap_ns, &rd);
	rc = lock_owner_answers(l, "extend", &rd);
	*set_ms = rc == EXIT_OK && ttl_ms == 0 ? lock_extended_ttl(l, &rd) :
	    ttl_ms;
	lock_round_free(l, &rd);
	return (rc);
}

/*
 * Extend to ttl_ms from now, if we still hold the lock on a majority;
 * ttl_ms 0 is the TTL the lock was taken with.  cap_ns bounds the whole
 * call (a renewal must not outlive the validity).
 */
int
lock_extend(struct lock *l, int64_t ttl_ms, int64_t cap_ns)
{
	int64_t	start = clock_mono_ns();
	int	rc;

	/* Nothing may outlast the validity this extension would give. */
	if (ttl_ms > 0)
		cap_ns = clock_sooner(cap_ns, lock_cap_ns(start, ttl_ms));
	/*
	 * Every answer counted came before cap_ns (the poll loop's deadlines
	 * never pass it), so a majority that confirmed did so while the lock
	 * was still valid, even if a frozen server held the round up.
	 */
	rc = lock_extend_call(l, ttl_ms, cap_ns, &ttl_ms);
	if (rc == EXIT_OK) {
		if (lock_wait_replicas(l, cap_ns > 0 ? cap_ns :
		    lock_cap_ns(start, ttl_ms)) == -1)
			rc = EXIT_UNAVAILABLE;
	}
	if (rc == EXIT_OK) {
		l->ttl_ms = ttl_ms;
		l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
		    lock_drift_ms(ttl_ms));
	}
	return (rc);
}

/*
 * --min-hold's keep, once nothing runs under the lock any more: its TTL
 * set to ttl_ms, the rest of the hold.  Not a renewal: there is no
 * validity to stay within, so the call gets the I/O timeout as a release
 * does, however few milliseconds are left to keep (a cap counted from
 * those would end before the request is sent).  No WAIT for replicas
 * either: one that missed the keep still has the lock with the TTL it
 * had.
 */
int
lock_linger(struct lock *l, int64_t ttl_ms)
{
	return (lock_extend_call(l, ttl_ms, 0, &ttl_ms));
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
