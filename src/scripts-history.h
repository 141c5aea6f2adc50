/* SPDX-License-Identifier: MIT */
/*
 * A lock's run history (history.c reads it): a stream KEYS[11] in the
 * lock's slot, newest last, at most the writer's --history-size entries
 * (XADD MAXLEN, exact), expiring LUA_HISTORY_KEEP_MS after its last
 * entry.  One entry per run that ended and per manual hold that was
 * released, forced away or left to expire, with the fields
 *   o outcome, x exit status ('' none), h host, p pid, c command (as the
 *   holder recorded it: masked), r --order (''), q queued, s started,
 *   e ended (wall clock ms, '' unknown), f fence.
 * Who writes it, so that each end is written once:
 *   - the release script, from the entry its caller sends (a run's, or
 *     the release verb's 'released'): no call of its own;
 *   - history_note, for an end with nothing to release (a lost lock, a
 *     waiter superseded, a run outdated before its take);
 *   - the force script, for every holder it removes ('forced': a forced
 *     run writes nothing of its own);
 *   - a mutex's next take, for a manual hold (acquire) whose metadata
 *     outlived its lock ('expired'): such a hold marks its metadata 'm'
 *     and keeps it LUA_HISTORY_KEEP_MS, as long as the record it is.
 * Included by scripts-lua.h only.
 */

#ifndef SCRIPTS_HISTORY_H
#define SCRIPTS_HISTORY_H

#define LUA_HISTORY_KEEP_MS	"604800000"

/*
 * Server time in ms, for the ends that only the server sees (a force, an
 * expiry), without LUA_SERVER_NOW's bookkeeping.
 */
#define LUA_HISTORY_NOW							\
	"local function history_now()\n"				\
	"  local t = redis.call('TIME')\n"				\
	"  return string.format('%d', t[1] * 1000 +"			\
	" math.floor(t[2] / 1000))\n"					\
	"end\n"

/*
 * history_add(n, o, x, h, p, c, r, q, s, e, f): the entry, the stream cut
 * to n.  history_holder(tok): {token, host, pid, command, since, fence,
 * order} from whichever metadata has tok (a mutex's hash, a slot's or a
 * reader's fields), or nil.  history_ended(n, m, o, ended): that holder's
 * entry with outcome o.  history_from_argv(at): the entry sent whole in
 * ARGV[at] (the size; 0: none) and the ten fields after it.
 */
#define LUA_HISTORY							\
	"local function history_add(n, o, x, h, p, c, r, q, s, e, f)\n"	\
	"  redis.call('XADD', KEYS[11], 'MAXLEN', n, '*', 'o', o, 'x', x,"	\
	" 'h', h, 'p', p, 'c', c, 'r', r, 'q', q, 's', s, 'e', e, 'f', f)\n"	\
	"  redis.call('PEXPIRE', KEYS[11], " LUA_HISTORY_KEEP_MS ")\n"	\
	"end\n"							\
	"local function history_holder(tok)\n"				\
	"  local m = redis.call('HMGET', KEYS[3], 'token', 'host', 'pid',"	\
	" 'command', 'since', 'fence', 'order')\n"			\
	"  if m[1] == tok then return m end\n"				\
	"  for _, k in ipairs({3, 8}) do\n"				\
	"    m = redis.call('HMGET', KEYS[k], tok .. ':host', tok .. ':host',"\
	" tok .. ':pid', tok .. ':command', tok .. ':since',"		\
	" tok .. ':fence', tok .. ':order')\n"				\
	"    if m[2] then m[1] = false; return m end\n"		\
	"  end\n"							\
	"  return nil\n"						\
	"end\n"							\
	"local function history_ended(n, m, o, ended)\n"		\
	"  history_add(n, o, '', m[2] or '', m[3] or '', m[4] or '',"	\
	" m[7] or '', '', m[5] or '', ended, m[6] or '')\n"		\
	"end\n"							\
	"local function history_from_argv(at)\n"			\
	"  local n = tonumber(ARGV[at]) or 0\n"			\
	"  if n <= 0 then return end\n"				\
	"  local a = {}\n"						\
	"  for i = 1, 10 do a[i] = ARGV[at + i] or '' end\n"		\
	"  history_add(n, a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],"	\
	" a[9], a[10])\n"						\
	"end\n"							\
	LUA_HISTORY_NOW							\
	"local function history_expiry()\n"				\
	"  return string.format('%d', tonumber(history_now()) +"	\
	" redis.call('PTTL', KEYS[3]) - " LUA_HISTORY_KEEP_MS ")\n"	\
	"end\n"

/*
 * A release, drop() being the mode's: ARGV[4] the size, ARGV[5..14] the
 * entry.  A run sends its entry whole, written whatever drop() finds (it
 * is how the run ended).  The release verb sends only the outcome and the
 * end, host '': the rest is the holder's metadata, read before drop()
 * deletes it, and written only if the token held; if it did not, and it
 * was a manual hold whose marked metadata outlived it, the hold expired,
 * and that is written instead (the metadata deleted, so that the next
 * take does not write it again).  Returns what drop() returned.
 */
#define LUA_HISTORY_RELEASE						\
	LUA_HISTORY							\
	"local function history_release(tok, drop)\n"			\
	"  local n = tonumber(ARGV[4]) or 0\n"			\
	"  if n <= 0 then return drop() end\n"			\
	"  if ARGV[7] ~= '' then history_from_argv(4); return drop() end\n"\
	"  local m = history_holder(tok)\n"				\
	"  local manual = m and m[1] == tok and"			\
	" redis.call('HGET', KEYS[3], 'listens') == 'm'\n"		\
	"  local done = drop()\n"					\
	"  if m and done == 1 then\n"					\
	"    history_ended(n, m, ARGV[5], ARGV[13])\n"		\
	"  elseif manual and done == 0 then\n"			\
	"    history_ended(n, m, 'expired', history_expiry())\n"	\
	"    redis.call('DEL', KEYS[3])\n"				\
	"  end\n"							\
	"  return done\n"						\
	"end\n"

/*
 * A mutex's take: a manual hold (metadata marked 'm') that another token
 * held is over without a release: it expired.  Its lock expired when its
 * metadata had LUA_HISTORY_KEEP_MS left, so the end is exact.  ARGV[17]
 * is the taker's --history-size.
 */
#define LUA_HISTORY_EXPIRED						\
	"local function history_expired()\n"				\
	"  local n = tonumber(ARGV[17]) or 0\n"			\
	"  if n <= 0 then return end\n"				\
	"  local m = redis.call('HMGET', KEYS[3], 'token', 'listens')\n"	\
	"  if not m[1] or m[1] == ARGV[1] or m[2] ~= 'm' then return end\n"\
	"  history_ended(n, history_holder(m[1]), 'expired',"		\
	" history_expiry())\n"					\
	"end\n"

/*
 * history_note: an end with nothing to release.
 *   KEYS as acquire's; ARGV[1] token (unused), ARGV[2] --history-size,
 *   ARGV[3..12] the entry (see history_from_argv)
 *   returns 1
 */
static const char lua_history_note[] =
	LUA_HISTORY
	"history_from_argv(2)\n"
	"return 1\n";

/*
 * history_read: the newest entries, newest first.
 *   KEYS as acquire's (KEYS[1]: where a Cluster sends the call);
 *   ARGV[1] how many
 *   returns XREVRANGE's reply: {{id, {field, value, ...}}, ...}
 */
static const char lua_history_read[] =
	"return redis.call('XREVRANGE', KEYS[11], '+', '-', 'COUNT',"
	" ARGV[1])\n";

#endif /* SCRIPTS_HISTORY_H */
