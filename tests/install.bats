#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# make install / make uninstall honour PREFIX and DESTDIR.

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
