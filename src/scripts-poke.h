/* SPDX-License-Identifier: MIT */
/*
 * The pokes of the lock scripts, and the poke script that writes them
 * (scripts-lua.h includes it, before the fragments that poke).  Fragments
 * of C string macros, as the rest of scripts-lua.h.
 */

#ifndef SCRIPTS_POKE_H
#define SCRIPTS_POKE_H

/*
 * Pokes: what a script would write to the keys of one waiter or holder,
 * whose names it only finds out as it runs (the wake key of a queue's
 * head, a holder's cancel key): a script may touch only the keys it is
 * given (Redis' rule; a Cluster proxy or Dragonfly enforce it).  So it
 * lists each note instead, and its reply becomes {LUA_POKED, reply,
 * {key, score, note, ...}}; the client (lock-scripts.c) strips that off
 * and writes every note at once with the poke script, whose KEYS are
 * those names.  A poke only wakes or tells: what it tells of is already
 * in the lock's own keys, written by the script (a superseded waiter's
 * note in KEYS[12], a holder's removal), so a poke that never arrives
 * (its client died in between) costs a waiter its next poll, or a holder
 * its next renewal, never a promise.  At most LUA_POKE_MAX per call, to
 * keep the reply within the client's bounds: past that, waiters poll.
 * LUA_MAIN wraps a script's body, whose returns it keeps.
 */
#define LUA_POKED	"redlock-pokes"
#define LUA_POKE_MAX	"1000"

#define LUA_POKES							\
	"local pokes = {}\n"						\
	"local function poke(key, score, note)\n"			\
	"  if #pokes >= 3 * " LUA_POKE_MAX " then return end\n"	\
	"  pokes[#pokes + 1] = key\n"					\
	"  pokes[#pokes + 1] = tostring(score)\n"			\
	"  pokes[#pokes + 1] = note\n"				\
	"end\n"

#define LUA_MAIN	"local function main()\n"
#define LUA_MAIN_END							\
	"end\n"							\
	"local r = main()\n"						\
	"if #pokes == 0 or (type(r) == 'table' and r.err) then\n"	\
	"  return r\n"							\
	"end\n"							\
	"return {'" LUA_POKED "', r == nil and false or r, pokes}\n"

/*
 * poke: the notes a lock script listed (LUA_POKES), each written to its
 * key, which lives LUA_LINGER_MS from then, as a wake key does.
 *   KEYS[i] the key of note i; ARGV[2i - 1] its score, ARGV[2i] the note
 *   returns how many were written.
 */
static const char lua_poke[] =
	"for i = 1, #KEYS do\n"
	"  redis.call('ZADD', KEYS[i], ARGV[2 * i - 1], ARGV[2 * i])\n"
	"  redis.call('PEXPIRE', KEYS[i], " LUA_LINGER_MS ")\n"
	"end\n"
	"return #KEYS\n";

#endif /* SCRIPTS_POKE_H */
