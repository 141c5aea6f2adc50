#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# make install / make uninstall honour PREFIX and DESTDIR; make demo builds
# quietly and shows the main jobs.

load helpers

@test "make install puts the binary, man page and completions under DESTDIR/PREFIX, and uninstall removes them" {
	dest="$BATS_TEST_TMPDIR/root"
	run make -C "$ROOT" install DESTDIR="$dest" PREFIX=/opt/rl \
	    ${REDLOCK_TEST_BUILD:+BUILDDIR="$REDLOCK_TEST_BUILD"}
	assert_success
	for f in bin/redlock-cli share/man/man1/redlock-cli.1 \
	    share/bash-completion/completions/redlock-cli \
	    share/zsh/site-functions/_redlock-cli \
	    share/fish/vendor_completions.d/redlock-cli.fish; do
		[ -f "$dest/opt/rl/$f" ] || fail "missing $f"
	done
	[ -x "$dest/opt/rl/bin/redlock-cli" ]
	run "$dest/opt/rl/bin/redlock-cli" --version
	assert_success
	assert_output --regexp '^redlock-cli [0-9]+\.[0-9]+\.[0-9]+ \(hiredis '
	run make -C "$ROOT" uninstall DESTDIR="$dest" PREFIX=/opt/rl
	assert_success
	run find "$dest" -type f
	assert_output ""
}

@test "make demo builds quietly (one line), shows each command before its output, one cron host of three runs, and fences grow" {
	local b=$BATS_TEST_TMPDIR/demo-build
	run make -C "$ROOT" --no-print-directory demo BUILDDIR="$b"
	assert_success
	assert_line -n 0 "built $b/redlock-cli (the build's output: $b/demo-build.log)"
	refute_output --partial 'warning'
	refute_output --regexp '(^|\n)cc '
	assert_line --partial '$ redlock-cli run -n --min-hold 1m nightly'
	assert_line --partial '$ redlock-cli status nightly'
	[ "$(grep -c 'runs the report$' <<<"$output")" -eq 1 ] ||
	    fail "not exactly one host ran the cron job"
	[ "$(grep -c 'skipped (exit 1)$' <<<"$output")" -eq 2 ] ||
	    fail "not two hosts skipped"
	assert_line --partial 'REDLOCK_FENCE grows with'
	local f=() line
	while read -r line; do
		f+=("${line##* }")
	done < <(grep -E '^deploy [0-9] starts, fence [0-9]+$' <<<"$output")
	[ "${#f[@]}" -eq 3 ] || fail "three deploys should start: ${f[*]}"
	((f[0] < f[1] && f[1] < f[2])) || fail "fences do not grow: ${f[*]}"
}

@test "make demo shows the whole build log when the build fails" {
	local b=$BATS_TEST_TMPDIR/demo-bad
	run make -C "$ROOT" --no-print-directory demo BUILDDIR="$b" \
	    CPPFLAGS='-include /nonexistent/break.h'
	assert_failure
	assert_output --partial 'break.h'
	assert_output --partial 'make demo: the build failed'
}
