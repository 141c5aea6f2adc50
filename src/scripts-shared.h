/* SPDX-License-Identifier: MIT */
/*
 * Shared (reader) locks, -s: any number of shared holders, excluded by an
 * exclusive holder (the mutex, scripts-mutex.h) and excluding it.
 *
 * Keys (KEYS[n], see lock-impl.h): while any reader holds, KEYS[1] is the
 * marker string SHARED_MARK, whose own TTL is the last reader's expiry, so
 * a foreign client's SET NX on it fails as it does against a mutex; the
 * readers are the sorted set KEYS[7] (token -> expiry, server TIME) with
 * their metadata as "<token>:field" in the hash KEYS[8], both with the
 * marker's TTL.  A waiting exclusive request registers in KEYS[9] (token
 * -> lease end): that stops new readers, so a stream of overlapping
 * readers cannot starve it.  A waiting reader registers in KEYS[10]
 * (token -> lease end), so that the release that frees the lock wakes
 * every waiting reader at once, each on its own wake key (prefix +
 * token), rather than one after another.  Leases are refreshed by each
 * attempt and the sets expire twice a lease after the last one; every
 * script first drops what has expired.
 *
 * The mutex's scripts include the readers' functions too: release and
 * extend find the mode from the token (no -s), and status shows both.
 * Included by scripts-lua.h only, before scripts-mutex.h.
 */

#ifndef SCRIPTS_SHARED_H
#define SCRIPTS_SHARED_H

/*
 * The readers, for the shared mode and for the mutex's release, extend
 * and status: rd_now() is the server's time, asked once per script and
 * only when readers are involved (the mutex's own path needs no clock).
 */
/* What K holds while readers do: a foreign SET NX fails on it. */
#include "scripts-shared-run.h"

#define LUA_SHARED_MARK	"local SHARED_MARK = 'redlock:shared'\n"

/*
 * What a reader's take and release need, ahead of the fast paths
 * (lua_shared_acquire, lua_shared_release): every function a script
 * defines costs it a closure at each run, more than a call of Redis.
 */
#define LUA_SHARED_KEEP							\
	LUA_SHARED_MARK							\
	"local rd_t, rd_left\n"					\
	"local function rd_now()\n"					\
	"  if not rd_t then rd_t = server_now() end\n"			\
	"  return rd_t\n"						\
	"end\n"							\
	"local function rd_fields(tok) return tok .. ':fence',"	\
	" tok .. ':host', tok .. ':pid', tok .. ':command',"		\
	" tok .. ':since', tok .. ':ttl' end\n"			\
	/* The marker, readers and metadata end with the last reader. */\
	"local function rd_keep(now)\n"				\
	"  local last = redis.call('ZRANGE', KEYS[7], -1, -1,"		\
	" 'WITHSCORES')\n"						\
	"  rd_left = last[2] ~= nil\n"					\
	"  if not rd_left then\n"					\
	"    redis.call('DEL', KEYS[1], KEYS[7], KEYS[8])\n"		\
	"    return\n"							\
	"  end\n"							\
	"  local ms = math.max(1, tonumber(last[2]) - now)\n"		\
	"  redis.call('SET', KEYS[1], SHARED_MARK, 'PX', ms)\n"	\
	"  redis.call('PEXPIRE', KEYS[7], ms)\n"			\
	"  redis.call('PEXPIRE', KEYS[8], ms)\n"			\
	"end\n"							\
	/* release of a reader: 1, 0 not held.  The marker and both sets
	 * expire with the latest reader (the last of the set: top, if the
	 * caller has read it), so a release of any other leaves them as
	 * they are: three calls, where rd_keep() would take six. */	\
	"local function rd_drop(token, top)\n"				\
	"  top = top or redis.call('ZRANGE', KEYS[7], -1, -1)[1]\n"	\
	"  if redis.call('ZREM', KEYS[7], token) == 0 then return 0 end\n"\
	"  redis.call('HDEL', KEYS[8], rd_fields(token))\n"		\
	"  if top == token then rd_keep(rd_now()) else rd_left = true end\n"\
	"  return 1\n"							\
	"end\n"

/*
 * The shared scripts' own (a mutex's scripts, which include the readers'
 * functions for a reader's token, need neither): the first writer whose
 * intent has not run out (those that have go with the next wake-up,
 * LUA_SHARED_WAKE), and a reader's take, with its fence f: its lease and
 * metadata.
 */
#define LUA_SHARED_TAKE							\
	"local function rd_first_writer(now)\n"			\
	"  return redis.call('ZRANGEBYSCORE', KEYS[9], '(' .. now, '+inf',"\
	" 'WITHSCORES', 'LIMIT', 0, 1)\n"				\
	"end\n"							\
	"local function rd_take(token, ttl, now, f)\n"			\
	"  redis.call('ZADD', KEYS[7], now + ttl, token)\n"		\
	"  redis.call('HSET', KEYS[8], token .. ':fence', f,\n"	\
	"    token .. ':host', ARGV[3], token .. ':pid', ARGV[4],\n"	\
	"    token .. ':command', ARGV[5], token .. ':since', acquired_at(now),\n"\
	"    token .. ':ttl', ARGV[2])\n"				\
	"  redis.call('ZREM', KEYS[10], token)\n"			\
	"  rd_keep(now)\n"						\
	"end\n"

#define LUA_SHARED_REST							\
	/* cur is KEYS[1]'s value: drop expired readers, and a marker
	 * that has none left. */					\
	"local function rd_prepare(cur, now)\n"			\
	"  if cur ~= SHARED_MARK then return cur end\n"		\
	"  local gone = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now)\n"\
	"  for _, tok in ipairs(gone) do\n"				\
	"    redis.call('HDEL', KEYS[8], rd_fields(tok))\n"		\
	"  end\n"							\
	"  if #gone == 0 then return cur end\n"			\
	"  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now)\n"	\
	"  if redis.call('EXISTS', KEYS[7]) == 1 then return cur end\n"\
	"  redis.call('DEL', KEYS[1], KEYS[8])\n"			\
	"  return nil\n"						\
	"end\n"							\
	"local function rd_holds(token)\n"				\
	"  return redis.call('ZSCORE', KEYS[7], token) ~= false\n"	\
	"end\n"							\
	/* A holder for busy messages: the first reader to expire, or
	 * the exclusive holder whose metadata names it, with whether it
	 * listens for a cancel (one HMGET: each busy attempt pays it). */					\
	"local function rd_holder(cur)\n"				\
	"  if cur and cur ~= SHARED_MARK then\n"			\
	"    local m = redis.call('HMGET', KEYS[3], 'token', 'host', 'pid',"\
	" 'command', 'since', 'listens', 'queue', 'order', 'at')\n"	\
	"    if m[1] ~= cur then return {cur, '', '', '', ''} end\n"	\
	"    return {cur, m[2] or '', m[3] or '', m[4] or '', m[5] or '',"	\
	" m[6] or '', m[7] or '', m[8] or '', m[9] or ''}\n"						\
	"  end\n"							\
	"  local tok = redis.call('ZRANGE', KEYS[7], 0, 0)[1]\n"	\
	"  if not tok then return {'', '', '', '', ''} end\n"		\
	"  local m = redis.call('HMGET', KEYS[8], tok .. ':host',"	\
	" tok .. ':pid', tok .. ':command', tok .. ':since')\n"		\
	"  return {tok, m[1] or '', m[2] or '', m[3] or '', m[4] or ''}\n"\
	"end\n"							\
	/* extend of a reader: the TTL, 0 not held */			\
	"local function rd_renew(token, ttl)\n"			\
	"  if not rd_holds(token) then return 0 end\n"			\
	"  redis.call('ZADD', KEYS[7], rd_now() + ttl, token)\n"	\
	"  rd_keep(rd_now())\n"					\
	"  return ttl\n"						\
	"end\n"							\
	"local function rd_stored_ttl(token)\n"			\
	"  return tonumber(redis.call('HGET', KEYS[8], token .. ':ttl'))\n"\
	"end\n"							\
	/* A waiter's lease in set KEYS[k]: ARGV[10] ms, 0 for -n (no	\
	 * wait). */							\
	"local function rd_register(k, token)\n"			\
	"  local lease = tonumber(ARGV[10]) or 0\n"			\
	"  if lease <= 0 then return false end\n"			\
	"  redis.call('ZADD', KEYS[k], rd_now() + lease, token)\n"	\
	"  redis.call('PEXPIRE', KEYS[k], lease * 2)\n"		\
	"  return true\n"						\
	"end\n"							\
	LUA_SHARED_ORDER							\
	/* A queued writer (--queue fifo) ranked at or before the run's end
	 * (LUA_SHARED_RUN) ends the run: it is looked for again from the
	 * head. */							\
	"local function rd_run_cut(token)\n"				\
	"  if tonumber(ARGV[8]) <= 0 then return end\n"		\
	"  local who = KEYS[12]\n"				\
	"  local v = redis.call('HGET', who, ':run')\n"		\
	"  if not v then return end\n"					\
	"  local rs, rt = string.match(v, '^(%S+) (%S+)$')\n"		\
	"  local s = tonumber(redis.call('ZSCORE', KEYS[4], token))\n"	\
	"  rs = tonumber(rs)\n"					\
	"  if s and rs and not rd_after(s, token, rs, rt) then\n"	\
	"    redis.call('HDEL', who, ':run')\n"			\
	"  end\n"							\
	"end\n"							\
	/* A writer that waits for readers: who it is, for the readers it
	 * keeps out (rd_writer), in the readers' metadata, which ends
	 * with the last reader (the writer then takes the lock). */	\
	"local function rd_writer_note(token)\n"			\
	"  if not rd_register(9, token) then return end\n"	\
	"  redis.call('HSET', KEYS[8], token .. ':wpid', ARGV[4],"	\
	" token .. ':whost', ARGV[3])\n"				\
	"  redis.call('HSETNX', KEYS[8], token .. ':wsince', rd_now())\n"\
	"end\n"

#define LUA_SHARED_READERS	LUA_SHARED_KEEP LUA_SHARED_REST


/*
 * Waking, for every release script that may free a lock readers wait
 * for.  It wraps the mode's wake_waiters() (LUA_WAKE, one waiter): once
 * the lock is free, that one (a writer, or the head of a queue), plus,
 * with --queue fifo, the readers at the head of the queue together (the
 * run, below), and,
 * when no writer waits, every waiting reader, each on its own wake key:
 * one release, one round of attempts, however many readers.  Without a
 * queue or a waiting reader, one EXISTS of both stands in for
 * LUA_WAKE's look at the queue's head: a plain mutex's release costs what
 * it did before there were readers.
 * ARGV[prefix] is the prefix of the per-waiter wake keys.
 */
#define LUA_SHARED_WAKE(prefix)					\
	"local function rd_wake(tok)\n"				\
	"  poke(ARGV[" #prefix "] .. tok, 0, 'go')\n"			\
	"end\n"							\
	LUA_SHARED_RUN							\
	"local function rd_wake_queue() rd_run_extend() end\n"	\
	"local wake_one = wake_waiters\n"				\
	"local function wake_waiters()\n"				\
	"  if rd_left then return end\n"				\
	"  if redis.call('EXISTS', KEYS[4], KEYS[10]) == 0 then\n"	\
	"    redis.call('ZADD', KEYS[6], 0, 'go')\n"			\
	"    redis.call('PEXPIRE', KEYS[6], " LUA_LINGER_MS ")\n"	\
	"    return\n"							\
	"  end\n"							\
	"  wake_one()\n"						\
	"  if redis.call('EXISTS', KEYS[10]) == 0 then return end\n"	\
	"  rd_wake_queue()\n"						\
	"  redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', rd_now())\n"\
	"  if redis.call('EXISTS', KEYS[9]) == 1 then return end\n"	\
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[10],"	\
	" rd_now(), '+inf')) do\n"					\
	"    rd_wake(tok)\n"						\
	"  end\n"							\
	"end\n"

/*
 * The shared mode's functions (see scripts-lua.h).  A reader's fence is
 * the counter as it is (no INCR; read_fence), started anew if it has
 * expired: the next exclusive holder's INCR is larger than every earlier
 * reader's.  With --queue any, a waiting writer
 * (KEYS[9]) keeps new readers out; queued, the queue's order decides
 * (LUA_SHARED_QUEUE_TURN).  take: true for the acquire script only
 * (RD_TAKE: mode_prepare() does not prune there).
 */
#define LUA_SHARED_MODE(take)						\
	"local MODE_NEEDS_TIME = true\n"				\
	"local RD_TAKE = " #take "\n"					\
	"local cur\n"							\
	"local function mode_check()\n"				\
	"  local v = redis.pcall('GET', KEYS[1])\n"			\
	"  if type(v) == 'table' then return true end\n"		\
	"  cur = v\n"							\
	"  return false\n"						\
	"end\n"							\
	/* A reader's take does not prune (RD_TAKE): while the marker is
	 * there, its latest reader is not expired (they expire together),
	 * and the dead ones before it block no reader.  Releases, writers
	 * and a refusal prune them. */					\
	"local function mode_prepare(now)\n"				\
	"  if mode_check() then return true end\n"			\
	"  rd_t = now\n"						\
	"  if not RD_TAKE then cur = rd_prepare(cur, now) end\n"	\
	"  return false\n"						\
	"end\n"							\
	"local function mode_holds(token)\n"				\
	"  return cur == SHARED_MARK and rd_holds(token)\n"		\
	"end\n"							\
	/* Not pruned: an expired share is not ours any more. */	\
	"local function mode_mine(token, ttl, now)\n"			\
	"  if cur ~= SHARED_MARK then return nil end\n"		\
	"  local e = redis.call('ZSCORE', KEYS[7], token)\n"		\
	"  if not e or tonumber(e) <= now then return nil end\n"	\
	"  rd_renew(token, ttl)\n"					\
	"  return tonumber(redis.call('HGET', KEYS[8], token .. ':fence'))"\
	" or 0\n"							\
	"end\n"							\
	/* rd_w: the waiting writer that keeps this reader out. */	\
	"local rd_w\n"							\
	"local function mode_room(now)\n"				\
	"  if cur and cur ~= SHARED_MARK then\n"			\
	"    return 0, redis.call('PTTL', KEYS[1])\n"			\
	"  end\n"							\
	"  if tonumber(ARGV[8]) > 0 then return 1, 0 end\n"		\
	"  local w = rd_first_writer(now)\n"			\
	"  if w[2] then rd_w = w[1]; return 0, tonumber(w[2]) - now end\n"\
	"  return 1, 0\n"						\
	"end\n"							\
	/* Kept out by a waiting writer, the reader is told who it is:
	 * its pid marked 'w' (no holder's pid starts so), its host and
	 * since as rd_writer_note() left them. */			\
	"local function mode_holder()\n"				\
	"  if rd_w then\n"						\
	"    local m = redis.call('HMGET', KEYS[8], rd_w .. ':whost',"	\
	" rd_w .. ':wpid', rd_w .. ':wsince')\n"			\
	"    return {rd_w, m[1] or '', 'w' .. (m[2] or ''), '', m[3] or ''}\n"\
	"  end\n"							\
	"  if RD_TAKE and cur == SHARED_MARK then cur = rd_prepare(cur, rd_now()) end\n"\
	"  return rd_holder(cur)\n"					\
	"end\n"							\
	"local function mode_wait(token, now)\n"			\
	"  rd_register(10, token)\n"				\
	"end\n"							\
	"local mode_take = rd_take\n"					\
	"local function mode_drop(token, now)\n"			\
	"  if cur ~= SHARED_MARK then return cur and -1 or 0 end\n"	\
	"  return rd_drop(token)\n"					\
	"end\n"							\
	"local function mode_stored_ttl(token)\n"			\
	"  if not mode_holds(token) then return nil end\n"		\
	"  return rd_stored_ttl(token)\n"				\
	"end\n"							\
	"local function mode_renew(token, ttl, now)\n"			\
	"  if cur ~= SHARED_MARK then return cur and -1 or 0 end\n"	\
	"  return rd_renew(token, ttl)\n"				\
	"end\n"							\
	"local function mode_set_fence(token, f)\n"			\
	"  redis.call('HSET', KEYS[8], token .. ':fence', f)\n"	\
	"end\n"

/*
 * --queue fifo for readers (the shared acquire's queue_turn, see
 * LUA_QUEUE): strict order of rank, but a reader may enter as soon as
 * every waiter ahead of it is a reader too: when it is in the run
 * (LUA_SHARED_RUN), so consecutive readers are admitted together, and the
 * one let in carries the run on; a writer ahead of it keeps it waiting
 * even while only readers hold.  --queue latest is not for readers
 * (options.c refuses it).
 */
#define LUA_SHARED_QUEUE_TURN						\
	"local function queue_turn(token, free)\n"			\
	"  if free <= 0 then return false end\n"			\
	"  local s = tonumber(redis.call('ZSCORE', KEYS[4], token))\n"	\
	"  local rs, rt = rd_run_extend(token)\n"			\
	"  return rs ~= nil and not rd_after(s, token, rs, rt)\n"	\
	"end\n"							\
	"local function queue_admitted() rd_run_extend() end\n"

/*
 * A reader let in at once (--queue any; no writer waits; not a retry of
 * a holder), the case that matters for speed, runs before the other
 * functions are defined; what it does is what the general path below
 * would.  Anything else (a wrong type, an exclusive holder, a queue)
 * takes the general path.  A probe (-n, -w 0) of a queue sends ARGV[8]
 * '0' too, but is no reader to let in at once: a fifo queue's waiters
 * may wait with the lock free (behind a dead head, until its lease runs
 * out), and a probe must not take it ahead of them, which only the
 * general path looks at (LUA_ACQUIRE_BODY: the live leases, KEYS[5]);
 * no waiting writer's intent (KEYS[9]) tells, as a queued writer notes
 * none while nobody holds.  So, as a mutex's fast path, --queue any only.
 */
#define LUA_SHARED_FAST_TAKE						\
	"if ARGV[8] == '0' and (ARGV[11] or 'any') == 'any' then\n"	\
	"  local cur = redis.pcall('GET', KEYS[1])\n"			\
	"  if cur == false or cur == SHARED_MARK then\n"		\
	"    local now = server_now()\n"				\
	"    if (cur == false or not redis.call('ZSCORE', KEYS[7], ARGV[1])) and\n"\
	"        not rd_first_writer(now)[1] then\n"			\
	"      local f = read_fence(tonumber(ARGV[2]))\n"		\
	"      rd_take(ARGV[1], tonumber(ARGV[2]), now, f)\n"		\
	"      return {1, f}\n"						\
	"    end\n"							\
	"  end\n"							\
	"end\n"

/*
 * A reader's release while others hold and none has expired, the case
 * that matters for speed: rd_drop(), no wake-up.  Anything else takes the
 * general path.
 */
#define LUA_SHARED_FAST_DROP						\
	"if redis.pcall('GET', KEYS[1]) == SHARED_MARK then\n"		\
	"  rd_t = server_now()\n"					\
	"  if not redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', rd_t,"	\
	" 'LIMIT', 0, 1)[1] then\n"					\
	"    local top = redis.call('ZRANGE', KEYS[7], -1, -1)[1]\n"	\
	"    if top ~= ARGV[1] then\n"				\
	"      return history_release(ARGV[1], function()\n"		\
	"        return rd_drop(ARGV[1], top) end)\n"			\
	"    end\n"							\
	"  end\n"							\
	"end\n"

/*
 * A reader gets the fence as it is: only an exclusive take makes a new
 * one.  For the acquire script only, which alone has read_fence().
 */
#define LUA_SHARED_FENCE						\
	"local function mode_fence(ttl) return read_fence(ttl) end\n"

static const char lua_shared_acquire[] =
	LUA_POKES
	LUA_SERVER_NOW
	LUA_NEXT_FENCE
	LUA_SHARED_KEEP
	LUA_SHARED_TAKE
	LUA_SHARED_FAST_TAKE
	LUA_CLASH
	LUA_SHARED_REST
	LUA_SHARED_MODE(true)
	LUA_SHARED_FENCE
	LUA_WAKE(9)
	LUA_SHARED_WAKE(9)
	LUA_SHARED_QUEUE_TURN
	LUA_QUEUE
	LUA_ACQUIRE_BODY;

static const char lua_shared_release[] =
	LUA_POKES
	LUA_SERVER_NOW
	LUA_HISTORY_RELEASE
	LUA_SHARED_KEEP
	LUA_SHARED_FAST_DROP
	LUA_SHARED_TAKE
	LUA_CLASH
	LUA_SHARED_REST
	LUA_SHARED_MODE(false)
	LUA_WAKE(3)
	LUA_SHARED_WAKE(3)
	LUA_RELEASE_BODY;

static const char lua_shared_give_back[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_SHARED_TAKE
	LUA_SHARED_MODE(false)
	LUA_WAITER_INFO
	LUA_QUEUE_JOIN
	LUA_GIVE_BACK_BODY;

static const char lua_shared_extend[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_SHARED_TAKE
	LUA_SHARED_MODE(false)
	LUA_EXTEND_BODY;

static const char lua_shared_raise_fence[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_SHARED_TAKE
	LUA_SHARED_MODE(false)
	LUA_RAISE_FENCE_BODY;

#endif /* SCRIPTS_SHARED_H */
