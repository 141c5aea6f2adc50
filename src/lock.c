/* SPDX-License-Identifier: MIT */
/*
 * The top of the lock layer, the API the verbs call: a lock opened from
 * its struct lock_spec (its keys, its connections), what they may read
 * of it, release and extend.  Acquire is in lock-acquire.c, status in
 * lock-status.c, waiting in lock-wait.c, the fan-out of a script to
 * every server (lock_call) and the failure record in lock-call.c.  Every
 * operation goes to all servers at once and counts the answers; with one
 * server the quorum is one.
 *
 * Nothing here prints: a failure leaves its exit code and message in
 * l->fail, which lock_error() gives the caller, because the same failure
 * is fatal for `release` but only a retry for `run`'s renewal.  A round
 * only notes what its servers said (l->round); it never touches l->fail.
 */

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "lock-impl.h"

static void	 lock_describe_join(char *, size_t, const char *);
static int	 lock_holder_gone(const struct lock_holder *);
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
	    "rwait", "history", NULL };
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
	l->conf.password_from = opts->password_from;
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
	for (i = 1; i < LK_WHO; i++)
		l->keys[i] = keyslot_companion(l->key, l->key_len,
		    suffixes[i], &l->keys_len[i]);
	/* Named after the queue: the name it has always had. */
	l->keys[LK_WHO] = xasprintf("%s:who", l->keys[LK_QUEUE]);
	l->keys_len[LK_WHO] = strlen(l->keys[LK_WHO]);
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
	lock_listen_free(l);
	lock_queue_close(l);
	freezero_str(l->token);
	lock_holder_clear(&l->busy);
	free(l->said_silent);
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
 * (COMMAND, since 2026-12-05T03:20:20Z, held 5h02m, ttl 25s)": the time in
 * UTC as everywhere, how long it has been held (a renewed lock's TTL
 * stays short, whatever it waits for), and its TTL; or "another owner"
 * when the holder left no metadata (a foreign client).  For a reader kept
 * out by a waiting writer (lock_busy_writer()), the writer: "HOST pid P
 * (waiting since 2026-12-05T03:20:20Z)", or "another owner".
 */
void
lock_describe_holder(const struct lock *l, char *buf, size_t len)
{
	const struct lock_holder *h = &l->busy;
	char		 cmd[96], what[256], more[64], at[32], left[32];

	timefmt_utc(h->since_ms, at, sizeof(at));
	if (h->writer && h->host != NULL && h->pid > 0) {
		if (at[0] != '\0')
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
	/* No command when the holder recorded none (--record-command). */
	cmd[0] = '\0';
	if (h->command != NULL)
		log_sanitize(cmd, sizeof(cmd), h->command, strlen(h->command));
	(void)snprintf(what, sizeof(what), "%s", cmd);
	if (at[0] != '\0') {
		(void)snprintf(more, sizeof(more), "since %s", at);
		lock_describe_join(what, sizeof(what), more);
	}
	timefmt_age(h->since_ms, left, sizeof(left));
	if (left[0] != '\0') {
		(void)snprintf(more, sizeof(more), "held %s", left);
		lock_describe_join(what, sizeof(what), more);
	}
	if (l->busy_ttl_ms > 0) {
		duration_span(l->busy_ttl_ms, left, sizeof(left));
		(void)snprintf(more, sizeof(more), "ttl %s", left);
		lock_describe_join(what, sizeof(what), more);
	}
	if (lock_holder_gone(h))
		lock_describe_join(what, sizeof(what), "no such process on "
		    "this host now");
	if (what[0] == '\0')
		(void)snprintf(buf, len, "%s pid %lld", h->host,
		    (long long)h->pid);
	else
		(void)snprintf(buf, len, "%s pid %lld (%s)", h->host,
		    (long long)h->pid, what);
}

/*
 * Whether h names a process of this host that no longer runs: a script
 * that took the lock by hand and died, or a run killed with SIGKILL.  Its
 * lock stays until its TTL ends (or 'release --force').  A process in
 * another PID namespace under the same host name is not ours to see:
 * only ESRCH counts, and a pid since reused reads as running.
 */
static int
lock_holder_gone(const struct lock_holder *h)
{
	char	host[256];

	if (h->pid <= 0 || h->pid > INT32_MAX || h->host == NULL ||
	    gethostname(host, sizeof(host)) == -1)
		return (0);
	host[sizeof(host) - 1] = '\0';
	if (strcmp(host, h->host) != 0)
		return (0);
	return (kill((pid_t)h->pid, 0) == -1 && errno == ESRCH);
}

/* Add more to the holder's description what, after a comma if need be. */
static void
lock_describe_join(char *what, size_t len, const char *more)
{
	char	part[256];
	size_t	need = strlen(more) + 2, keep;

	/* A long command is cut, never what follows it. */
	keep = len > need + 1 ? len - need - 1 : 0;
	if (what[0] == '\0')
		(void)snprintf(part, sizeof(part), "%s", more);
	else
		(void)snprintf(part, sizeof(part), "%.*s, %s", (int)keep, what,
		    more);
	(void)snprintf(what, len, "%s", part);
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
	struct lock_entry_args	 e;
	const char		*argv[3 + LOCK_ENTRY_ARGC];

	argv[0] = l->token;
	argv[1] = l->limit_arg;
	argv[2] = l->q.wake_prefix;
	/* The history entry rides with the release: no call of its own. */
	lock_entry_args(l, &e);
	memcpy(&argv[3], e.argv, sizeof(e.argv));
	return (lock_call(l, l->scripts->release, LOCK_NKEYS,
	    3 + LOCK_ENTRY_ARGC, argv, NULL, 0, rd));
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
