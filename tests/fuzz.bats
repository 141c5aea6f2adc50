#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The libFuzzer targets (tests/fuzz/): they build, each survives a short run
# on a copy of its seed corpus, and every input saved in tests/fuzz/crashes/
# runs clean.  Long runs: make fuzz (FUZZ_SECONDS, default 60).

load helpers

FUZZ_TARGETS="fuzz-url fuzz-duration fuzz-options fuzz-reply"

setup_file() {
	local probe="$BATS_FILE_TMPDIR/probe"

	# Is libFuzzer there?  Debian's clang has it; an older or partial
	# toolchain may not.
	if ! printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
	    '{ (void)d; (void)n; return 0; }' |
	    "${CLANG:-clang}" -x c -fsanitize=fuzzer,address,undefined \
	    -o "$probe" - 2>/dev/null; then
		export FUZZ_SKIP="clang with libFuzzer is not installed (Debian: clang)"
		return 0
	fi
	# fuzz.mk works alone, so this does not depend on the Makefile's include.
	make -C "$ROOT" -f tests/fuzz/fuzz.mk -j"$(nproc)" fuzz-build \
	    >"$BATS_FILE_TMPDIR/build.log" 2>&1 ||
	    export FUZZ_BUILD_FAILED=1
}

setup() {
	if [ -n "${FUZZ_SKIP:-}" ]; then
		[ "${REDLOCK_TEST_MISSING:-skip}" != fail ] ||
		    fail "$FUZZ_SKIP, though make deps ran"
		skip "$FUZZ_SKIP"
	fi
}

# fuzz_run TARGET ARGS...: the target, with its crash artifacts (if any)
# kept in the test's directory rather than the current one.
fuzz_run() {
	local target=$1
	shift
	run "$ROOT/tests/fuzz/bin/$target" -timeout=10 \
	    -artifact_prefix="$BATS_TEST_TMPDIR/$target-" "$@"
}

@test "make fuzz-build builds every target" {
	if [ -n "${FUZZ_BUILD_FAILED:-}" ]; then
		cat "$BATS_FILE_TMPDIR/build.log"
		false
	fi
	for t in $FUZZ_TARGETS; do
		[ -x "$ROOT/tests/fuzz/bin/$t" ]
	done
}

# corpus_sum: one checksum line per committed seed.
corpus_sum() {
	(cd "$ROOT/tests/fuzz/corpus" && find . -type f | LC_ALL=C sort |
	    xargs sha1sum)
}

@test "every target runs 50000 inputs from a copy of its seed corpus without a crash" {
	local t dir before failed=
	before=$(corpus_sum)
	# A fixed seed and count: the same inputs on every run, so that CI
	# does not pass or fail by chance.  `make fuzz` is the random search.
	for t in $FUZZ_TARGETS; do
		dir="$BATS_TEST_TMPDIR/corpus-$t"
		mkdir "$dir"
		cp "$ROOT/tests/fuzz/corpus/$t/"* "$dir/"
		fuzz_run "$t" -seed=1 -runs=50000 -print_final_stats=1 \
		    -dict="$ROOT/tests/fuzz/dict/$t.dict" "$dir"
		if [ "$status" -ne 0 ] ||
		    ! grep -q '^stat::number_of_executed_units:' <<<"$output"; then
			echo "$t failed (status $status):"
			grep -aE 'check failed|ERROR|SUMMARY|#[0-9]+ 0x|Test unit' \
			    <<<"$output" | head -n 20
			failed="$failed $t"
		fi
	done
	# New inputs went to the copies, never to the committed seeds.
	[ "$(corpus_sum)" = "$before" ]
	[ -z "$failed" ]
}

@test "every input in tests/fuzz/crashes/ runs clean through its target" {
	local f name t target failed=
	for f in "$ROOT"/tests/fuzz/crashes/fuzz-*; do
		[ -e "$f" ] || continue
		name=${f##*/}
		target=
		for t in $FUZZ_TARGETS; do
			case $name in "$t"-*) target=$t ;; esac
		done
		if [ -z "$target" ]; then
			echo "$name: not named after a target ($FUZZ_TARGETS)"
			false
		fi
		fuzz_run "$target" "$f"
		if [ "$status" -ne 0 ]; then
			echo "$name still crashes $target:"
			grep -aE 'check failed|ERROR|SUMMARY|#[0-9]+ 0x' \
			    <<<"$output" | head -n 20
			failed="$failed $name"
		fi
	done
	[ -z "$failed" ]
}

@test "fuzz-reply against hiredis 1.2 too: its crash inputs run clean and 50000 inputs from a fixed seed find nothing" {
	local prefix="$ROOT/build/deps/hiredis"
	[ -f "$prefix/lib/libhiredis.a" ] ||
	    skip "no hiredis 1.2 in build/deps/hiredis (tests/deps/hiredis.sh builds it)"
	run make --no-print-directory -C "$ROOT" -f tests/fuzz/fuzz.mk \
	    -j"$(nproc)" HIREDIS_PREFIX="$prefix" FUZZ_BIN=build/fuzz-hiredis1 \
	    FUZZ_TARGETS=fuzz-reply fuzz-check
	if [ "$status" -ne 0 ]; then
		grep -v '^ ' <<<"$output" | grep -av '^clang\|^ar \|^rm -f' |
		    tail -n 30
		false
	fi
	assert_line --regexp '^fuzz-reply: [1-9][0-9]* crash inputs clean; 50000 execs, 0 crashes$'
	# Built against the prefix's hiredis, not the system's: 0.14 has no
	# RESP3 verbatim strings.
	grep -aq 'Verbatim string' "$ROOT/build/fuzz-hiredis1/fuzz-reply"
}
