#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Makefile for packagers (make -n: nothing is built or removed here):
# STATIC, WERROR, CPPFLAGS, LDFLAGS, CC_FOR_BUILD, pkg-config's libdir, no
# probe on make clean, sanitize in its own directory; and make check's
# one-line skips.

load helpers

# The defaults are what is checked, not a package build's flags.
unset CFLAGS CPPFLAGS LDFLAGS CC CC_FOR_BUILD PKG_CONFIG PKG_CONFIG_PATH

# mk ARGS...: make -n in the tree, forced to rebuild, output in $output.
mk() {
	run -0 make -C "$ROOT" --no-print-directory -n -B "$@"
}

@test "the default links everything statically, OpenSSL and the C library too; STATIC=libs hiredis and libuuid; STATIC=0 nothing" {
	mk BUILDDIR=build/t build/t/redlock-cli
	assert_line --regexp '^cc .* -o build/t/redlock-cli .* build/t/src/tls-linked\.o .*-static .*/libhiredis\.a .*/libuuid\.a .*/libssl\.a .*/libcrypto\.a'
	refute_line --regexp '^cc .* -o build/t/redlock-cli .*tls-dlopen\.o'
	mk BUILDDIR=build/t STATIC=libs build/t/redlock-cli
	assert_line --regexp '^cc .* -o build/t/redlock-cli .* build/t/src/tls-dlopen\.o .*/libhiredis\.a .*/libuuid\.a'
	refute_line --regexp '^cc .* -o build/t/redlock-cli .*( -static |libssl\.a|tls-linked\.o)'
	mk BUILDDIR=build/t STATIC=0 build/t/redlock-cli
	assert_line --regexp '^cc .* -o build/t/redlock-cli .* build/t/src/tls-dlopen\.o .*-lhiredis .*-luuid'
	refute_line --regexp '^cc .* -o build/t/redlock-cli .*(libhiredis\.a| -static |tls-linked\.o)'
	# The unit tests link the same way: one of the two, never both.
	mk BUILDDIR=build/t build/t/tests/unit/test-units
	assert_line --regexp '^cc .* -o build/t/tests/unit/test-units .*tls-linked\.o .*-static '
	refute_line --regexp '^cc .* -o build/t/tests/unit/test-units .*tls-dlopen\.o'
}

@test "STATIC other than 1, libs or 0 is refused with one line" {
	run make -C "$ROOT" --no-print-directory -n STATIC=yes
	assert_failure 2
	assert_output --partial "STATIC is 1, libs or 0, not 'yes'"
}

@test "the static link takes libhiredis.a from hiredis's pkg-config libdir" {
	local d="$BATS_TEST_TMPDIR/hiredis"
	mkdir -p "$d/lib/pkgconfig" "$d/include/hiredis"
	: >"$d/lib/libhiredis.a"
	# shellcheck disable=SC2016 # pkg-config's own ${...}
	printf '%s\n' "prefix=$d" 'libdir=${prefix}/lib' \
	    'includedir=${prefix}/include' 'Name: hiredis' 'Description: t' \
	    'Version: 1.2.0' 'Libs: -L${libdir} -lhiredis' \
	    'Cflags: -I${includedir}' >"$d/lib/pkgconfig/hiredis.pc"
	PKG_CONFIG_PATH="$d/lib/pkgconfig" mk BUILDDIR=build/t build/t/redlock-cli
	assert_line --regexp "^cc .* -o build/t/redlock-cli .* $d/lib/libhiredis\\.a "
	assert_line --regexp "^cc .* -I$d/include .*-c -o build/t/src/conn\\.o"
}

@test "WERROR=0 drops -Werror only; CPPFLAGS and LDFLAGS reach the compiler and the linker" {
	mk BUILDDIR=build/t build/t/src/url.o
	assert_line --regexp '^cc .*-Wall -Wextra -Werror .*-o build/t/src/url\.o'
	mk BUILDDIR=build/t WERROR=0 CPPFLAGS=-DRL_TEST_CPP LDFLAGS=-Wl,-z,rl-test \
	    build/t/redlock-cli
	assert_line --regexp '^cc -DRL_TEST_CPP .*-Wall -Wextra .*-o build/t/src/url\.o'
	refute_output --partial -- '-Werror'
	assert_line --regexp '^cc .*-Wl,-z,rl-test .*-o build/t/redlock-cli '
}

@test "script-sha is built with CC_FOR_BUILD, not CC" {
	mk CC=target-cc CC_FOR_BUILD=build-cc src/scripts-sha.h
	assert_line --regexp '^build-cc -std=c11 '
	assert_output --partial '-o src/tools/script-sha src/tools/script-sha.c'
	refute_output --partial 'target-cc'
}

@test "make clean runs no compiler and no pkg-config" {
	local log="$BATS_TEST_TMPDIR/probes" probe="$BATS_TEST_TMPDIR/probe"
	# shellcheck disable=SC2016 # for the probe to expand
	printf '#!/bin/sh\necho "$0 $*" >>%q\nexit 1\n' "$log" >"$probe"
	chmod +x "$probe"
	: >"$log"
	run -0 make -C "$ROOT" -n clean CC="$probe" PKG_CONFIG="$probe"
	assert_output --partial 'rm -f'
	[ ! -s "$log" ] || fail "probes ran: $(cat "$log")"
	# The same probe is run when building, so the check can fail.
	run make -C "$ROOT" -n -B BUILDDIR=build/t CC="$probe" PKG_CONFIG="$probe" \
	    build/t/redlock-cli
	[ -s "$log" ] || fail "the probe never ran"
}

@test "make sanitize builds in build/sanitize and cleans nothing of the developer's" {
	run -0 make -C "$ROOT" --no-print-directory -n -B sanitize
	assert_line --regexp '^cc .*-fsanitize=address,undefined .*-o build/sanitize/src/main\.o'
	assert_line --regexp 'REDLOCK_TEST_BUILD=.*/build/sanitize bats '
	refute_line --regexp '^rm '
	refute_line --regexp 'make.* clean'
	# ASan needs the shared C library.
	assert_line --regexp '^cc .* -o build/sanitize/redlock-cli .*tls-dlopen\.o'
	refute_line --regexp '^cc .* -o build/sanitize/redlock-cli .* -static '
}

@test "make valgrind builds in build/valgrind with the shared C library" {
	run -0 make -C "$ROOT" --no-print-directory -n -B valgrind
	assert_line --regexp '^cc .* -o build/valgrind/redlock-cli .*tls-dlopen\.o'
	refute_line --regexp '^cc .* -o build/valgrind/redlock-cli .* -static '
	assert_output --regexp 'REDLOCK_TEST_BUILD=[^ ]*/build/valgrind REDLOCK_TEST_VALGRIND=1 [\\[:space:]]*bats '
}

@test "zsh completions go to PREFIX/share/zsh/site-functions unless ZSHCOMPDIR says otherwise" {
	run -0 make -C "$ROOT" -n install PREFIX=/p
	assert_line 'install -m 644 completions/_redlock-cli /p/share/zsh/site-functions/_redlock-cli'
	run -0 make -C "$ROOT" -n install PREFIX=/p ZSHCOMPDIR=/z
	assert_line 'install -m 644 completions/_redlock-cli /z/_redlock-cli'
}

@test "a missing tool skips its test with one line, and fails it after make deps" {
	local t="$BATS_TEST_TMPDIR/need.bats"
	printf '%s\n' "load '$ROOT/tests/helpers'" \
	    '@test "t" { need no-such-tool-here; }' >"$t"
	run env -u REDLOCK_TEST_MISSING bats "$t"
	assert_success
	assert_line 'ok 1 t # skip no-such-tool-here is not installed'
	run env REDLOCK_TEST_MISSING=fail bats "$t"
	assert_failure
	assert_line 'not ok 1 t'
	assert_line --partial 'no-such-tool-here is not installed, though make deps ran'
}

@test "make check without bats runs the unit tests and says in one line why it skipped the suite" {
	local bin="$BATS_TEST_TMPDIR/bin"
	mkdir -p "$bin"
	ln -s "$(command -v sh)" "$bin/sh"
	[ -x "$REDLOCK_BUILD/tests/unit/test-units" ] ||
	    make -C "$ROOT" tests/unit/test-units >/dev/null
	run env PATH="$bin" REDLOCK_TEST_BUILD="$REDLOCK_BUILD" \
	    "$bin/sh" "$ROOT/tests/check.sh" "$ROOT/tests/"
	assert_success
	assert_line -n 0 'make check: bats is not installed: skipping the bats suite, running the unit tests only'
	assert_line --regexp '^[0-9]+ passed, 0 failed$'
}
