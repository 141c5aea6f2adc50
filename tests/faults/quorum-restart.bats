#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fault injection (issue 7): a Redlock quorum of three servers, each
# stopped and restarted in turn while `run -t 1s` holds the lock.
#
# A renewal only extends keys that exist (compare-and-pexpire); it never
# writes the key again where it is missing.  So what decides the outcome
# is whether a restarted server comes back with our key:
#  - with AOF (appendfsync always) it does, every server keeps the key,
#    a majority holds it at every moment, and the lock is never lost;
#  - without persistence it comes back empty.  After the first restart
#    the key is on 2 of 3 (still a majority); once the second comes back
#    empty it is on 1 of 3, anyone may take the lock on the other two, and
#    the honest answer is "lost": SIGTERM to the command, exit 75.  (The
#    Redlock remedy is to keep a restarted server out for a TTL, or to
#    persist; spacing the restarts does not help.)

load ../helpers
load faults

SERVERS="q1 q2 q3"

setup_file() {
	local s
	for s in $SERVERS; do
		mkdir -p "$BATS_FILE_TMPDIR/redis-$s"
	done
}

teardown_file() {
	stop_servers
	reap_old_redis
}

setup() {
	slow_skip
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	write_child
}

teardown() {
	kill_bg_runs
	stop_servers
}

# stop_servers: redis_stop for all three at once (each takes about a
# second to exit): SIGTERM by pid to all, then the bounded waits.
stop_servers() {
	local s pids=()
	for s in $SERVERS; do
		pids+=("$(redis_pid "$s")")
		[ -z "${pids[-1]}" ] && continue
		kill -CONT "${pids[-1]}" 2>/dev/null || true
		kill -TERM "${pids[-1]}" 2>/dev/null || true
	done
	for s in "${pids[@]}"; do
		[ -n "$s" ] || continue
		WAIT_TRIES=100 wait_until proc_gone "$s" ||
		    kill -KILL "$s" 2>/dev/null || true
	done
	for s in $SERVERS; do
		rm -f "$BATS_FILE_TMPDIR/redis-$s/pid"
	done
}

# start_servers [redis-server args...]: q1..q3, empty; U gets their -u's.
start_servers() {
	local s
	U=()
	for s in $SERVERS; do
		rm -rf "$BATS_FILE_TMPDIR/redis-$s/appendonlydir"
		redis_start "$s" "$@" || fail "cannot start $s"
		redis_acl_user "$(redis_sock "$s")"
		U+=(-u "unix://$(redis_sock "$s")")
	done
}

# holders: which servers have our key (the token in $D/started).
holders() {
	local s out=""
	for s in $SERVERS; do
		[ "$(rcli "$s" GET k)" = "$(child_token)" ] && out="$out $s"
	done
	echo "${out# }"
}

@test "quorum of 3 with AOF always, each server restarted in turn during a run: the key survives every restart, the lock is never lost, exit 0" {
	local s
	# redis_start gives each server --dir of its own: the AOF is there.
	local persist=(--appendonly yes --appendfsync always)
	start_servers "${persist[@]}"
	start_bg runner "${U[@]}" run k -t 1s -- sh "$D/child.sh" go
	wait_until child_started
	assert_equal "$(holders)" "q1 q2 q3"

	for s in $SERVERS; do
		redis_restart "$s" "${persist[@]}"
		redis_acl_user "$(redis_sock "$s")"
		# Back with our key: a majority holds it, always.
		assert_equal "$(holders)" "q1 q2 q3"
		# A renewal (every 333 ms) ran on the restarted one too
		# (EVALSHA answered NOSCRIPT, then EVAL) before the next restart.
		WAIT_TRIES=60 wait_until at_least 2 script_calls "$s" ||
		    fail "no renewal reached $s after its restart"
		[ ! -s "$D/got" ] || fail "signalled after restarting $s"
	done
	touch "$D/go"

	wait_run_ok
	assert_equal "$stderr" ""
	for s in $SERVERS; do
		assert_released "$s" k
	done
}

@test "quorum of 3 without persistence, servers restarted in turn during a run: 2 of 3 keep it after the first restart, the second leaves 1 of 3, the lock is lost (exit 75)" {
	local got_at restarted_at
	start_servers
	start_bg runner "${U[@]}" run k -t 1s -- sh "$D/child.sh" go
	wait_until child_started
	assert_equal "$(holders)" "q1 q2 q3"

	redis_restart q1
	redis_acl_user "$(redis_sock q1)"
	assert_equal "$(holders)" "q2 q3"
	# Renewals go on with 2 of 3 (q1 answers "not held", q2 and q3
	# extend): at least two of them ran on q1.
	WAIT_TRIES=60 wait_until at_least 3 script_calls q1 ||
	    fail "no renewals reached q1 after its restart"
	[ ! -s "$D/got" ] || fail "signalled with 2 of 3: $(cat "$D/got")"
	assert_equal "$(holders)" "q2 q3"
	proc_gone "$BG_PID" && fail "run ended with 2 of 3"

	redis_restart q2
	restarted_at=$(now_ns)
	redis_acl_user "$(redis_sock q2)"

	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(child_got_count TERM)" 1
	got_at=$(child_got_at)
	# The next renewal (within 333 ms) sees it gone.
	assert_lt "$((got_at - restarted_at))" 1000000000 \
	    "ns from the second restart to SIGTERM"
	[ ! -e "$D/finished" ]
	bg_stderr runner
	assert_stderr_count "redlock-cli: lock 'k' lost: it expired in Redis; last confirmed [0-9.]+(ms|s) ago; sending SIGTERM to the command" 1
	# Lost means hands off: no release.  The leftover on q3 expires.
	assert_no_lock q1 k
	assert_no_lock q2 k
	WAIT_TRIES=40 wait_until key_absent q3 k
	assert_no_lock q3 k
	run -0 redlock-cli "${U[@]}" acquire k -t 5s -n
}
