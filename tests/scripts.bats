#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Lua scripts as sent (src/scripts-lua.h puts them together from C
# macros): each one parses, so a fragment that breaks the Lua of another
# mode's script is found at build time, not by the server.

load helpers

@test "every assembled script parses with luac5.1 -p" {
	need luac5.1
	local d="$BATS_TEST_TMPDIR/lua" f n=0
	mkdir -p "$d"
	run -0 "$REDLOCK_BUILD/src/tools/script-sha" "$d"
	for f in "$d"/*.lua; do
		luac5.1 -p "$f" || fail "$(basename "$f") does not parse"
		n=$((n + 1))
	done
	((n >= 20)) || fail "only $n scripts written"
}
