/* SPDX-License-Identifier: MIT */
/*
 * The Lua source of every script redlock-cli sends (scripts.c sends them):
 * one script per purpose and lock mode, put together here, at build time,
 * from the fragments below and the mode's own (scripts-mutex.h,
 * scripts-semaphore.h, scripts-shared.h).  src/tools/script-sha.c hashes
 * each one into scripts-sha.h for EVALSHA, so no process hashes Lua at
 * start-up.
 *
 * Key layout (lock.c builds the names): KEYS[1] is the lock itself, exactly
 * PREFIX+KEY holding the token, so any client using SET NX PX on the same
 * key excludes us and is excluded; the fence counter, the metadata hash,
 * the fair queue and the wake key share its Cluster slot:
 *   KEYS[1] lock, KEYS[2] fence counter, KEYS[3] metadata hash,
 *   KEYS[4] fair queue (list), KEYS[5] fair queue leases (zset),
 *   KEYS[6] wake key, and for shared locks (scripts-shared.h):
 *   KEYS[7] readers (zset), KEYS[8] readers' metadata (hash),
 *   KEYS[9] waiting writers (zset), KEYS[10] waiting readers (zset).
 *
 * Every key expires (bounded footprint): the lock and a fair queue's keys
 * with their own TTLs, the fence counter, the metadata and the wake keys
 * LUA_LINGER_MS after the lock's TTL or the wake-up, so nothing of a name
 * that nobody holds or waits for is left 10 s after its last TTL.
 *
 * Every mode defines the same Lua functions, which the shared bodies call:
 *   mode_check()       whether KEYS[1] has the wrong type, without writing
 *   mode_prepare(now)  mode_check(), then drop what has expired
 *   mode_mine(token, ttl, now)  refresh and give the fence if token holds
 *   mode_room(now)     free slots, and ms until the first holder's expiry
 *   mode_holder()      the holder in the way: token, host, pid, command,
 *                      since (strings; '' when unknown)
 *   mode_take(token, ttl, now, fence)  take a slot, with its metadata
 *   mode_drop(token, now)  release: 1, 0 not held, -1 held by another
 *   mode_renew(token, ttl, now)  extend: the TTL set, 0, or -1
 *   mode_stored_ttl(token)  the TTL the holder took the lock with
 *   mode_holds(token)  whether token holds a slot
 *   mode_set_fence(token, fence)  the holder's fence, in its metadata
 *   mode_drop_all()    force: remove every holder, return who they were
 *   mode_wait(token, now)  a refused caller that will wait: note it
 *                      (a writer's intent keeps new readers out)
 *   mode_fence(ttl)    the fence of a new holder: next_fence(ttl), or
 *                      for a reader the counter as it is
 * MODE_NEEDS_TIME says whether they need the server's clock.
 */

#ifndef SCRIPTS_LUA_H
#define SCRIPTS_LUA_H

/* A key that is not what this caller takes it for fails loudly. */
#define LUA_CLASH							\
	"local function clash()\n"					\
	"  return redis.error_reply('REDLOCK-TYPE ' .."			\
	" redis.call('TYPE', KEYS[1]).ok)\n"				\
	"end\n"

/*
 * How long the companion keys outlive the lock's TTL (or a wake-up): long
 * enough for a waiter between its attempt and its BZPOPMIN, and for status
 * to see the metadata of a lock that has just expired.
 */
#define LUA_LINGER_MS	"5000"

/* Server time in ms: one clock for every holder's and waiter's expiry. */
#define LUA_SERVER_NOW							\
	"local function server_now()\n"				\
	"  local t = redis.call('TIME')\n"				\
	"  return t[1] * 1000 + math.floor(t[2] / 1000)\n"		\
	"end\n"

/*
 * The next fence: one more than the counter.  A counter that does not
 * exist starts from the server's time in ms, and expires LUA_LINGER_MS
 * after the TTL of the take that started it (renewals push that back), so
 * that a name nobody uses leaves nothing behind.  Started again, it is
 * above every fence given before as long as the server's clock has not
 * stepped back by more than the time the counter was gone, and the name
 * was taken less than once a millisecond on average while it lived: the
 * same assumption whenever it expires, so a take does not refresh it, and
 * the clock is asked only when it starts.  Every other take is one INCR.
 * ttl: the lock's, in ms.
 */
#define LUA_NEXT_FENCE							\
	"local function next_fence(ttl)\n"				\
	"  local f = redis.call('INCR', KEYS[2])\n"			\
	"  if f == 1 then\n"						\
	"    f = server_now()\n"					\
	"    redis.call('SET', KEYS[2], f, 'PX', ttl + " LUA_LINGER_MS ")\n"\
	"  end\n"							\
	"  return f\n"							\
	"end\n"

/*
 * Wake one waiter.  The wake key is a sorted set of one member: adding it
 * again is a no-op, so however many releases nobody waited for, the next
 * waiter finds at most one stale wake-up (one spare attempt), and no call
 * is spent keeping it that way.  It expires LUA_LINGER_MS after the last
 * wake-up: a waiter takes it within a round trip, or blocks on it already.
 * The head of a fair queue gets a wake key of its own, since there is one
 * per waiter.  ARGV[prefix] is the prefix of the per-waiter wake keys.
 */
#define LUA_WAKE(prefix)						\
	"local function wake_waiters()\n"				\
	"  redis.call('ZADD', KEYS[6], 0, 'go')\n"			\
	"  redis.call('PEXPIRE', KEYS[6], " LUA_LINGER_MS ")\n"	\
	"  local head = redis.call('LINDEX', KEYS[4], 0)\n"		\
	"  if head then\n"						\
	"    local k = ARGV[" #prefix "] .. head\n"			\
	"    redis.call('ZADD', k, 0, 'go')\n"				\
	"    redis.call('PEXPIRE', k, " LUA_LINGER_MS ")\n"		\
	"  end\n"							\
	"end\n"

/*
 * How many wait in a fair queue: the waiters whose lease (KEYS[5] of the
 * lock scripts) has not run out.  Waiters without --fair block on the wake
 * key and are known to nobody, so they are not counted.
 */
/*
 * A snapshot of the holders in sorted set k (token -> expiry, server time
 * now), whose metadata fields in hash meta are "<token>:field", for status
 * and list: {{{token, ms left}, ...}, {field, value, ...}, count, limit,
 * waiting (0: the caller counts them), mode}, with at most max holders
 * listed and only their fields, so that the reply stays within the
 * client's bounds however many hold.  Read only: expired holders are
 * skipped, not dropped.  A semaphore's slots and the readers of a shared
 * lock alike.
 */
#define LUA_HOLDERS_SNAPSHOT						\
	"local function holders_snapshot(k, meta, now, max, limit, mode)\n"\
	"  local holders, m = {}, {}\n"				\
	"  local z = redis.call('ZRANGEBYSCORE', k, '(' .. now, '+inf',"	\
	" 'WITHSCORES', 'LIMIT', 0, max)\n"				\
	"  for i = 1, #z, 2 do\n"					\
	"    holders[#holders + 1] = {z[i], tonumber(z[i + 1]) - now}\n"	\
	"    for _, f in ipairs({'fence', 'host', 'pid', 'command', 'since'})"\
	" do\n"							\
	"      local v = redis.call('HGET', meta, z[i] .. ':' .. f)\n"	\
	"      if v then m[#m + 1] = z[i] .. ':' .. f; m[#m + 1] = v end\n"\
	"    end\n"							\
	"  end\n"							\
	"  return {holders, m, redis.call('ZCOUNT', k, '(' .. now, '+inf'),"\
	" limit, 0, mode}\n"						\
	"end\n"

#define LUA_WAITING							\
	"local function waiting(leases, now)\n"			\
	"  return redis.call('ZCOUNT', leases, '(' .. now, '+inf')\n"	\
	"end\n"

/*
 * The fair queue (--fair): waiters in arrival order, each with a lease
 * that its every attempt refreshes, so a dead waiter blocks the queue for
 * no longer than its lease.  queue_admit() answers nil when token may take
 * a slot now (and takes it out of the queue), or the busy reply.
 */
#define LUA_FAIR_QUEUE							\
	"local function queue_admit(token, now, lease, free, busy)\n"	\
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5],"	\
	" '-inf', now)) do\n"						\
	"    redis.call('LREM', KEYS[4], 0, tok)\n"			\
	"    redis.call('ZREM', KEYS[5], tok)\n"			\
	"  end\n"							\
	"  local pos = redis.call('LPOS', KEYS[4], token)\n"		\
	"  if not pos then\n"						\
	"    pos = redis.call('RPUSH', KEYS[4], token) - 1\n"		\
	"  end\n"							\
	"  if pos >= free then\n"					\
	"    redis.call('ZADD', KEYS[5], now + lease, token)\n"		\
	"    redis.call('PEXPIRE', KEYS[4], lease * 2)\n"		\
	"    redis.call('PEXPIRE', KEYS[5], lease * 2)\n"		\
	"    return busy(free > 0)\n"					\
	"  end\n"							\
	"  redis.call('LREM', KEYS[4], 1, token)\n"			\
	"  redis.call('ZREM', KEYS[5], token)\n"			\
	"  return nil\n"						\
	"end\n"

/*
 * acquire: take the lock (or a slot) if free, and give this holder its
 * fence.
 *   ARGV[1] token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid,
 *   ARGV[5] command line, ARGV[6] acquired-at (wall ms), ARGV[7] limit
 *   (a semaphore's), ARGV[8] fair lease ms (0 = not fair), ARGV[9] prefix
 *   of per-waiter wake keys, ARGV[10] a waiter's lease ms (0: -n, the
 *   caller will not wait)
 *   returns {1, fence} when held (newly, or already by this same token,
 *   whose TTL is then refreshed: a retry after a lost reply is harmless),
 *   or {0, ms until the earliest holder's expiry (-1 if none, 0 unknown),
 *   then that holder's token, host, pid, command and since}.
 * Races closed: the fence is taken in the same atomic step as the take
 * (next_fence), so successive holders never see the same or a lower fence,
 * even after an expiry.
 */
#define LUA_ACQUIRE_BODY						\
	"local token, ttl = ARGV[1], tonumber(ARGV[2])\n"		\
	"local lease = tonumber(ARGV[8])\n"				\
	"local now = 0\n"						\
	"if MODE_NEEDS_TIME or lease > 0 then now = server_now() end\n"\
	"if mode_prepare(now) then return clash() end\n"		\
	"local mine = mode_mine(token, ttl, now)\n"			\
	"if mine then return {1, mine} end\n"				\
	"local free, hint = mode_room(now)\n"				\
	"local function busy(unknown)\n"				\
	"  mode_wait(token, now)\n"					\
	"  local h = mode_holder()\n"					\
	"  return {0, unknown and 0 or hint, h[1], h[2], h[3], h[4], h[5]}\n"\
	"end\n"							\
	"if lease > 0 then\n"						\
	"  local refused = queue_admit(token, now, lease, free, busy)\n"\
	"  if refused then return refused end\n"			\
	"elseif free <= 0 then\n"					\
	"  return busy(false)\n"					\
	"end\n"							\
	"local f = mode_fence(ttl)\n"					\
	"mode_take(token, ttl, now, f)\n"				\
	/* Slots left: the next waiter may come in too. */		\
	"if free > 1 then wake_waiters() end\n"			\
	"return {1, f}\n"

/*
 * release: compare-and-delete, and wake one waiter.
 *   ARGV[1] token, ARGV[2] limit, ARGV[3] prefix of per-waiter wake keys
 *   returns 1 released, 0 not held (expired), -1 held by another token.
 * Race closed: GET then DEL as two round trips would delete the next
 * holder's lock if ours expired in between.
 * Waking: exactly one waiter blocked in BZPOPMIN takes the wake key's one
 * member, so a release causes one attempt, not one per waiter.  If nobody
 * is blocked, the member waits for the next waiter, so a release between
 * a waiter's failed attempt and its BZPOPMIN is not missed.
 */
#define LUA_RELEASE_BODY						\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"local done = mode_drop(ARGV[1], now)\n"			\
	"if done ~= 1 then return done end\n"				\
	"wake_waiters()\n"						\
	"return 1\n"

/*
 * extend: compare-and-pexpire.
 *   ARGV[1] token, ARGV[2] ttl ms (0: the TTL it was taken with, or
 *   ARGV[4] if unknown), ARGV[3] limit, ARGV[4] default ttl ms
 *   returns the TTL set, 0 not held (expired), -1 held by another token.
 * Race closed: PEXPIRE alone would extend whoever holds the key now,
 * including the next holder after ours expired.
 */
#define LUA_EXTEND_BODY						\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"local ttl = tonumber(ARGV[2])\n"				\
	"if ttl == 0 then\n"						\
	"  ttl = mode_stored_ttl(ARGV[1]) or tonumber(ARGV[4])\n"	\
	"end\n"							\
	"return mode_renew(ARGV[1], ttl, now)\n"

/*
 * raise_fence: in quorum mode, after acquiring on a majority, lift this
 * server's fence counter to the fence the holder was given (the highest
 * any server of the majority returned), if this token still holds the lock
 * here.  See lock-acquire.c for why that keeps fences strictly increasing.
 *   ARGV[1] token, ARGV[2] fence, ARGV[3] limit
 *   returns 1 when the counter is now at least the fence, 0 if not held.
 *   The counter set expires with the lock here, as next_fence's does.
 */
#define LUA_RAISE_FENCE_BODY						\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"if not mode_holds(ARGV[1]) then return 0 end\n"	\
	"if (tonumber(redis.call('GET', KEYS[2])) or 0) < tonumber(ARGV[2])"\
	" then\n"							\
	"  redis.call('SET', KEYS[2], ARGV[2], 'PX',"			\
	" math.max(redis.call('PTTL', KEYS[1]), 0) + " LUA_LINGER_MS ")\n"\
	"end\n"							\
	"mode_set_fence(ARGV[1], ARGV[2])\n"				\
	"return 1\n"

/*
 * force: an operator's release (release --force): remove every holder,
 * whoever it is, and wake a waiter.  The fence counter stays (so the
 * removed holder's late writes are refused by fencing), and so do the
 * waiters in the queue.
 *   ARGV[1] prefix of per-waiter wake keys
 *   returns {{token, host, pid, command, since}, ...}: each holder
 *   removed ('' where unknown: a foreign client's lock), {} if none.
 */
#define LUA_FORCE_BODY							\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"local removed = mode_drop_all()\n"				\
	"if #removed > 0 then wake_waiters() end\n"			\
	"return removed\n"

/*
 * leave: a fair waiter, or a waiter that noted its intent (mode_wait),
 * that gives up (-w ran out) leaves the queue now rather than when its
 * lease ends; the same in every mode.
 *   KEYS[1..3] unused, KEYS[4] fair queue, KEYS[5] fair queue leases,
 *   KEYS[6..8] unused, KEYS[9] waiting writers, KEYS[10] waiting readers;
 *   ARGV[1] token
 */
static const char lua_leave[] =
	"redis.call('LREM', KEYS[4], 0, ARGV[1])\n"
	"redis.call('ZREM', KEYS[5], ARGV[1])\n"
	"redis.call('ZREM', KEYS[9], ARGV[1])\n"
	"redis.call('ZREM', KEYS[10], ARGV[1])\n"
	"return 1\n";

#include "scripts-shared.h"
#include "scripts-mutex.h"
#include "scripts-semaphore.h"
#include "scripts-list.h"

/* Every script, for scripts.c and the hashing tool: X(NAME, body). */
#define LOCK_SCRIPTS(X)							\
	X(LEAVE, lua_leave)						\
	X(MUTEX_ACQUIRE, lua_mutex_acquire)				\
	X(MUTEX_RELEASE, lua_mutex_release)				\
	X(MUTEX_EXTEND, lua_mutex_extend)				\
	X(MUTEX_STATUS, lua_mutex_status)				\
	X(MUTEX_RAISE_FENCE, lua_mutex_raise_fence)			\
	X(MUTEX_FORCE, lua_mutex_force)					\
	X(SEMAPHORE_ACQUIRE, lua_semaphore_acquire)			\
	X(SEMAPHORE_RELEASE, lua_semaphore_release)			\
	X(SEMAPHORE_EXTEND, lua_semaphore_extend)			\
	X(SEMAPHORE_STATUS, lua_semaphore_status)			\
	X(SEMAPHORE_RAISE_FENCE, lua_semaphore_raise_fence)		\
	X(SEMAPHORE_FORCE, lua_semaphore_force)				\
	X(LIST, lua_list)						\
	X(SHARED_ACQUIRE, lua_shared_acquire)				\
	X(SHARED_RELEASE, lua_shared_release)				\
	X(SHARED_EXTEND, lua_shared_extend)				\
	X(SHARED_RAISE_FENCE, lua_shared_raise_fence)

#endif /* SCRIPTS_LUA_H */
