#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# release KEY --force (issue 17): an operator removes whoever holds KEY,
# one stderr line per holder removed; the fence counter and the waiters
# stay; a removed run hears it at once (the force leaves it a note where it
# listens) and stops its command (75), unless that command had already
# exited, whose status then stands.

load helpers

setup_file() { redis_start main; }
teardown_file() { redis_stop main; }
setup() { redis_flush; }
teardown() { stop_bg_jobs; }

@test "release --force on a lock held by a run: the run is signalled, exits 75, and the next holder's fence is larger" {
	local fence
	start_bg job run k -t 3s -- sleep 30
	wait_until key_exists main k
	fence=$(rcli main HGET '{k}:meta' fence)
	run --separate-stderr redlock-cli release k --force
	assert_success
	assert_output ''
	[[ $stderr =~ ^redlock-cli:\ lock\ \'k\':\ forced\ release\ of\ [^\ ]+\ pid\ $BG_PID,\ held\ since\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$ ]] ||
	    fail "stderr: $stderr"
	refute_key main k
	# The fence counter stays.
	key_exists main '{k}:fence'
	SECONDS=0
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	((SECONDS < 5))
	grep -q "lock 'k' was force-released by $(hostname) (pid [0-9]*)" "$BATS_TEST_TMPDIR/job.err"
	run -0 redlock-cli acquire k --json
	(($(json_field fence) > fence))
}

@test "release --force on a free key exits 1 with one line" {
	run --separate-stderr redlock-cli release k --force
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "redlock-cli: lock 'k': nothing to release: nobody holds it"
}

@test "release --force on a semaphore removes every slot, with or without --limit" {
	local n
	for n in 1 2 3; do
		run -0 redlock-cli acquire s --limit 3
	done
	run --separate-stderr redlock-cli release s --force
	assert_success
	[ "$(grep -c "^redlock-cli: lock 's': forced release of .* pid [0-9]*, held since " <<<"$stderr")" = 3 ]
	refute_key main s
	run -0 redlock-cli acquire s --limit 3 -n
	run -0 redlock-cli release s --force --limit 3
}

@test "release --force keeps the waiters and wakes one at once" {
	run -0 redlock-cli acquire k -t 30s
	start_bg waiter acquire k --fair -w 20s
	wait_until zcard_is main '{k}:leases' 1
	SECONDS=0
	run -0 redlock-cli release k --force
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	((SECONDS < 3))
	key_exists main k
}

@test "release --force removes a foreign client's lock and says whose it was" {
	rcli main SET k abcd1234ef567890 NX PX 30000 >/dev/null
	run --separate-stderr redlock-cli release k --force
	assert_success
	assert_equal "$stderr" "redlock-cli: lock 'k': forced release of a lock set by another client (value abcd1234...)"
	refute_key main k
}

@test "release --force with --token is a usage error; \$REDLOCK_TOKEN is ignored" {
	run --separate-stderr redlock-cli release k --force --token abc
	assert_failure 64
	assert_stderr_line "redlock-cli: release: --force and --token cannot be used together"
	run -0 redlock-cli acquire k
	REDLOCK_TOKEN=other run -0 redlock-cli release k --force
	refute_key main k
}

@test "release --force stops a holding run at once, not at its next renewal, and the run names who forced it" {
	local t0 elapsed
	start_bg job run k -t 30s -- sleep 60
	wait_until key_exists main k
	sleep 0.3	# listening by now
	t0=$(now_ms)
	run -0 --separate-stderr redlock-cli release k --force
	wait_bg "$BG_PID"
	elapsed=$(($(now_ms) - t0))
	assert_equal "$BG_STATUS" 75
	# A renewal comes every 10 s at this TTL: the event must come first.
	((elapsed < 1500)) || fail "the run exited $elapsed ms after the force"
	grep -qx "redlock-cli: lock 'k' was force-released by $(hostname) (pid [0-9]*); sending SIGTERM to the command" \
	    "$BATS_TEST_TMPDIR/job.err" || fail "$(cat "$BATS_TEST_TMPDIR/job.err")"
}

@test "release --force stops a holding run with a 100-day TTL at once too" {
	# Its waits are weeks long, past poll()'s int milliseconds: the
	# force must still wake it.
	local t0 elapsed
	start_bg job run k -t 100d -- sleep 60
	wait_until key_exists main k
	sleep 0.3	# listening by now
	t0=$(now_ms)
	run -0 --separate-stderr redlock-cli release k --force
	wait_bg "$BG_PID"
	elapsed=$(($(now_ms) - t0))
	assert_equal "$BG_STATUS" 75
	((elapsed < 1500)) || fail "the run exited $elapsed ms after the force"
	grep -qx "redlock-cli: lock 'k' was force-released by $(hostname) (pid [0-9]*); sending SIGTERM to the command" \
	    "$BATS_TEST_TMPDIR/job.err" || fail "$(cat "$BATS_TEST_TMPDIR/job.err")"
}

@test "a release --force after the command itself exited keeps its exit status" {
	start_bg job run k -t 30s -- sh -c "(exec >/dev/null 2>&1; $(hold_until_cmd "$BATS_TEST_TMPDIR/stop")) & exit 4"
	wait_until key_exists main k
	sleep 0.3
	run -0 --separate-stderr redlock-cli release k --force
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 4
	touch "$BATS_TEST_TMPDIR/stop"
}

@test "release --force on a semaphore of 3000 holders removes them all and names 1000, then a count" {
	rcli main EVAL "
	    for i = 1, 3000 do
	      local t = string.format('%032x', i)
	      redis.call('ZADD', KEYS[1], 99999999999999, t)
	      redis.call('HSET', KEYS[2], t .. ':host', 'host-' .. i,
	        t .. ':pid', 1000 + i, t .. ':command', 'manual',
	        t .. ':since', 1796000000000, t .. ':fence', i)
	    end
	    return 1" 2 s '{s}:meta' >/dev/null
	run --separate-stderr redlock-cli release s --force
	assert_success
	assert_output ''
	[ "$(grep -c "^redlock-cli: lock 's': forced release of host-[0-9]* pid [0-9]*, held since " <<<"$stderr")" = 1000 ]
	assert_stderr_line "redlock-cli: lock 's': ... and 2000 more"
	[ "$(wc -l <<<"$stderr")" = 1001 ]
	refute_key main s
	refute_key main '{s}:meta'
}

@test "release --force on 3000 readers removes them all and names 1000, then a count" {
	rcli main EVAL "
	    redis.call('SET', KEYS[1], 'redlock:shared', 'PX', 600000)
	    for i = 1, 3000 do
	      local t = string.format('%032x', i)
	      redis.call('ZADD', KEYS[2], 99999999999999, t)
	      redis.call('HSET', KEYS[3], t .. ':host', 'host-' .. i,
	        t .. ':pid', 1000 + i, t .. ':command', 'manual',
	        t .. ':since', 1796000000000, t .. ':fence', i)
	    end
	    return 1" 3 r '{r}:readers' '{r}:rmeta' >/dev/null
	run --separate-stderr redlock-cli release r --force
	assert_success
	[ "$(grep -c "^redlock-cli: lock 'r': forced release of host-[0-9]* pid [0-9]*, held since " <<<"$stderr")" = 1000 ]
	assert_stderr_line "redlock-cli: lock 'r': ... and 2000 more"
	refute_key main r
	refute_key main '{r}:readers'
}

# Found by the model checker (3 servers, seed 1305763440): a run whose
# redlock-cli was stopped while the command ended on its own (leaving a
# process behind), then forced.  Woken, it heard the force first and took the command for one
# still running: the command's status must stand, as for a force that
# came after the command's end.
@test "a force heard together with the command's own earlier end: the command's status stands" {
	local go="$BATS_TEST_TMPDIR/go" done="$BATS_TEST_TMPDIR/done"
	local started="$BATS_TEST_TMPDIR/started"
	# It leaves a process behind: the run holds the lock until that ends.
	start_bg job run k -s -t 3s -- sh -c \
	    ": >'$started'; while [ ! -e '$go' ]; do sleep 0.05; done; : >'$done'; sleep 1.5 & exit 3"
	wait_until test -e "$started"
	kill -STOP "$BG_PID"
	: >"$go"
	wait_until test -e "$done"
	sleep 0.3		# the guardian reaps it and tells redlock-cli
	run -0 redlock-cli release k --force
	kill -CONT "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 3
}
