#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The pure parsers (durations, URLs), key slots, SHA-1 and signal names,
# tested directly in C: see tests/unit/test-units.c.

load helpers

@test "unit tests of the parsers, key slots and SHA-1 all pass" {
	[ -x "$REDLOCK_BUILD/tests/unit/test-units" ] ||
	    make -C "$ROOT" tests/unit/test-units >/dev/null
	run "$REDLOCK_BUILD/tests/unit/test-units"
	assert_success
	assert_output --regexp '^[0-9]+ passed, 0 failed$'
}
