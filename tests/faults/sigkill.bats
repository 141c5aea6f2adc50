#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fault injection (issue 7): SIGKILL of redlock-cli at every stage of a
# run: while connecting, after the acquire was sent but before its reply,
# while the command runs, and during the release.  Whatever was written
# must expire by its TTL, the command must not outlive us, and a late
# request must not hurt the next holder.

load ../helpers
load faults

setup_file() {
	build_fake proxy
	redis_start_tcp kill
	echo "$REDIS_PORT" >"$BATS_FILE_TMPDIR/kill-port"
}

teardown_file() {
	redis_stop kill
}

setup() {
	slow_skip
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	redis_acl_user "$(redis_sock kill)"
	DIRECT="redis://127.0.0.1:$(cat "$BATS_FILE_TMPDIR/kill-port")"
	redis_flush kill
	proxy_start p "$(cat "$BATS_FILE_TMPDIR/kill-port")"
	URL=$(proxy_url p)
	write_child
}

teardown() {
	proxy_run_teardown
}

# warm_scripts: load redlock-cli's scripts into the server's cache, so
# that an EVALSHA that gets through runs (done just before the fault:
# the binary may be rebuilt between tests, and its scripts with it).
warm_scripts() {
	redlock-cli -u "$DIRECT" run warm -- true
	rcli kill DEL warm '{warm}:fence' '{warm}:meta' '{warm}:wake' >/dev/null
}

# release_sha: the SHA-1 of redlock-cli's release script, as it logs it
# (-vv) when it sends it.
release_sha() {
	redlock-cli -vv -u "$DIRECT" release warm --token none 2>&1 |
	    sed -n 's/.*> EVALSHA \([0-9a-f]\{40\}\) .*/\1/p' | head -n 1
}

# kill_runner: SIGKILL the background redlock-cli; it must die of it.
kill_runner() {
	kill -KILL "$BG_PID" ||
	    fail "redlock-cli had already exited: $(cat "$D/runner.err")"
	KILLED_AT=$(now_ns)
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 137
}

# evalsha_calls NAME: EVALSHA commands that server NAME has run.
evalsha_calls() {
	rcli "$1" INFO commandstats |
	    sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\).*/\1/p' | grep . || echo 0
}

@test "SIGKILL while connecting (blackholed proxy): the command never starts, no key is left, the lock is free" {
	proxy_mode p blackhole
	start_bg runner -u "$URL" --connect-timeout 5s --io-timeout 5s \
	    run k -t 2s -- sh "$D/child.sh" 5
	wait_until at_least 1 proxy_stat p up ||
	    fail "redlock-cli never reached the proxy"
	kill_runner
	[ ! -e "$D/started" ] || fail "the command started"
	assert_equal "$(keys_of kill)" ""

	proxy_mode p pass
	run -0 redlock-cli -u "$URL" acquire k -t 5s -n
}

@test "SIGKILL after the acquire was sent, before its reply (frozen proxy): the late request takes the key, held by nobody, and it expires by its TTL" {
	local pttl
	warm_scripts
	proxy_mode p freeze
	start_bg runner -u "$URL" --io-timeout 5s run k -t 2s -- \
	    sh "$D/child.sh" 5
	# The request sits in the frozen proxy's socket, unread.
	wait_until proxy_has_unread p ||
	    fail "no request reached the proxy: $(cat "$(proxy_dir p)/ctl.ack"); $(cat "$D/runner.err")"
	kill_runner
	[ ! -e "$D/started" ] || fail "the command started"
	assert_equal "$(keys_of kill)" ""

	# Unfrozen: the request is delivered after its sender died.
	proxy_mode p pass
	wait_until key_present kill k ||
	    fail "the late acquire never landed"
	# It landed before now: it expires at most a TTL from now.
	assert_expires_by kill k $(($(now_ms) + 2000))
	pttl=$(rcli kill PTTL k)
	[ "$pttl" -gt 0 ] && [ "$pttl" -le 2000 ] || fail "PTTL $pttl"
	# Nobody may take it meanwhile ...
	run -1 redlock-cli -u "$DIRECT" acquire k -n -q
	# ... and nobody renews it: it goes.
	WAIT_TRIES=100 wait_until key_absent kill k || fail "k never expired"
	assert_no_lock kill k
	[ ! -e "$D/started" ] || fail "the command started"
}

@test "SIGKILL while the command runs: the command is gone within 2 s (its guardian kills it), the key expires by its TTL" {
	local pid
	start_bg runner -u "$URL" run k -t 2s -- sh "$D/child.sh" 30
	wait_until child_started
	pid=$(child_pid)
	assert_equal "$(rcli kill GET k)" "$(child_token)"
	kill_runner
	WAIT_TRIES=40 wait_until proc_gone "$pid" ||
	    fail "the command (pid $pid) outlived redlock-cli by 2 s"
	# It died of SIGKILL: it saw no SIGTERM, and did not finish.
	[ ! -s "$D/got" ] || fail "the command got: $(cat "$D/got")"
	[ ! -e "$D/finished" ]
	# Nobody renews it now: it expires at most a TTL after the SIGKILL
	# (100 ms for a renewal that was on its way), and goes.
	assert_expires_by kill k $((KILLED_AT / 1000000 + 2100))
	WAIT_TRIES=100 wait_until key_absent kill k || fail "k never expired"
	assert_no_lock kill k
}

@test "SIGKILL during the release (frozen proxy): the key expires by its TTL, and the late release does not delete the next holder's lock" {
	local ours theirs calls sha held
	warm_scripts
	sha=$(release_sha)
	start_bg runner -vv -u "$URL" --io-timeout 10s run k -t 4s --renew 2s \
	    -- sh "$D/child.sh" go
	wait_until child_started
	ours=$(child_token)
	proxy_mode p freeze
	calls=$(script_calls kill)
	touch "$D/go"
	wait_until test -e "$D/finished"
	# The release (the first renewal is 2 s away) is stuck in the proxy.
	WAIT_TRIES=100 wait_until grep -q "> EVALSHA $sha " "$D/runner.err" ||
	    fail "no release sent: $(cat "$D/runner.err")"
	wait_until proxy_has_unread p || fail "the release is not in the proxy"
	kill_runner
	# Nothing got through the frozen proxy: the key is ours until its TTL.
	assert_equal "$(script_calls kill)" "$calls"
	held=$(rcli kill GET k)
	[ -z "$held" ] || assert_equal "$held" "$ours"

	# Never renewed: it expires 4 s after the acquire (which came before
	# the command started), and goes.
	assert_expires_by kill k $(($(child_started_at) / 1000000 + 4000))
	WAIT_TRIES=120 wait_until key_absent kill k || fail "k never expired"
	assert_no_lock kill k

	# The next holder, then the stale release is let through.
	run -0 redlock-cli -u "$DIRECT" acquire k -t 30s -n
	theirs=$output
	calls=$(evalsha_calls kill)
	proxy_mode p pass
	# The server ran it (compare-and-delete: not our token, not deleted).
	wait_until at_least $((calls + 1)) evalsha_calls kill ||
	    fail "the stale release never ran: $(cat "$(proxy_dir p)/ctl.ack")"
	assert_equal "$(rcli kill GET k)" "$theirs"
}
