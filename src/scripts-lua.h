/* SPDX-License-Identifier: MIT */
/*
 * The Lua source of every script redlock-cli sends (lock-scripts.c sends them):
 * one script per purpose and lock mode, put together here, at build time,
 * from the fragments below and the mode's own (scripts-mutex.h,
 * scripts-semaphore.h, scripts-shared.h).  src/tools/script-sha.c hashes
 * each one into scripts-sha.h for EVALSHA, so no process hashes Lua at
 * start-up.
 *
 * Key layout (lock.c builds the names): KEYS[1] is the lock itself, exactly
 * PREFIX+KEY holding the token, so any client using SET NX PX on the same
 * key excludes us and is excluded; the fence counter, the metadata hash,
 * the queue and the wake key share its Cluster slot:
 *   KEYS[1] lock, KEYS[2] fence counter, KEYS[3] metadata hash,
 *   KEYS[4] queue (zset by rank), KEYS[5] queue leases (zset),
 *   KEYS[6] wake key, and for shared locks (scripts-shared.h):
 *   KEYS[7] readers (zset), KEYS[8] readers' metadata (hash),
 *   KEYS[9] waiting writers (zset), KEYS[10] waiting readers (zset),
 *   and for every mode KEYS[11] the history (scripts-history.h) and
 *   KEYS[12] who waits (hash, LUA_WAITER_INFO: the queue's name+':who').
 * Every key a script touches is one of these (tests/lint/lua_keys.py
 * checks it).  Keys of one waiter or holder, whose names only the script
 * finds out (the head of a queue's wake key), are written by the client,
 * from the script's pokes (LUA_POKE).
 *
 * Every key expires (bounded footprint): the lock and a queue's keys
 * with their own TTLs, the metadata and the wake keys at the release or
 * LUA_LINGER_MS after the lock's TTL or the wake-up, so nothing of a name
 * that nobody holds or waits for is left 10 s after its last TTL but the
 * fence counter, which lives 7 days more (LUA_NEXT_FENCE).
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
 *                      for a reader read_fence(ttl)
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

/*
 * Server time in ms: one clock for every holder's and waiter's expiry.
 * server_us keeps the same reading in microseconds: a waiter's arrival,
 * which ranks it when it gave no --order.
 */
#define LUA_SERVER_NOW							\
	"local server_us = 0\n"					\
	"local function server_now()\n"				\
	"  local t = redis.call('TIME')\n"				\
	"  server_us = t[1] * 1000000 + t[2]\n"			\
	"  return t[1] * 1000 + math.floor(t[2] / 1000)\n"		\
	"end\n"							\
	LUA_ACQUIRED_AT

/*
 * A take's acquired-at: the client's wall clock (acquire's ARGV[6]), or
 * the server's (now, if the script has asked it already) when the client
 * sent '': an attempt sent behind a wait (lock-wait.c) runs long after
 * the client could have read its clock.
 */
#define LUA_ACQUIRED_AT							\
	"local function acquired_at(now)\n"				\
	"  if ARGV[6] ~= '' then return ARGV[6] end\n"			\
	"  return string.format('%d', (now or 0) > 0 and now or"	\
	" server_now())\n"						\
	"end\n"

/*
 * The fence counter (KEYS[2]) lives LUA_FENCE_KEEP_MS after the name's
 * last take (every take and renewal sets it, as raise_fence does), so
 * that fences never go back within a week of idleness, however fast the
 * name was taken, and a name nobody uses still leaves nothing behind for
 * ever.  A counter that does not exist starts from the server's clock in
 * microseconds: above every fence that the counter it replaces gave, as
 * long as the clock has not stepped back by more than the 7 days it was
 * gone (no server takes a lock a microsecond, so a counter never runs
 * ahead of the clock that started it), and above a counter started from
 * the clock in milliseconds.  The clock is asked only then.
 *   fence_start(ttl): a new counter, its value; next_fence(ttl): one more
 *   than the counter (an exclusive take, or a slot); read_fence(ttl):
 *   the counter as it is (a reader, who needs no new fence: the next
 *   exclusive take's INCR is larger), never 0.  ttl: the lock's, in ms.
 * Lua's numbers are doubles, exact up to 2^53: a counter at 2^53 or
 * above (set by hand, or started by a clock past the year 2255) would
 * give fences that repeat, so the take fails there, before anything is
 * taken, with REDLOCK-FENCE and the counter (fence_exact).
 */
#define LUA_FENCE_KEEP_MS	"604800000"

#define LUA_NEXT_FENCE							\
	"local function fence_exact(f)\n"				\
	"  if f >= 9007199254740992 then\n"				\
	"    error({err = 'REDLOCK-FENCE ' .. string.format('%.0f', f)})\n"\
	"  end\n"							\
	"  return f\n"							\
	"end\n"							\
	"local function fence_start(ttl)\n"				\
	"  local t = redis.call('TIME')\n"				\
	"  local f = fence_exact(t[1] * 1000000 + t[2])\n"		\
	"  redis.call('SET', KEYS[2], string.format('%.0f', f), 'PX',"	\
	" ttl + " LUA_FENCE_KEEP_MS ")\n"				\
	"  return f\n"							\
	"end\n"							\
	"local function next_fence(ttl)\n"				\
	"  local f = fence_exact(redis.call('INCR', KEYS[2]))\n"	\
	"  if f == 1 then return fence_start(ttl) end\n"		\
	"  redis.call('PEXPIRE', KEYS[2], ttl + " LUA_FENCE_KEEP_MS ")\n"\
	"  return f\n"							\
	"end\n"							\
	/* INCRBY 0, not GET: a counter that is not a number fails as
	 * next_fence's INCR does, rather than being started anew. */	\
	"local function read_fence(ttl)\n"				\
	"  local f = fence_exact(redis.call('INCRBY', KEYS[2], 0))\n"	\
	"  if f < 1 then return fence_start(ttl) end\n"		\
	"  redis.call('PEXPIRE', KEYS[2], ttl + " LUA_FENCE_KEEP_MS ")\n"\
	"  return f\n"							\
	"end\n"

#include "scripts-poke.h"
#include "scripts-queue.h"
#include "scripts-history.h"

/*
 * acquire: take the lock (or a slot) if free, and give this holder its
 * fence.
 *   ARGV[1] token, ARGV[2] ttl ms, ARGV[3] host, ARGV[4] pid,
 *   ARGV[5] command line, ARGV[6] acquired-at (wall ms), ARGV[7] limit
 *   (a semaphore's), ARGV[8] queue lease ms (0: not queued, --queue any
 *   or a probe; -1: not queued, but noted as waiting by an attempt
 *   before), ARGV[9] prefix of per-waiter wake keys, ARGV[10] a waiter's
 *   lease ms (0: -n, the caller will not wait), ARGV[11] to ARGV[14] and
 *   ARGV[16] the queue's (LUA_QUEUE), ARGV[15] '1' if the holder listens
 *   for cancels (a run of --queue latest), else '0'.  A probe (-n) sends
 *   ARGV[8] and ARGV[10] '0': it never joins, supersedes or cancels
 *   anyone, and does not take a lock that a queue's waiters wait for.
 *   returns {1, fence} when held (newly, or already by this same token,
 *   whose TTL is then refreshed: a retry after a lost reply is harmless),
 *   or {0, ms until the earliest holder's expiry (-1 if none, 0 unknown),
 *   then that holder's token, host, pid, command and since, and whether
 *   --cancel-running asked it to stop, and the --queue mode of the
 *   waiters in line if not the caller's (LUA_QUEUE)}, or {2, ...}
 *   when superseded (LUA_QUEUE).
 * Races closed: the fence is taken in the same atomic step as the take
 * (next_fence), so successive holders never see the same or a lower fence,
 * even after an expiry.
 */
#define LUA_ACQUIRE_BODY						\
	LUA_MAIN							\
	"local token, ttl = ARGV[1], tonumber(ARGV[2])\n"		\
	"local lease = tonumber(ARGV[8])\n"				\
	"local now = 0\n"						\
	"if MODE_NEEDS_TIME or lease ~= 0 then now = server_now() end\n"\
	"if mode_prepare(now) then return clash() end\n"		\
	"local mine = mode_mine(token, ttl, now)\n"			\
	"if mine then\n"						\
	"  if lease ~= 0 then queue_drop(token) end\n"		\
	"  return {1, mine}\n"						\
	"end\n"							\
	"local free, hint = mode_room(now)\n"				\
	"local function busy(unknown)\n"				\
	"  mode_wait(token, now)\n"					\
	"  if lease <= 0 and ARGV[10] ~= '0' then\n"			\
	"    if server_us == 0 then now = server_now() end\n"		\
	"    waiter_note(token, now, tonumber(ARGV[10]))\n"		\
	"    queue_mode_check()\n"					\
	"  end\n"							\
	"  local h = mode_holder()\n"					\
	"  return {0, unknown and 0 or hint, h[1], h[2], h[3], h[4], h[5],"	\
	" cancel_said, queue_mixed}\n"					\
	"end\n"							\
	"if lease > 0 then\n"						\
	"  local refused = queue_admit(token, now, lease, free, busy)\n"\
	"  if refused then return refused end\n"			\
	"elseif free <= 0 then\n"					\
	"  return busy(false)\n"					\
	/* A probe of a queue (-n) does not jump it, nor join it. */	\
	"elseif lease == 0 and (ARGV[11] or 'any') ~= 'any' and"	\
	" redis.call('ZCOUNT', KEYS[5], '(' .. server_now(), '+inf') > 0 then\n"\
	"  return busy(true)\n"					\
	"elseif lease < 0 then\n"					\
	"  queue_drop(token)\n"					\
	"end\n"							\
	"local f = mode_fence(ttl)\n"					\
	"mode_take(token, ttl, now, f, my_order or (ARGV[12] ~= '' and"	\
	" ARGV[12]) or nil, my_at)\n"					\
	/* Slots left: the next waiter may come in too. */		\
	"if free > 1 then wake_waiters() end\n"			\
	"return {1, f}\n"							\
	LUA_MAIN_END

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
	LUA_MAIN							\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"local done = history_release(ARGV[1], function()\n"		\
	"  return mode_drop(ARGV[1], now) end)\n"			\
	"if done ~= 1 then return done end\n"				\
	"wake_waiters()\n"						\
	"return 1\n"							\
	LUA_MAIN_END

/*
 * give_back: undo this server's part of an attempt that did not make a
 * lock (a split vote, a take too late, a lost reply): drop our hold here
 * and, for a queued waiter that will try again, put it back in line at
 * its own rank (the take had taken it out), so that nobody behind it moves
 * ahead while it was counting votes.  Wakes nobody, and takes back the
 * wake-up of a take that left slots free: the lock is no freer than before
 * the attempt, and a waiter that woke itself would only take and give back
 * again, at once, for as long as the vote stays split (lock-acquire.c
 * backs off instead).
 *   ARGV as acquire's; ARGV[8] queue lease ms, 0: not queued, or not
 *   trying again
 *   returns 1 given back, 0 not held here, -1 held by another token.
 */
#define LUA_GIVE_BACK_BODY						\
	LUA_MAIN							\
	"local token, lease = ARGV[1], tonumber(ARGV[8])\n"		\
	"local now = 0\n"						\
	"if MODE_NEEDS_TIME or lease > 0 then now = server_now() end\n"\
	"if mode_prepare(now) then return clash() end\n"		\
	/* Its place back at the arrival it had, as the take stored it	\
	 * (a mutex's fields, or a semaphore slot's). */		\
	"local rank_order, rank_at\n"					\
	"if lease > 0 then\n"						\
	"  local m = redis.call('HMGET', KEYS[3], 'token', 'order', 'at',"	\
	" token .. ':order', token .. ':at')\n"			\
	"  if m[1] == token then rank_order, rank_at = m[2], m[3]\n"	\
	"  else rank_order, rank_at = m[4], m[5] end\n"		\
	"end\n"							\
	"local done = mode_drop(token, now)\n"			\
	/* A take that left slots free woke the next waiter: not now. */\
	"if done == 1 and mode_room(now) > 1 then\n"			\
	"  redis.call('ZREM', KEYS[6], 'go')\n"			\
	"end\n"							\
	"if done == 1 and lease > 0 then\n"				\
	"  if rank_at and rank_at ~= '' then\n"			\
	"    redis.call('HSETNX', who, 'w:' .. token, (rank_order ~= '' and"	\
	" rank_order or '-') .. ' ' .. rank_at .. ' ' .. ARGV[16])\n"	\
	"  end\n"							\
	"  queue_join(token, now, lease)\n"				\
	"end\n"							\
	"return done\n"							\
	LUA_MAIN_END

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
 *   The counter lifted lives as next_fence's does (LUA_FENCE_KEEP_MS
 *   after the lock's TTL here), so a majority that lacks the server whose
 *   clock started the highest counter never restarts below it.
 */
#define LUA_RAISE_FENCE_BODY						\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"if not mode_holds(ARGV[1]) then return 0 end\n"	\
	"if (tonumber(redis.call('GET', KEYS[2])) or 0) < tonumber(ARGV[2])"\
	" then\n"							\
	"  redis.call('SET', KEYS[2], ARGV[2], 'PX',"			\
	" math.max(redis.call('PTTL', KEYS[1]), 0) + " LUA_FENCE_KEEP_MS\
	")\n"								\
	"end\n"							\
	"mode_set_fence(ARGV[1], ARGV[2])\n"				\
	"return 1\n"

/*
 * What mode_drop_all() of a sorted set of holders z (a semaphore's slots,
 * the readers of a shared lock) answers, their metadata "<token>:field"
 * in hash meta: at most LUA_FORCE_MAX of them, so that the reply stays
 * within the client's bounds however many held, and for the rest one
 * entry {'', 'more', N}, whose empty token is no holder's (force's
 * reply, LUA_FORCE_BODY, is this list).  The caller deletes the keys.
 */
#define LUA_FORCE_MAX	"1000"

#define LUA_DROP_LIST							\
	"local function force_tell(tok)\n"				\
	"  if tok == '' then return end\n"				\
	"  poke(ARGV[2] .. tok, -1, 'forced ' .. ARGV[4] .. ' ' .. ARGV[3])\n"\
	"end\n"							\
	"local function force_record(tok)\n"				\
	"  local n = tonumber(ARGV[5]) or 0\n"			\
	"  local m = n > 0 and tok ~= '' and history_holder(tok)\n"	\
	"  if m then history_ended(n, m, 'forced', history_now()) end\n"	\
	"end\n"							\
	"local function drop_list(z, meta)\n"				\
	"  local removed, all = {}, redis.call('ZRANGE', KEYS[z], 0, -1)\n"\
	"  for i, tok in ipairs(all) do\n"				\
	"    if i <= " LUA_FORCE_MAX " then\n"				\
	"      force_tell(tok)\n"					\
	"      force_record(tok)\n"					\
	"      local m = redis.call('HMGET', KEYS[meta], tok .. ':host',"	\
	" tok .. ':pid', tok .. ':command', tok .. ':since')\n"	\
	"      removed[#removed + 1] = {tok, m[1] or '', m[2] or '',"	\
	" m[3] or '', m[4] or ''}\n"					\
	"    end\n"							\
	"  end\n"							\
	"  local rest = #all - #removed\n"				\
	"  if rest > 0 then\n"						\
	"    removed[#removed + 1] = {'', 'more', tostring(rest), '', ''}\n"\
	"  end\n"							\
	"  return removed\n"						\
	"end\n"

/*
 * force: an operator's release (release --force): remove every holder,
 * whoever it is, and wake a waiter.  The fence counter stays (so the
 * removed holder's late writes are refused by fencing), and so do the
 * waiters in the queue.  Each removed holder finds a note "forced PID
 * HOST" in its key ARGV[2]..token, where a run listens between renewals
 * (lock-listen.c), so it stops its command at once, not at its next
 * renewal.
 *   ARGV[1] prefix of per-waiter wake keys, ARGV[2] prefix of holders'
 *   cancel keys, ARGV[3] our host, ARGV[4] our pid
 *   returns {{token, host, pid, command, since}, ...}: each holder
 *   removed ('' where unknown: a foreign client's lock), {} if none.
 */
#define LUA_FORCE_BODY							\
	LUA_MAIN							\
	"local now = MODE_NEEDS_TIME and server_now() or 0\n"		\
	"if mode_prepare(now) then return clash() end\n"		\
	"local removed = mode_drop_all()\n"				\
	"if #removed > 0 then wake_waiters() end\n"			\
	"return removed\n"							\
	LUA_MAIN_END

/*
 * leave: a queued waiter, or a waiter that noted its intent (mode_wait),
 * that gives up (-w ran out) leaves the queue now rather than when its
 * lease ends; the same in every mode.
 *   KEYS[1..3] unused, KEYS[4] queue, KEYS[5] queue leases, KEYS[6..8]
 *   unused, KEYS[9] waiting writers, KEYS[10] waiting readers;
 *   ARGV[1] token
 */
static const char lua_leave[] =
	"redis.call('ZREM', KEYS[4], ARGV[1])\n"
	"redis.call('ZREM', KEYS[5], ARGV[1])\n"
	"redis.call('HDEL', KEYS[12], ARGV[1], 'w:' .. ARGV[1])\n"
	"redis.call('ZREM', KEYS[9], ARGV[1])\n"
	"redis.call('ZREM', KEYS[10], ARGV[1])\n"
	"return 1\n";

/*
 * done: --skip-outdated's record of the last order that ran to the end
 * with exit 0 on this lock, a hash {order, host, time}: kept 7 days after
 * its last use, the only companion key that lives that long.
 *   KEYS[1] the record (the lock's companion "done", in its slot: a
 *   Cluster sends the call where the lock lives);
 *   ARGV[1] order, ARGV[2] host ('' to only look), ARGV[3] time (wall ms)
 *   returns {order, host, time} of a record whose order is greater than
 *   ARGV[1] (a retry of the same order is not outdated), else {} (and
 *   with a host, ARGV[1] is the record now).
 */
static const char lua_done[] =
	"local d = redis.call('HMGET', KEYS[1], 'order', 'host', 'time')\n"
	"local seen, n = tonumber(d[1]), tonumber(ARGV[1])\n"
	"if ARGV[2] ~= '' and (not seen or seen <= n) then\n"
	"  redis.call('HSET', KEYS[1], 'order', ARGV[1], 'host', ARGV[2],"
	" 'time', ARGV[3])\n"
	"end\n"
	"if seen or ARGV[2] ~= '' then\n"
	"  redis.call('PEXPIRE', KEYS[1], 604800000)\n"
	"end\n"
	"if seen and seen > n then return {d[1], d[2] or '', d[3] or ''} end\n"
	"return {}\n";

/*
 * The queue's mode, for status and list: as the queue's ':who' hash
 * KEYS[who] keeps it (LUA_QUEUE), 'any' when no queue has been seen.
 */
#define LUA_QUEUE_MODE							\
	"local function queue_mode(who)\n"				\
	"  return redis.call('HGET', KEYS[who], '') or 'any'\n"	\
	"end\n"

#include "scripts-shared.h"
#include "scripts-mutex.h"
#include "scripts-semaphore.h"
#include "scripts-list.h"

/* Every script, for lock-scripts.c and the hashing tool: X(NAME, body). */
#define LOCK_SCRIPTS(X)							\
	X(LEAVE, lua_leave)						\
	X(DONE, lua_done)						\
	X(MUTEX_ACQUIRE, lua_mutex_acquire)				\
	X(MUTEX_RELEASE, lua_mutex_release)				\
	X(MUTEX_EXTEND, lua_mutex_extend)				\
	X(MUTEX_STATUS, lua_mutex_status)				\
	X(MUTEX_WAITERS, lua_mutex_waiters)				\
	X(MUTEX_RAISE_FENCE, lua_mutex_raise_fence)			\
	X(MUTEX_FORCE, lua_mutex_force)					\
	X(MUTEX_GIVE_BACK, lua_mutex_give_back)				\
	X(SEMAPHORE_ACQUIRE, lua_semaphore_acquire)			\
	X(SEMAPHORE_RELEASE, lua_semaphore_release)			\
	X(SEMAPHORE_EXTEND, lua_semaphore_extend)			\
	X(SEMAPHORE_STATUS, lua_semaphore_status)			\
	X(SEMAPHORE_RAISE_FENCE, lua_semaphore_raise_fence)		\
	X(SEMAPHORE_FORCE, lua_semaphore_force)				\
	X(SEMAPHORE_GIVE_BACK, lua_semaphore_give_back)			\
	X(LIST, lua_list)						\
	X(SHARED_ACQUIRE, lua_shared_acquire)				\
	X(SHARED_RELEASE, lua_shared_release)				\
	X(SHARED_EXTEND, lua_shared_extend)				\
	X(SHARED_RAISE_FENCE, lua_shared_raise_fence)			\
	X(SHARED_GIVE_BACK, lua_shared_give_back)			\
	X(HISTORY_NOTE, lua_history_note)				\
	X(HISTORY_READ, lua_history_read)				\
	X(POKE, lua_poke)

#endif /* SCRIPTS_LUA_H */
