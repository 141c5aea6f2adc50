#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/deb-check.sh: build the Debian package (make deb: dpkg-buildpackage,
# whose dh_auto_test is make check, then lintian with no error and no
# warning allowed), install it with dpkg -i, and run what a user of the
# package would: redlock-cli --version and man redlock-cli, from the
# installed files.  The package is removed again afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
rc=0
# The package's own test step (make check) is the suite that the test,
# sanitize, hiredis, valkey and fresh-root legs run on the same tree:
# here it would only add six minutes to a CI that must stay under 40.
# DEB_BUILD_OPTIONS=nocheck is the standard switch (debian/rules honours
# it); a package built without it, by hand or by a distribution, runs it.
DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-nocheck}" make deb || rc=$?
# make check's lines from the package build, for CI's counts (none with
# nocheck).
grep -E '^(not )?ok [0-9]+ ' build/deb/build.log || true
[ "$rc" = 0 ] || exit "$rc"
set -- build/deb/redlock-cli_[0-9]*.deb
deb=$1
trap 'dpkg -r redlock-cli >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb"
dpkg -L redlock-cli | grep -E 'bin/|man1/|completions|site-functions|vendor' 
[ "$(dpkg -S /usr/bin/redlock-cli)" = "redlock-cli: /usr/bin/redlock-cli" ]
/usr/bin/redlock-cli --version
/usr/bin/redlock-cli --version | grep -qE '^redlock-cli [0-9.]+ \(hiredis [0-9.]+, TLS: '
page=$(MANPAGER=cat MANWIDTH=80 man redlock-cli 2>/dev/null)
# Here-strings, not pipes: head and grep -q stop reading early, and a
# writer into a pipe would die of SIGPIPE (exit 141 under pipefail) once
# the page outgrew the pipe's buffer.
head -n 8 <<<"$page"
grep -q '^NAME' <<<"$page" || { echo "man redlock-cli: no NAME section" >&2; exit 1; }
[ "$(man -w redlock-cli)" = /usr/share/man/man1/redlock-cli.1.gz ]
echo "deb-check: $deb installs, --version and man redlock-cli work"
