/* SPDX-License-Identifier: MIT */
/*
 * list's script: the snapshot of many locks in one call, so that listing
 * 10,000 locks takes tens of calls, not 10,000.  The keys come as ARGV,
 * not KEYS: SCAN found them on this one server (in a Cluster, on this one
 * master, where keys of many slots live), and a script may read any key
 * its server holds.  Read only.  Included by scripts-lua.h only, after
 * the modes, whose snapshot functions it calls.
 *
 *   ARGV[1] how many holders of a semaphore to list at most, ARGV[2] the
 *   most bytes of metadata to return, then for each candidate key six
 *   names: the key, its metadata hash, its queue's leases, its readers
 *   and their metadata (shared locks), and its queue's ':who' hash
 *   returns {next, {key, snapshot...}, ...}: the snapshot of each
 *   candidate that is a held lock (see the modes' snapshot functions; the
 *   number of waiters, the queue's mode and the waiters are added), and next, the index in ARGV of the first
 *   candidate not looked at (0: all were), when the bytes ran out.
 *
 * A key is a lock when it is a string or a sorted set and its metadata
 * hash exists: that rules out the companion keys (whose own "metadata"
 * never exists), and keys of other programs that merely share the prefix.
 * A foreign client's lock (SET NX by another library) has no metadata, so
 * list does not show it; status and release --force still see it.
 */

#ifndef SCRIPTS_LIST_H
#define SCRIPTS_LIST_H

static const char lua_list[] =
	LUA_SERVER_NOW
	LUA_SHARED_MARK
	LUA_WAITING
	LUA_QUEUE_MODE
	LUA_HOLDERS_SNAPSHOT
	LUA_MUTEX_SNAPSHOT
	LUA_SEMAPHORE_SNAPSHOT
	"local now, max = server_now(), tonumber(ARGV[1])\n"
	"local budget, out = tonumber(ARGV[2]), {0}\n"
	"for i = 3, #ARGV, 6 do\n"
	"  local k, meta, rmeta = ARGV[i], ARGV[i + 1], ARGV[i + 4]\n"
	"  local s\n"
	"  if redis.call('EXISTS', meta, rmeta) > 0 then\n"
	"    local t = redis.call('TYPE', k).ok\n"
	"    if t == 'string' then\n"
	"      s = mutex_snapshot(k, meta, redis.call('GET', k), ARGV[i + 3],"
	" rmeta, now, max)\n"
	"    elseif t == 'zset' then\n"
	"      s = semaphore_snapshot(k, meta, now, max)\n"
	"    end\n"
	"  end\n"
	"  if s and s[3] > 0 then\n"
	"    for _, v in ipairs(s[2]) do budget = budget - #v end\n"
	/* Always one at least, so that every call makes progress. */
	"    if budget < 0 and #out > 1 then out[1] = i; break end\n"
	"    out[#out + 1] = {k, s[1], s[2], s[3], s[4],"
	" waiting(ARGV[i + 2], now), s[6], queue_mode(ARGV[i + 5]),"
	" waiters_list(ARGV[i + 2], ARGV[i + 5], now, max)}\n"
	"  end\n"
	"end\n"
	"return out\n";

#endif /* SCRIPTS_LIST_H */
