/* SPDX-License-Identifier: MIT */
/*
 * The semaphore's scripts (--limit N holders): KEYS[1] is a sorted set of
 * token -> expiry in server time (TIME, one clock for every holder), and
 * each holder's metadata fields in KEYS[3] are prefixed by its token.
 * Every script first drops the holders whose expiry passed, with their
 * metadata, and the keys live as long as their last holder (the fence
 * counter LUA_FENCE_KEEP_MS longer); the last release deletes the hash.
 * The hash also keeps the limit the last holder took a slot with, for
 * list.  Included by scripts-lua.h only.
 */

#ifndef SCRIPTS_SEMAPHORE_H
#define SCRIPTS_SEMAPHORE_H

/* The mode's functions (see scripts-lua.h); ARGV[n] is the limit. */
#define LUA_SEMAPHORE_MODE(n)						\
	"local MODE_NEEDS_TIME = true\n"				\
	"local limit = tonumber(ARGV[" #n "])\n"			\
	"local function fields(tok) return tok .. ':fence', tok .. ':host',"\
	" tok .. ':pid', tok .. ':command', tok .. ':since', tok .. ':ttl',"\
	" tok .. ':listens', tok .. ':queue', tok .. ':order', tok .. ':at'"\
	" end\n"							\
	"local function keep(now)\n"					\
	"  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')\n"\
	"  if last[2] then\n"						\
	"    local ms = math.max(1, tonumber(last[2]) - now)\n"		\
	"    redis.call('PEXPIRE', KEYS[1], ms)\n"			\
	"    redis.call('PEXPIRE', KEYS[3], ms)\n"			\
	"    redis.call('PEXPIRE', KEYS[2], ms + " LUA_FENCE_KEEP_MS ")\n"\
	"  end\n"							\
	"end\n"							\
	"local function mode_check()\n"				\
	"  local kind = redis.call('TYPE', KEYS[1]).ok\n"		\
	"  return kind ~= 'none' and kind ~= 'zset'\n"			\
	"end\n"							\
	"local function mode_prepare(now)\n"				\
	"  if mode_check() then return true end\n"			\
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1],"	\
	" '-inf', now)) do\n"						\
	"    redis.call('HDEL', KEYS[3], fields(tok))\n"		\
	"  end\n"							\
	"  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)\n"	\
	"  return false\n"						\
	"end\n"							\
	"local function mode_holds(token)\n"				\
	"  return redis.call('ZSCORE', KEYS[1], token) ~= false\n"	\
	"end\n"							\
	"local function mode_mine(token, ttl, now)\n"			\
	"  if not mode_holds(token) then return nil end\n"		\
	"  redis.call('ZADD', KEYS[1], now + ttl, token)\n"		\
	"  keep(now)\n"						\
	"  return tonumber(redis.call('HGET', KEYS[3], token .. ':fence'))"\
	" or 0\n"							\
	"end\n"							\
	"local function mode_room(now)\n"				\
	"  local free = limit - redis.call('ZCARD', KEYS[1])\n"	\
	"  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\n"\
	"  return free, first[2] and (tonumber(first[2]) - now) or 0\n"	\
	"end\n"							\
	"local function mode_holder()\n"				\
	"  local tok = redis.call('ZRANGE', KEYS[1], 0, 0)[1]\n"	\
	"  if not tok then return {'', '', '', '', '', ''} end\n"	\
	"  local m = redis.call('HMGET', KEYS[3], tok .. ':host',"	\
	" tok .. ':pid', tok .. ':command', tok .. ':since',"		\
	" tok .. ':listens', tok .. ':queue', tok .. ':order', tok .. ':at')\n"\
	"  return {tok, m[1] or '', m[2] or '', m[3] or '', m[4] or '',"	\
	" m[5] or '', m[6] or '', m[7] or '', m[8] or ''}\n"						\
	"end\n"							\
	"local function mode_drop(token, now)\n"			\
	"  if redis.call('ZREM', KEYS[1], token) == 0 then return 0 end\n"\
	"  redis.call('HDEL', KEYS[3], fields(token))\n"		\
	/* The last one: the limit goes too, nothing is left. */	\
	"  if redis.call('EXISTS', KEYS[1]) == 0 then\n"		\
	"    redis.call('DEL', KEYS[3])\n"				\
	"  end\n"							\
	"  return 1\n"							\
	"end\n"							\
	"local function mode_stored_ttl(token)\n"			\
	"  return tonumber(redis.call('HGET', KEYS[3], token .. ':ttl'))\n"\
	"end\n"							\
	"local function mode_renew(token, ttl, now)\n"			\
	"  if not mode_holds(token) then return 0 end\n"		\
	"  redis.call('ZADD', KEYS[1], now + ttl, token)\n"		\
	"  keep(now)\n"						\
	"  return ttl\n"						\
	"end\n"							\
	"local function mode_set_fence(token, f)\n"			\
	"  redis.call('HSET', KEYS[3], token .. ':fence', f)\n"		\
	"end\n"							\
	"local function mode_wait(token, now) end\n"

/* Removing every holder, for the force script only (LUA_DROP_LIST). */
#define LUA_SEMAPHORE_DROP_ALL						\
	"local function mode_drop_all()\n"				\
	"  local removed = drop_list(1, 3)\n"		\
	"  redis.call('DEL', KEYS[1], KEYS[3])\n"			\
	"  return removed\n"						\
	"end\n"

/* Taking a slot, for the acquire script only (see LUA_MUTEX_TAKE). */
#define LUA_SEMAPHORE_TAKE						\
	"local function mode_fence(ttl) return next_fence(ttl) end\n"	\
	"local function mode_take(token, ttl, now, f, order, at)\n"	\
	"  redis.call('ZADD', KEYS[1], now + ttl, token)\n"		\
	"  redis.call('HSET', KEYS[3], token .. ':fence', f,\n"	\
	"    token .. ':host', ARGV[3], token .. ':pid', ARGV[4],\n"	\
	"    token .. ':command', ARGV[5], token .. ':since', acquired_at(now),\n"\
	"    token .. ':ttl', ARGV[2], token .. ':listens',\n"		\
	"    ARGV[15] or '0', token .. ':queue', ARGV[11] or 'any',\n"	\
	"    token .. ':order', order or '', token .. ':at', at or '',\n"	\
	"    'limit', limit)\n"					\
	"  keep(now)\n"						\
	"end\n"

/*
 * A take's limit must be the one the semaphore is held with (stored in
 * its hash by every take): a --limit 3 on a 2-slot semaphore would take a
 * third slot that its other holders do not expect.  It fails with
 * "REDLOCK-LIMIT <stored>" (lock.c says it in the caller's terms); a
 * semaphore that nobody holds any more takes any limit.
 */
#define LUA_SEMAPHORE_LIMIT						\
	"local prepare_slots = mode_prepare\n"				\
	"local function mode_prepare(now)\n"				\
	"  if prepare_slots(now) then return true end\n"		\
	"  local stored = tonumber(redis.call('HGET', KEYS[3], 'limit'))\n"\
	"  if stored and stored ~= limit and"				\
	" redis.call('EXISTS', KEYS[1]) == 1 then\n"			\
	"    error({err = 'REDLOCK-LIMIT ' .. stored})\n"		\
	"  end\n"							\
	"  return false\n"						\
	"end\n"

static const char lua_semaphore_acquire[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_NEXT_FENCE
	LUA_SEMAPHORE_MODE(7)
	LUA_SEMAPHORE_TAKE
	LUA_SEMAPHORE_LIMIT
	LUA_WAKE(9)
	LUA_QUEUE_TURN
	LUA_QUEUE
	LUA_ACQUIRE_BODY;

static const char lua_semaphore_release[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_HISTORY_RELEASE
	LUA_SEMAPHORE_MODE(2)
	LUA_WAKE(3)
	LUA_RELEASE_BODY;

static const char lua_semaphore_give_back[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(7)
	LUA_WAITER_INFO
	LUA_QUEUE_JOIN
	LUA_GIVE_BACK_BODY;

static const char lua_semaphore_extend[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(3)
	LUA_EXTEND_BODY;

static const char lua_semaphore_raise_fence[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(3)
	LUA_RAISE_FENCE_BODY;

static const char lua_semaphore_force[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_HISTORY
	LUA_DROP_LIST
	LUA_SEMAPHORE_MODE(2)
	LUA_SEMAPHORE_DROP_ALL
	LUA_WAKE(1)
	LUA_FORCE_BODY;

/*
 * A snapshot of the semaphore KEYS[k] with metadata hash KEYS[meta] at
 * server time now, for status and list (see holders_snapshot), with the
 * limit it was taken with.
 */
#define LUA_SEMAPHORE_SNAPSHOT						\
	"local function semaphore_snapshot(k, meta, now, max)\n"	\
	"  return holders_snapshot(k, meta, now, max,"			\
	" tonumber(redis.call('HGET', KEYS[meta], 'limit')) or 0,"	\
	" 'semaphore')\n"						\
	"end\n"

/*
 * status: the holders, their remaining TTLs and metadata, in one snapshot,
 * how many wait, in which queue mode, and who.
 *   KEYS[1..12] as acquire's; ARGV[1] limit, ARGV[2] how many holders
 *   and waiters to list at most
 *   returns semaphore_snapshot's reply with the number of waiters, the
 *   queue's mode and the waiters added.
 */
static const char lua_semaphore_status[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(1)
	LUA_WAITING
	LUA_QUEUE_MODE
	LUA_HOLDERS_SNAPSHOT
	LUA_SEMAPHORE_SNAPSHOT
	"if mode_check() then return clash() end\n"
	"local now, max = server_now(), tonumber(ARGV[2])\n"
	"local s = semaphore_snapshot(1, 3, now, max)\n"
	"s[5] = waiting(5, now)\n"
	"s[7] = queue_mode(12)\n"
	"s[8] = waiters_list(5, 12, now, max)\n"
	"return s\n";

#endif /* SCRIPTS_SEMAPHORE_H */
