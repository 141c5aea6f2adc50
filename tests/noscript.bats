#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Servers that deny scripting (CONTRACT.md "Protocol and server cost"):
# an ACL user without @scripting, the official workaround for
# CVE-2025-49844.  Exclusive acquire, extend, release, run, status, list,
# history and release --force work through native commands, with fences
# that only go up; the modes that need scripts (queues, -s, --limit) exit
# 69 with one line naming what the server refuses.  REDLOCK_TEST_NOLUA_BIN,
# a valkey-server built without its Lua module (tests/deps/valkey9-nolua.sh),
# runs the same file against a server with no scripting at all.

load helpers

setup_file() {
	if [ -n "${REDLOCK_TEST_NOLUA_BIN:-}" ]; then
		PATH="$(dirname "$REDLOCK_TEST_NOLUA_BIN"):$PATH"
		export PATH
	fi
	redis_start main
	if [ -z "${REDLOCK_TEST_NOLUA_BIN:-}" ]; then
		rcli main ACL SETUSER noscript on '>ns-pw' '~*' '&*' '+@all' \
		    '-@scripting' >/dev/null
		export REDLOCK_USER=noscript REDLOCK_PASSWORD=ns-pw
	fi
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
	rcli main CONFIG RESETSTAT >/dev/null
}

teardown() {
	stop_bg_jobs
	# The quorum test's own servers, also when it failed half-way.
	redis_stop_each q1 q2 q3
}

# ran CMD: how many times CMD ran without an error (INFO commandstats:
# calls, less failed_calls; a call an ACL refused is not among calls).
ran() {
	rcli main INFO commandstats | awk -F '[:=,]' -v c="cmdstat_$1" '
	    $1 == c { for (i = 2; i < NF; i += 2) v[$i] = $(i + 1) }
	    END { print v["calls"] - v["failed_calls"] }'
}

@test "the server refuses scripts: redlock-cli's own EVALSHA is refused (so the rest of this file means something)" {
	run rcli main --user "${REDLOCK_USER:-default}" --pass "${REDLOCK_PASSWORD:-}" \
	    --no-auth-warning EVAL 'return 1' 0
	[[ $output == *NOPERM* || $output == *"scripting engine"* ]] ||
	    fail "EVAL was not refused: $output"
}

@test "acquire, status, extend and release of an exclusive lock work without scripts, with a fence" {
	local token fence
	run -0 redlock-cli acquire k -t 5s --json
	token=$(json_field token | tr -d '"')
	fence=$(json_field fence)
	[ "$fence" -gt 1000000000000000 ] || fail "fence $fence: not above the clock in µs"
	[ "$(rcli main GET k)" = "$token" ]
	run -0 redlock-cli status k
	assert_output --partial "held"
	assert_output --partial "pid"
	run -0 redlock-cli extend k --token "$token" -t 60s
	(($(rcli main PTTL k) > 30000)) || fail "extend did not set the TTL: $(rcli main PTTL k)"
	run -0 redlock-cli release k --token "$token"
	refute_key main k
	run -1 redlock-cli status k
	assert_equal "$(ran evalsha)" 0
	assert_equal "$(ran eval)" 0
	(($(ran set) >= 2)) || fail "no SET ran: the native commands were not used"
}

@test "without scripts, a token that does not hold the lock cannot extend or release it (exit 3), and the holder keeps it" {
	local token
	run -0 redlock-cli acquire k -t 30s
	token=$output
	run -3 redlock-cli release k --token 0123456789abcdef0123456789abcdef
	run -3 redlock-cli extend k --token 0123456789abcdef0123456789abcdef
	[ "$(rcli main GET k)" = "$token" ]
	run -0 redlock-cli release k --token "$token"
	run -3 redlock-cli release k --token "$token"
}

@test "without scripts, fences go up from holder to holder" {
	local a b c
	run -0 redlock-cli run k -- sh -c 'echo $REDLOCK_FENCE'
	a=$output
	run -0 redlock-cli run k -- sh -c 'echo $REDLOCK_FENCE'
	b=$output
	run -0 redlock-cli acquire k --json
	c=$(json_field fence)
	((a < b && b < c)) || fail "fences $a $b $c"
}

@test "without scripts, two clients exclude each other: -n is busy and names the holder" {
	run -0 redlock-cli acquire k -t 30s
	run --separate-stderr redlock-cli acquire k -n
	assert_equal "$status" 1
	[[ $stderr == *"redlock-cli: lock 'k' is held by"* ]] || fail "stderr: $stderr"
	[[ $stderr == *"pid"* ]] || fail "the holder is not named: $stderr"
}

@test "without scripts, run renews past its TTL, and a waiter gets the lock at its release" {
	local holder
	start_bg holder run k -t 1s -- sh -c 'sleep 2.5'
	holder=$BG_PID
	wait_until key_exists main k
	run -0 redlock-cli acquire k -w 10s --json
	json_field fence >/dev/null
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 0
}

@test "without scripts, release --force removes the holder and its run stops with exit 75" {
	local job
	start_bg job run k -t 3s -- sleep 30
	job=$BG_PID
	wait_until key_exists main k
	run --separate-stderr redlock-cli release k --force
	assert_success
	[[ $stderr == *"forced release of"* ]] || fail "stderr: $stderr"
	refute_key main k
	wait_bg "$job"
	assert_equal "$BG_STATUS" 75
}

@test "without scripts, list shows a held lock, and history the runs that ended" {
	run -0 redlock-cli run k -- true
	run -0 redlock-cli acquire held -t 30s
	run -0 redlock-cli list
	assert_output --partial "held"
	run -0 redlock-cli history k
	assert_output --partial "ok"
}

@test "without scripts, --queue fifo, -s and --limit exit 69 with one line naming what the server refuses" {
	local args
	for args in "--queue fifo" "-s" "--limit 2"; do
		# shellcheck disable=SC2086
		run --separate-stderr redlock-cli acquire k -n $args
		assert_equal "$status" 69
		assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 1
		[[ $stderr == "redlock-cli: "*"refuses scripts"* ]] ||
		    fail "$args: stderr: $stderr"
		assert_output ''
	done
	refute_key main k
}

@test "without scripts, a quorum of three takes, renews and releases the lock, its fence lifted on a majority, and with one server down it still runs" {
	local s urls=() a b
	for s in q1 q2 q3; do
		redis_start "$s"
		[ -n "${REDLOCK_TEST_NOLUA_BIN:-}" ] ||
			rcli "$s" ACL SETUSER noscript on '>ns-pw' '~*' '&*' \
			    '+@all' '-@scripting' >/dev/null
		urls+=(-u "unix://$(redis_sock "$s")")
	done
	# make test-acl: redis_start made its own user redlock-cli's; this
	# test's is the one without scripts.
	[ -n "${REDLOCK_TEST_NOLUA_BIN:-}" ] ||
		export REDLOCK_USER=noscript REDLOCK_PASSWORD=ns-pw
	# One server's counter far ahead: the holder's fence is the highest
	# its majority returned, and the others are lifted to it.
	rcli q1 SET '{k}:fence' 5000000000000000000 >/dev/null
	run -0 redlock-cli "${urls[@]}" run k -t 1s -- sh -c 'sleep 1.5; echo $REDLOCK_FENCE'
	a=$output
	[ "$a" = 5000000000000000001 ] || fail "fence $a"
	for s in q2 q3; do
		[ "$(rcli "$s" GET '{k}:fence')" = "$a" ] || fail "$s not lifted: $(rcli "$s" GET '{k}:fence')"
	done
	redis_stop q1
	run -0 redlock-cli "${urls[@]}" run k -- sh -c 'echo $REDLOCK_FENCE'
	b=$output
	((b > a)) || fail "fences $a then $b"
	for s in q2 q3; do
		refute_key "$s" k
		redis_stop "$s"
	done
}

@test "without scripts, the man page's ACL for such a user is enough: its commands, without +evalsha and +eval" {
	[ -z "${REDLOCK_TEST_NOLUA_BIN:-}" ] || skip "no ACL: the server has no Lua at all"
	local rules token
	# shellcheck disable=SC2001
	rules=$(sed 's/ +evalsha +eval / /' <<<"$REDLOCK_ACL_RULES")
	[ "$rules" != "$REDLOCK_ACL_RULES" ] || fail "the rules named no +evalsha +eval"
	# shellcheck disable=SC2086
	rcli main ACL SETUSER lean $rules +watch +unwatch +multi +exec \
	    '>lean-pw' >/dev/null
	export REDLOCK_USER=lean REDLOCK_PASSWORD=lean-pw
	run -0 redlock-cli acquire k -t 30s
	token=$output
	run -0 redlock-cli extend k --token "$token"
	run -0 redlock-cli status k
	run -0 redlock-cli list
	run -0 redlock-cli release k --token "$token"
	run -0 redlock-cli run k -- true
	run -0 redlock-cli history k
	run -0 redlock-cli acquire k
	run -0 redlock-cli release k --force
}
