/* SPDX-License-Identifier: MIT */
/*
 * The Lua source of every script redlock-cli sends (scripts.c sends them),
 * kept apart so that the build can hash them: src/tools/script-sha.c turns
 * this file into scripts-sha.h, the SHA-1 of each, for EVALSHA.  No
 * process has to hash 2 KB of Lua at start-up.
 *
 * Key layout (lock.c builds the names): KEYS[1] is the lock itself, exactly
 * PREFIX+KEY holding the token, so any client using SET NX PX on the same
 * key excludes us and is excluded; the fence counter and the metadata hash
 * share its Cluster slot.
 */

#ifndef SCRIPTS_LUA_H
#define SCRIPTS_LUA_H

/*
 * Shared by every script: refuse a key that is not what this caller takes
 * it for.  A mutex is a string (the token), a semaphore (--limit) a sorted
 * set of token -> expiry; mixing them up must fail loudly, never corrupt.
 * ARGV[n] is the caller's limit, 0 for a mutex.  A mutex's check costs
 * nothing: lock_get()'s GET fails on any other type, and only then is TYPE
 * asked, to name it.  A semaphore asks TYPE up front (its first command
 * may be a write).
 */
#define CHECK_TYPE(n)							\
	"local limit = tonumber(ARGV[" #n "])\n"			\
	"local function clash()\n"					\
	"  return redis.error_reply('REDLOCK-TYPE ' .."			\
	" redis.call('TYPE', KEYS[1]).ok)\n"				\
	"end\n"							\
	"local function lock_get()\n"					\
	"  local v = redis.pcall('GET', KEYS[1])\n"			\
	"  if type(v) == 'table' then return nil, true end\n"		\
	"  return v, false\n"						\
	"end\n"							\
	"if limit > 0 then\n"						\
	"  local kind = redis.call('TYPE', KEYS[1]).ok\n"		\
	"  if kind ~= 'none' and kind ~= 'zset' then return clash() end\n"\
	"end\n"

/*
 * Server time in ms: one clock for every semaphore holder's expiry.  A
 * mutex needs none (its key's own TTL is the clock), so it is not asked.
 */
#define SERVER_NOW							\
	"local now = 0\n"						\
	"if limit > 0 then\n"						\
	"  local t = redis.call('TIME')\n"				\
	"  now = t[1] * 1000 + math.floor(t[2] / 1000)\n"		\
	"end\n"

/* Semaphore housekeeping: drop holders whose expiry passed, with their
 * metadata, and keep the keys alive as long as their last holder. */
#define SEM_PRUNE							\
	"local function fields(tok) return tok .. ':fence', tok .. ':host',"\
	" tok .. ':pid', tok .. ':command', tok .. ':since' end\n"	\
	"local function prune()\n"					\
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1],"	\
	" '-inf', now)) do\n"						\
	"    redis.call('HDEL', KEYS[3], fields(tok))\n"		\
	"  end\n"							\
	"  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"	\
	"end\n"								\
	"local function keep()\n"					\
	"  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')\n"\
	"  if last[2] then\n"						\
	"    local ms = math.max(1, tonumber(last[2]) - now)\n"		\
	"    redis.call('PEXPIRE', KEYS[1], ms)\n"			\
	"    redis.call('PEXPIRE', KEYS[3], ms)\n"			\
	"  end\n"							\
	"end\n"

/*
 * Wake one waiter.  The wake key is a sorted set of one member: adding it
 * again is a no-op, so however many releases nobody waited for, the next
 * waiter finds at most one stale wake-up (one spare attempt), and no call
 * is spent keeping it that way.  Like the fence counter it outlives the
 * lock (one small key per lock name).  The head of a fair queue gets a
 * wake key of its own, which expires, since there is one per waiter.
 */
#define WAKE(list, queue, prefix)					\
	"local function wake_waiters()\n"				\
	"  redis.call('ZADD', KEYS[" #list "], 0, 'go')\n"		\
	"  local head = redis.call('LINDEX', KEYS[" #queue "], 0)\n"	\
	"  if head then\n"						\
	"    local k = ARGV[" #prefix "] .. head\n"			\
	"    redis.call('ZADD', k, 0, 'go')\n"				\
	"    redis.call('PEXPIRE', k, 10000)\n"				\
	"  end\n"							\
	"end\n"

/*
 * acquire: take the lock (or a semaphore slot) if free, and give this
 * holder its fence.
 *   KEYS[1] lock, KEYS[2] fence counter, KEYS[3] metadata hash,
 *   KEYS[4] fair queue (list), KEYS[5] fair queue leases (zset),
 *   KEYS[6] wake key
 *   ARGV[1] token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid,
 *   ARGV[5] command line, ARGV[6] acquired-at (wall ms), ARGV[7] limit
 *   (0 = mutex), ARGV[8] fair lease ms (0 = not fair), ARGV[9] prefix of
 *   per-waiter wake keys
 *   returns {1, fence} when held (newly, or already by this same token,
 *   whose TTL is then refreshed: a retry after a lost reply is harmless),
 *   or {0, ms until the earliest holder's expiry; -1 if none, 0 unknown}.
 * A free mutex taken by an unfair caller, the case that matters for speed,
 * costs three calls: SET NX PX, INCR, HSET.  A mutex's metadata hash has
 * no TTL of its own, so renewals need not touch it: release deletes it,
 * and after an expiry the next holder overwrites every field; until then
 * its "token" field no longer matches the lock, and status ignores it.
 * Races closed: the fence is incremented in the same atomic step as the
 * take, so successive holders never see the same or a lower fence, even
 * after an expiry.  Fair waiters queue in arrival order; a waiter whose
 * lease (refreshed by each of its attempts) ran out is dropped, so a dead
 * waiter never blocks the queue for longer than its lease.
 */
static const char lua_acquire[] =
	CHECK_TYPE(7)
	"local token, ttl = ARGV[1], tonumber(ARGV[2])\n"
	"local lease = tonumber(ARGV[8])\n"
	"local function set_meta(f)\n"
	"  redis.call('HSET', KEYS[3], 'token', token, 'fence', f,\n"
	"    'host', ARGV[3], 'pid', ARGV[4], 'command', ARGV[5],\n"
	"    'since', ARGV[6])\n"
	"end\n"
	"if limit == 0 and lease == 0 and\n"
	"    redis.call('SET', KEYS[1], token, 'NX', 'PX', ttl) then\n"
	"  local f = redis.call('INCR', KEYS[2])\n"
	"  set_meta(f)\n"
	"  return {1, f}\n"
	"end\n"
	"local now = 0\n"
	"if limit > 0 or lease > 0 then\n"
	"  local t = redis.call('TIME')\n"
	"  now = t[1] * 1000 + math.floor(t[2] / 1000)\n"
	"end\n"
	SEM_PRUNE
	WAKE(6, 4, 9)
	"local free, hint\n"
	"if limit == 0 then\n"
	"  local cur, bad = lock_get()\n"
	"  if bad then return clash() end\n"
	"  if cur == token then\n"
	"    redis.call('PEXPIRE', KEYS[1], ttl)\n"
	"    local f = tonumber(redis.call('HGET', KEYS[3], 'fence'))\n"
	"    return {1, f or tonumber(redis.call('GET', KEYS[2])) or 0}\n"
	"  end\n"
	"  free = cur and 0 or 1\n"
	"  hint = cur and redis.call('PTTL', KEYS[1]) or 0\n"
	"else\n"
	"  prune()\n"
	"  if redis.call('ZSCORE', KEYS[1], token) then\n"
	"    redis.call('ZADD', KEYS[1], now + ttl, token)\n"
	"    keep()\n"
	"    local f = tonumber(redis.call('HGET', KEYS[3], token .. ':fence'))\n"
	"    return {1, f or 0}\n"
	"  end\n"
	"  free = limit - redis.call('ZCARD', KEYS[1])\n"
	"  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"
	"  hint = first[2] and (tonumber(first[2]) - now) or 0\n"
	"end\n"
	"if lease > 0 then\n"
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf',"
	" now)) do\n"
	"    redis.call('LREM', KEYS[4], 0, tok)\n"
	"    redis.call('ZREM', KEYS[5], tok)\n"
	"  end\n"
	"  local pos = redis.call('LPOS', KEYS[4], token)\n"
	"  if not pos then\n"
	"    pos = redis.call('RPUSH', KEYS[4], token) - 1\n"
	"  end\n"
	"  if pos >= free then\n"
	"    redis.call('ZADD', KEYS[5], now + lease, token)\n"
	"    redis.call('PEXPIRE', KEYS[4], lease * 2)\n"
	"    redis.call('PEXPIRE', KEYS[5], lease * 2)\n"
	"    return {0, free > 0 and 0 or hint}\n"
	"  end\n"
	"  redis.call('LREM', KEYS[4], 1, token)\n"
	"  redis.call('ZREM', KEYS[5], token)\n"
	"elseif free <= 0 then\n"
	"  return {0, hint}\n"
	"end\n"
	"local f = redis.call('INCR', KEYS[2])\n"
	"if limit == 0 then\n"
	"  redis.call('SET', KEYS[1], token, 'PX', ttl)\n"
	"  set_meta(f)\n"
	"else\n"
	"  redis.call('ZADD', KEYS[1], now + ttl, token)\n"
	"  redis.call('HSET', KEYS[3], token .. ':fence', f,\n"
	"    token .. ':host', ARGV[3], token .. ':pid', ARGV[4],\n"
	"    token .. ':command', ARGV[5], token .. ':since', ARGV[6])\n"
	"  keep()\n"
	"end\n"
	/* Slots left: the next waiter may come in too. */
	"if free > 1 then wake_waiters() end\n"
	"return {1, f}\n";

/*
 * leave: a fair waiter that gives up (-w ran out) leaves the queue now
 * rather than when its lease ends.
 *   KEYS[1..3] unused, KEYS[4] fair queue, KEYS[5] fair queue leases;
 *   ARGV[1] token
 */
static const char lua_leave[] =
	"redis.call('LREM', KEYS[4], 0, ARGV[1])\n"
	"redis.call('ZREM', KEYS[5], ARGV[1])\n"
	"return 1\n";

/*
 * release: compare-and-delete, and wake one waiter.
 *   KEYS[1] lock, KEYS[2] unused, KEYS[3] metadata hash, KEYS[4] fair
 *   queue, KEYS[5] unused, KEYS[6] wake key; ARGV[1] token, ARGV[2]
 *   limit, ARGV[3] prefix of per-waiter wake keys
 *   returns 1 released, 0 not held (expired), -1 held by another token.
 * Race closed: GET then DEL as two round trips would delete the next
 * holder's lock if ours expired in between.
 * Waking: a wake key holds at most one member.  Exactly one waiter
 * blocked in BZPOPMIN takes it, so a release causes one attempt, not one
 * per waiter.  If nobody is blocked, the member waits for the next waiter,
 * so a release between a waiter's failed attempt and its BZPOPMIN is not
 * missed; at worst it costs one spare attempt.  The head of
 * the fair queue gets its own wake-up.
 */
static const char lua_release[] =
	CHECK_TYPE(2)
	SERVER_NOW
	SEM_PRUNE
	WAKE(6, 4, 3)
	"if limit == 0 then\n"
	"  local cur, bad = lock_get()\n"
	"  if bad then return clash() end\n"
	"  if cur ~= ARGV[1] then return cur and -1 or 0 end\n"
	"  redis.call('DEL', KEYS[1], KEYS[3])\n"
	"else\n"
	"  prune()\n"
	"  if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end\n"
	"  redis.call('HDEL', KEYS[3], fields(ARGV[1]))\n"
	"end\n"
	"wake_waiters()\n"
	"return 1\n";

/*
 * extend: compare-and-pexpire.
 *   KEYS[1] lock, KEYS[2] unused, KEYS[3] metadata hash; ARGV[1] token,
 *   ARGV[2] ttl ms, ARGV[3] limit
 *   returns 1 extended, 0 not held (expired), -1 held by another token.
 * Race closed: PEXPIRE alone would extend whoever holds the key now,
 * including the next holder after ours expired.
 */
static const char lua_extend[] =
	CHECK_TYPE(3)
	SERVER_NOW
	SEM_PRUNE
	"if limit == 0 then\n"
	"  local cur, bad = lock_get()\n"
	"  if bad then return clash() end\n"
	"  if cur ~= ARGV[1] then return cur and -1 or 0 end\n"
	"  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
	"  return 1\n"
	"end\n"
	"prune()\n"
	"if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end\n"
	"redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])\n"
	"keep()\n"
	"return 1\n";

/*
 * status: the holders, their remaining TTLs and metadata, in one snapshot.
 *   KEYS[1] lock, KEYS[2] unused, KEYS[3] metadata hash; ARGV[1] limit,
 *   ARGV[2] how many holders of a semaphore to list at most
 *   returns {{token, ms left}, ...}, the metadata hash's fields, and how
 *   many hold in all: {holders, {field, value, ...}, count}.  A mutex's
 *   metadata belongs to its holder only if its token field matches (a
 *   foreign client's lock has none); a semaphore's fields are prefixed by
 *   each holder's token, and only the listed holders' are returned, so
 *   that the reply stays within the client's bounds however many hold.
 * Race closed: separate reads could mix two holders' data.
 */
static const char lua_status[] =
	CHECK_TYPE(1)
	SERVER_NOW
	"local holders = {}\n"
	"if limit == 0 then\n"
	"  local cur, bad = lock_get()\n"
	"  if bad then return clash() end\n"
	"  if cur then holders[1] = {cur, redis.call('PTTL', KEYS[1])} end\n"
	"  return {holders, redis.call('HGETALL', KEYS[3]), #holders}\n"
	"end\n"
	"local z = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf',"
	" 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))\n"
	"local meta = {}\n"
	"for i = 1, #z, 2 do\n"
	"  holders[#holders + 1] = {z[i], tonumber(z[i + 1]) - now}\n"
	"  for _, f in ipairs({'fence', 'host', 'pid', 'command', 'since'}) do\n"
	"    local v = redis.call('HGET', KEYS[3], z[i] .. ':' .. f)\n"
	"    if v then meta[#meta + 1] = z[i] .. ':' .. f; meta[#meta + 1] = v"
	" end\n"
	"  end\n"
	"end\n"
	"return {holders, meta, redis.call('ZCOUNT', KEYS[1], '(' .. now,"
	" '+inf')}\n";

/*
 * raise_fence: in quorum mode, after acquiring on a majority, lift this
 * server's fence counter to the fence the holder was given (the highest
 * any server of the majority returned), if this token still holds the lock
 * here.  See lock.c for why that keeps fences strictly increasing.
 *   KEYS[1] lock, KEYS[2] fence counter, KEYS[3] metadata hash
 *   ARGV[1] token, ARGV[2] fence, ARGV[3] limit
 *   returns 1 when the counter is now at least the fence, 0 if not held.
 */
static const char lua_raise_fence[] =
	CHECK_TYPE(3)
	"local held\n"
	"if limit == 0 then\n"
	"  local cur, bad = lock_get()\n"
	"  if bad then return clash() end\n"
	"  held = cur == ARGV[1]\n"
	"else held = redis.call('ZSCORE', KEYS[1], ARGV[1]) ~= false end\n"
	"if not held then return 0 end\n"
	"if (tonumber(redis.call('GET', KEYS[2])) or 0) < tonumber(ARGV[2])"
	" then\n"
	"  redis.call('SET', KEYS[2], ARGV[2])\n"
	"end\n"
	"if limit == 0 then redis.call('HSET', KEYS[3], 'fence', ARGV[2])\n"
	"else redis.call('HSET', KEYS[3], ARGV[1] .. ':fence', ARGV[2]) end\n"
	"return 1\n";

#endif /* SCRIPTS_LUA_H */
