/*
 * Every Lua script redlock-cli sends, in one place.  Each runs atomically
 * on the server, which is what makes the lock safe: any check-then-act done
 * in two round trips from here could act on a lock that changed between
 * them.  Calls are EVALSHA with the script's SHA-1 (computed here, once),
 * and EVAL only when the server answers NOSCRIPT (first use after a
 * restart or SCRIPT FLUSH), which also loads it for the next caller.
 *
 * Key layout (lock.c builds the names): KEYS[1] is the lock itself, exactly
 * PREFIX+KEY holding the token, so any client using SET NX PX on the same
 * key excludes us and is excluded; the fence counter and the metadata hash
 * share its Cluster slot.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "redlock.h"

struct script {
	const char	*name;
	const char	*body;
	char		 sha[41];
};

/*
 * acquire: take the lock if it is free, and give this holder its fence.
 *   KEYS[1] lock, KEYS[2] fence counter, KEYS[3] metadata hash
 *   ARGV[1] token, ARGV[2] ttl in ms, ARGV[3] host, ARGV[4] pid,
 *   ARGV[5] command line, ARGV[6] acquired-at (wall clock, ms)
 *   returns {1, fence} when held (newly, or already by this same token,
 *   whose TTL is then refreshed: a retry after a lost reply is harmless),
 *   or {0, pttl of the current holder}.
 * Race closed: the fence is incremented in the same atomic step as the SET,
 * so two successive holders can never see the same or a decreasing fence,
 * even when the previous holder's lock expired instead of being released.
 */
struct script script_acquire = { "acquire",
	"local cur = redis.call('GET', KEYS[1])\n"
	"if cur == ARGV[1] then\n"
	"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"  redis.call('PEXPIRE', KEYS[3], ARGV[2])\n"
	"  local f = tonumber(redis.call('HGET', KEYS[3], 'fence'))\n"
	"  if not f then f = tonumber(redis.call('GET', KEYS[2])) or 0 end\n"
	"  return {1, f}\n"
	"end\n"
	"if cur then return {0, redis.call('PTTL', KEYS[1])} end\n"
	"redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
	"local f = redis.call('INCR', KEYS[2])\n"
	"redis.call('DEL', KEYS[3])\n"
	"redis.call('HSET', KEYS[3], 'token', ARGV[1], 'fence', f,\n"
	"  'host', ARGV[3], 'pid', ARGV[4], 'command', ARGV[5],\n"
	"  'since', ARGV[6])\n"
	"redis.call('PEXPIRE', KEYS[3], ARGV[2])\n"
	"return {1, f}\n",
	""
};

/*
 * release: compare-and-delete, and wake one waiter.
 *   KEYS[1] lock, KEYS[2] metadata hash, KEYS[3] wake list; ARGV[1] token
 *   returns 1 released, 0 no lock (it expired), -1 held by another token.
 * Race closed: GET then DEL as two round trips would delete the next
 * holder's lock if ours expired in between.
 * Waking: the wake list holds at most one element.  Exactly one waiter
 * blocked in BLPOP takes it, so a release causes one attempt, not one per
 * waiter.  If nobody is blocked, the element waits (for a while) for the
 * next waiter, so a release between a waiter's failed attempt and its
 * BLPOP is not missed; at worst it costs one spare attempt.
 */
struct script script_release = { "release",
	"local cur = redis.call('GET', KEYS[1])\n"
	"if cur == ARGV[1] then\n"
	"  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])\n"
	"  redis.call('RPUSH', KEYS[3], '1')\n"
	"  redis.call('PEXPIRE', KEYS[3], 10000)\n"
	"  return 1\n"
	"end\n"
	"if cur then return -1 end\n"
	"return 0\n",
	""
};

/*
 * extend: compare-and-pexpire.
 *   KEYS[1] lock, KEYS[2] metadata hash; ARGV[1] token, ARGV[2] ttl in ms
 *   returns 1 extended, 0 no lock (it expired), -1 held by another token.
 * Race closed: PEXPIRE alone would extend whoever holds the key now,
 * including the next holder after ours expired.
 */
struct script script_extend = { "extend",
	"local cur = redis.call('GET', KEYS[1])\n"
	"if cur == ARGV[1] then\n"
	"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"  redis.call('PEXPIRE', KEYS[2], ARGV[2])\n"
	"  return 1\n"
	"end\n"
	"if cur then return -1 end\n"
	"return 0\n",
	""
};

/*
 * status: the holder, its remaining TTL and metadata, in one snapshot.
 *   KEYS[1] lock, KEYS[2] metadata hash
 *   returns {} when free, else {token, pttl, {field, value, ...}}; the
 *   metadata belongs to this holder only if its token field matches (a
 *   foreign client's lock has none).
 * Race closed: three separate reads could mix two holders' data.
 */
struct script script_status = { "status",
	"local cur = redis.call('GET', KEYS[1])\n"
	"if not cur then return {} end\n"
	"return {cur, redis.call('PTTL', KEYS[1]),\n"
	"  redis.call('HGETALL', KEYS[2])}\n",
	""
};

/*
 * Run script s on c with nkeys keys followed by nargs arguments (args and
 * lens hold both, keys first).  Returns a conn_result; *reply as in
 * conn_command().
 */
int
script_call(struct conn *c, struct script *s, int nkeys, int nargs,
    const char **args, const size_t *lens, int64_t cap_ns, redisReply **reply)
{
	const char	**argv;
	size_t		 *argl;
	char		  numkeys[16];
	int		  argc = 3 + nkeys + nargs, i, result;

	if (s->sha[0] == '\0')
		sha1_hex(s->body, strlen(s->body), s->sha);
	argv = xcalloc((size_t)argc, sizeof(*argv));
	argl = xcalloc((size_t)argc, sizeof(*argl));
	(void)snprintf(numkeys, sizeof(numkeys), "%d", nkeys);
	argv[0] = "EVALSHA";
	argv[1] = s->sha;
	argv[2] = numkeys;
	for (i = 0; i < nkeys + nargs; i++) {
		argv[3 + i] = args[i];
		argl[3 + i] = lens[i];
	}
	argl[0] = 7;
	argl[1] = 40;
	argl[2] = strlen(numkeys);
	result = conn_command(c, argc, argv, argl, cap_ns, reply);
	if (result == CONN_NOSCRIPT) {
		log_debug("%s: script %s not cached, sending it", conn_display(c),
		    s->name);
		argv[0] = "EVAL";
		argl[0] = 4;
		argv[1] = s->body;
		argl[1] = strlen(s->body);
		result = conn_command(c, argc, argv, argl, cap_ns, reply);
	}
	free(argv);
	free(argl);
	return (result);
}
