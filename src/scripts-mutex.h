/* SPDX-License-Identifier: MIT */
/*
 * The mutex's scripts (one holder): KEYS[1] is a string, the holder's
 * token, with the lock's TTL as its own, so any client's SET NX PX on the
 * same key excludes us and is excluded.  Its metadata hash expires
 * LUA_LINGER_MS after the lock's TTL, the fence counter LUA_FENCE_KEEP_MS
 * after it (every take and renewal sets both), so a lock that expires
 * leaves nothing behind but the counter; release deletes the hash at
 * once.  After an expiry the hash's "token" field no longer matches the
 * lock, and status ignores it.  Included by scripts-lua.h only, after
 * scripts-shared.h.
 *
 * While readers hold (-s), the key is the readers' marker instead
 * (scripts-shared.h): busy for an exclusive request, which then notes its
 * intent so that no new reader gets in; release and extend of a reader's
 * token, and status, work here too, so they need no -s.  status and extend
 * are sent with the mutex's own three keys (a slot being migrated refuses
 * keys that do not exist: TRYAGAIN), and answer REDLOCK-SHARED when they
 * find readers, for lock_call_keys() to send them again with every key.
 */

#ifndef SCRIPTS_MUTEX_H
#define SCRIPTS_MUTEX_H

/*
 * The mode's functions (see scripts-lua.h).  A mutex's type check costs
 * nothing: mode_check's GET fails on any other type, and only then is
 * TYPE asked, to name it.  Its key's own TTL is its clock.
 */
#define LUA_MUTEX_MODE							\
	"local MODE_NEEDS_TIME = false\n"				\
	"local cur\n"							\
	"local function mode_check()\n"				\
	"  local v = redis.pcall('GET', KEYS[1])\n"			\
	"  if type(v) == 'table' then return true end\n"		\
	"  cur = v\n"							\
	"  if cur == SHARED_MARK and not KEYS[7] then\n"		\
	"    error({err = 'REDLOCK-SHARED'})\n"			\
	"  end\n"							\
	"  return false\n"						\
	"end\n"							\
	/* Readers' leases are in server time: asked only for them. */	\
	"local function mode_prepare(now)\n"				\
	"  if mode_check() then return true end\n"			\
	"  if cur == SHARED_MARK then cur = rd_prepare(cur, rd_now()) end\n"\
	"  return false\n"						\
	"end\n"							\
	"local function mode_holds(token) return cur == token end\n"	\
	"local function mode_meta_is(token)\n"				\
	"  return redis.call('HGET', KEYS[3], 'token') == token\n"	\
	"end\n"							\
	/* A manual hold's metadata (marked 'm') is its history record	\
	 * once it has expired (scripts-history.h): kept as long as one.	\
	 * Asked of the hash at a renewal, so that extend needs no	\
	 * argument for it (an unauthenticated client may send only 10:	\
	 * its NOAUTH must stay a NOAUTH). */				\
	"local meta_linger\n"						\
	"local function keep(ttl)\n"					\
	"  meta_linger = meta_linger or (redis.call('HGET', KEYS[3],"	\
	" 'listens') == 'm' and " LUA_HISTORY_KEEP_MS " or " LUA_LINGER_MS ")\n"\
	"  redis.call('PEXPIRE', KEYS[1], ttl)\n"			\
	"  redis.call('PEXPIRE', KEYS[2], ttl + " LUA_FENCE_KEEP_MS ")\n"\
	"  redis.call('PEXPIRE', KEYS[3], ttl + meta_linger)\n"	\
	"end\n"							\
	"local function mode_mine(token, ttl, now)\n"			\
	"  if cur ~= token then return nil end\n"			\
	"  keep(ttl)\n"						\
	"  local f = tonumber(redis.call('HGET', KEYS[3], 'fence'))\n"	\
	"  return f or tonumber(redis.call('GET', KEYS[2])) or 0\n"	\
	"end\n"							\
	"local function mode_room(now)\n"				\
	"  if cur then return 0, redis.call('PTTL', KEYS[1]) end\n"	\
	"  return 1, 0\n"						\
	"end\n"							\
	"local function mode_holder()\n"				\
	"  if not cur then return {'', '', '', '', ''} end\n"		\
	"  return rd_holder(cur)\n"					\
	"end\n"							\
	/* Only readers need to know that a writer waits: a mutex's
	 * waiters pay nothing for it. */					\
	"local function mode_wait(token, now)\n"			\
	"  if cur == SHARED_MARK then rd_writer_note(token) end\n"	\
	"  rd_run_cut(token)\n"					\
	"end\n"							\
	"local function mode_drop(token, now)\n"			\
	"  if cur == SHARED_MARK then return rd_drop(token) end\n"	\
	"  if cur ~= token then return cur and -1 or 0 end\n"		\
	/* The writers' intents go too, ours with them (the fast path
	 * does not drop it): the readers waiting behind us get their
	 * turn, another waiting writer notes its intent again. */	\
	"  redis.call('DEL', KEYS[1], KEYS[3], KEYS[9])\n"		\
	"  return 1\n"							\
	"end\n"							\
	"local function mode_stored_ttl(token)\n"			\
	"  if cur == SHARED_MARK then return rd_stored_ttl(token) end\n"\
	"  if cur ~= token or not mode_meta_is(token) then return nil end\n"\
	"  return tonumber(redis.call('HGET', KEYS[3], 'ttl'))\n"	\
	"end\n"							\
	"local function mode_renew(token, ttl, now)\n"			\
	"  if cur == SHARED_MARK then return rd_renew(token, ttl) end\n"\
	"  if cur ~= token then return cur and -1 or 0 end\n"		\
	"  keep(ttl)\n"						\
	"  return ttl\n"						\
	"end\n"							\
	"local function mode_set_fence(token, f)\n"			\
	"  redis.call('HSET', KEYS[3], 'fence', f)\n"			\
	"end\n"

/* Removing every holder, for the force script only (LUA_DROP_LIST). */
#define LUA_MUTEX_DROP_ALL							\
	"local function mode_drop_all()\n"				\
	"  if not cur then return {} end\n"				\
	/* Every reader goes too, and so does their marker. */		\
	"  if cur == SHARED_MARK then\n"				\
	"    local removed = drop_list(7, 8)\n"		\
	"    redis.call('DEL', KEYS[1], KEYS[7], KEYS[8])\n"		\
	"    return removed\n"						\
	"  end\n"							\
	"  local h = mode_holder()\n"					\
	"  force_record(h[1])\n"					\
	"  redis.call('DEL', KEYS[1], KEYS[3])\n"			\
	"  force_tell(h[1])\n"					\
	"  return {{h[1], h[2], h[3], h[4], h[5]}}\n"			\
	"end\n"

/*
 * Taking it, for the acquire script only: the other scripts have no
 * next_fence() and set_meta() for these to call.
 */
#define LUA_MUTEX_TAKE							\
	"local function mode_fence(ttl) return next_fence(ttl) end\n"	\
	"local function mode_take(token, ttl, now, f, order, at)\n"	\
	"  redis.call('SET', KEYS[1], token, 'PX', ttl)\n"		\
	"  history_expired()\n"					\
	"  set_meta(f, now, order, at)\n"				\
	"  redis.call('ZREM', KEYS[9], token)\n"			\
	"end\n"

/*
 * The holder's metadata, from acquire's ARGV (see scripts-lua.h): also
 * its queue mode and rank (--order, else its arrival in us), which a
 * newer waiter of --queue latest compares with its own.
 */
#define LUA_MUTEX_SET_META						\
	"local function set_meta(f, now, order, at)\n"		\
	"  redis.call('HSET', KEYS[3], 'token', ARGV[1], 'fence', f,\n"	\
	"    'host', ARGV[3], 'pid', ARGV[4], 'command', ARGV[5],\n"	\
	"    'since', acquired_at(now), 'ttl', ARGV[2],\n"			\
	"    'listens', ARGV[15] or '0', 'queue', ARGV[11] or 'any',\n"	\
	"    'order', order or '', 'at', at or '')\n"				\
	"  redis.call('PEXPIRE', KEYS[3], ARGV[2] + (ARGV[15] == 'm' and"	\
	" " LUA_HISTORY_KEEP_MS " or " LUA_LINGER_MS "))\n"		\
	"end\n"

/*
 * A free mutex taken by an unfair caller, the case that matters for speed,
 * costs five calls: SET NX PX, then INCR and PEXPIRE of the fence, HSET
 * and PEXPIRE of the metadata; everything else takes the shared path.
 */
static const char lua_mutex_acquire[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_NEXT_FENCE
	LUA_MUTEX_SET_META
	LUA_HISTORY
	LUA_HISTORY_EXPIRED
	"if ARGV[8] == '0' and (ARGV[11] or 'any') == 'any' and\n"
	"    redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
	"  history_expired()\n"
	"  local f = next_fence(tonumber(ARGV[2]))\n"
	"  set_meta(f, nil, ARGV[12] ~= '' and ARGV[12] or nil)\n"
	"  return {1, f}\n"
	"end\n"
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	"if ARGV[15] == 'm' then meta_linger = " LUA_HISTORY_KEEP_MS " end\n"
	LUA_MUTEX_TAKE
	LUA_WAKE(9)
	LUA_QUEUE_TURN
	LUA_QUEUE
	LUA_ACQUIRE_BODY;

static const char lua_mutex_release[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_HISTORY_RELEASE
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	LUA_WAKE(3)
	LUA_SHARED_WAKE(3)
	LUA_RELEASE_BODY;

static const char lua_mutex_give_back[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	LUA_WAITER_INFO
	LUA_QUEUE_JOIN
	LUA_GIVE_BACK_BODY;

static const char lua_mutex_extend[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	LUA_EXTEND_BODY;

static const char lua_mutex_raise_fence[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	LUA_RAISE_FENCE_BODY;

static const char lua_mutex_force[] =
	LUA_POKES
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_HISTORY
	LUA_DROP_LIST
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	LUA_MUTEX_DROP_ALL
	LUA_WAKE(1)
	LUA_FORCE_BODY;

/*
 * A snapshot of the mutex KEYS[k] (holding cur, read before) with
 * metadata hash KEYS[meta], for status and list, as holders_snapshot's
 * (which it needs): {{{token, ms left}} or {}, {field, value, ...}, count,
 * 0 (no limit), 0 (waiting), 'exclusive'}; the metadata is the holder's
 * only if its token field matches (a foreign client's lock has none).
 * While readers hold (cur is the marker), the readers' snapshot from
 * KEYS[readers] and KEYS[rmeta].  Every key an index: see LUA_WAITING.
 */
#define LUA_MUTEX_SNAPSHOT						\
	"local function mutex_snapshot(k, meta, cur, readers, rmeta, now,"	\
	" max)\n"							\
	"  if cur == SHARED_MARK then\n"				\
	"    return holders_snapshot(readers, rmeta, now, max, 0, 'shared')\n"\
	"  end\n"							\
	"  local holders = {}\n"					\
	"  if cur then holders[1] = {cur, redis.call('PTTL', KEYS[k])} end\n"\
	"  return {holders, redis.call('HGETALL', KEYS[meta]), #holders, 0,"\
	" 0, 'exclusive'}\n"						\
	"end\n"

/*
 * status: the holder, its remaining TTL and the metadata, in one snapshot
 * (separate reads could mix two holders' data); or, while readers hold,
 * every reader (read only: expired readers are skipped, not dropped).
 * Who waits is lua_mutex_waiters' and the ':who' hash's to say: the queue
 * keys are not among these KEYS, since a Cluster refuses a call whose keys
 * partly do not exist while their slot migrates (TRYAGAIN), and a
 * waiter's keys mostly do not.
 *   KEYS[1..3] as acquire's (every key while readers hold: see above);
 *   ARGV[1] limit, ARGV[2] how many readers to list at most
 *   returns mutex_snapshot's reply with 'any' and {} after it, the
 *   queue's mode and the waiters as the semaphore's status sends them,
 *   for the caller to fill in (lock-waiters.c): a mutex's metadata is the
 *   holder's only if its token field matches (a foreign client's lock has
 *   none); readers' fields are "<token>:field".
 */
static const char lua_mutex_status[] =
	LUA_CLASH
	LUA_SERVER_NOW
	LUA_SHARED_READERS
	LUA_MUTEX_MODE
	LUA_HOLDERS_SNAPSHOT
	LUA_MUTEX_SNAPSHOT
	"if mode_check() then return clash() end\n"
	"local s = mutex_snapshot(1, 3, cur, 7, 8, server_now(),"
	" tonumber(ARGV[2]))\n"
	"s[7] = 'any'\n"
	"s[8] = {}\n"
	"return s\n";

/*
 * The waiters of a mutex, for its status: the queue's leases alone, one
 * key, which a Cluster serves (or sends on with ASK) during a migration
 * too.  The ':who' hash of their tokens, another single key, is read with
 * HMGET (lock-waiters.c).
 *   KEYS[1] the queue's leases; ARGV[1] how many to list at most
 *   returns {how many wait, {token, ...}} (LUA_WAITING)
 */
static const char lua_mutex_waiters[] =
	LUA_SERVER_NOW
	LUA_WAITING
	"local now = server_now()\n"
	"return {waiting(1, now), waiter_tokens(1, now, tonumber(ARGV[1]))}\n";

#endif /* SCRIPTS_MUTEX_H */
