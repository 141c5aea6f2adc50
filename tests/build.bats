#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The Makefile for packagers (make -n: nothing is built or removed here):
# STATIC, the hardening, WERROR, CPPFLAGS, LDFLAGS, CC_FOR_BUILD, pkg-config's libdir, no
# probe on make clean, sanitize in its own directory; and make check's
# one-line skips.

load helpers

# The defaults are what is checked, not a package build's flags.
unset CFLAGS CPPFLAGS LDFLAGS CC CC_FOR_BUILD PKG_CONFIG PKG_CONFIG_PATH

# mk ARGS...: make -n in the tree, forced to rebuild, output in $output.
mk() {
	run -0 make -C "$ROOT" --no-print-directory -n -B "$@"
}

@test "the default links the C library and OpenSSL shared, hiredis and libuuid too; STATIC=1 links everything statically" {
	mk BUILDDIR=build/t build/t/redlock-cli
	assert_line --regexp '^cc .* -pie .* -o build/t/redlock-cli .* build/t/src/tls-dlopen\.o .*-lhiredis .*-luuid'
	refute_line --regexp '^cc .* -o build/t/redlock-cli .*( -static|libhiredis\.a|tls-linked\.o)'
	mk BUILDDIR=build/t STATIC=1 build/t/redlock-cli
	assert_line --regexp '^cc .* -static-pie .* -o build/t/redlock-cli .* build/t/src/tls-linked\.o .*/libhiredis\.a .*/libuuid\.a .*/libssl\.a .*/libcrypto\.a'
	refute_line --regexp '^cc .* -o build/t/redlock-cli .*tls-dlopen\.o'
	# The unit tests link the same way: one of the two, never both.
	mk BUILDDIR=build/t STATIC=1 build/t/tests/unit/test-units
	assert_line --regexp '^cc .* -static-pie .* -o build/t/tests/unit/test-units .*tls-linked\.o'
	refute_line --regexp '^cc .* -o build/t/tests/unit/test-units .*tls-dlopen\.o'
}

@test "STATIC other than 0 or 1 is refused with one line" {
	run make -C "$ROOT" --no-print-directory -n STATIC=libs
	assert_failure 2
	assert_output --partial "STATIC is 0 or 1, not 'libs'"
}

@test "every hardening flag of dpkg-buildflags' hardening=+all is on the default's command lines" {
	need dpkg-buildflags
	local v f
	mk BUILDDIR=build/t build/t/redlock-cli
	for v in CFLAGS CPPFLAGS LDFLAGS; do
		for f in $(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get $v); do
			case $f in
			-fstack-protector*|-D_FORTIFY_SOURCE=*|-Wl,-z,*|-fcf-protection*|-fPIE|-pie) ;;
			*) continue ;;
			esac
			[ "$f" != -D_FORTIFY_SOURCE=2 ] || f=-D_FORTIFY_SOURCE=
			if [ "$v" = LDFLAGS ]; then
				assert_line --regexp "^cc .*${f//./\\.}.* -o build/t/redlock-cli "
			else
				assert_line --regexp "^cc .*${f//./\\.}.* -o build/t/src/url\\.o "
			fi
		done
	done
}

# hardened BIN: DYN, full RELRO, and our objects built with the stack
# protector and _FORTIFY_SOURCE (a __*_chk function called).
hardened() {
	LC_ALL=C readelf -h "$1" | grep -E '^ +Type: +DYN ' ||
	    fail "$1 is not position-independent: $(LC_ALL=C readelf -h "$1" | grep Type:)"
	LC_ALL=C readelf -l "$1" | grep -q GNU_RELRO || fail "$1: no GNU_RELRO"
	LC_ALL=C readelf -d "$1" | grep -qE '\((FLAGS|FLAGS_1)\) .*\b(BIND_NOW|NOW)\b' ||
	    fail "$1: no BIND_NOW"
	LC_ALL=C readelf -sW "$1" | grep -qE ' __stack_chk_fail(@|$)' ||
	    fail "$1: no __stack_chk_fail"
	LC_ALL=C readelf -sW "$1" | grep -qE ' __[a-z0-9_]+_chk(@|$)' ||
	    fail "$1: no __*_chk function"
}

@test "the default build is hardened: PIE with an interpreter, BIND_NOW, RELRO, stack protector, fortified; it links without a warning" {
	need readelf
	run -0 make -C "$ROOT" --no-print-directory -j2 BUILDDIR=build/t-default build/t-default/redlock-cli
	refute_output --partial warning
	local b="$ROOT/build/t-default/redlock-cli"
	hardened "$b"
	LC_ALL=C readelf -l "$b" | grep -q 'Requesting program interpreter' ||
	    fail "no program interpreter: not linked with the shared C library"
	LC_ALL=C readelf -d "$b" | grep -q 'NEEDED.*libc\.so' || fail "libc not shared"
	# -fcf-protection marks our objects for CET (IBT and shadow stack).
	# The executable carries the note only when every input does, and
	# Debian 12's own start files (Scrt1.o, crti.o) are built without it.
	if [ "$(uname -m)" = x86_64 ]; then
		LC_ALL=C readelf -n "$ROOT/build/t-default/src/conn-io.o" |
		    grep -q 'x86 feature: IBT, SHSTK' || fail "conn-io.o: no CET note"
	fi
	run -0 "$b" --version
	assert_output --regexp '^redlock-cli [0-9.]+ \(hiredis [0-9]+\.[0-9]+\.[0-9]+, TLS: libssl\.so\.[0-9.]+ loadable\)$'
}

@test "make STATIC=1 builds a static-pie executable with the same hardening; it links without a warning" {
	need readelf
	run -0 make -C "$ROOT" --no-print-directory -j2 STATIC=1 BUILDDIR=build/t-static build/t-static/redlock-cli
	refute_output --partial warning
	local b="$ROOT/build/t-static/redlock-cli"
	hardened "$b"
	run -0 env LC_ALL=C readelf -l "$b"
	refute_output --partial 'program interpreter'
	run -0 env LC_ALL=C readelf -d "$b"
	refute_output --partial NEEDED
	# Our own objects, not only the C library's: protected and fortified.
	LC_ALL=C readelf -sW "$ROOT/build/t-static/src/conn-io.o" |
	    grep -q 'UND __stack_chk_fail' || fail "conn-io.o: no stack protector"
	run -0 "$b" --version
	assert_output --regexp '^redlock-cli [0-9.]+ \(hiredis [0-9]+\.[0-9]+\.[0-9]+, TLS: OpenSSL [0-9.]+[a-z]* linked\)$'
}

@test "make dist: a tarball of the static-pie executable whose SHA256SUMS verifies, and which runs from an empty directory" {
	need readelf sha256sum
	local d="$BATS_TEST_TMPDIR/dist" empty="$BATS_TEST_TMPDIR/empty" t
	run -0 make -C "$ROOT" --no-print-directory -j2 dist DISTDIR="$d"
	mkdir "$empty"
	t=$(cd "$d" && ls redlock-cli-*-linux-*.tar.gz)
	[[ $t =~ ^redlock-cli-[0-9]+\.[0-9]+\.[0-9]+-linux-[a-z0-9_]+\.tar\.gz$ ]] || fail "name: $t"
	(cd "$d" && sha256sum -c SHA256SUMS) || fail "SHA256SUMS does not verify"
	tar -xzf "$d/$t" -C "$empty"
	run -0 tar -tzf "$d/$t"
	for f in redlock-cli redlock-cli.1 LICENSE README completions/redlock-cli.bash \
	    completions/_redlock-cli completions/redlock-cli.fish; do
		assert_line "${t%.tar.gz}/$f"
	done
	# its README: the README.md's opening and its "On a CI runner", nothing more
	grep -q '^    make demo ' "$empty/${t%.tar.gz}/README" || fail "README: no opening"
	grep -q '^sudo tar -xzf ' "$empty/${t%.tar.gz}/README" || fail "README: no On a CI runner"
	run grep -c '^##' "$empty/${t%.tar.gz}/README"
	assert_output 1
	run -0 env LC_ALL=C readelf -l "$empty/${t%.tar.gz}/redlock-cli"
	refute_output --partial 'program interpreter'
	cd "$empty/${t%.tar.gz}"
	run -0 env -i ./redlock-cli --version
	assert_output --regexp '^redlock-cli [0-9.]+ \(hiredis .*linked\)$'
}

@test "STATIC=1 takes libhiredis.a from hiredis's pkg-config libdir" {
	local d="$BATS_TEST_TMPDIR/hiredis"
	mkdir -p "$d/lib/pkgconfig" "$d/include/hiredis"
	: >"$d/lib/libhiredis.a"
	# shellcheck disable=SC2016 # pkg-config's own ${...}
	printf '%s\n' "prefix=$d" 'libdir=${prefix}/lib' \
	    'includedir=${prefix}/include' 'Name: hiredis' 'Description: t' \
	    'Version: 1.2.0' 'Libs: -L${libdir} -lhiredis' \
	    'Cflags: -I${includedir}' >"$d/lib/pkgconfig/hiredis.pc"
	PKG_CONFIG_PATH="$d/lib/pkgconfig" mk BUILDDIR=build/t STATIC=1 build/t/redlock-cli
	assert_line --regexp "^cc .* -o build/t/redlock-cli .* $d/lib/libhiredis\\.a "
	assert_line --regexp "^cc .* -I$d/include .*-c -o build/t/src/conn\\.o"
}

@test "WERROR=0 drops -Werror only; CPPFLAGS and LDFLAGS reach the compiler and the linker" {
	mk BUILDDIR=build/t build/t/src/url.o
	assert_line --regexp '^cc .*-Wall -Wextra -Werror .*-o build/t/src/url\.o'
	mk BUILDDIR=build/t WERROR=0 CPPFLAGS=-DRL_TEST_CPP LDFLAGS=-Wl,-z,rl-test \
	    build/t/redlock-cli
	assert_line --regexp '^cc (-D_FORTIFY_SOURCE=[23] +)?-DRL_TEST_CPP .*-Wall -Wextra .*-o build/t/src/url\.o'
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
	# and timing bounds skip themselves (the plain run holds them)
	assert_output --regexp 'REDLOCK_TEST_BUILD=[^ ]*/build/sanitize REDLOCK_TEST_SANITIZE=1 [\\[:space:]]*bats '
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

@test "the static-pie build's name lookups open no NSS module, whatever nsswitch.conf names" {
	need strace unshare
	[ "$(id -u)" = 0 ] || skip "needs root for a private mount of nsswitch.conf"
	# In a chroot (the fresh-root CI leg) / is no mount point, and unshare
	# cannot make the new namespace's mounts private: nothing to test on.
	unshare -m true 2>/dev/null ||
	    skip "cannot make a private mount namespace here (a chroot?)"
	run -0 make -C "$ROOT" --no-print-directory -j2 STATIC=1 BUILDDIR=build/t-static build/t-static/redlock-cli
	printf 'hosts: files mdns4_minimal resolve dns\n' >"$BATS_TEST_TMPDIR/nss"
	# A name in no hosts file: every source in the list is asked.
	run unshare -m sh -c 'mount --bind "$1" /etc/nsswitch.conf &&
	    exec strace -f -e trace=openat "$2" -u redis://no-such-host.invalid:1 status k' \
	    sh "$BATS_TEST_TMPDIR/nss" "$ROOT/build/t-static/redlock-cli"
	refute_output --partial libnss_
	assert_output --partial /etc/hosts
}
