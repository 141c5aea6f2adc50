#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# extend KEY --token TOK [-t TTL]: compare-and-pexpire; exit 3 when TOK
# does not hold the lock.

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
}

@test "extend -t 20s resets the lock's PTTL to about 20 seconds" {
	run -0 redlock-cli acquire k -t 2s
	local token=$output t
	run --separate-stderr redlock-cli extend k --token "$token" -t 20s
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	t=$(pttl k)
	((t > 19000 && t <= 20000)) || fail "PTTL $t"
	[ "$(rcli main GET k)" = "$token" ]
}

@test "after extend past the first TTL, status still shows the holder's metadata" {
	skip_if_slow	# the extend must come within the first 500 ms
	run -0 redlock-cli acquire k -t 500ms
	local token=$output
	run -0 redlock-cli extend k --token "$token" -t 20s
	sleep 0.7
	run --separate-stderr redlock-cli status k --json
	assert_success
	assert_output --partial "\"token\":\"${token:0:8}...\""
	assert_output --partial "\"pid\":"
	assert_output --regexp '"fence":[0-9]+'
}

@test "extend can shorten the TTL" {
	run -0 redlock-cli acquire k -t 60s
	run -0 redlock-cli extend k --token "$output" -t 500ms
	local t
	t=$(pttl k)
	((t > 0 && t <= 500)) || fail "PTTL $t"
}

@test "extend without -t keeps the TTL the lock was taken with" {
	run -0 redlock-cli acquire k -t 5m
	local token=$output
	rcli main PEXPIRE k 2000 >/dev/null
	run --separate-stderr redlock-cli -v extend k --token "$token"
	assert_success
	assert_stderr_line "redlock-cli: extended lock 'k' to 5m"
	local t
	t=$(pttl k)
	((t > 299000 && t <= 300000)) || fail "PTTL $t"
}

@test "extend without -t keeps a semaphore slot's own TTL" {
	run -0 redlock-cli acquire k -t 2m --limit 2
	local token=$output
	run -0 redlock-cli acquire k -t 5s --limit 2
	run --separate-stderr redlock-cli -v extend k --limit 2 --token "$token"
	assert_success
	assert_stderr_line "redlock-cli: extended lock 'k' to 2m"
	local t
	t=$(rcli main ZSCORE k "$token")
	((t > $(now_ms) + 110000)) || fail "slot expires at $t"
}

@test "extend without -t of a lock taken by another client gets the default 30s" {
	rcli main SET k foreign PX 2000 >/dev/null
	run --separate-stderr redlock-cli -v extend k --token foreign
	assert_success
	assert_stderr_line "redlock-cli: extended lock 'k' to 30s"
	local t
	t=$(pttl k)
	((t > 29000 && t <= 30000)) || fail "PTTL $t"
}

@test "extend -t sets the TTL it is given" {
	run -0 redlock-cli acquire k -t 5m
	run --separate-stderr redlock-cli extend k --token "$output" -t 10s
	assert_success
	local t
	t=$(pttl k)
	((t > 9000 && t <= 10000)) || fail "PTTL $t"
}

@test "an extended lock outlives its original TTL" {
	skip_if_slow
	run -0 redlock-cli acquire k -t 300ms
	local token=$output
	run -0 redlock-cli extend k --token "$token" -t 10s
	# The original TTL has passed for certain once a 300ms lock taken
	# now has expired.
	run -0 redlock-cli acquire probe -t 300ms
	wait_until eval '! key_exists main probe'
	[ "$(rcli main GET k)" = "$token" ]
}

@test "extend with a foreign token exits 3 and leaves the TTL alone" {
	run -0 redlock-cli acquire k -t 5s
	local token=$output t
	run --separate-stderr redlock-cli extend k --token not-the-holder -t 60s
	assert_failure 3
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot extend lock 'k': it is held by another owner"
	t=$(pttl k)
	((t > 0 && t <= 5000)) || fail "PTTL $t"
	[ "$(rcli main GET k)" = "$token" ]
}

@test "extend does not extend a lock set by another client" {
	rcli main SET k other PX 5000 >/dev/null
	run --separate-stderr redlock-cli extend k --token mine -t 60s
	assert_failure 3
	assert_stderr_line \
	    "redlock-cli: cannot extend lock 'k': it is held by another owner"
	local t
	t=$(pttl k)
	((t > 0 && t <= 5000)) || fail "PTTL $t"
}

@test "extend after the lock expired exits 3 and does not recreate it" {
	run -0 redlock-cli acquire k -t 100ms
	local token=$output
	wait_until eval '! key_exists main k'
	run --separate-stderr redlock-cli extend k --token "$token" -t 10s
	assert_failure 3
	assert_output ''
	assert_stderr_line "redlock-cli: cannot extend lock 'k': it is not held (expired or never taken)"
	refute_key main k
}

@test "extend takes the token from \$REDLOCK_TOKEN" {
	run -0 redlock-cli acquire k -t 2s
	REDLOCK_TOKEN=$output run --separate-stderr redlock-cli extend k -t 20s
	assert_success
	local t
	t=$(pttl k)
	((t > 19000)) || fail "PTTL $t"
}

@test "extend without a token exits 64" {
	run --separate-stderr redlock-cli extend k -t 10s
	assert_failure 64
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: extend: missing token: give --token or set REDLOCK_TOKEN"
}

@test "extend with a bad TTL exits 64 before touching the lock" {
	run -0 redlock-cli acquire k -t 5s
	run --separate-stderr redlock-cli extend k --token "$output" -t 10x
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: invalid --ttl '10x': unknown unit (us, ms, s, m, h, d or w)"
	local t
	t=$(pttl k)
	((t <= 5000)) || fail "PTTL $t"
}

@test "extend -v says what it did" {
	run -0 redlock-cli acquire k
	run --separate-stderr redlock-cli -v extend k --token "$output" -t 90s
	assert_success
	assert_stderr_line "redlock-cli: extended lock 'k' to 90s"
}
