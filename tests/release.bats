#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# release KEY --token TOK: compare-and-delete; exit 3 when TOK does not
# hold the lock, saying whether it expired or someone else holds it.

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

@test "release with the holder's token deletes the lock and its metadata" {
	run -0 redlock-cli acquire k
	local token=$output
	run --separate-stderr redlock-cli release k --token "$token"
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	refute_key main k
	refute_key main '{k}:meta'
}

@test "release keeps the fence counter, so the next holder's fence is higher" {
	local fence token
	run -0 redlock-cli acquire k --json
	fence=$(json_field fence)
	token=$(json_field token | tr -d '"')
	run -0 redlock-cli release k --token "$token"
	[ "$(rcli main GET '{k}:fence')" = "$fence" ]
	run -0 redlock-cli acquire k --json
	(($(json_field fence) > fence))
}

@test "release lets the next acquire -n succeed at once" {
	run -0 redlock-cli acquire k
	run -0 redlock-cli release k --token "$output"
	run -0 redlock-cli acquire k -n
}

@test "release with a foreign token exits 3 and keeps the lock" {
	run -0 redlock-cli acquire k
	local token=$output
	run --separate-stderr redlock-cli release k --token 0123456789abcdef0123456789abcdef
	assert_failure 3
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot release lock 'k': it is held by another owner"
	[ "$(rcli main GET k)" = "$token" ]
	key_exists main '{k}:meta'
}

@test "release does not delete a lock set by another client" {
	rcli main SET k other PX 10000 >/dev/null
	run --separate-stderr redlock-cli release k --token mine
	assert_failure 3
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot release lock 'k': it is held by another owner"
	[ "$(rcli main GET k)" = other ]
}

@test "release after the lock expired exits 3 with the not-held message" {
	run -0 redlock-cli acquire k -t 100ms
	local token=$output
	wait_until eval '! key_exists main k'
	run --separate-stderr redlock-cli release k --token "$token"
	assert_failure 3
	assert_output ''
	assert_stderr_line "redlock-cli: cannot release lock 'k': it is not held (expired or never taken)"
}

@test "release after expiry and a new holder exits 3 and keeps the new lock" {
	run -0 redlock-cli acquire k -t 100ms
	local old=$output
	run -0 redlock-cli acquire k -w 5s
	local new=$output
	run --separate-stderr redlock-cli release k --token "$old"
	assert_failure 3
	assert_stderr_line \
	    "redlock-cli: cannot release lock 'k': it is held by another owner"
	[ "$(rcli main GET k)" = "$new" ]
	[ "$(rcli main HGET '{k}:meta' token)" = "$new" ]
}

@test "releasing twice: the second release exits 3" {
	run -0 redlock-cli acquire k
	local token=$output
	run -0 redlock-cli release k --token "$token"
	run --separate-stderr redlock-cli release k --token "$token"
	assert_failure 3
	assert_stderr_line "redlock-cli: cannot release lock 'k': it is not held (expired or never taken)"
}

@test "release of a lock never taken exits 3" {
	run --separate-stderr redlock-cli release nothing --token abc
	assert_failure 3
	assert_output ''
	assert_stderr_line "redlock-cli: cannot release lock 'nothing': it is not held (expired or never taken)"
}

@test "release takes the token from \$REDLOCK_TOKEN when --token is absent" {
	run -0 redlock-cli acquire k
	REDLOCK_TOKEN=$output run --separate-stderr redlock-cli release k
	assert_success
	[ -z "$stderr" ]
	refute_key main k
}

@test "release --token overrides \$REDLOCK_TOKEN" {
	run -0 redlock-cli acquire k
	local token=$output
	REDLOCK_TOKEN=wrong run --separate-stderr redlock-cli release k \
	    --token "$token"
	assert_success
	refute_key main k
	run -0 redlock-cli acquire k
	REDLOCK_TOKEN=$output run --separate-stderr redlock-cli release k \
	    --token wrong
	assert_failure 3
	key_exists main k
}

@test "release without a token exits 64 and says how to give one" {
	run -0 redlock-cli acquire k
	run --separate-stderr redlock-cli release k
	assert_failure 64
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: release: missing token: give --token or set REDLOCK_TOKEN"
	key_exists main k
}

@test "release with an empty \$REDLOCK_TOKEN counts as no token" {
	REDLOCK_TOKEN="" run --separate-stderr redlock-cli release k
	assert_failure 64
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: release: missing token: give --token or set REDLOCK_TOKEN"
}

@test "release with an empty --token exits 64" {
	run --separate-stderr redlock-cli release k --token ''
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: release: the token is empty"
}

@test "release honours --prefix" {
	run -0 redlock-cli --prefix p: acquire k
	local token=$output
	run --separate-stderr redlock-cli release k --token "$token"
	assert_failure 3
	key_exists main p:k
	run -0 redlock-cli release k --token "$token" --prefix p:
	refute_key main p:k
	refute_key main '{p:k}:meta'
}

@test "release -v says what it released" {
	run -0 redlock-cli acquire k
	run --separate-stderr redlock-cli -v release k --token "$output"
	assert_success
	assert_output ''
	assert_stderr_line "redlock-cli: released lock 'k'"
}

@test "the not-owner message for a key with a newline stays on one line" {
	run --separate-stderr redlock-cli release $'a\nb' --token t
	assert_failure 3
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] ||
	    fail "stderr has several lines: $stderr"
	assert_stderr_line "redlock-cli: cannot release lock 'a?b': it is not held (expired or never taken)"
}

# A server that lost the scripts (SCRIPT FLUSH) while a run held its lock
# gets the release whole, once, and the lock is still released.
@test "a run's release after SCRIPT FLUSH goes out whole (EVAL), once, and releases, in both modes" {
	local mode evals
	for mode in -x -s; do
		redlock-cli run k "$mode" -- true	# the scripts, loaded
		rcli main CONFIG RESETSTAT >/dev/null
		run --separate-stderr redlock-cli run k "$mode" -- \
		    redis-cli -s "$(redis_sock main)" SCRIPT FLUSH
		assert_success
		[ -z "$stderr" ] || fail "$mode: $stderr"
		refute_key main k
		evals=$(rcli main INFO commandstats | tr -d '\r' |
		    sed -n 's/^cmdstat_eval:calls=\([0-9]*\),.*/\1/p')
		[ "$evals" = 1 ] || fail "$mode: $evals EVALs, not the release's one"
		[ "$(rcli main INFO clients | tr -d '\r' |
		    sed -n 's/^connected_clients://p')" = 1 ] ||
		    fail "$mode: a connection of ours is left open"
	done
	tok=$(redlock-cli acquire k -s)
	rcli main SCRIPT FLUSH >/dev/null
	run -0 redlock-cli release k --token "$tok"
	refute_key main k
}
