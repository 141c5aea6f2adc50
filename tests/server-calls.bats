#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The server calls of an uncontended exclusive cycle (CONTRACT.md,
# "Protocol and server cost"), counted exactly from INFO commandstats,
# never timed: acquire, extend and release are one call each on a
# connection of their own (EVALSHA once the scripts are loaded; the first
# time, EVALSHA answered NOSCRIPT, then EVAL), run -n K -- CMD is its
# acquire and release plus the BZPOPMIN on a second connection with which
# it listens for a release --force once CMD runs, and nothing else
# reaches the server.  commandstats also counts every command a script
# calls: those are checked by name, and by number for a release with
# nobody waiting.  A BZPOPMIN abandoned while it blocks (run's, at the
# release) is counted by Redis 7 when it starts, by Valkey 8 only when it
# returns, so never: run's calls are counted by MONITOR too, which shows
# each as it is sent.
# What the calls cost: bench/server-cost.sh.

load helpers

setup_file() { redis_start main; }
teardown_file() { redis_stop main; }
setup() { redis_flush; }

# count: CONFIG RESETSTAT, then run ARGS (a command of the test, or a
# function), then read what the server counted into STATS in one INFO.
count() {
	rcli main CONFIG RESETSTAT >/dev/null
	"$@"
	STATS=$(rcli main INFO stats commandstats errorstats | tr -d '\r')
}

# calls NAME [FIELD]: FIELD (calls) of command NAME in STATS, 0 if none.
calls() {
	local n
	n=$(printf '%s\n' "$STATS" | awk -F'[:,]' -v c="cmdstat_$1" -v f="${2:-calls}" '
	    $1 == c { for (i = 2; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == f) print kv[2] }')
	echo "${n:-0}"
}

# commands: "name=calls ..." of every command in STATS, the ones scripts
# called included, sorted; not our own INFO and CONFIG, nor the AUTH on
# each connection of a least-privilege user (make test-acl), counted by
# conns.
commands() {
	printf '%s\n' "$STATS" | sed -n 's/^cmdstat_\([^:]*\):calls=\([0-9]*\),.*/\1=\2/p' |
	    grep -vE '^(info|config\|[a-z]*)=' |
	    { if [ "${REDLOCK_TEST_ACL:-0}" = 1 ]; then grep -v '^auth='; else cat; fi; } |
	    sort | tr '\n' ' ' | sed 's/ $//'
}
# names: the names alone.
names() { commands | sed 's/=[0-9]*//g'; }

# conns: the connections the server accepted, our INFO's own left out.
conns() {
	printf '%s\n' "$STATS" | awk -F: '$1 == "total_connections_received" { print $2 - 1 }'
}

# sent EVALSHA EVAL BZPOPMIN CONNS: the calls a client can send (a script
# calls none of them) and the connections, exactly.
sent() {
	assert_equal "evalsha=$(calls evalsha) eval=$(calls eval) bzpopmin=$(calls bzpopmin) conns=$(conns)" \
	    "evalsha=$1 eval=$2 bzpopmin=$3 conns=$4"
}

# monitored ARGS: ARGS under a MONITOR (opened before and closed after,
# so that count's figures do not see it); SENT: "name=calls ..." of what
# clients sent (not scripts: "[0 lua]"), sorted, our INFO left out.
monitored() {
	local f="$BATS_TEST_TMPDIR/monitor" pid
	: >"$f"
	rcli main MONITOR >"$f" 2>/dev/null 3>&- &
	pid=$!
	wait_until grep -q '^OK' "$f" || fail "MONITOR did not start"
	"$@"
	rcli main ECHO server-calls:end >/dev/null
	wait_until grep -q '"server-calls:end"' "$f" || fail "MONITOR did not see the end"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	# make test-acl: each connection's AUTH as the ACL user is left out too.
	local ours='info|echo'
	[ "${REDLOCK_TEST_ACL:-0}" != 1 ] || ours='info|echo|auth'
	SENT=$(sed -n 's/^[0-9.]* \[[0-9]* \([^]]*\)\] "\([^"]*\)".*/\1 \2/p' "$f" |
	    awk '$1 != "lua" { print tolower($2) }' | grep -vxE "$ours" |
	    sort | uniq -c | awk '{ printf "%s%s=%s", s, $2, $1; s = " " }')
}

# prime: one of each verb, so that their scripts are loaded and the fence
# counter exists, as for any lock taken before.
prime() {
	local tok
	tok=$(redlock-cli acquire k)
	redlock-cli extend k --token "$tok"
	redlock-cli release k --token "$tok"
	redlock-cli run -n k -- true
}

take() { TOK=$(redlock-cli acquire k -t 30s); }

@test "warm: acquire, extend and release are one EVALSHA each, on a connection each, and nothing else" {
	prime
	count take
	[[ $TOK =~ ^[0-9a-f]{32}$ ]] || fail "no token: '$TOK'"
	sent 1 0 0 1
	assert_equal "$(names)" "evalsha hmget hset incr pexpire set"
	count redlock-cli extend k --token "$TOK"
	sent 1 0 0 1
	assert_equal "$(names)" "evalsha get hget pexpire"
	count redlock-cli release k --token "$TOK"
	sent 1 0 0 1
	assert_equal "$(names)" "del evalsha exists get hget hmget pexpire xadd zadd"
	refute_key main k
}

@test "cold: after SCRIPT FLUSH each of acquire, extend and release is EVALSHA answered NOSCRIPT, then EVAL" {
	prime
	rcli main SCRIPT FLUSH >/dev/null
	count take
	sent 1 1 0 1
	assert_equal "$(calls evalsha failed_calls)" 1
	assert_equal "$(calls eval failed_calls)" 0
	assert_equal "$(printf '%s\n' "$STATS" | grep '^errorstat_')" "errorstat_NOSCRIPT:count=1"
	assert_equal "$(names)" "eval evalsha hmget hset incr pexpire set"
	rcli main SCRIPT FLUSH >/dev/null
	count redlock-cli extend k --token "$TOK"
	sent 1 1 0 1
	assert_equal "$(calls evalsha failed_calls)" 1
	assert_equal "$(printf '%s\n' "$STATS" | grep '^errorstat_')" "errorstat_NOSCRIPT:count=1"
	assert_equal "$(names)" "eval evalsha get hget pexpire"
	rcli main SCRIPT FLUSH >/dev/null
	count redlock-cli release k --token "$TOK"
	sent 1 1 0 1
	assert_equal "$(calls evalsha failed_calls)" 1
	assert_equal "$(printf '%s\n' "$STATS" | grep '^errorstat_')" "errorstat_NOSCRIPT:count=1"
	assert_equal "$(names)" "del eval evalsha exists get hget hmget pexpire xadd zadd"
	refute_key main k
	# The EVAL loaded it: the next release is EVALSHA alone.
	take
	count redlock-cli release k --token "$TOK"
	sent 1 0 0 1
}

@test "run -n K -- CMD: its acquire and release, and the BZPOPMIN it listens with on a second connection" {
	prime
	# A command that outlives the start of the listening (microseconds
	# after the command's): see the next test for one that may not.
	monitored count redlock-cli run -n k -- sleep 1
	assert_equal "$SENT" "bzpopmin=1 evalsha=2"
	assert_equal "$(calls evalsha) $(calls eval) $(conns)" "2 0 2"
	assert_equal "$(names | sed 's/bzpopmin //')" "del evalsha exists get hmget hset incr pexpire set xadd zadd"
	refute_key main k
}

@test "run -n K -- true: the same, but for a listening that true may end before it starts" {
	prime
	monitored count redlock-cli run -n k -- true
	# run listens from the first wait of its hold, after the command has
	# started: when true has ended by then, run releases at once, and
	# its listening connection may be closed before the BZPOPMIN is sent,
	# or not be opened (4 of 900 runs, three loops at once on 2 cores).
	case "$SENT $(conns)" in
	"bzpopmin=1 evalsha=2 2" | "evalsha=2 2" | "evalsha=2 1") ;;
	*) fail "sent: $SENT, on $(conns) connections" ;;
	esac
	assert_equal "$(calls evalsha) $(calls eval)" "2 0"
	assert_equal "$(names | sed 's/bzpopmin //')" "del evalsha exists get hmget hset incr pexpire set xadd zadd"
	refute_key main k
}

@test "run -n K -- CMD after SCRIPT FLUSH: NOSCRIPT, then EVAL, for the acquire and for the release" {
	prime
	rcli main SCRIPT FLUSH >/dev/null
	monitored count redlock-cli run -n k -- sleep 1
	assert_equal "$SENT" "bzpopmin=1 eval=2 evalsha=2"
	assert_equal "$(calls evalsha) $(calls eval) $(conns)" "2 2 2"
	assert_equal "$(calls evalsha failed_calls)" 2
	assert_equal "$(printf '%s\n' "$STATS" | grep '^errorstat_')" "errorstat_NOSCRIPT:count=2"
	assert_equal "$(names | sed 's/bzpopmin //')" "del eval evalsha exists get hmget hset incr pexpire set xadd zadd"
}

@test "a release when nobody waits: the entry of the history, and the wake key written all the same" {
	prime
	take
	# (prime's releases wrote it: gone, to see this one write it.)
	rcli main DEL '{k}:wake' >/dev/null
	assert_equal "$(rcli main EXISTS '{k}:queue' '{k}:rwait' '{k}:wake')" 0
	count redlock-cli release k --token "$TOK"
	sent 1 0 0 1
	# GET and HMGET, HGET of the holder's record; DEL of the lock and
	# the record; XADD and PEXPIRE of the history; EXISTS of the queues
	# (none); ZADD and PEXPIRE of {k}:wake for waiters that may block on
	# it unseen (--queue any): a release cannot know there are none.
	assert_equal "$(commands)" \
	    "del=1 evalsha=1 exists=1 get=1 hget=1 hmget=1 pexpire=2 xadd=1 zadd=1"
	assert_equal "$(rcli main ZRANGE '{k}:wake' 0 -1)" go
	local ttl
	ttl=$(rcli main PTTL '{k}:wake')
	((ttl > 0 && ttl <= 5000)) || fail "{k}:wake's PTTL is $ttl, not 5 s or less"
}

@test "the counts see every call: two acquires are two EVALSHA on two connections, and sent fails on them" {
	prime
	two() { take; redlock-cli acquire k -n -E 0 >/dev/null 2>&1; }
	count two
	sent 2 0 0 2
	run sent 1 0 0 1
	assert_failure
	redlock-cli release k --token "$TOK"
	monitored two
	assert_equal "$SENT" "evalsha=2"
	# A command the test did not expect shows in the names.
	count rcli main PING
	assert_equal "$(names)" ping
}
