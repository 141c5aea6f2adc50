#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A server without scripting (Valkey 9 built with BUILD_LUA=no: make
# test-servers SERVERS=valkey9-nolua): every lock operation of redlock-cli
# is a Lua script, so each one fails at once, exit 76, with the server's
# reply, and nothing runs and nothing is written without the lock.  The
# file skips on a server that has Lua, which is every other one.

load helpers

# Each test skips rather than the file: the bats of Debian 12 (1.8) takes a
# skip in setup_file for a failure.
setup_file() {
	redis_start main
	NOLUA_HAS_LUA=0
	[ "$(rcli main EVAL 'return 1' 0 2>&1)" != 1 ] || NOLUA_HAS_LUA=1
	export NOLUA_HAS_LUA
}

teardown_file() {
	redis_stop main
}

setup() {
	[ "$NOLUA_HAS_LUA" = 0 ] ||
	    skip "the server has Lua (make test-servers SERVERS=valkey9-nolua)"
	redis_flush
}

# nolua_failed: the last run failed with exit 76 and the server's one
# line, without waiting for a retry.
nolua_failed() {
	assert_failure 76
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: $REDLOCK_URL: ERR Could not find scripting engine 'lua'"
}

@test "without Lua, acquire exits 76 at once with the server's reply, even with -w" {
	run --separate-stderr redlock-cli acquire k
	nolua_failed
	local t0=$SECONDS
	run --separate-stderr redlock-cli acquire k -w 5s
	nolua_failed
	((SECONDS - t0 < 4))
	[ "$(rcli main DBSIZE)" = 0 ]
}

@test "without Lua, run exits 76 and never starts its command" {
	run --separate-stderr redlock-cli run k -- touch "$BATS_TEST_TMPDIR/ran"
	nolua_failed
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	[ "$(rcli main DBSIZE)" = 0 ]
}

@test "without Lua, release, extend and status exit 76 with the server's reply" {
	local tok=0123456789abcdef0123456789abcdef
	run --separate-stderr redlock-cli release k --token "$tok"
	nolua_failed
	run --separate-stderr redlock-cli release k --force
	nolua_failed
	run --separate-stderr redlock-cli extend k --token "$tok"
	nolua_failed
	run --separate-stderr redlock-cli status k
	nolua_failed
}

@test "without Lua, the server still has SET IFEQ and DELIFEQ, what a lock without scripts would use" {
	[ "$(rcli main SET k tok1)" = OK ]
	[ "$(rcli main SET k tok1 IFEQ tok1 PX 30000)" = OK ]
	[ "$(rcli main SET k tok2 IFEQ other)" = '' ]
	[ "$(rcli main GET k)" = tok1 ]
	[ "$(rcli main DELIFEQ k other)" = 0 ]
	[ "$(rcli main DELIFEQ k tok1)" = 1 ]
	refute_key main k
}
