#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Two other real clients on the same key as redlock-cli: redis-py's Lock
# (Debian's python3-redis, under /usr/bin/python3: the python3 first on
# PATH may be another) and node-redlock (npm redlock + ioredis, pinned by
# bench/node/package-lock.json).  Each excludes the other in both
# directions, and neither can release the other's lock.

load helpers

PY=/usr/bin/python3

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
	SOCK=$(redis_sock main)
}

# need_client py|node: skip (make check) or fail (make test) with one line
# when that client is not installed.
need_client() {
	local why=
	case $1 in
	py)
		[ -x "$PY" ] && "$PY" -c 'import redis' 2>/dev/null ||
		    why="python3-redis is not installed (for $PY)"
		;;
	node)
		need node
		[ -f "$ROOT/bench/node/node_modules/redlock/package.json" ] &&
		    [ -f "$ROOT/bench/node/node_modules/ioredis/package.json" ] ||
		    why="node-redlock is not installed (make deps: npm ci in bench/node)"
		;;
	esac
	[ -n "$why" ] || return 0
	[ "${REDLOCK_TEST_MISSING:-skip}" != fail ] ||
	    fail "$why, though make deps ran"
	skip "$why"
}

# other py|node ACTION ARGS...: the other client's step on the main server.
other() {
	local who=$1
	shift
	case $who in
	py) "$PY" "$ROOT/tests/interop/redis-py-lock.py" "$1" "$SOCK" "${@:2}" ;;
	node) NODE_PATH="$ROOT/bench/node/node_modules" \
	    node "$ROOT/tests/interop/node-redlock.js" "$1" "$SOCK" "${@:2}" ;;
	esac
}

# value_is KEY VALUE: the lock key holds exactly VALUE.
value_is() {
	assert_equal "$(rcli main GET "$1")" "$2"
}

busy_line="redlock-cli: lock 'k' is held by another owner"

# excluded_by WHO: WHO holds k; redlock-cli -n is refused, and gets k
# once WHO's lock is released by WHO.
excluded_by() {
	local who=$1 v
	run -0 other "$who" acquire k 30000
	v=$output
	[ -n "$v" ] || fail "$who printed no lock value"
	value_is k "$v"
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 1
	assert_stderr_line "$busy_line"
	[ -z "$output" ] || fail "stdout on failure: $output"
	value_is k "$v"
	run -0 other "$who" release k "$v"
	run -0 redlock-cli acquire k -n
}

# excludes WHO: redlock-cli holds k; WHO is refused while it does, and
# gets k once redlock-cli released it.
excludes() {
	local who=$1 token
	run -0 redlock-cli acquire k -t 30s
	token=$output
	run -1 other "$who" acquire k 30000
	value_is k "$token"
	run -0 redlock-cli release k --token "$token"
	run -0 other "$who" acquire k 30000
	value_is k "$output"
}

@test "redis-py's Lock on k excludes redlock-cli, which gets k after redis-py releases" {
	need_client py
	excluded_by py
}

@test "redlock-cli's lock on k excludes redis-py's Lock, which gets k after redlock-cli releases" {
	need_client py
	excludes py
}

@test "node-redlock on k excludes redlock-cli, which gets k after node-redlock releases" {
	need_client node
	excluded_by node
}

@test "redlock-cli's lock on k excludes node-redlock, which gets k after redlock-cli releases" {
	need_client node
	excludes node
}

@test "run holds k against redis-py and node-redlock until its command ends" {
	need_client py
	need_client node
	local done="$BATS_TEST_TMPDIR/done"
	start_bg holder run k -t 2s -- sh -c "$(hold_until_cmd "$done")"
	wait_until key_exists main k || fail "run did not take k"
	# Past the first TTL: the renewed lock still excludes both.
	sleep 2.5
	run -1 other py acquire k 30000
	run -1 other node acquire k 30000
	touch "$done"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	run -0 other py acquire k 30000
}

# redlock-cli's lock on k expired and another client took k: the old
# token does not release the other's lock.
@test "redlock-cli cannot release redis-py's or node-redlock's lock with a stale token" {
	need_client py
	need_client node
	local who old v
	for who in py node; do
		redis_flush
		run -0 redlock-cli acquire k -t 100ms
		old=$output
		wait_until key_gone main k || fail "k did not expire"
		run -0 other "$who" acquire k 30000
		v=$output
		run --separate-stderr redlock-cli release k --token "$old"
		assert_failure 3
		value_is k "$v"
	done
}

@test "neither redis-py nor node-redlock can release redlock-cli's lock" {
	need_client py
	need_client node
	local who old token
	for who in py node; do
		redis_flush
		# Their own lock expired, and redlock-cli took k.
		run -0 other "$who" acquire k 100
		old=$output
		wait_until key_gone main k || fail "$who's lock did not expire"
		run -0 redlock-cli acquire k -t 30s
		token=$output
		run -3 other "$who" release k "$old"
		value_is k "$token"
		# A value that was never theirs either.
		run -3 other "$who" release k not-the-token
		value_is k "$token"
		run -0 redlock-cli release k --token "$token"
	done
}
