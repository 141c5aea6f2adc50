#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fault injection (issue 7): the network between redlock-cli and a real
# server, through tests/fakes/proxy.c: a blackholed connection, a reply
# lost mid-command, a connection dropped during a run, and replies slower
# than the I/O timeout during renewals.

load ../helpers
load faults

setup_file() {
	build_fake proxy
	redis_start_tcp net
	echo "$REDIS_PORT" >"$BATS_FILE_TMPDIR/net-port"
}

teardown_file() {
	redis_stop net
}

setup() {
	slow_skip
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	redis_acl_user "$(redis_sock net)"
	redis_flush net
	DIRECT="redis://127.0.0.1:$(cat "$BATS_FILE_TMPDIR/net-port")"
	# Scripts cached on the server, so that EVALSHA runs at once: a
	# request that gets through the proxy takes effect.
	redlock-cli -u "$DIRECT" run warm -- true
	redis_flush net
	proxy_start p "$(cat "$BATS_FILE_TMPDIR/net-port")"
	URL=$(proxy_url p)
	write_child
}

teardown() {
	proxy_run_teardown
}

@test "blackholed connection: acquire exits 69 within its I/O timeouts, nothing reaches the server, no key is left" {
	local t0 elapsed
	proxy_mode p blackhole
	t0=$(now_ms)
	run -69 --separate-stderr redlock-cli -u "$URL" --io-timeout 300ms \
	    acquire k -t 5s -n
	elapsed=$(($(now_ms) - t0))
	assert_output ""
	assert_equal "$stderr" "redlock-cli: $URL: no reply within 300ms"
	# One I/O timeout for the attempt, one for the forget-attempt.
	assert_lt "$elapsed" 1500 "ms taken"
	[ "$(proxy_stat p up)" -gt 0 ] || fail "nothing was sent"
	assert_equal "$(keys_of net)" ""

	proxy_mode p pass
	run -0 redlock-cli -u "$URL" acquire k -t 5s -n
	assert_equal "$(rcli net GET k)" "$output"
}

@test "reply lost mid-command (mute): acquire exits 69, the server took the lock, and the blind forget-attempt removed it" {
	local t0 elapsed
	proxy_mode p mute
	t0=$(now_ms)
	run -69 --separate-stderr redlock-cli -u "$URL" --io-timeout 300ms \
	    acquire k -t 30s -n
	elapsed=$(($(now_ms) - t0))
	assert_output ""
	assert_equal "$stderr" "redlock-cli: $URL: no reply within 300ms"
	assert_lt "$elapsed" 1500 "ms taken"
	# The acquire ran on the server (the fence counter exists: it starts
	# from the server's clock) ...
	[ "$(rcli net GET '{k}:fence')" -gt 0 ] ||
	    fail "no fence counter: the acquire never ran"
	# ... and so did the compare-and-delete that followed it, although
	# its answer was lost too: no 30 s lock held by nobody.
	assert_released net k

	proxy_mode p pass
	run -0 redlock-cli -u "$URL" acquire k -t 5s -n
}

@test "connection dropped for less than the validity during a run: the renewal reconnects, the lock stays ours, run exits 0" {
	local token
	start_bg runner -v -u "$URL" run k -t 3s -- sh "$D/child.sh" 2.6
	wait_until child_started
	token=$(child_token)
	proxy_mode p drop
	# A renewal (every second) fails while the proxy refuses us.
	WAIT_TRIES=60 wait_until grep -q "renewal of lock 'k' failed" \
	    "$D/runner.err" || fail "no failed renewal: $(cat "$D/runner.err")"
	# The lock is still ours on the server all along.
	assert_equal "$(rcli net GET k)" "$token"
	proxy_mode p pass

	wait_run_ok
	assert_stderr_match "redlock-cli: renewal of lock 'k' failed, retrying: ($URL: (connection closed by the server|read failed: .*)|cannot connect to $URL: Connection refused)"
	assert_stderr_count "redlock-cli: released lock 'k'" 1
	assert_stderr_count "redlock-cli: lock 'k' lost: .*" 0
	assert_released net k
	[ "$(proxy_stat p accepted)" -ge 2 ] || fail "no reconnection"
}

@test "proxy delay above the I/O timeout during renewals: the lock is lost, the child gets SIGTERM before the TTL ends, run exits 75" {
	local t0 got_at
	t0=$(now_ns)
	start_bg runner -u "$URL" --io-timeout 200ms run k -t 1s -- \
	    sh "$D/child.sh" 10
	wait_until child_started
	proxy_mode p delay 400

	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(child_got_count TERM)" 1
	got_at=$(child_got_at)
	# The lock was taken after t0: its TTL ends after t0 + 1 s.
	assert_lt "$((got_at - t0))" 1000000000 "ns from the start to SIGTERM"
	bg_stderr runner
	assert_stderr_count "redlock-cli: lock 'k' lost: (renewal failed|no renewal succeeded in time): $URL: no reply within [0-9.]+(ms|s); last confirmed [0-9.]+(ms|s) ago; sending SIGTERM to the command" 1
	# The delayed requests still arrive (an extend among them can push
	# the expiry by one TTL), then the key expires.
	WAIT_TRIES=80 wait_until key_absent net k ||
	    fail "k still there: PTTL $(rcli net PTTL k)"
	assert_no_lock net k
}

# --- a signal while the lock is being taken ------------------------------

@test "SIGTERM while run's acquire reply is on its way: the lock is given back, the command never runs, run dies of SIGTERM" {
	# Each way 700 ms: the server takes the lock 700 ms in, and its
	# "taken" reaches us 700 ms later; the signal comes in between.
	proxy_mode p delay 700
	start_bg runner -u "$URL" --io-timeout 5s run k -- touch "$D/ran"
	wait_until key_present net k
	kill -TERM "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 143
	[ ! -e "$D/ran" ] || fail "the command ran"
	key_absent net k || fail "the lock was left: PTTL $(rcli net PTTL k)"
}

@test "SIGINT while acquire's reply is on its way: the lock is given back, no token is printed, acquire dies of SIGINT" {
	proxy_mode p delay 700
	# Not start_bg: a background job of a script starts with SIGINT
	# ignored, which would be honoured.
	env --default-signal=INT redlock-cli -u "$URL" --io-timeout 5s \
	    acquire k </dev/null >"$D/runner.out" 2>"$D/runner.err" 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
	wait_until key_present net k
	kill -INT "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 130
	assert_equal "$(cat "$D/runner.out" 2>/dev/null)" ""
	key_absent net k || fail "the lock was left: PTTL $(rcli net PTTL k)"
}

# A waiter blocked on the server (BZPOPMIN).
server_has_waiter() {
	[ "$(rcli net INFO clients | tr -d '\r' |
	    awk -F: '$1 == "blocked_clients" { print $2 }')" -ge 1 ]
}

@test "SIGTERM while only waiting ends run at once, with nothing to give back" {
	local t0
	run -0 --separate-stderr redlock-cli -u "$URL" acquire k -t 30s
	start_bg runner -u "$URL" run k -- touch "$D/ran"
	wait_until server_has_waiter
	t0=$(now_ms)
	kill -TERM "$BG_PID"
	wait_bg "$BG_PID"
	assert_lt "$(($(now_ms) - t0))" 1000 "ms from SIGTERM to the end"
	assert_equal "$BG_STATUS" 143
	[ ! -e "$D/ran" ]
}

@test "a command never starts with less than the safety margin left: a slow check after the take gives the lock back" {
	# Every round trip takes about 440 ms: the take leaves 1 s - 440 ms
	# of validity, and the --skip-outdated check after it leaves less
	# than the 250 ms margin.  The lock goes back, the attempt is tried
	# again within -w, and run fails with one line that says why.
	proxy_mode p delay 220
	run --separate-stderr redlock-cli -u "$URL" run k -t 1s -w 2s \
	    --order 5 --skip-outdated -- touch "$D/ran"
	assert_failure 69
	[ ! -e "$D/ran" ] || fail "the command started with too little validity"
	[[ $stderr =~ ^"redlock-cli: lock 'k': taken too late to be used: the servers took "[0-9.]+m?s", leaving less than the 250ms safety margin of its validity"$ ]] ||
	    fail "stderr: $stderr"
	proxy_mode p pass
	assert_equal "$(rcli net EXISTS k)" 0
}

@test "a take slower than the whole TTL fails with a line that says why, never an empty one" {
	proxy_mode p delay 750
	run --separate-stderr redlock-cli -u "$URL" run k -t 1s -w 1s \
	    --order 5 --skip-outdated -- touch "$D/ran"
	assert_failure 69
	[ ! -e "$D/ran" ]
	[[ $stderr =~ ^"redlock-cli: "[a-z].+ ]] || fail "stderr: '$stderr'"
	[ "$(printf '%s\n' "$stderr" | wc -l)" = 1 ]
}
