#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The server under test (make test-servers): with REDLOCK_TEST_SERVER_BIN,
# REDLOCK_TEST_SENTINEL_BIN and REDLOCK_TEST_CLI_BIN set, every server,
# sentinel and redis-cli the suite starts is that one; without them, the
# redis-server on PATH.

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

# version_of BINARY: the "v=X.Y.Z" of BINARY --version.
version_of() {
	"$1" --version | sed -n 's/.* v=\([0-9][0-9.]*\) .*/\1/p'
}

@test "the suite's redis-server, redis-sentinel and redis-cli are the ones REDLOCK_TEST_*_BIN name" {
	[ -n "${REDLOCK_TEST_SERVER_BIN:-}" ] ||
	    skip "the system's redis-server (REDLOCK_TEST_SERVER_BIN is not set)"
	assert_equal "$(readlink -f "$(command -v redis-server)")" \
	    "$(readlink -f "$REDLOCK_TEST_SERVER_BIN")"
	assert_equal "$(readlink -f "$(command -v redis-sentinel)")" \
	    "$(readlink -f "${REDLOCK_TEST_SENTINEL_BIN:-$REDLOCK_TEST_SERVER_BIN}")"
	assert_equal "$(readlink -f "$(command -v redis-cli)")" \
	    "$(readlink -f "${REDLOCK_TEST_CLI_BIN:-$(dirname "$REDLOCK_TEST_SERVER_BIN")/redis-cli}")"
}

@test "the server the suite started runs the version of the redis-server it calls" {
	local want info
	want=$(version_of redis-server)
	[ -n "$want" ] || fail "no version in: $(redis-server --version)"
	info=$(rcli main INFO server | tr -d '\r')
	# Valkey reports valkey_version and a redis_version of 7.2.4 for
	# clients that look at it; Redis only redis_version.
	case $(redis-server --version) in
	Valkey*) assert_equal "$(sed -n 's/^valkey_version://p' <<<"$info")" "$want" ;;
	*) assert_equal "$(sed -n 's/^redis_version://p' <<<"$info")" "$want" ;;
	esac
	run -0 redlock-cli acquire k -n
}
