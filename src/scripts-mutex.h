/* SPDX-License-Identifier: MIT */
/*
 * The mutex's scripts (one holder): KEYS[1] is a string, the holder's
 * token, with the lock's TTL as its own, so any client's SET NX PX on the
 * same key excludes us and is excluded.  Its metadata hash has no TTL of
 * its own, so renewals need not touch it: release deletes it, and after an
 * expiry the next holder overwrites every field; until then its "token"
 * field no longer matches the lock, and status ignores it.  Included by
 * scripts-lua.h only.
 */

#ifndef SCRIPTS_MUTEX_H
#define SCRIPTS_MUTEX_H

/*
 * The mode's functions (see scripts-lua.h).  A mutex's type check costs
 * nothing: mode_prepare's GET fails on any other type, and only then is
 * TYPE asked, to name it.  Its key's own TTL is its clock.
 */
#define LUA_MUTEX_MODE							\
	"local MODE_NEEDS_TIME = false\n"				\
	"local cur\n"							\
	"local function mode_prepare(now)\n"				\
	"  local v = redis.pcall('GET', KEYS[1])\n"			\
	"  if type(v) == 'table' then return true end\n"		\
	"  cur = v\n"							\
	"  return false\n"						\
	"end\n"							\
	"local function mode_check() return mode_prepare(0) end\n"	\
	"local function mode_holds(token) return cur == token end\n"	\
	"local function mode_meta_is(token)\n"				\
	"  return redis.call('HGET', KEYS[3], 'token') == token\n"	\
	"end\n"							\
	"local function mode_mine(token, ttl, now)\n"			\
	"  if cur ~= token then return nil end\n"			\
	"  redis.call('PEXPIRE', KEYS[1], ttl)\n"			\
	"  local f = tonumber(redis.call('HGET', KEYS[3], 'fence'))\n"	\
	"  return f or tonumber(redis.call('GET', KEYS[2])) or 0\n"	\
	"end\n"							\
	"local function mode_room(now)\n"				\
	"  if cur then return 0, redis.call('PTTL', KEYS[1]) end\n"	\
	"  return 1, 0\n"						\
	"end\n"							\
	"local function mode_holder()\n"				\
	"  if not cur or not mode_meta_is(cur) then\n"			\
	"    return {cur or '', '', '', '', '', ''}\n"			\
	"  end\n"							\
	"  local m = redis.call('HMGET', KEYS[3], 'host', 'pid', 'command',"\
	" 'since', 'listens')\n"					\
	"  return {cur, m[1] or '', m[2] or '', m[3] or '', m[4] or '',"	\
	" m[5] or ''}\n"						\
	"end\n"							\
	"local function mode_take(token, ttl, now, f)\n"		\
	"  redis.call('SET', KEYS[1], token, 'PX', ttl)\n"		\
	"  set_meta(f)\n"						\
	"end\n"							\
	"local function mode_drop(token, now)\n"			\
	"  if cur ~= token then return cur and -1 or 0 end\n"		\
	"  redis.call('DEL', KEYS[1], KEYS[3])\n"			\
	"  return 1\n"							\
	"end\n"							\
	"local function mode_stored_ttl(token)\n"			\
	"  if cur ~= token or not mode_meta_is(token) then return nil end\n"\
	"  return tonumber(redis.call('HGET', KEYS[3], 'ttl'))\n"	\
	"end\n"							\
	"local function mode_renew(token, ttl, now)\n"			\
	"  if cur ~= token then return cur and -1 or 0 end\n"		\
	"  redis.call('PEXPIRE', KEYS[1], ttl)\n"			\
	"  return ttl\n"						\
	"end\n"							\
	"local function mode_set_fence(token, f)\n"			\
	"  redis.call('HSET', KEYS[3], 'fence', f)\n"			\
	"end\n"

/* The holder's metadata, from acquire's ARGV (see scripts-lua.h). */
#define LUA_MUTEX_SET_META						\
	"local function set_meta(f)\n"					\
	"  redis.call('HSET', KEYS[3], 'token', ARGV[1], 'fence', f,\n"	\
	"    'host', ARGV[3], 'pid', ARGV[4], 'command', ARGV[5],\n"	\
	"    'since', ARGV[6], 'ttl', ARGV[2], 'listens', ARGV[14])\n"	\
	"end\n"

/*
 * A free mutex taken by an unfair caller, the case that matters for speed,
 * costs three calls: SET NX PX, INCR, HSET; everything else takes the
 * shared path.
 */
static const char lua_mutex_acquire[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_MUTEX_SET_META
	"if ARGV[8] == '0' and\n"
	"    redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
	"  local f = redis.call('INCR', KEYS[2])\n"
	"  set_meta(f)\n"
	"  return {1, f}\n"
	"end\n"
	LUA_MUTEX_MODE
	LUA_WAKE(9)
	LUA_QUEUE
	LUA_ACQUIRE_BODY;

static const char lua_mutex_release[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_MUTEX_MODE
	LUA_WAKE(3)
	LUA_RELEASE_BODY;

static const char lua_mutex_extend[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_MUTEX_MODE
	LUA_EXTEND_BODY;

static const char lua_mutex_raise_fence[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_MUTEX_MODE
	LUA_RAISE_FENCE_BODY;

/*
 * status: the holder, its remaining TTL and the metadata, in one snapshot
 * (separate reads could mix two holders' data).
 *   ARGV[1] limit, ARGV[2] unused
 *   returns {{{token, ms left}} or {}, {field, value, ...}, count,
 *   waiting, queue mode}; the metadata is the holder's only if its token
 *   field matches (a foreign client's lock has none).
 */
static const char lua_mutex_status[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_MUTEX_MODE
	LUA_QUEUE_STATUS
	"if mode_check() then return clash() end\n"
	"local holders = {}\n"
	"if cur then holders[1] = {cur, redis.call('PTTL', KEYS[1])} end\n"
	"local waiting, queue = queue_status()\n"
	"return {holders, redis.call('HGETALL', KEYS[3]), #holders, waiting,"
	" queue}\n";

#endif /* SCRIPTS_MUTEX_H */
