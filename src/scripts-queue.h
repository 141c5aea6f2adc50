/* SPDX-License-Identifier: MIT */
/*
 * The Lua of waiting in line, for every mode's acquire (scripts-lua.h
 * includes it): who waits (status and list show them), the wake-ups, and
 * the queue of --queue fifo and latest with its ranks, supersedes and
 * cancels.  Fragments of C string macros, as the rest of scripts-lua.h.
 */

#ifndef SCRIPTS_QUEUE_H
#define SCRIPTS_QUEUE_H

/*
 * Who waits, for status, list and the queue's order.  Every waiter that
 * will wait (not a -n probe), in every queue mode, is known: its lease in
 * KEYS[5] (token -> expiry, server ms) and in the hash KEYS[12] (named
 * KEYS[4]..':who') the fields TOKEN = "PID HOST" and 'w:'..TOKEN =
 * "ORDER AT KIND", ORDER
 * its --order or '-', AT the server's time of its first arrival in us,
 * KIND exclusive, shared or semaphore.  A queue (fifo, latest) also ranks
 * its waiters in KEYS[4] by --order, else by AT; equal ranks go by AT, so
 * that the later arrival is the newer one (a retried pipeline job), the
 * same on every try.  The field '' keeps the queue's mode.
 */
#define LUA_WAITER_INFO							\
	"local who = KEYS[12]\n"				\
	"local function waiter_info(tok)\n"				\
	"  local o, at = string.match(redis.call('HGET', who, 'w:' .. tok)"\
	" or '', '^(%S+) (%d+)')\n"					\
	"  return o ~= '-' and o or nil, tonumber(at) or 0\n"		\
	"end\n"							\
	"local function queue_head()\n"				\
	"  local top = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')\n"\
	"  if not top[1] then return nil end\n"			\
	"  local tied = redis.call('ZRANGEBYSCORE', KEYS[4], top[2], top[2])\n"\
	"  if #tied == 1 then return top[1] end\n"			\
	"  local head, first = nil, nil\n"				\
	"  for _, tok in ipairs(tied) do\n"				\
	"    local _, at = waiter_info(tok)\n"				\
	"    if not first or at < first then head, first = tok, at end\n"	\
	"  end\n"							\
	"  return head\n"						\
	"end\n"

/*
 * Wake one waiter.  The wake key is a sorted set of one member: adding it
 * again is a no-op, so however many releases nobody waited for, the next
 * waiter finds at most one stale wake-up (one spare attempt), and no call
 * is spent keeping it that way.  It expires LUA_LINGER_MS after the last
 * wake-up: a waiter takes it within a round trip, or blocks on it already.
 * The head of a queue (the lowest rank) is woken on a wake key of its
 * own, since there is one per waiter: a poke (LUA_POKES), as only the
 * script finds out who that is.  ARGV[prefix] is the prefix of the
 * per-waiter wake keys.
 */
#define LUA_WAKE(prefix)						\
	LUA_WAITER_INFO							\
	"local function wake_waiters()\n"				\
	"  redis.call('ZADD', KEYS[6], 0, 'go')\n"			\
	"  redis.call('PEXPIRE', KEYS[6], " LUA_LINGER_MS ")\n"	\
	"  local head = queue_head()\n"				\
	"  if head then poke(ARGV[" #prefix "] .. head, 0, 'go') end\n"	\
	"end\n"

/*
 * A snapshot of the holders in sorted set KEYS[k] (token -> expiry, server
 * time now), whose metadata fields in hash KEYS[meta] are "<token>:field",
 * for status and list (k and meta are indices, so that every key is one
 * the caller declared): {{{token, ms left}, ...}, {field, value, ...},
 * count, limit, waiting (0: the caller counts them), mode}, with at most
 * max holders listed and only their fields, so that the reply stays
 * within the client's bounds however many hold.  Read only: expired
 * holders are skipped, not dropped.  A semaphore's slots and the readers
 * of a shared lock alike.
 */
#define LUA_HOLDERS_SNAPSHOT						\
	"local function holders_snapshot(k, meta, now, max, limit, mode)\n"\
	"  local holders, m = {}, {}\n"				\
	"  local z = redis.call('ZRANGEBYSCORE', KEYS[k], '(' .. now, '+inf',"\
	" 'WITHSCORES', 'LIMIT', 0, max)\n"				\
	"  for i = 1, #z, 2 do\n"					\
	"    holders[#holders + 1] = {z[i], tonumber(z[i + 1]) - now}\n"	\
	"    for _, f in ipairs({'fence', 'host', 'pid', 'command', 'since'})"\
	" do\n"							\
	"      local v = redis.call('HGET', KEYS[meta], z[i] .. ':' .. f)\n"\
	"      if v then m[#m + 1] = z[i] .. ':' .. f; m[#m + 1] = v end\n"\
	"    end\n"							\
	"  end\n"							\
	"  return {holders, m, redis.call('ZCOUNT', KEYS[k], '(' .. now,"	\
	" '+inf'), limit, 0, mode}\n"					\
	"end\n"

/*
 * Who waits (LUA_WAITER_INFO), for status and list: the waiters whose
 * lease in KEYS[leases] (KEYS[5] of the lock scripts) has not run out, in
 * every queue mode: how many, the tokens of at most max of them in the
 * order their leases end, and those as {"PID HOST", "ORDER AT KIND"}
 * from the ':who' hash KEYS[who].  Indices, not names: every key is one
 * the caller declared.
 */
#define LUA_WAITING							\
	"local function waiting(leases, now)\n"			\
	"  return redis.call('ZCOUNT', KEYS[leases], '(' .. now, '+inf')\n"\
	"end\n"							\
	"local function waiter_tokens(leases, now, max)\n"		\
	"  return redis.call('ZRANGEBYSCORE', KEYS[leases], '(' .. now,"	\
	" '+inf', 'LIMIT', 0, max)\n"					\
	"end\n"							\
	"local function waiters_list(leases, who, now, max)\n"	\
	"  local out = {}\n"						\
	"  for _, tok in ipairs(waiter_tokens(leases, now, max)) do\n"	\
	"    local m = redis.call('HMGET', KEYS[who], tok, 'w:' .. tok)\n"\
	"    out[#out + 1] = {m[1] or '', m[2] or ''}\n"		\
	"  end\n"							\
	"  return out\n"						\
	"end\n"

/*
 * A waiter that will wait, in every mode: noted (LUA_WAITER_INFO) at its
 * first refused attempt, its lease refreshed by every later one, so a
 * dead one drops out within the lease (its arrival is kept, in case it
 * comes back, until the hash expires); queue_drop() forgets it.  The
 * queue (--queue fifo or latest) ranks it too, in KEYS[4].
 *
 * latest keeps one waiter: the newest.  A newcomer newer than the queued
 * one drops it, and leaves it a note "superseded ORDER PID HOST" in
 * KEYS[12], field 'x:'..token, for LUA_LINGER_MS: its next attempt (the
 * one sent behind its BZPOPMIN, or of a waiter that was between attempts,
 * or a retry after a lost reply) finds it there, rather than joining
 * again as a newcomer.  The same note, poked into its own wake key
 * (score -2: popped before a 'go'), ends its BZPOPMIN at once.  A
 * newcomer older than the queued one, or than a holder of --queue
 * latest, is superseded itself, at once: {2, 0, '', HOST, PID, ORDER,
 * ''}.
 *
 * --cancel-running: a latest waiter kept waiting pokes a note "cancelled
 * GRACE ORDER PID HOST" into the holder's key ARGV[14]..token, on which
 * it blocks between renewals (lock-listen.c), if that holder is a run of
 * --queue latest (it listens: '1') older than the waiter; every refused
 * attempt pokes it again, so one lost poke costs the holder one attempt's
 * interval.
 *
 * Whether a queued waiter's turn has come is the mode's queue_turn(token,
 * free) (LUA_QUEUE_TURN, or for readers LUA_SHARED_QUEUE_TURN), and
 * queue_admitted() what it does once one is let in.
 *   ARGV[9] wake prefix, ARGV[10] a waiter's lease ms (0: a probe, -n),
 *   ARGV[11] mode, ARGV[12] --order or '', ARGV[13] cancel grace ms ('':
 *   no cancel), ARGV[14] cancel prefix, ARGV[16] the waiter's kind
 */
#define LUA_QUEUE_JOIN							\
	"local me = ARGV[4] .. ' ' .. ARGV[3]\n"			\
	/* Waiters of another --queue mode in line before this one: their \
	 * order is no one queue's (the waiter is told: lock-queue.c). */	\
	"local queue_mixed = ''\n"					\
	"local function queue_mode_check()\n"				\
	"  local was = redis.call('HGET', who, '')\n"			\
	"  if was and was ~= (ARGV[11] or 'any') and"			\
	" redis.call('ZCARD', KEYS[4]) > 0 then queue_mixed = was end\n"	\
	"end\n"							\
	"local my_order, my_at = nil, 0\n"				\
	"local function queue_drop(tok)\n"				\
	"  redis.call('ZREM', KEYS[4], tok)\n"				\
	"  redis.call('ZREM', KEYS[5], tok)\n"				\
	"  redis.call('HDEL', who, tok, 'w:' .. tok)\n"		\
	"end\n"							\
	/* A superseded waiter's note, kept LUA_LINGER_MS; the expired	\
	 * ones go when another is written (supersedes are rare). */	\
	"local function queue_tombstone(tok, note, now)\n"		\
	"  local all = redis.call('HGETALL', who)\n"			\
	"  for i = 1, #all, 2 do\n"					\
	"    if string.sub(all[i], 1, 2) == 'x:' and (tonumber("		\
	"string.match(all[i + 1], '^(%d+) ')) or 0) <= now then\n"	\
	"      redis.call('HDEL', who, all[i])\n"			\
	"    end\n"							\
	"  end\n"							\
	"  redis.call('HSET', who, 'x:' .. tok, string.format('%d', now +"	\
	" " LUA_LINGER_MS ") .. ' ' .. note)\n"			\
	"  if redis.call('PTTL', who) < " LUA_LINGER_MS " then\n"	\
	"    redis.call('PEXPIRE', who, " LUA_LINGER_MS ")\n"		\
	"  end\n"							\
	"end\n"							\
	"local function queue_superseded_note(token)\n"		\
	"  return string.match(redis.call('HGET', who, 'x:' .. token) or"	\
	" '', '^%d+ (.*)$')\n"					\
	"end\n"							\
	"local function superseded(order, by)\n"			\
	"  local pid, host = string.match(by or '', '^(%S+) (.*)$')\n"	\
	"  return {2, 0, '', host or '', pid or '', order or '', ''}\n"	\
	"end\n"							\
	/* A queue's keys outlive the last lease that refreshed them. */	\
	"local function queue_keep(lease, queued)\n"			\
	"  redis.call('PEXPIRE', KEYS[5], lease * 2)\n"		\
	"  redis.call('PEXPIRE', who, lease * 2)\n"			\
	"  if queued then redis.call('PEXPIRE', KEYS[4], lease * 2) end\n"\
	"end\n"							\
	/* b is newer than a: a higher rank, or the same, arriving later */\
	"local function newer(ra, aa, rb, ab)\n"			\
	"  return rb > ra or (rb == ra and ab > aa)\n"		\
	"end\n"							\
	"local function rank_of(order, at)\n"				\
	"  return tonumber(order) or at\n"				\
	"end\n"							\
	/* Note this waiter (first arrival kept) and refresh its lease. */\
	"local function waiter_note(token, now, lease)\n"		\
	"  if redis.call('HSETNX', who, 'w:' .. token, (ARGV[12] ~= '' and"	\
	" ARGV[12] or '-') .. ' ' .. string.format('%d', server_us) .. ' ' .."\
	" ARGV[16]) == 1 then\n"					\
	"    redis.call('HSET', who, token, me)\n"			\
	"  end\n"							\
	"  redis.call('ZADD', KEYS[5], now + lease, token)\n"		\
	"  queue_keep(lease, tonumber(ARGV[8]) > 0)\n"		\
	"end\n"							\
	"local function queue_join(token, now, lease)\n"		\
	"  queue_mode_check()\n"					\
	"  waiter_note(token, now, lease)\n"				\
	"  my_order, my_at = waiter_info(token)\n"			\
	"  local rank = rank_of(my_order, my_at)\n"			\
	"  if ARGV[11] == 'latest' then\n"				\
	"    local h = mode_holder()\n"				\
	"    if h[1] ~= '' and h[7] == 'latest' and newer(rank, my_at,"	\
	" rank_of(h[8], tonumber(h[9]) or 0), tonumber(h[9]) or 0) then\n"\
	"      queue_drop(token)\n"					\
	"      return superseded(h[8], h[3] .. ' ' .. h[2])\n"		\
	"    end\n"							\
	"    for _, tok in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do\n"\
	"      local o, at = waiter_info(tok)\n"			\
	"      if newer(rank, my_at, rank_of(o, at), at) then\n"	\
	"        queue_drop(token)\n"					\
	"        return superseded(o, redis.call('HGET', who, tok))\n"	\
	"      end\n"							\
	"    end\n"							\
	"    local note = 'superseded ' .. (my_order or '-') .. ' ' .. me\n"\
	"    for _, tok in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do\n"\
	"      queue_drop(tok)\n"					\
	"      queue_tombstone(tok, note, now)\n"			\
	"      poke(ARGV[9] .. tok, -2, note)\n"			\
	"    end\n"							\
	"  end\n"							\
	"  redis.call('ZADD', KEYS[4], rank, token)\n"			\
	"  redis.call('PEXPIRE', KEYS[4], lease * 2)\n"		\
	"  redis.call('HSET', who, '', ARGV[11])\n"			\
	"  return nil\n"						\
	"end\n"

#define LUA_QUEUE							\
	LUA_QUEUE_JOIN							\
	/* cancel_said: '' none asked, 'no' the holder is not one to	\
	 * cancel (the waiter waits, -v says so), 'sent' */		\
	"local cancel_said = ''\n"					\
	"local function queue_cancel()\n"				\
	"  local h = mode_holder()\n"					\
	"  if ARGV[13] == '' or h[1] == '' then return end\n"		\
	"  cancel_said = 'no'\n"					\
	"  if h[6] ~= '1' or not newer("				\
	"rank_of(h[8], tonumber(h[9]) or 0), tonumber(h[9]) or 0,"	\
	" rank_of(my_order, my_at), my_at) then return end\n"		\
	"  cancel_said = 'sent'\n"					\
	"  poke(ARGV[14] .. h[1], -1, 'cancelled ' .. ARGV[13] .. ' ' .."	\
	" (my_order or '-') .. ' ' .. me)\n"				\
	"end\n"							\
	"local function queue_admit(token, now, lease, free, busy)\n"	\
	/* Its arrival stays: a live waiter that was too slow to renew	\
	 * its lease gets its place back when it comes again. */	\
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5],"	\
	" '-inf', now)) do\n"						\
	"    redis.call('ZREM', KEYS[4], tok)\n"			\
	"    redis.call('ZREM', KEYS[5], tok)\n"			\
	"  end\n"							\
	"  if not redis.call('ZSCORE', KEYS[4], token) then\n"		\
	"    local note = queue_superseded_note(token)\n"		\
	"    if note then\n"						\
	"      local o, by = string.match(note, 'superseded (%S+) (.*)$')\n"\
	"      return superseded(o ~= '-' and o or '', by)\n"		\
	"    end\n"							\
	"    local lost = queue_join(token, now, lease)\n"		\
	"    if lost then return lost end\n"				\
	"  else\n"							\
	"    my_order, my_at = waiter_info(token)\n"			\
	"  end\n"							\
	"  if not queue_turn(token, free, my_at) then\n"			\
	"    waiter_note(token, now, lease)\n"				\
	"    if free <= 0 then queue_cancel() end\n"			\
	"    return busy(free > 0)\n"					\
	"  end\n"							\
	"  queue_drop(token)\n"					\
	"  queue_admitted()\n"					\
	"  return nil\n"						\
	"end\n"

/*
 * A queued waiter's turn: when fewer waiters rank before it than there
 * are free slots; of equal ranks, those that arrived before at.  Nothing
 * more to do when one is let in.
 */
#define LUA_QUEUE_TURN							\
	"local function queue_turn(token, free, at)\n"			\
	"  local r = redis.call('ZSCORE', KEYS[4], token)\n"		\
	"  local ahead = redis.call('ZCOUNT', KEYS[4], '-inf', '(' .. r)\n"\
	"  if ahead >= free then return false end\n"			\
	"  for _, tok in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], r, r))"\
	" do\n"							\
	"    local _, t = waiter_info(tok)\n"				\
	"    if tok ~= token and t < at then ahead = ahead + 1 end\n"	\
	"  end\n"							\
	"  return ahead < free\n"					\
	"end\n"							\
	"local function queue_admitted() end\n"

#endif /* SCRIPTS_QUEUE_H */
