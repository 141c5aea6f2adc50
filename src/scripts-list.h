/* SPDX-License-Identifier: MIT */
/*
 * list's script: the snapshot of many locks in one call, so that listing
 * 10,000 locks takes tens of calls, not 10,000.  SCAN found the candidate
 * keys on this one server; each comes with its companions' names, all as
 * KEYS, so the server knows every key the script touches.  In a Cluster a
 * master holds keys of many slots, and a call's keys must share one:
 * there lock-list.c sends one call per slot.  Read only.  Included by
 * scripts-lua.h only, after the modes, whose snapshot functions it calls.
 *
 *   KEYS: six names a candidate: the key, its metadata hash, its queue's
 *   leases, its readers and their metadata (shared locks), and its
 *   queue's ':who' hash; ARGV[1] how many holders of a semaphore to list
 *   at most, ARGV[2] the most bytes of metadata to return
 *   returns {next, {key, snapshot...}, ...}: the snapshot of each
 *   candidate that is a held lock (see the modes' snapshot functions; the
 *   number of waiters, the queue's mode and the waiters are added), and
 *   next, the index in KEYS of the first candidate not looked at (0: all
 *   were), when the bytes ran out.
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
	"for i = 1, #KEYS, 6 do\n"
	"  local s\n"
	"  if redis.call('EXISTS', KEYS[i + 1], KEYS[i + 4]) > 0 then\n"
	"    local t = redis.call('TYPE', KEYS[i]).ok\n"
	"    if t == 'string' then\n"
	"      s = mutex_snapshot(i, i + 1, redis.call('GET', KEYS[i]), i + 3,"
	" i + 4, now, max)\n"
	"    elseif t == 'zset' then\n"
	"      s = semaphore_snapshot(i, i + 1, now, max)\n"
	"    end\n"
	"  end\n"
	"  if s and s[3] > 0 then\n"
	"    for _, v in ipairs(s[2]) do budget = budget - #v end\n"
	/* Always one at least, so that every call makes progress. */
	"    if budget < 0 and #out > 1 then out[1] = i; break end\n"
	"    out[#out + 1] = {KEYS[i], s[1], s[2], s[3], s[4],"
	" waiting(i + 2, now), s[6], queue_mode(i + 5),"
	" waiters_list(i + 2, i + 5, now, max)}\n"
	"  end\n"
	"end\n"
	"return out\n";

#endif /* SCRIPTS_LIST_H */
