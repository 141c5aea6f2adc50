#!/bin/sh
# SPDX-License-Identifier: MIT
# make check: the suite for a build sandbox (dh_auto_test): no network, no
# root, nothing installed.  Tests whose tool is missing skip with one line
# naming it (tests/helpers.bash, need); without bats or its libraries only
# the unit tests run, and one line says why.  Arguments: the bats files or
# directories.  REDLOCK_TEST_BUILD: where redlock-cli was built.
set -u
build=${REDLOCK_TEST_BUILD:-.}
libs=${BATS_LIB_PATH:+$BATS_LIB_PATH:}/usr/lib/bats
have_lib() {
	(IFS=:; for d in $libs; do [ -f "$d/$1/load.bash" ] && exit 0; done; exit 1)
}
why=
command -v bats >/dev/null || why="bats is not installed"
[ -n "$why" ] || have_lib bats-support || why="bats-support is not installed"
[ -n "$why" ] || have_lib bats-assert || why="bats-assert is not installed"
if [ -n "$why" ]; then
	echo "make check: $why: skipping the bats suite, running the unit tests only"
	exec "$build/tests/unit/test-units"
fi
exec bats "$@"
