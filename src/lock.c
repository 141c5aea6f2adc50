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

/*
 * A waiter is woken by the release itself (BLPOP on the wake list, see
 * scripts.c), or just after the holder's TTL ends.  This slow, jittered
 * poll is only the last resort, for a wake-up that was lost because the
 * waiter it went to died before using it.
 */
#define LOCK_FALLBACK_POLL_MS	2000
#define LOCK_POLL_MS		50	/* servers without a usable BLPOP */
#define LOCK_RETRY_MIN_MS	20

static int	 lock_call(struct lock *, struct script *, int, int,
		     const char **, const size_t *, int64_t, redisReply **);
static int	 lock_unexpected(struct lock *, const char *, redisReply *,
		     const char *);
static const char *lock_type_name(int);
static int	 lock_owner_reply(struct lock *, const char *, redisReply *);
static void	 lock_forget_attempt(struct lock *);
static int	 lock_wait_for_release(struct lock *, int64_t);
static char	*lock_reply_str(redisReply *);

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
static int
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
	if (result != CONN_OK)
		(void)snprintf(l->err, sizeof(l->err), "%s",
		    conn_error(l->conn));
	return (result);
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

static int
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
	const char	*args[4] = { l->key, l->meta_key, l->wake_key,
			     l->token };
	size_t		 lens[4] = { l->key_len, l->meta_key_len,
			     l->wake_key_len, strlen(l->token) };
	redisReply	*r = NULL;

	conn_close(l->conn);
	(void)script_call(l->conn, &script_release, 3, 1, args, lens, 0, &r);
	if (r != NULL)
		freeReplyObject(r);
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
	const char	*args[9];
	size_t		 lens[9];
	char		 ttl[32], pid[32], since[32], host[256];
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
	if (wait_ms != WAIT_FOREVER)
		deadline_ns = clock_mono_ns() + clock_ms_to_ns(wait_ms);
	args[0] = l->key;
	lens[0] = l->key_len;
	args[1] = l->fence_key;
	lens[1] = l->fence_key_len;
	args[2] = l->meta_key;
	lens[2] = l->meta_key_len;
	args[3] = l->token;
	args[4] = ttl;
	args[5] = host;
	args[6] = pid;
	args[7] = command;
	args[8] = since;
	for (;;) {
		(void)snprintf(since, sizeof(since), "%lld",
		    (long long)clock_wall_ms());
		for (i = 3; i < 9; i++)
			lens[i] = strlen(args[i]);
		start = clock_mono_ns();
		/* The wait deadline decides whether to try again; an
		 * attempt under way always gets its full I/O timeout. */
		result = lock_call(l, &script_acquire, 3, 6, args, lens, 0,
		    &r);
		if (result != CONN_OK) {
			if (result == CONN_UNAVAILABLE ||
			    result == CONN_PROTOCOL ||
			    result == CONN_TRANSIENT)
				lock_forget_attempt(l);
			return (conn_exit_code(result));
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
		if (wait_ms == 0 || (deadline_ns > 0 && now >= deadline_ns))
			return (EXIT_BUSY);
		if ((result = lock_wait_for_release(l, deadline_ns)) != 0)
			return (result);
		if (deadline_ns > 0 && clock_mono_ns() >= deadline_ns)
			wait_ms = 0;	/* one last attempt at the deadline */
	}
}

/*
 * Block until the holder releases (BLPOP on the wake list), the holder's
 * TTL ends, the fallback poll interval passes, or deadline_ns (0: none).
 * Returns 0 to attempt again, or the exit code of a failure.
 */
static int
lock_wait_for_release(struct lock *l, int64_t deadline_ns)
{
	redisReply	*r = NULL;
	const char	*argv[3];
	size_t		 lens[3];
	char		 timeout[32];
	int64_t		 block_ms, cap_ns, now = clock_mono_ns();
	int		 result, is_exact = 0;

	/* Jitter spreads waiters whose wake-ups fall at the same moment. */
	block_ms = LOCK_FALLBACK_POLL_MS * 3 / 4 + (int64_t)(token_random_u64()
	    % (LOCK_FALLBACK_POLL_MS / 2 + 1));
	if (l->busy_ttl_ms > 0 && l->busy_ttl_ms + 1 < block_ms) {
		block_ms = l->busy_ttl_ms + 1;
		is_exact = 1;
	}
	if (l->cannot_block && block_ms > LOCK_POLL_MS)
		block_ms = LOCK_POLL_MS;
	if (deadline_ns > 0 && now + clock_ms_to_ns(block_ms) > deadline_ns) {
		block_ms = (deadline_ns - now) / 1000000;
		is_exact = 1;
	}
	if (block_ms <= 0)
		return (0);
	if (l->cannot_block) {
		clock_sleep_ns(clock_ms_to_ns(block_ms));
		return (0);
	}
	(void)snprintf(timeout, sizeof(timeout), "%.3f",
	    (double)block_ms / 1000.0);
	argv[0] = "BLPOP";
	lens[0] = 5;
	argv[1] = l->wake_key;
	lens[1] = l->wake_key_len;
	argv[2] = timeout;
	lens[2] = strlen(timeout);
	/*
	 * The server checks blocking timeouts only on its event loop's tick
	 * (100 ms at the default hz), so when the moment matters (holder's
	 * expiry, our -w deadline) we stop waiting ourselves, at the cost of
	 * a reconnect for the next attempt.
	 */
	cap_ns = is_exact ? now + clock_ms_to_ns(block_ms) : 0;
	result = conn_command_capped(l->conn, 3, argv, lens,
	    clock_ms_to_ns(block_ms), cap_ns, &r);
	if (result == CONN_UNAVAILABLE && cap_ns > 0 &&
	    clock_mono_ns() >= cap_ns)
		result = CONN_OK;
	if (r != NULL)
		freeReplyObject(r);
	if (result == CONN_OK)
		return (0);
	if (result == CONN_SERVER_ERROR) {
		/* Redis before 6.0 takes whole seconds only: poll instead. */
		log_debug("%s; polling instead", conn_error(l->conn));
		l->cannot_block = 1;
		return (0);
	}
	(void)snprintf(l->err, sizeof(l->err), "%s", conn_error(l->conn));
	return (conn_exit_code(result));
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

int
lock_release(struct lock *l)
{
	const char	*args[4] = { l->key, l->meta_key, l->wake_key,
			     l->token };
	size_t		 lens[4] = { l->key_len, l->meta_key_len,
			     l->wake_key_len, strlen(l->token) };
	redisReply	*r;
	int		 result;

	result = lock_call(l, &script_release, 3, 1, args, lens, 0, &r);
	if (result != CONN_OK)
		return (conn_exit_code(result));
	return (lock_owner_reply(l, "release", r));
}

/*
 * Extend to ttl_ms from now, if we still hold the lock.  cap_ns bounds the
 * whole call (renewal must not outlive the lock's validity).
 */
int
lock_extend(struct lock *l, int64_t ttl_ms, int64_t cap_ns)
{
	const char	*args[4];
	size_t		 lens[4];
	char		 ttl[32];
	redisReply	*r;
	int64_t		 start = clock_mono_ns();
	int		 result, rc;

	(void)snprintf(ttl, sizeof(ttl), "%lld", (long long)ttl_ms);
	args[0] = l->key;
	lens[0] = l->key_len;
	args[1] = l->meta_key;
	lens[1] = l->meta_key_len;
	args[2] = l->token;
	lens[2] = strlen(l->token);
	args[3] = ttl;
	lens[3] = strlen(ttl);
	result = lock_call(l, &script_extend, 2, 2, args, lens, cap_ns, &r);
	if (result != CONN_OK)
		return (conn_exit_code(result));
	rc = lock_owner_reply(l, "extend", r);
	if (rc == EXIT_OK) {
		l->ttl_ms = ttl_ms;
		l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
		    lock_drift_ms(ttl_ms));
	}
	return (rc);
}

static char *
lock_reply_str(redisReply *r)
{
	char *s;

	if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)
		return (NULL);
	s = xmalloc(r->len + 1);
	memcpy(s, r->str, r->len);
	s[r->len] = '\0';
	return (s);
}

/*
 * Who holds the lock.  Returns EXIT_OK with *h filled (h->held 0 or 1), or
 * the exit code of a failure.
 */
int
lock_status(struct lock *l, struct lock_holder *h)
{
	const char	*args[2] = { l->key, l->meta_key };
	size_t		 lens[2] = { l->key_len, l->meta_key_len };
	redisReply	*r, *meta, *f, *v;
	char		*field, *end;
	size_t		 i;
	int		 result;

	memset(h, 0, sizeof(*h));
	h->fence = -1;
	h->pid = -1;
	result = lock_call(l, &script_status, 2, 0, args, lens, 0, &r);
	if (result != CONN_OK)
		return (conn_exit_code(result));
	if (r->type != REDIS_REPLY_ARRAY)
		return (lock_unexpected(l, "status", r, "array"));
	if (r->elements == 0) {
		freeReplyObject(r);
		return (EXIT_OK);
	}
	if (r->elements != 3 || r->element[0]->type != REDIS_REPLY_STRING ||
	    r->element[1]->type != REDIS_REPLY_INTEGER ||
	    r->element[2]->type != REDIS_REPLY_ARRAY)
		return (lock_unexpected(l, "status", r,
		    "array of token, ttl and metadata"));
	h->held = 1;
	h->token = lock_reply_str(r->element[0]);
	h->ttl_ms = r->element[1]->integer;
	h->ours = l->token != NULL && strcmp(h->token, l->token) == 0;
	meta = r->element[2];
	/* The metadata describes this holder only if it names its token. */
	for (i = 0; i + 1 < meta->elements; i += 2) {
		f = meta->element[i];
		v = meta->element[i + 1];
		if (f->type == REDIS_REPLY_STRING && f->len == 5 &&
		    memcmp(f->str, "token", 5) == 0 &&
		    v->type == REDIS_REPLY_STRING &&
		    v->len == strlen(h->token) &&
		    memcmp(v->str, h->token, v->len) == 0)
			break;
	}
	if (i + 1 < meta->elements) {
		for (i = 0; i + 1 < meta->elements; i += 2) {
			if ((field = lock_reply_str(meta->element[i])) ==
			    NULL)
				continue;
			v = meta->element[i + 1];
			if (strcmp(field, "host") == 0 && h->host == NULL)
				h->host = lock_reply_str(v);
			else if (strcmp(field, "command") == 0 &&
			    h->command == NULL)
				h->command = lock_reply_str(v);
			else if (v->type == REDIS_REPLY_STRING &&
			    v->len < 32 && v->len > 0 &&
			    isdigit((unsigned char)v->str[0])) {
				char num[32];
				long long n;

				memcpy(num, v->str, v->len);
				num[v->len] = '\0';
				errno = 0;
				n = strtoll(num, &end, 10);
				if (*end != '\0' || errno != 0) {
					free(field);
					continue;
				}
				if (strcmp(field, "fence") == 0)
					h->fence = n;
				else if (strcmp(field, "pid") == 0)
					h->pid = n;
				else if (strcmp(field, "since") == 0)
					h->since_ms = n;
			}
			free(field);
		}
	}
	freeReplyObject(r);
	return (EXIT_OK);
}

void
lock_holder_free(struct lock_holder *h)
{
	free(h->token);
	free(h->host);
	free(h->command);
	memset(h, 0, sizeof(*h));
}
