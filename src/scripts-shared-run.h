/* SPDX-License-Identifier: MIT */
/*
 * The fifo queue's order and the readers' run in it, for the shared
 * lock's scripts (scripts-shared.h, which includes this file only).
 */

#ifndef SCRIPTS_SHARED_RUN_H
#define SCRIPTS_SHARED_RUN_H

/*
 * The queue's order (KEYS[4]): by rank, then, as for the head of the
 * queue (LUA_QUEUE), by first arrival (the waiter's note in the ':who'
 * hash), then by token.  The sorted set itself breaks a tie by token,
 * which would let a reader of the same rank in ahead of a writer that
 * came first.
 *   rd_at(t): waiter t's first arrival (server microseconds), 0 if unknown
 *   rd_after(s, t, rs, rt): whether waiter t (rank s) comes after
 *   waiter rt (rank rs)
 */
#define LUA_SHARED_ORDER						\
	"local function rd_at(t)\n"					\
	"  return tonumber(string.match(redis.call('HGET', KEYS[12],"	\
	" 'w:' .. t) or '', '^%S+ (%d+)')) or 0\n"			\
	"end\n"							\
	"local function rd_after(s, t, rs, rt)\n"			\
	"  if s ~= rs then return s > rs end\n"			\
	"  if t == rt then return false end\n"			\
	"  local a, b = rd_at(t), rd_at(rt)\n"				\
	"  if a ~= b then return a > b end\n"				\
	"  return t > rt\n"						\
	"end\n"

/*
 * The run, with --queue fifo: the readers at the head of the queue, who
 * are let in together while the lock is free for readers.  Its end, the
 * rank and token of its last reader, is kept in the queue's ':who' hash
 * (field ':run', which no token can be), so that each waiter is looked at
 * once, when the run reaches it, and woken then, and a reader's turn is
 * one comparison with the end: admitting N readers costs server work in
 * N, not in N squared.  Every waiter queued at or before the
 * end is a reader: the run stops at the first one that is not, and a
 * writer that queues before the end (a lower --order) cuts the run back
 * (the mutex's mode_wait, rd_run_cut).  Those of the run that have been
 * let in are gone from the queue, so the run goes on from its end when
 * the writer queued after it has had its turn.
 *   rd_run(): the end (rank, token), or nil
 *   rd_run_extend(me): the run grows over the readers queued after its
 *   end, up to the first waiter that is not a reader, at most 1000 a
 *   call (the next admission goes on), each woken but me (a reader, even
 *   before its first refusal notes it in KEYS[10]); returns the end.
 *   Only while the lock is free for readers: a reader woken while a
 *   writer holds would not be woken again.
 */
#define LUA_SHARED_RUN							\
	"local function rd_run()\n"					\
	"  local v = redis.call('HGET', KEYS[12], ':run')\n"	\
	"  if not v then return nil end\n"				\
	"  local s, t = string.match(v, '^(%S+) (%S+)$')\n"		\
	"  return tonumber(s), t\n"					\
	"end\n"							\
	"local function rd_run_extend(me)\n"				\
	"  local rs, rt = rd_run()\n"					\
	"  local z\n"							\
	"  if rs then\n"						\
	"    z = redis.call('ZRANGEBYSCORE', KEYS[4], rs, '+inf',"	\
	" 'WITHSCORES', 'LIMIT', 0, 1000)\n"				\
	"  else\n"							\
	"    z = redis.call('ZRANGE', KEYS[4], 0, 999, 'WITHSCORES')\n"	\
	"  end\n"							\
	/* Those after the end, in the queue's order: the sorted set's,	\
	 * but for a group of equal rank, which goes by arrival		\
	 * (rd_at; looked up only for such a group, and only up to the	\
	 * first waiter that is not a reader, where the run stops). */	\
	"  local ns, nt, at, i, stop = nil, nil, nil, 1, false\n"	\
	"  while i <= #z and not stop do\n"				\
	"    local s, g, j = tonumber(z[i + 1]), {}, i\n"		\
	"    while j <= #z and tonumber(z[j + 1]) == s do\n"		\
	"      if not rs or rd_after(s, z[j], rs, rt) then\n"		\
	"        g[#g + 1] = {z[j], z[j + 1]}\n"			\
	"      end\n"							\
	"      j = j + 2\n"						\
	"    end\n"							\
	"    if #g > 1 then\n"						\
	"      for _, e in ipairs(g) do e[3] = rd_at(e[1]) end\n"	\
	"      table.sort(g, function(x, y)\n"				\
	"        if x[3] ~= y[3] then return x[3] < y[3] end\n"	\
	"        return x[1] < y[1]\n"					\
	"      end)\n"							\
	"    end\n"							\
	"    for _, e in ipairs(g) do\n"				\
	"      if e[1] ~= me and not redis.call('ZSCORE', KEYS[10], e[1]) then\n"\
	"        stop = true\n"					\
	"        break\n"						\
	"      end\n"							\
	"      if e[1] ~= me then rd_wake(e[1]) end\n"			\
	"      ns, nt, at = s, e[1], e[2]\n"				\
	"    end\n"							\
	"    i = j\n"							\
	"  end\n"							\
	"  if not ns then return rs, rt end\n"				\
	"  local who = KEYS[12]\n"				\
	"  redis.call('HSET', who, ':run', at .. ' ' .. nt)\n"		\
	"  if redis.call('PTTL', who) < 0 then\n"			\
	"    redis.call('PEXPIRE', who, " LUA_LINGER_MS ")\n"		\
	"  end\n"							\
	"  return ns, nt\n"						\
	"end\n"

#endif /* SCRIPTS_SHARED_RUN_H */
