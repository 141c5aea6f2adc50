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
 *   mode_wait(token, now)  a refused caller that will wait: note it
 *                      (a writer's intent keeps new readers out)
 *   mode_fence()       the fence of a new holder: INCR, or for a reader
 *                      the counter as it is
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

/* Server time in ms: one clock for every holder's and waiter's expiry. */
#define LUA_SERVER_NOW							\
	"local function server_now()\n"				\
	"  local t = redis.call('TIME')\n"				\
	"  return t[1] * 1000 + math.floor(t[2] / 1000)\n"		\
	"end\n"

/*
 * Wake one waiter.  The wake key is a sorted set of one member: adding it
 * again is a no-op, so however many releases nobody waited for, the next
 * waiter finds at most one stale wake-up (one spare attempt), and no call
 * is spent keeping it that way.  Like the fence counter it outlives the
 * lock (one small key per lock name).  The head of a fair queue gets a
 * wake key of its own, which expires, since there is one per waiter.
 * ARGV[prefix] is the prefix of the per-waiter wake keys.
 */
#define LUA_WAKE(prefix)						\
	"local function wake_waiters()\n"				\
	"  redis.call('ZADD', KEYS[6], 0, 'go')\n"			\
	"  local head = redis.call('LINDEX', KEYS[4], 0)\n"		\
	"  if head then\n"						\
	"    local k = ARGV[" #prefix "] .. head\n"			\
	"    redis.call('ZADD', k, 0, 'go')\n"				\
	"    redis.call('PEXPIRE', k, 10000)\n"				\
	"  end\n"							\
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
 * Races closed: the fence is incremented in the same atomic step as the
 * take, so successive holders never see the same or a lower fence, even
 * after an expiry.
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
	"local f = mode_fence()\n"					\
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
 */
#define LUA_RAISE_FENCE_BODY						\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"if not mode_holds(ARGV[1]) then return 0 end\n"	\
	"if (tonumber(redis.call('GET', KEYS[2])) or 0) < tonumber(ARGV[2])"\
	" then\n"							\
	"  redis.call('SET', KEYS[2], ARGV[2])\n"			\
	"end\n"							\
	"mode_set_fence(ARGV[1], ARGV[2])\n"				\
	"return 1\n"

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

/* Every script, for scripts.c and the hashing tool: X(NAME, body). */
#define LOCK_SCRIPTS(X)							\
	X(LEAVE, lua_leave)						\
	X(MUTEX_ACQUIRE, lua_mutex_acquire)				\
	X(MUTEX_RELEASE, lua_mutex_release)				\
	X(MUTEX_EXTEND, lua_mutex_extend)				\
	X(MUTEX_STATUS, lua_mutex_status)				\
	X(MUTEX_RAISE_FENCE, lua_mutex_raise_fence)			\
	X(SEMAPHORE_ACQUIRE, lua_semaphore_acquire)			\
	X(SEMAPHORE_RELEASE, lua_semaphore_release)			\
	X(SEMAPHORE_EXTEND, lua_semaphore_extend)			\
	X(SEMAPHORE_STATUS, lua_semaphore_status)			\
	X(SEMAPHORE_RAISE_FENCE, lua_semaphore_raise_fence)		\
	X(SHARED_ACQUIRE, lua_shared_acquire)				\
	X(SHARED_RELEASE, lua_shared_release)				\
	X(SHARED_EXTEND, lua_shared_extend)				\
	X(SHARED_RAISE_FENCE, lua_shared_raise_fence)

#endif /* SCRIPTS_LUA_H */
