/*
 * The lock protocol: acquire, release, extend and status for one key, on
 * top of conn.c (transport) and scripts.c (the atomic steps).  Nothing here
 * prints: failures leave a message in l->err for the caller, because the
 * same failure is fatal for `release` but only a retry for `run`'s renewal.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

#define LOCK_RETRY_MIN_MS	20

static const char *lock_type_name(int);
static int	 lock_owner_reply(struct lock *, const char *, redisReply *);
static void	 lock_forget_attempt(struct lock *);
static void	 lock_type_clash(struct lock *);

/*
 * The drift allowance of the Redlock algorithm: clocks of client and
 * server may run at slightly different rates during one TTL.
 */
int64_t
lock_drift_ms(int64_t ttl_ms)
{
	return (ttl_ms / 100 + 2);
}

/*
 * Name a companion key of lock key K so that it lands in K's Cluster slot:
 * "{K}:suffix" when K has no braces (so K itself is the tag), otherwise
 * "{T}:K:suffix" with T the tag that decides K's slot: K's own tag, or a
 * short generated one with the same slot when K hashes whole but contains
 * a brace.  Distinct keys always get distinct companions.
 */
char *
lock_companion_key(const char *key, size_t len, const char *suffix,
    size_t *out_len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const char	*open, *close;
	char		*out, tag[4];
	size_t		 tag_len = 0, slen = strlen(suffix), i, j, k, na;
	unsigned int	 slot;

	if (len > 0 && memchr(key, '{', len) == NULL &&
	    memchr(key, '}', len) == NULL) {
		*out_len = len + slen + 3;
		out = xmalloc(*out_len + 1);
		out[0] = '{';
		memcpy(out + 1, key, len);
		memcpy(out + 1 + len, "}:", 2);
		memcpy(out + 3 + len, suffix, slen + 1);
		return (out);
	}
	open = memchr(key, '{', len);
	close = open != NULL ? memchr(open + 1, '}', len -
	    (size_t)(open + 1 - key)) : NULL;
	if (open != NULL && close != NULL && close > open + 1) {
		tag_len = (size_t)(close - open - 1);
		out = xmalloc(tag_len + len + slen + 5);
		out[0] = '{';
		memcpy(out + 1, open + 1, tag_len);
	} else {
		/* Search 1..3 character tags; 36^3 covers all 16384 slots. */
		slot = keyslot(key, len);
		na = sizeof(alphabet) - 1;
		for (i = 0; i < na * na * na + na * na + na; i++) {
			k = i;
			if (k < na)
				tag_len = 1;
			else if ((k -= na) < na * na)
				tag_len = 2;
			else {
				k -= na * na;
				tag_len = 3;
			}
			for (j = 0; j < tag_len; j++, k /= na)
				tag[j] = alphabet[k % na];
			if (keyslot(tag, tag_len) == slot)
				break;
		}
		out = xmalloc(tag_len + len + slen + 5);
		out[0] = '{';
		memcpy(out + 1, tag, tag_len);
	}
	memcpy(out + 1 + tag_len, "}:", 2);
	memcpy(out + 3 + tag_len, key, len);
	out[3 + tag_len + len] = ':';
	memcpy(out + 4 + tag_len + len, suffix, slen + 1);
	*out_len = tag_len + len + slen + 4;
	return (out);
}

void
lock_init(struct lock *l, const struct global_opts *opts, const char *key)
{
	const char	*prefix = opts->prefix != NULL ? opts->prefix : "";

	memset(l, 0, sizeof(*l));
	l->opts = opts;
	l->conf.connect_timeout_ms = opts->connect_timeout_ms;
	l->conf.io_timeout_ms = opts->io_timeout_ms;
	l->conf.password = opts->password;
	l->conn = conn_new(&opts->urls[0], &l->conf);
	l->user_key = xstrdup(key);
	l->key = xasprintf("%s%s", prefix, key);
	l->key_len = strlen(l->key);
	l->fence_key = lock_companion_key(l->key, l->key_len, "fence",
	    &l->fence_key_len);
	l->meta_key = lock_companion_key(l->key, l->key_len, "meta",
	    &l->meta_key_len);
	l->wake_key = lock_companion_key(l->key, l->key_len, "wake",
	    &l->wake_key_len);
	l->queue_key = lock_companion_key(l->key, l->key_len, "queue",
	    &l->queue_key_len);
	l->lease_key = lock_companion_key(l->key, l->key_len, "leases",
	    &l->lease_key_len);
	l->wake_prefix = lock_companion_key(l->key, l->key_len, "wake:",
	    &l->wake_prefix_len);
	l->fence = -1;
}

void
lock_free(struct lock *l)
{
	conn_free(l->conn);
	free(l->user_key);
	free(l->key);
	free(l->fence_key);
	free(l->meta_key);
	free(l->wake_key);
	free(l->queue_key);
	free(l->lease_key);
	free(l->wake_prefix);
	freezero_str(l->token);
	memset(l, 0, sizeof(*l));
}

/* Use a token given by the user (--token, $REDLOCK_TOKEN). */
int
lock_set_token(struct lock *l, const char *token)
{
	if (*token == '\0')
		return (-1);
	freezero_str(l->token);
	l->token = xstrdup(token);
	return (0);
}

/*
 * Run a script, retrying while the server says "try again" (LOADING after
 * a restart, BUSY with a slow script, failover in progress) until the I/O
 * timeout has passed since the first try, or cap_ns.
 */
int
lock_call(struct lock *l, struct script *s, int nkeys, int nargs,
    const char **args, const size_t *lens, int64_t cap_ns, redisReply **reply)
{
	int64_t	 until, now;
	int	 result, tries = 0;

	until = clock_mono_ns() + clock_ms_to_ns(l->conf.io_timeout_ms);
	if (cap_ns > 0 && cap_ns < until)
		until = cap_ns;
	for (;;) {
		*reply = NULL;
		result = script_call(l->conn, s, nkeys, nargs, args, lens,
		    cap_ns, reply);
		if (result != CONN_TRANSIENT)
			break;
		now = clock_mono_ns();
		if (now >= until)
			break;
		log_debug("%s", conn_error(l->conn));
		clock_sleep_ns(clock_ms_to_ns(LOCK_RETRY_MIN_MS << (tries <
		    3 ? tries : 3)));
		tries++;
	}
	l->fail_code = 0;
	if (result != CONN_OK) {
		(void)snprintf(l->err, sizeof(l->err), "%s",
		    conn_error(l->conn));
		if (result == CONN_SERVER_ERROR)
			lock_type_clash(l);
	}
	return (result);
}

/*
 * Our scripts answer "REDLOCK-TYPE <type>" when the key is not the kind of
 * lock the caller takes it for: say so in the caller's terms.
 */
static void
lock_type_clash(struct lock *l)
{
	const char	*p = strstr(l->err, ": REDLOCK-TYPE ");
	char		 kind[32];

	if (p == NULL)
		return;
	log_sanitize(kind, sizeof(kind), p + 15, strlen(p + 15));
	if (l->limit == 0 && strcmp(kind, "zset") == 0) {
		(void)snprintf(l->err, sizeof(l->err), "lock '%s' is a "
		    "semaphore: use --limit", l->user_key);
		l->fail_code = EXIT_USAGE;
	} else if (l->limit > 0 && strcmp(kind, "string") == 0) {
		(void)snprintf(l->err, sizeof(l->err), "lock '%s' is a mutex: "
		    "it cannot be used with --limit", l->user_key);
		l->fail_code = EXIT_USAGE;
	} else
		(void)snprintf(l->err, sizeof(l->err), "key '%s' holds a %s, "
		    "not a lock", l->key, kind);
}

/* The exit code for a failed lock_call(). */
int
lock_fail_code(const struct lock *l, int result)
{
	return (l->fail_code != 0 ? l->fail_code : conn_exit_code(result));
}

static const char *
lock_type_name(int type)
{
	switch (type) {
	case REDIS_REPLY_STRING:
		return ("string");
	case REDIS_REPLY_ARRAY:
		return ("array");
	case REDIS_REPLY_INTEGER:
		return ("integer");
	case REDIS_REPLY_NIL:
		return ("nil");
	case REDIS_REPLY_STATUS:
		return ("status");
	case REDIS_REPLY_ERROR:
		return ("error");
	default:
		return ("other");
	}
}

int
lock_unexpected(struct lock *l, const char *what, redisReply *r,
    const char *expected)
{
	(void)snprintf(l->err, sizeof(l->err),
	    "%s: unexpected reply to %s: expected %s, got %s",
	    conn_display(l->conn), what, expected,
	    r != NULL ? lock_type_name(r->type) : "nothing");
	if (r != NULL)
		freeReplyObject(r);
	return (EXIT_PROTOCOL);
}

/*
 * After an acquire attempt whose outcome is unknown (the reply was lost),
 * make sure our token is not left holding the lock: compare-and-delete is
 * harmless if the SET never happened.  Best effort, on a fresh connection.
 */
static void
lock_forget_attempt(struct lock *l)
{
	redisReply	*r = NULL;

	conn_close(l->conn);
	(void)lock_release_call(l, &r);
	if (r != NULL)
		freeReplyObject(r);
	if (l->is_fair)
		lock_leave_queue(l);
}

/*
 * Acquire: one atomic script per attempt.  wait_ms is WAIT_FOREVER, 0 for
 * a single attempt, or how long to keep trying.  Returns EXIT_OK (l->fence,
 * l->valid_until_ns set), EXIT_BUSY (l->busy_ttl_ms set), or the exit code
 * of a failure (l->err set).
 */
int
lock_acquire(struct lock *l, int64_t ttl_ms, int64_t wait_ms,
    const char *command)
{
	redisReply	*r;
	const char	*args[15];
	size_t		 lens[15];
	char		 ttl[32], pid[32], since[32], host[256], limit[32];
	char		 lease[32];
	int64_t		 deadline_ns = 0, start, now;
	int		 result, i;

	if (l->token == NULL) {
		l->token = xmalloc(TOKEN_HEX_LEN + 1);
		if (token_new(l->token) == -1) {
			(void)snprintf(l->err, sizeof(l->err),
			    "cannot generate a random token");
			return (EXIT_UNAVAILABLE);
		}
	}
	if (gethostname(host, sizeof(host)) == -1)
		(void)snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	(void)snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	(void)snprintf(limit, sizeof(limit), "%lld", (long long)l->limit);
	(void)snprintf(lease, sizeof(lease), "%d", l->is_fair ?
	    LOCK_FAIR_LEASE_MS : 0);
	if (wait_ms != WAIT_FOREVER)
		deadline_ns = clock_mono_ns() + clock_ms_to_ns(wait_ms);
	args[0] = l->key;
	lens[0] = l->key_len;
	args[1] = l->fence_key;
	lens[1] = l->fence_key_len;
	args[2] = l->meta_key;
	lens[2] = l->meta_key_len;
	args[3] = l->queue_key;
	lens[3] = l->queue_key_len;
	args[4] = l->lease_key;
	lens[4] = l->lease_key_len;
	args[5] = l->wake_key;
	lens[5] = l->wake_key_len;
	args[6] = l->token;
	args[7] = ttl;
	args[8] = host;
	args[9] = pid;
	args[10] = command;
	args[11] = since;
	args[12] = limit;
	args[13] = lease;
	args[14] = l->wake_prefix;
	for (;;) {
		(void)snprintf(since, sizeof(since), "%lld",
		    (long long)clock_wall_ms());
		for (i = 6; i < 15; i++)
			lens[i] = strlen(args[i]);
		start = clock_mono_ns();
		/* The wait deadline decides whether to try again; an
		 * attempt under way always gets its full I/O timeout. */
		result = lock_call(l, &script_acquire, 6, 9, args, lens, 0,
		    &r);
		if (result != CONN_OK) {
			if (result == CONN_UNAVAILABLE ||
			    result == CONN_PROTOCOL ||
			    result == CONN_TRANSIENT)
				lock_forget_attempt(l);
			return (lock_fail_code(l, result));
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    r->element[0]->type != REDIS_REPLY_INTEGER ||
		    r->element[1]->type != REDIS_REPLY_INTEGER) {
			lock_forget_attempt(l);
			return (lock_unexpected(l, "acquire", r,
			    "array of 2 integers"));
		}
		if (r->element[0]->integer == 1) {
			l->fence = r->element[1]->integer;
			l->ttl_ms = ttl_ms;
			l->acquired_ns = start;
			l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
			    lock_drift_ms(ttl_ms));
			freeReplyObject(r);
			return (EXIT_OK);
		}
		l->busy_ttl_ms = r->element[1]->integer;
		freeReplyObject(r);
		now = clock_mono_ns();
		if (wait_ms == 0 || (deadline_ns > 0 && now >= deadline_ns)) {
			if (l->is_fair)
				lock_leave_queue(l);
			return (EXIT_BUSY);
		}
		if ((result = lock_wait_for_release(l, deadline_ns)) != 0)
			return (result);
		if (deadline_ns > 0 && clock_mono_ns() >= deadline_ns)
			wait_ms = 0;	/* one last attempt at the deadline */
	}
}

/* Interpret the 1 / 0 / -1 answer of release and extend. */
static int
lock_owner_reply(struct lock *l, const char *what, redisReply *r)
{
	long long v;

	if (r->type != REDIS_REPLY_INTEGER)
		return (lock_unexpected(l, what, r, "integer"));
	v = r->integer;
	freeReplyObject(r);
	if (v == 1)
		return (EXIT_OK);
	l->not_owner = v == 0 ? LOCK_GONE : LOCK_OTHER;
	return (EXIT_NOT_OWNER);
}

/* Run the release script; the caller interprets *r. */
int
lock_release_call(struct lock *l, redisReply **r)
{
	const char	*args[8];
	size_t		 lens[8];
	char		 limit[32];

	(void)snprintf(limit, sizeof(limit), "%lld", (long long)l->limit);
	args[0] = l->key;
	lens[0] = l->key_len;
	args[1] = l->fence_key;
	lens[1] = l->fence_key_len;
	args[2] = l->meta_key;
	lens[2] = l->meta_key_len;
	args[3] = l->wake_key;
	lens[3] = l->wake_key_len;
	args[4] = l->queue_key;
	lens[4] = l->queue_key_len;
	args[5] = l->token;
	lens[5] = strlen(l->token);
	args[6] = limit;
	lens[6] = strlen(limit);
	args[7] = l->wake_prefix;
	lens[7] = l->wake_prefix_len;
	return (lock_call(l, &script_release, 5, 3, args, lens, 0, r));
}

int
lock_release(struct lock *l)
{
	redisReply	*r;
	int		 result;

	if ((result = lock_release_call(l, &r)) != CONN_OK)
		return (lock_fail_code(l, result));
	return (lock_owner_reply(l, "release", r));
}

/*
 * Extend to ttl_ms from now, if we still hold the lock.  cap_ns bounds the
 * whole call (renewal must not outlive the lock's validity).
 */
int
lock_extend(struct lock *l, int64_t ttl_ms, int64_t cap_ns)
{
	const char	*args[6];
	size_t		 lens[6];
	char		 ttl[32], limit[32];
	redisReply	*r;
	int64_t		 start = clock_mono_ns();
	int		 result, rc, i;

	(void)snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	(void)snprintf(limit, sizeof(limit), "%lld", (long long)l->limit);
	args[0] = l->key;
	lens[0] = l->key_len;
	args[1] = l->fence_key;
	lens[1] = l->fence_key_len;
	args[2] = l->meta_key;
	lens[2] = l->meta_key_len;
	args[3] = l->token;
	args[4] = ttl;
	args[5] = limit;
	for (i = 3; i < 6; i++)
		lens[i] = strlen(args[i]);
	result = lock_call(l, &script_extend, 3, 3, args, lens, cap_ns, &r);
	if (result != CONN_OK)
		return (lock_fail_code(l, result));
	rc = lock_owner_reply(l, "extend", r);
	if (rc == EXIT_OK) {
		l->ttl_ms = ttl_ms;
		l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
		    lock_drift_ms(ttl_ms));
	}
	return (rc);
}

