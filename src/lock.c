/*
 * The lock protocol: acquire, release and extend one key, on one server or
 * on a Redlock quorum of independent servers, on top of conn.c (transport)
 * and scripts.c (the atomic steps).  Every operation goes to all servers at
 * once and counts the answers; with one server the quorum is one.
 *
 * Nothing here prints: failures leave a message in l->err for the caller,
 * because the same failure is fatal for `release` but only a retry for
 * `run`'s renewal.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

#define LOCK_RETRY_MIN_MS	20

static void	 lock_type_clash(struct lock *, char *, size_t);
static void	 lock_forget_attempt(struct lock *);
static int	 lock_raise_fence(struct lock *, struct lock_round *,
		     const long long *, long long);
static int	 lock_owner_answers(struct lock *, const char *,
		     struct lock_round *);
static int	 lock_is_pair(const redisReply *);
static int	 lock_still_valid(int64_t, int64_t);
static int	 lock_wait_replicas(struct lock *);
static void	 lock_follow_redirects(struct lock *, struct script *, int,
		     int, const char **, const size_t *, int64_t,
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

void
lock_init(struct lock *l, const struct global_opts *opts, const char *key)
{
	const char	*prefix = opts->prefix != NULL ? opts->prefix : "";
	size_t		 i;

	memset(l, 0, sizeof(*l));
	l->opts = opts;
	l->conf.connect_timeout_ms = opts->connect_timeout_ms;
	l->conf.io_timeout_ms = opts->io_timeout_ms;
	l->conf.password = opts->password;
	l->conf.user = opts->user;
	/* --tls is every connection; rediss:// marks its own URL. */
	l->conf.use_tls = opts->tls.enabled == 1;
	l->nconns = opts->nurls;
	l->quorum = l->nconns / 2 + 1;
	l->conns = xcalloc(l->nconns, sizeof(*l->conns));
	for (i = 0; i < l->nconns; i++)
		l->conns[i] = conn_new(&opts->urls[i], &l->conf);
	l->user_key = xstrdup(key);
	l->key = xasprintf("%s%s", prefix, key);
	l->key_len = strlen(l->key);
	l->fence_key = keyslot_companion(l->key, l->key_len, "fence",
	    &l->fence_key_len);
	l->meta_key = keyslot_companion(l->key, l->key_len, "meta",
	    &l->meta_key_len);
	l->wake_key = keyslot_companion(l->key, l->key_len, "wake",
	    &l->wake_key_len);
	l->queue_key = keyslot_companion(l->key, l->key_len, "queue",
	    &l->queue_key_len);
	l->lease_key = keyslot_companion(l->key, l->key_len, "leases",
	    &l->lease_key_len);
	l->wake_prefix = keyslot_companion(l->key, l->key_len, "wake:",
	    &l->wake_prefix_len);
	l->fence = -1;
}

void
lock_free(struct lock *l)
{
	size_t i;

	for (i = 0; i < l->nconns; i++)
		conn_free(l->conns[i]);
	free(l->conns);
	for (i = 0; i < l->nnodes; i++) {
		free(l->nodes[i]->host);
		free(l->nodes[i]->url.display);
		free(l->nodes[i]);
	}
	free(l->nodes);
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
 * Run a script on every server at once, retrying those that say "try
 * again" (LOADING after a restart, BUSY with a slow script, a failover in
 * progress) until the I/O timeout has passed since the first try, or
 * cap_ns.  Returns the number of servers that answered; l->err and
 * l->fail_code describe the first failure.
 */
size_t
lock_call(struct lock *l, struct script *s, int nkeys, int nargs,
    const char **args, const size_t *lens, int64_t cap_ns,
    struct lock_round *rd)
{
	struct conn	**retry;
	redisReply	**rreplies;
	int		 *rresults;
	size_t		  i, n, nretry, answered = 0;
	int64_t		  until;
	int		  tries = 0, code;

	rd->replies = xcalloc(l->nconns, sizeof(*rd->replies));
	rd->results = xcalloc(l->nconns, sizeof(*rd->results));
	script_call_many(l->conns, l->nconns, s, nkeys, nargs, args, lens,
	    cap_ns, rd->replies, rd->results);
	until = clock_mono_ns() + clock_ms_to_ns(l->conf.io_timeout_ms);
	if (cap_ns > 0 && cap_ns < until)
		until = cap_ns;
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
		clock_sleep_ns(clock_ms_to_ns(LOCK_RETRY_MIN_MS << (tries <
		    3 ? tries : 3)));
		tries++;
		script_call_many(retry, nretry, s, nkeys, nargs, args, lens,
		    cap_ns, rreplies, rresults);
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
	lock_follow_redirects(l, s, nkeys, nargs, args, lens, cap_ns, rd);

	l->fail_code = 0;
	l->err[0] = '\0';
	for (i = 0; i < l->nconns; i++) {
		if (rd->results[i] == CONN_OK) {
			answered++;
			continue;
		}
		code = conn_exit_code(rd->results[i]);
		if (l->err[0] == '\0')
			(void)snprintf(l->err, sizeof(l->err), "%s",
			    conn_error(l->conns[i]));
		if (rd->results[i] == CONN_SERVER_ERROR)
			lock_type_clash(l, l->err, sizeof(l->err));
		/* The most telling failure decides: auth, then protocol. */
		if (l->fail_code == 0 || code > l->fail_code)
			l->fail_code = code;
	}
	return (answered);
}

/*
 * Redis Cluster: a server that does not own the lock's slot answers
 * "MOVED <slot> <host>:<port>" (the slot lives there now: talk to that node
 * from now on) or "ASK <slot> <host>:<port>" (the slot is being migrated:
 * ask that node once, behind ASKING).  All keys of a lock share one slot,
 * so one node answers for all of them.  Followed a few times at most.
 */
static void
lock_follow_redirects(struct lock *l, struct script *s, int nkeys,
    int nargs, const char **args, const size_t *lens, int64_t cap_ns,
    struct lock_round *rd)
{
	const char		*text, *addr, *colon;
	struct lock_node	*node;
	struct redis_url	*u;
	struct conn		*c, *tmp;
	size_t			 i;
	int			 hops, is_ask;

	for (i = 0; i < l->nconns; i++) {
		for (hops = 0; hops < 5 && rd->results[i] == CONN_REDIRECT;
		    hops++) {
			text = conn_server_error(l->conns[i]);
			is_ask = strncmp(text, "ASK ", 4) == 0;
			addr = strchr(text, ' ');
			addr = addr != NULL ? strchr(addr + 1, ' ') : NULL;
			colon = addr != NULL ? strrchr(addr, ':') : NULL;
			if (colon == NULL || atoi(colon + 1) <= 0)
				break;
			addr++;
			node = xcalloc(1, sizeof(*node));
			u = &node->url;
			u->kind = URL_TCP;
			/* An empty host means "the one you asked". */
			node->host = colon > addr ? xasprintf("%.*s",
			    (int)(colon - addr), addr) :
			    xstrdup(conn_host(l->conns[i]));
			u->host = node->host;
			u->port = atoi(colon + 1);
			u->is_tls = l->conns[i] != NULL &&
			    l->opts->urls[i < l->opts->nurls ? i : 0].is_tls;
			u->user = l->opts->urls[i < l->opts->nurls ? i : 0].user;
			u->password = l->opts->urls[i < l->opts->nurls ? i :
			    0].password;
			u->display = xasprintf(strchr(u->host, ':') != NULL ?
			    "redis://[%s]:%d" : "redis://%s:%d", u->host,
			    u->port);
			l->nodes = xreallocarray(l->nodes, l->nnodes + 1,
			    sizeof(*l->nodes));
			l->nodes[l->nnodes++] = node;
			log_debug("%s: %s", conn_display(l->conns[i]), text);
			c = conn_new(u, &l->conf);
			if (is_ask) {
				conn_set_asking(c);
				tmp = c;
			} else {
				conn_free(l->conns[i]);
				l->conns[i] = c;
				tmp = NULL;
			}
			if (rd->replies[i] != NULL)
				freeReplyObject(rd->replies[i]);
			rd->replies[i] = NULL;
			rd->results[i] = script_call(c, s, nkeys, nargs, args,
			    lens, cap_ns, &rd->replies[i]);
			if (tmp != NULL) {
				if (rd->results[i] != CONN_OK)
					(void)snprintf(l->err, sizeof(l->err),
					    "%s", conn_error(tmp));
				conn_free(tmp);
				break;
			}
		}
	}
}

/*
 * Our scripts answer "REDLOCK-TYPE <type>" when the key is not the kind of
 * lock the caller takes it for: say so in the caller's terms.
 */
static void
lock_type_clash(struct lock *l, char *msg, size_t len)
{
	const char	*p = strstr(msg, ": REDLOCK-TYPE ");
	char		 kind[32];

	if (p == NULL)
		return;
	log_sanitize(kind, sizeof(kind), p + 15, strlen(p + 15));
	if (l->limit == 0 && strcmp(kind, "zset") == 0) {
		(void)snprintf(msg, len, "lock '%s' is a semaphore: use --limit",
		    l->user_key);
		l->type_clash = EXIT_USAGE;
	} else if (l->limit > 0 && strcmp(kind, "string") == 0) {
		(void)snprintf(msg, len, "lock '%s' is a mutex: it cannot be "
		    "used with --limit", l->user_key);
		l->type_clash = EXIT_USAGE;
	} else {
		(void)snprintf(msg, len, "key '%s' holds a %s, not a lock",
		    l->key, kind);
		l->type_clash = EXIT_PROTOCOL;
	}
}

/*
 * The exit code of a failed operation; in quorum mode l->err also says
 * how far from a majority it was.
 */
int
lock_fail(struct lock *l, size_t ok)
{
	char first[sizeof(l->err)];

	if (l->type_clash != 0)
		return (l->type_clash);
	if (l->nconns > 1) {
		memcpy(first, l->err, sizeof(first));
		(void)snprintf(l->err, sizeof(l->err), "quorum not reached "
		    "(%zu of %zu servers, %zu needed): %.400s", ok, l->nconns,
		    l->quorum, first);
	}
	return (l->fail_code != 0 ? l->fail_code : EXIT_UNAVAILABLE);
}

int
lock_unexpected(struct lock *l, size_t i, const char *what,
    const redisReply *r, const char *expected)
{
	static const char *names[] = { "?", "string", "array", "integer",
	    "nil", "status", "error" };
	int t = r != NULL ? r->type : 0;

	(void)snprintf(l->err, sizeof(l->err),
	    "%s: unexpected reply to %s: expected %s, got %s",
	    conn_display(l->conns[i]), what, expected,
	    r == NULL ? "nothing" : t >= 1 && t <= 6 ? names[t] : "other");
	l->fail_code = EXIT_PROTOCOL;
	return (EXIT_PROTOCOL);
}

/* Is a lock taken at start_ns with this TTL still valid, drift allowed? */
static int
lock_still_valid(int64_t start_ns, int64_t ttl_ms)
{
	return (clock_mono_ns() < start_ns + clock_ms_to_ns(ttl_ms -
	    lock_drift_ms(ttl_ms)));
}

/* An acquire reply: {held (0 or 1), fence or TTL hint}. */
static int
lock_is_pair(const redisReply *r)
{
	return (r != NULL && r->type == REDIS_REPLY_ARRAY &&
	    r->elements == 2 &&
	    r->element[0]->type == REDIS_REPLY_INTEGER &&
	    r->element[1]->type == REDIS_REPLY_INTEGER);
}

/*
 * After an acquire attempt that did not give us the lock, or whose outcome
 * is unknown (a reply was lost), make sure our token is left nowhere:
 * compare-and-delete is harmless where the take never happened.  Best
 * effort, on fresh connections where a reply went missing.
 */
static void
lock_forget_attempt(struct lock *l)
{
	struct lock_round	 rd;
	char			 saved[sizeof(l->err)];
	int			 code = l->fail_code, clash = l->type_clash;

	memcpy(saved, l->err, sizeof(saved));
	(void)lock_release_call(l, &rd);
	lock_round_free(l, &rd);
	if (l->is_fair)
		lock_leave_queue(l);
	memcpy(l->err, saved, sizeof(saved));
	l->fail_code = code;
	l->type_clash = clash;
}

/*
 * Quorum fencing.  Each server counts acquisitions on its own, so a holder
 * takes the highest fence F that its majority returned, and then lifts the
 * counters of its majority to at least F, while it still holds the lock
 * there (checked in the same script).  Any later holder's majority shares
 * a server s with ours; it could take the lock on s only after ours was
 * gone from s, hence after our lift, so its INCR on s returns more than F
 * and its own fence (a maximum) is more than F too.  Only servers that
 * returned less than F need the lift.  Returns 0 when a majority has a
 * counter of at least F.
 */
static int
lock_raise_fence(struct lock *l, struct lock_round *rd,
    const long long *fences, long long f)
{
	struct lock_round	 lift;
	struct conn		**held;
	const char		*args[6];
	size_t			 lens[6], i, n, at_least = 0;
	char			 fence[32], limit[32];

	for (i = 0; i < l->nconns; i++)
		if (rd->results[i] == CONN_OK && fences[i] >= f)
			at_least++;
	if (at_least >= l->quorum)
		return (0);
	(void)snprintf(fence, sizeof(fence), "%lld", f);
	(void)snprintf(limit, sizeof(limit), "%lld", (long long)l->limit);
	args[0] = l->key;
	args[1] = l->fence_key;
	args[2] = l->meta_key;
	args[3] = l->token;
	args[4] = fence;
	args[5] = limit;
	lens[0] = l->key_len;
	lens[1] = l->fence_key_len;
	lens[2] = l->meta_key_len;
	for (i = 3; i < 6; i++)
		lens[i] = strlen(args[i]);
	/*
	 * Only where we hold the lock (the script checks it anyway): a
	 * server that did not answer the acquire must not hold this round
	 * up for its whole I/O timeout.  Lifting where the counter is
	 * already F is harmless and keeps it one round.
	 */
	held = xcalloc(l->nconns, sizeof(*held));
	for (i = 0, n = 0; i < l->nconns; i++)
		if (fences[i] >= 0)
			held[n++] = l->conns[i];
	lift.replies = xcalloc(n, sizeof(*lift.replies));
	lift.results = xcalloc(n, sizeof(*lift.results));
	script_call_many(held, n, &script_raise_fence, 3, 3, args, lens, 0,
	    lift.replies, lift.results);
	at_least = 0;
	for (i = 0; i < n; i++) {
		if (lift.results[i] == CONN_OK &&
		    lift.replies[i]->type == REDIS_REPLY_INTEGER &&
		    lift.replies[i]->integer == 1)
			at_least++;
		if (lift.replies[i] != NULL)
			freeReplyObject(lift.replies[i]);
	}
	free(lift.replies);
	free(lift.results);
	free(held);
	return (at_least >= l->quorum ? 0 : -1);
}

/*
 * --wait-replicas N: WAIT until N replicas of each server have what we
 * wrote (WAIT cannot run inside a script, so it follows it).  A majority
 * of servers must report N acknowledgements.  This narrows, but does not
 * close, the window in which a failover loses the lock: WAIT makes the
 * write reach the replicas, it does not make the failover pick one that
 * has it.  Returns 0, or -1 with l->err set.
 */
static int
lock_wait_replicas(struct lock *l)
{
	const char	*argv[3];
	size_t		 lens[3], i, enough = 0;
	redisReply	**replies;
	int		 *results;
	char		  num[32], ms[32];
	long long	  least = -1;

	if (l->opts->wait_replicas == 0)
		return (0);
	(void)snprintf(num, sizeof(num), "%d", l->opts->wait_replicas);
	(void)snprintf(ms, sizeof(ms), "%lld",
	    (long long)l->opts->wait_timeout_ms);
	argv[0] = "WAIT";
	argv[1] = num;
	argv[2] = ms;
	for (i = 0; i < 3; i++)
		lens[i] = strlen(argv[i]);
	replies = xcalloc(l->nconns, sizeof(*replies));
	results = xcalloc(l->nconns, sizeof(*results));
	conn_command_many(l->conns, l->nconns, l->nconns, 3, argv, lens,
	    clock_ms_to_ns(l->opts->wait_timeout_ms), 0, replies, results);
	for (i = 0; i < l->nconns; i++) {
		if (results[i] == CONN_OK &&
		    replies[i]->type == REDIS_REPLY_INTEGER) {
			if (replies[i]->integer >= l->opts->wait_replicas)
				enough++;
			if (least == -1 || replies[i]->integer < least)
				least = replies[i]->integer;
		} else if (l->err[0] == '\0' || enough == 0)
			(void)snprintf(l->err, sizeof(l->err), "%s",
			    conn_error(l->conns[i]));
		if (replies[i] != NULL)
			freeReplyObject(replies[i]);
	}
	free(replies);
	free(results);
	if (enough >= l->quorum)
		return (0);
	if (least >= 0)
		(void)snprintf(l->err, sizeof(l->err), "lock '%s': only %lld "
		    "of %d replicas acknowledged it within %lldms",
		    l->user_key, least, l->opts->wait_replicas,
		    (long long)l->opts->wait_timeout_ms);
	l->fail_code = EXIT_UNAVAILABLE;
	return (-1);
}

/*
 * Acquire: one atomic script per attempt, on every server at once.  The
 * lock is ours iff a majority took it and the time that took leaves some
 * validity (TTL - elapsed - drift).  wait_ms is WAIT_FOREVER, 0 for a
 * single attempt, or how long to keep trying.  Returns EXIT_OK (l->fence,
 * l->valid_until_ns set), EXIT_BUSY (l->busy_ttl_ms set), or the exit code
 * of a failure (l->err set).
 */
int
lock_acquire(struct lock *l, int64_t ttl_ms, int64_t wait_ms,
    const char *command)
{
	struct lock_round	 rd;
	const char		*args[15];
	size_t			 lens[15], i, held, busy, answered;
	char			 ttl[32], pid[32], since[32], host[256];
	char			 limit[32], lease[32];
	long long		*fences, fence;
	int64_t			 deadline_ns = 0, start, now, hint;
	int			 rc, i2;

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
	fences = xcalloc(l->nconns, sizeof(*fences));
	for (;;) {
		(void)snprintf(since, sizeof(since), "%lld",
		    (long long)clock_wall_ms());
		for (i2 = 6; i2 < 15; i2++)
			lens[i2] = strlen(args[i2]);
		start = clock_mono_ns();
		/* The wait deadline decides whether to try again; an
		 * attempt under way always gets its full I/O timeout. */
		answered = lock_call(l, &script_acquire, 6, 9, args, lens, 0,
		    &rd);
		held = busy = 0;
		hint = -1;
		fence = -1;
		for (i = 0; i < l->nconns; i++) {
			fences[i] = -1;
			if (rd.results[i] != CONN_OK)
				continue;
			if (!lock_is_pair(rd.replies[i])) {
				(void)lock_unexpected(l, i, "acquire",
				    rd.replies[i], "array of 2 integers");
				rd.results[i] = CONN_PROTOCOL;
				answered--;
				continue;
			}
			if (rd.replies[i]->element[0]->integer == 1) {
				held++;
				fences[i] = rd.replies[i]->element[1]->integer;
				if (fences[i] > fence)
					fence = fences[i];
			} else {
				busy++;
				if (hint == -1 || rd.replies[i]->element[1]->
				    integer < hint)
					hint = rd.replies[i]->element[1]->
					    integer;
			}
		}
		/*
		 * One server's yes is the answer; a quorum's counts only with
		 * validity left (TTL - elapsed - drift), checked again after
		 * the fence lift, which is a round trip of its own.
		 */
		if (held >= l->quorum && (l->nconns == 1 ||
		    (lock_still_valid(start, ttl_ms) &&
		    lock_raise_fence(l, &rd, fences, fence) == 0 &&
		    lock_still_valid(start, ttl_ms)))) {
			lock_round_free(l, &rd);
			l->err[0] = '\0';
			if (lock_wait_replicas(l) == -1) {
				/* Not safely ours: give it back, fail. */
				lock_forget_attempt(l);
				free(fences);
				return (EXIT_UNAVAILABLE);
			}
			free(fences);
			l->fence = fence;
			l->ttl_ms = ttl_ms;
			l->acquired_ns = start;
			l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
			    lock_drift_ms(ttl_ms));
			return (EXIT_OK);
		}
		lock_round_free(l, &rd);
		/* A partial or doubtful take must not linger anywhere. */
		if (held > 0 || answered < l->nconns)
			lock_forget_attempt(l);
		/*
		 * A failure when too few servers answered to ever make a
		 * majority; otherwise the lock is busy (or the vote split):
		 * wait and try again like any busy lock.
		 */
		if (answered < l->quorum) {
			rc = lock_fail(l, held);
			free(fences);
			return (rc);
		}
		l->busy_ttl_ms = hint;
		now = clock_mono_ns();
		if (wait_ms == 0 || (deadline_ns > 0 && now >= deadline_ns)) {
			free(fences);
			if (l->is_fair)
				lock_leave_queue(l);
			return (EXIT_BUSY);
		}
		if ((rc = lock_wait_for_release(l, deadline_ns)) != 0) {
			free(fences);
			return (rc);
		}
		if (deadline_ns > 0 && clock_mono_ns() >= deadline_ns)
			wait_ms = 0;	/* one last attempt at the deadline */
	}
}

/*
 * Count release or extend answers (1 done, 0 not held, -1 held by another
 * token): done on a majority is success; "not owner" when enough servers
 * say so that a majority is out of reach; otherwise a failure.
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
		if (rd->replies[i]->integer == 1)
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
	return (lock_call(l, &script_release, 5, 3, args, lens, 0, rd));
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
 * Extend to ttl_ms from now, if we still hold the lock on a majority.
 * cap_ns bounds the whole call (a renewal must not outlive the validity).
 */
int
lock_extend(struct lock *l, int64_t ttl_ms, int64_t cap_ns)
{
	struct lock_round	 rd;
	const char		*args[6];
	size_t			 lens[6];
	char			 ttl[32], limit[32];
	int64_t			 start = clock_mono_ns();
	int			 rc, i;

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
	(void)lock_call(l, &script_extend, 3, 3, args, lens, cap_ns, &rd);
	rc = lock_owner_answers(l, "extend", &rd);
	lock_round_free(l, &rd);
	if (rc == EXIT_OK) {
		l->err[0] = '\0';
		if (lock_wait_replicas(l) == -1)
			rc = EXIT_UNAVAILABLE;
	}
	/* Confirmed within the validity only: a late majority is no lock. */
	if (rc == EXIT_OK && cap_ns > 0 && clock_mono_ns() >= cap_ns)
		rc = lock_fail(l, 0);
	if (rc == EXIT_OK) {
		l->ttl_ms = ttl_ms;
		l->valid_until_ns = start + clock_ms_to_ns(ttl_ms -
		    lock_drift_ms(ttl_ms));
	}
	return (rc);
}
