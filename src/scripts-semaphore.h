/* SPDX-License-Identifier: MIT */
/*
 * The semaphore's scripts (--limit N holders): KEYS[1] is a sorted set of
 * token -> expiry in server time (TIME, one clock for every holder), and
 * each holder's metadata fields in KEYS[3] are prefixed by its token.
 * Every script first drops the holders whose expiry passed, with their
 * metadata, and the keys live as long as their last holder.  Included by
 * scripts-lua.h only.
 */

#ifndef SCRIPTS_SEMAPHORE_H
#define SCRIPTS_SEMAPHORE_H

/* The mode's functions (see scripts-lua.h); ARGV[n] is the limit. */
#define LUA_SEMAPHORE_MODE(n)						\
	"local MODE_NEEDS_TIME = true\n"				\
	"local limit = tonumber(ARGV[" #n "])\n"			\
	"local function fields(tok) return tok .. ':fence', tok .. ':host',"\
	" tok .. ':pid', tok .. ':command', tok .. ':since', tok .. ':ttl',"\
	" tok .. ':listens' end\n"					\
	"local function keep(now)\n"					\
	"  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')\n"\
	"  if last[2] then\n"						\
	"    local ms = math.max(1, tonumber(last[2]) - now)\n"		\
	"    redis.call('PEXPIRE', KEYS[1], ms)\n"			\
	"    redis.call('PEXPIRE', KEYS[3], ms)\n"			\
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
	" tok .. ':listens')\n"					\
	"  return {tok, m[1] or '', m[2] or '', m[3] or '', m[4] or '',"	\
	" m[5] or ''}\n"						\
	"end\n"							\
	"local function mode_take(token, ttl, now, f)\n"		\
	"  redis.call('ZADD', KEYS[1], now + ttl, token)\n"		\
	"  redis.call('HSET', KEYS[3], token .. ':fence', f,\n"	\
	"    token .. ':host', ARGV[3], token .. ':pid', ARGV[4],\n"	\
	"    token .. ':command', ARGV[5], token .. ':since', ARGV[6],\n"\
	"    token .. ':ttl', ARGV[2], token .. ':listens', ARGV[14])\n"	\
	"  keep(now)\n"						\
	"end\n"							\
	"local function mode_drop(token, now)\n"			\
	"  if redis.call('ZREM', KEYS[1], token) == 0 then return 0 end\n"\
	"  redis.call('HDEL', KEYS[3], fields(token))\n"		\
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
	"end\n"

static const char lua_semaphore_acquire[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(7)
	LUA_WAKE(9)
	LUA_QUEUE
	LUA_ACQUIRE_BODY;

static const char lua_semaphore_release[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(2)
	LUA_WAKE(3)
	LUA_RELEASE_BODY;

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

/*
 * status: the holders, their remaining TTLs and metadata, in one snapshot.
 *   ARGV[1] limit, ARGV[2] how many holders to list at most
 *   returns {{{token, ms left}, ...}, {field, value, ...}, count,
 *   waiting, queue mode}: only
 *   the listed holders' fields, so that the reply stays within the
 *   client's bounds however many hold.
 */
static const char lua_semaphore_status[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SEMAPHORE_MODE(1)
	LUA_QUEUE_STATUS
	"local now = server_now()\n"
	/* Read only: expired holders are skipped, not dropped. */
	"if mode_check() then return clash() end\n"
	"local holders, meta = {}, {}\n"
	"local z = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf',"
	" 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))\n"
	"for i = 1, #z, 2 do\n"
	"  holders[#holders + 1] = {z[i], tonumber(z[i + 1]) - now}\n"
	"  for _, f in ipairs({'fence', 'host', 'pid', 'command', 'since'}) do\n"
	"    local v = redis.call('HGET', KEYS[3], z[i] .. ':' .. f)\n"
	"    if v then meta[#meta + 1] = z[i] .. ':' .. f; meta[#meta + 1] = v"
	" end\n"
	"  end\n"
	"end\n"
	"local waiting, queue = queue_status()\n"
	"return {holders, meta, redis.call('ZCOUNT', KEYS[1], '(' .. now,"
	" '+inf'), waiting, queue}\n";

#endif /* SCRIPTS_SEMAPHORE_H */
