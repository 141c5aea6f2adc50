#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The code's floors (STYLE.md): no file of src/ includes or calls one that
# includes or calls it back, no function over 60 lines, no file over 500;
# and the guardian, which outlives redlock-cli's view of the lock, never
# touches the lock or a connection.  make lint runs the same scripts.

load helpers

SRC=$BATS_TEST_DIRNAME/../src
LINT=$BATS_TEST_DIRNAME/lint

@test "no include or call circle between the files of src/" {
	run -0 python3 "$LINT/floors.py" "$SRC"
	assert_output --partial 'no include or call circle'
}

@test "the floors check finds a call circle and an include circle" {
	local d=$BATS_TEST_TMPDIR/src
	mkdir -p "$d"
	printf '#include "b.h"\nint\na_top(void)\n{\n\treturn b_low();\n}\n' >"$d/a.c"
	printf '#include "a.h"\nint\nb_low(void)\n{\n\treturn a_top();\n}\n' >"$d/b.c"
	printf '#include "b.h"\n' >"$d/a.h"
	printf '#include "a.h"\n' >"$d/b.h"
	run -1 python3 "$LINT/floors.py" "$d"
	assert_line 'call circle: a.c b.c'
	assert_line 'include circle: a.h b.h'
}

@test "no function of src/ over 60 lines, no file over 500" {
	run -0 python3 "$LINT/sizes.py" "$SRC"
}

@test "the size check finds a 61-line function" {
	local d=$BATS_TEST_TMPDIR/src
	mkdir -p "$d"
	{
		printf 'int\nlong_one(void)\n{\n'
		for _ in $(seq 59); do printf '\t(void)0;\n'; done
		printf '}\n'
	} >"$d/x.c"
	run -1 python3 "$LINT/sizes.py" "$d"
	assert_output --partial 'long_one() is 61 lines'
}

@test "the guardian's file calls no lock_ or conn_ function and includes neither layer's header" {
	local f=$SRC/supervise-guard.c
	[ -s "$f" ] || fail "no $f"
	# Comments and strings out, then any call of the two layers.
	run -1 bash -c "perl -0777 -pe 's{/\*.*?\*/}{}gs; s{\"(?:\\\\.|[^\"\\\\])*\"}{\"\"}g' '$f' |
	    grep -nE '\\b(lock|conn)_[a-z_]+[[:space:]]*\\('"
	refute_output
	run -1 grep -nE '#include "(lock|conn)(-impl)?\.h"' "$f"
}
