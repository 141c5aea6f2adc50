#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fault injection (issue 7): the one server restarted during a hold, with
# and without persistence, and paused (SIGSTOP) for longer than the TTL.
# Each test says what run must do (issue 3, lost-lock policy): the exit
# status, what the command saw (marker files of $D/child.sh), and which
# keys are left on the server.

load ../helpers
load faults

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
	redis_stop aof
	reap_old_redis
}

setup() {
	slow_skip
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	# helpers.bash unsets REDLOCK_URL each time bats loads it: every
	# command here says -u.  The ACL user of `make test-acl`, likewise.
	redis_acl_user "$(redis_sock main)"
	redis_flush main
	URL="unix://$(redis_sock main)"
	write_child
}

# Never leave a server stopped, nor our processes running.
teardown() {
	local pid
	kill -CONT "$(redis_pid main)" 2>/dev/null || true
	kill_bg_runs
	# A test that failed between stop and start leaves no server.
	pid=$(redis_pid main) || true
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
		redis_start main
	fi
}

@test "restart without persistence during a hold: the renewal finds the key gone, the child gets SIGTERM, run exits 75, no key is left" {
	start_bg runner -u "$URL" run k -t 2s -- sh "$D/child.sh" go
	wait_until child_started
	assert_equal "$(rcli main GET k)" "$(child_token)"

	redis_restart main
	# The restarted server is empty: nobody holds the lock there now.
	assert_equal "$(rcli main EXISTS k)" 0

	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(child_got_count TERM)" 1
	[ ! -e "$D/finished" ] || fail "the command ran to its end"
	bg_stderr runner
	assert_stderr_count "redlock-cli: lock 'k' lost: it expired in Redis; last confirmed [0-9.]+(ms|s) ago; sending SIGTERM to the command" 1
	# Hands off a lock that is not ours: nothing was written back but
	# the run's end in the lock's history.
	assert_equal "$(keys_of main)" ""
	run -1 redlock-cli -u "$URL" status k
	assert_line -n 0 free
	assert_line -n 1 --partial 'last: lost, exit 75, '
}

@test "restart with AOF appendfsync always during a hold: the key survives, the renewal succeeds after the restart and run exits 0" {
	local dir="$BATS_FILE_TMPDIR/redis-aof" aof_url token
	local persist=(--appendonly yes --appendfsync always --dir "$dir")
	mkdir -p "$dir"
	redis_start aof "${persist[@]}"
	redis_acl_user "$(redis_sock aof)"
	aof_url="unix://$(redis_sock aof)"

	start_bg runner -u "$aof_url" run k -t 2s -- sh "$D/child.sh" go
	wait_until child_started
	token=$(child_token)
	assert_equal "$(rcli aof GET k)" "$token"

	redis_restart aof "${persist[@]}"
	redis_acl_user "$(redis_sock aof)"
	# Our key came back from the AOF, with our token and a TTL.
	assert_equal "$(rcli aof GET k)" "$token"
	[ "$(rcli aof PTTL k)" -gt 0 ]
	# A renewal ran on the restarted server (its stats start at the
	# restart; the first renewal there is EVALSHA, answered NOSCRIPT,
	# then EVAL); then the command ends.
	WAIT_TRIES=80 wait_until at_least 2 script_calls aof ||
	    fail "no renewal reached the restarted server"
	[ ! -s "$D/got" ] || fail "the command was signalled: $(cat "$D/got")"
	touch "$D/go"

	wait_run_ok
	assert_equal "$stderr" ""
	# Released at the end: neither the lock nor its metadata is left.
	assert_released aof k
	redis_stop aof
}

@test "server paused (SIGSTOP) longer than the TTL: the child gets SIGTERM before the TTL has passed since the pause, run exits 75, the key expires" {
	local paused_at got_at
	start_bg runner -u "$URL" --io-timeout 200ms run k -t 1s -- \
	    sh "$D/child.sh" 10
	wait_until child_started
	paused_at=$(now_ns)
	kill -STOP "$(redis_pid main)"

	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(child_got_count TERM)" 1
	got_at=$(child_got_at)
	assert_lt "$((got_at - paused_at))" 1000000000 \
	    "ns from the pause to the SIGTERM"
	bg_stderr runner
	assert_stderr_count "redlock-cli: lock 'k' lost: (renewal failed|no renewal succeeded in time): unix://[^ ]+: no reply within [0-9.]+(ms|s); last confirmed [0-9.]+(ms|s) ago; sending SIGTERM to the command" 1

	kill -CONT "$(redis_pid main)"
	# Requests stuck in the paused server run now; whatever they did,
	# the key is gone within a TTL.
	WAIT_TRIES=60 wait_until key_absent main k ||
	    fail "k still there: PTTL $(rcli main PTTL k)"
	assert_no_lock main k
}

@test "a -w waiter rides out a 3-second server outage and takes the lock; a wait that ends first says the lock and the outage" {
	local t
	t=$(redlock-cli -u "$URL" acquire k -t 60s)
	start_bg waiter -u "$URL" run k -w 30s -- touch "$D/waiter-ran"
	local w=$BG_PID
	# Waiting: blocked behind the holder.
	# eval: blocked_on is asked again at each try, not once
	wait_until eval '[ "$(blocked_on main)" -ge 1 ]'
	redis_stop main
	sleep 3
	redis_start main
	redis_acl_user "$(redis_sock main)"
	# Restarted empty: the holder's lock is gone, the waiter takes it.
	wait_bg "$w"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/waiter-ran" ]
	# Down until after the wait's end: one line naming the lock, 69.
	t=$(redlock-cli -u "$URL" acquire k -t 60s)
	start_bg late -u "$URL" run k -w 2s -- touch "$D/late-ran"
	local l=$BG_PID
	sleep 0.5
	redis_stop main
	wait_bg "$l"
	redis_start main
	assert_equal "$BG_STATUS" 69
	[ ! -e "$D/late-ran" ]
	run -0 cat "$BATS_TEST_TMPDIR/late.err"
	assert_output --regexp "^redlock-cli: lock 'k': the servers were unavailable until the end of the wait: "
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
}

@test "a waiter whose server was never up fails at once, -w or not" {
	run --separate-stderr timeout 5 redlock-cli -u "unix://$D/none.sock" run k -w 30s -- true
	assert_failure 69
}
