#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Servers that misbehave: a fake one that sends garbage, a reply of the
# wrong type, closes, or never answers (tests/fakes/fake-redis.sh, socat);
# and real ones that refuse: WRONGTYPE, OOM, a read-only replica.
# Each gives one clear line, the contract's exit code, and no crash.

load helpers

FAKE=${BATS_TEST_DIRNAME}/fakes/fake-redis.sh
FAKE_MODES="garbage status close hangup stall"

# fake_start MODE: a fake server on $BATS_FILE_TMPDIR/fake-MODE.sock.
fake_start() {
	local sock="$BATS_FILE_TMPDIR/fake-$1.sock"
	"$FAKE" serve "$1" "$sock" </dev/null >/dev/null \
	    2>"$BATS_FILE_TMPDIR/fake-$1.log" 3>&- &
	echo $! >"$BATS_FILE_TMPDIR/fake-$1.pid"
	wait_until test -S "$sock"
}

fake_stop() {
	local pid
	pid=$(cat "$BATS_FILE_TMPDIR/fake-$1.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$BATS_FILE_TMPDIR/fake-$1.pid"
	return 0
}

fake_url() { echo "unix://$BATS_FILE_TMPDIR/fake-$1.sock"; }

setup_file() {
	redis_start main
	export MAIN_URL=$REDLOCK_URL
	if have socat; then
		local mode
		for mode in $FAKE_MODES; do
			fake_start "$mode" || return 1
		done
	fi
}

teardown_file() {
	local mode
	for mode in $FAKE_MODES; do
		fake_stop "$mode"
	done
	redis_stop main
	redis_stop oom
	redis_stop master
	redis_stop replica
}

setup() {
	redis_flush
}

need_socat() {
	need socat
}

# expect_fail CODE MAX_MS LINE CMD...: CMD exits CODE within MAX_MS with
# nothing on stdout and exactly LINE on stderr (LINE ending in '*' is a
# prefix).  Appends to $failed instead of stopping.
expect_fail() {
	local code=$1 max=$2 line=$3 start end
	shift 3
	start=$(now_ms)
	run --separate-stderr "$@"
	end=$(now_ms)
	local what="'$*'"
	if [ "$status" -ne "$code" ]; then
		failed+=$'\n'"  $what: exit $status, not $code: $stderr"
	elif [ -n "$output" ]; then
		failed+=$'\n'"  $what: stdout '$output'"
	elif [ "$(printf '%s\n' "$stderr" | wc -l)" -ne 1 ]; then
		failed+=$'\n'"  $what: not one line: $stderr"
	elif [[ $line == *'*' && $stderr != "${line%\*}"* ]] ||
	    [[ $line != *'*' && $stderr != "$line" ]]; then
		failed+=$'\n'"  $what: '$stderr' (expected '$line')"
	elif ((end - start > max)); then
		failed+=$'\n'"  $what: took $((end - start))ms (at most ${max}ms)"
	fi
}

@test "a server that sends garbage: exit 76, protocol error" {
	need_socat
	local url failed='' cmd
	url=$(fake_url garbage)
	for cmd in "acquire k" "acquire k -n" "release k --token t" \
	    "extend k --token t" "status k"; do
		# shellcheck disable=SC2086
		expect_fail 76 2000 \
		    "redlock-cli: $url: protocol error: Protocol error, got \"h\" as reply type byte" \
		    redlock-cli -u "$url" $cmd
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a server that answers +OK to EVALSHA: exit 76 naming the types" {
	need_socat
	local url failed=''
	url=$(fake_url status)
	expect_fail 76 2000 \
	    "redlock-cli: $url: unexpected reply to acquire: expected array of 2 integers, got status" \
	    redlock-cli -u "$url" acquire k
	expect_fail 76 2000 \
	    "redlock-cli: $url: unexpected reply to release: expected integer, got status" \
	    redlock-cli -u "$url" release k --token t
	expect_fail 76 2000 \
	    "redlock-cli: $url: unexpected reply to extend: expected integer, got status" \
	    redlock-cli -u "$url" extend k --token t
	expect_fail 76 2000 \
	    "redlock-cli: $url: unexpected reply to status: expected *" \
	    redlock-cli -u "$url" status k
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a server that closes without answering: exit 69" {
	need_socat
	local url failed='' cmd
	url=$(fake_url close)
	for cmd in "acquire k" "release k --token t" "extend k --token t" \
	    "status k"; do
		# shellcheck disable=SC2086
		expect_fail 69 2000 \
		    "redlock-cli: $url: connection closed by the server" \
		    redlock-cli -u "$url" $cmd
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a server that hangs up at once: exit 69" {
	need_socat
	local url failed='' cmd
	url=$(fake_url hangup)
	for cmd in "acquire k" "release k --token t" "status k"; do
		# Closed before or after our request went out: either way the
		# connection failed, and says so on one line.
		# shellcheck disable=SC2086
		expect_fail 69 2000 "redlock-cli: $url: *" \
		    redlock-cli -u "$url" $cmd
		[[ $stderr =~ (connection\ closed\ by\ the\ server|write\ failed|read\ failed) ]] ||
		    failed+=$'\n'"  $cmd: $stderr"
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a server that never answers: exit 69 after --io-timeout" {
	skip_if_slow
	need_socat
	local url failed='' cmd start end
	url=$(fake_url stall)
	for cmd in "release k --token t" "extend k --token t" "status k"; do
		start=$(now_ms)
		# shellcheck disable=SC2086
		expect_fail 69 2000 "redlock-cli: $url: no reply within 300ms" \
		    redlock-cli --io-timeout 300ms -u "$url" $cmd
		end=$(now_ms)
		((end - start >= 300)) ||
		    failed+=$'\n'"  $cmd: gave up after $((end - start))ms"
	done
	# acquire then tries to take its token back (the attempt's outcome is
	# unknown), which costs a second timeout at most.
	start=$(now_ms)
	expect_fail 69 2500 "redlock-cli: $url: no reply within 300ms" \
	    redlock-cli --io-timeout 300ms -u "$url" acquire k
	end=$(now_ms)
	((end - start >= 300)) ||
	    failed+=$'\n'"  acquire: gave up after $((end - start))ms"
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a server that never answers: the default --io-timeout is 1s" {
	skip_if_slow
	need_socat
	local url start end
	url=$(fake_url stall)
	start=$(now_ms)
	run --separate-stderr redlock-cli -u "$url" status k
	end=$(now_ms)
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: $url: no reply within 1s"
	((end - start >= 1000 && end - start < 3000)) ||
	    fail "gave up after $((end - start))ms"
}

@test "a waiting acquire gives up on a server that never answers" {
	skip_if_slow
	need_socat
	local url start end
	url=$(fake_url stall)
	start=$(now_ms)
	run --separate-stderr redlock-cli --io-timeout 200ms -u "$url" \
	    acquire k -w 10s
	end=$(now_ms)
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: $url: no reply within 200ms"
	((end - start < 3000)) || fail "gave up after $((end - start))ms"
}

@test "a key of the wrong type: exit 76 saying what the key holds" {
	rcli main HSET k f v >/dev/null
	local cmd failed=''
	for cmd in "acquire k" "acquire k -n" "release k --token t" \
	    "extend k --token t" "status k"; do
		# shellcheck disable=SC2086
		run --separate-stderr timeout 10 redlock-cli $cmd
		if [ "$status" -ne 76 ]; then
			failed+=$'\n'"  $cmd: exit $status: $stderr"
		elif [ -n "$output" ]; then
			failed+=$'\n'"  $cmd: stdout '$output'"
		elif [ "$stderr" != "redlock-cli: key 'k' holds a hash, not a lock" ]; then
			failed+=$'\n'"  $cmd: '$stderr'"
		fi
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
	# The foreign key is left alone.
	[ "$(rcli main TYPE k)" = hash ]
	[ "$(rcli main HGET k f)" = v ]
}

@test "a failed acquire does not leave the lock taken" {
	# A corrupt fence counter makes the acquire script fail after the
	# point where it could already have written the lock.
	rcli main SET '{k}:fence' not-a-number >/dev/null
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 76
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr == "redlock-cli: $MAIN_URL: "* ]]
	if key_exists main k; then
		fail "the lock is held by a token nobody knows:" \
		    "GET k = $(rcli main GET k), PTTL $(rcli main PTTL k)"
	fi
}

@test "a server out of memory: exit 76 with the OOM text, nothing written" {
	redis_start oom --maxmemory 1 --maxmemory-policy noeviction
	local url
	url="unix://$(redis_sock oom)"
	run --separate-stderr redlock-cli -u "$url" acquire k
	assert_failure 76
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr == "redlock-cli: $url: OOM command not allowed"* ]] ||
	    fail "stderr: $stderr"
	[ "$(rcli oom DBSIZE)" = 0 ]
	# Reading still works there.
	run --separate-stderr redlock-cli -u "$url" status k
	assert_failure 1
	assert_output free
	redis_stop oom
}

@test "a read-only replica: acquire exits 76 with the READONLY text" {
	redis_start_tcp master || skip "cannot start a TCP server"
	local port=$REDIS_PORT
	redis_start_replica replica "$port"
	local url
	url="unix://$(redis_sock replica)"
	run --separate-stderr redlock-cli -u "$url" acquire k
	assert_failure 76
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr == "redlock-cli: $url: READONLY You can't write against a read only replica."* ]] ||
	    fail "stderr: $stderr"
	[ "$(rcli master DBSIZE)" = 0 ]
	# What the master holds is visible on the replica, and not writable.
	run -0 redlock-cli -u "redis://127.0.0.1:$port" acquire k
	local token=$output
	wait_until eval '[ "$(rcli replica GET k)" = "$token" ]'
	run --separate-stderr redlock-cli -u "$url" status k
	assert_success
	run --separate-stderr redlock-cli -u "$url" release k --token "$token"
	assert_failure 76
	[[ $stderr == "redlock-cli: $url: READONLY "* ]] || fail "stderr: $stderr"
	[ "$(rcli master GET k)" = "$token" ]
	redis_stop replica
	redis_stop master
}

@test "a server that goes away between commands: exit 69 and no token left" {
	redis_start gone
	local url
	url="unix://$(redis_sock gone)"
	run -0 redlock-cli -u "$url" acquire k
	local token=$output
	redis_stop gone
	run --separate-stderr redlock-cli -u "$url" release k --token "$token"
	assert_failure 69
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot connect to $url: No such file or directory"
}
