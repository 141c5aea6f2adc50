#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Lua scripts as the server gets them (assembled from the C macros of
# src/scripts-*.h, dumped by src/tools/script-sha --dump): each one parses
# with luac5.1 -p, reads or writes no global but Redis' own and Lua's
# library, since the server refuses a script that touches any other
# global, at run time and only on the path that touches it, and touches
# only keys passed in KEYS, as Redis asks (a Cluster, a proxy or another
# server may refuse the rest).

load helpers

setup_file() {
	[ -x "$ROOT/src/tools/script-sha" ] || return 0
	mkdir -p "$BATS_FILE_TMPDIR/lua"
	"$ROOT/src/tools/script-sha" --dump "$BATS_FILE_TMPDIR/lua"
}

setup() {
	need luac5.1
	[ -x "$ROOT/src/tools/script-sha" ] || skip "src/tools/script-sha is not built"
	L=$BATS_FILE_TMPDIR/lua
}

@test "every script is dumped: one file per script of LOCK_SCRIPTS" {
	local n
	n=$(grep -c '^[[:space:]]*X([A-Z_]*, lua_[a-z_]*)' "$ROOT/src/scripts-lua.h")
	[ "$n" -gt 20 ]
	assert_equal "$(ls "$L" | grep -c '\.lua$')" "$n"
}

@test "every script parses with luac5.1 -p" {
	local f
	for f in "$L"/*.lua; do
		luac5.1 -p "$f" || fail "$(basename "$f") does not parse"
	done
}

@test "no script touches a global beyond Redis' and Lua's own" {
	local f bad allowed='^(redis|KEYS|ARGV|tonumber|tostring|ipairs|pairs|string|math|table|type|error|unpack|next|select|pcall|assert|cjson|bit)$'
	for f in "$L"/*.lua; do
		bad=$(luac5.1 -l -p "$f" | sed -n 's/.*[GS]ETGLOBAL.*; \(.*\)$/\1/p' |
		    sort -u | grep -Ev "$allowed" || true)
		[ -z "$bad" ] || fail "$(basename "$f"): globals $bad"
	done
}

@test "every key a script touches is declared in KEYS (tests/lint/lua_keys.py)" {
	need python3
	run python3 "$ROOT/tests/lint/lua_keys.py" "$L"/*.lua
	[ "$status" -eq 0 ] || fail "keys not declared in KEYS:
$output"
}
