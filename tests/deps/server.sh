#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/server.sh PKG ENGINE [SUITE [NAME [VAR=VALUE...]]]: build the
# server of the Debian source package PKG (valkey, redis) of SUITE (trixie
# by default; see debsrc.sh) into build/deps/NAME (NAME defaults to PKG),
# once, and print the directory that holds ENGINE-server, ENGINE-sentinel
# and ENGINE-cli.  VAR=VALUE are more of upstream's make switches, for a
# variant of a server (valkey9-nolua.sh: BUILD_LUA=no).
# valkey.sh, redis8.sh, valkey9.sh, valkey9-nolua.sh and redis86.sh call
# it, so all servers are built the same way: the bundled deps/ (no system
# Lua or jemalloc), libc malloc, TLS on (the suite's tls.bats needs it),
# nothing else of upstream's build changed.
#
# Each NAME builds in its own copy of the source, build/deps/build/NAME:
# two variants of one source would otherwise share (and, through
# upstream's .make-settings, clean) each other's objects, and the
# unpacked tree stays as debsrc.sh left it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -lt 2 ]; then
	echo "usage: tests/deps/server.sh PKG ENGINE [SUITE [NAME [VAR=VALUE...]]]" >&2
	exit 1
fi
pkg=$1 engine=$2 suite=${3:-trixie} name=${4:-$1}
shift $(($# < 4 ? $# : 4))
prefix=$root/build/deps/$name
build=$root/build/deps/build/$name
log=$root/build/deps/$name.log

src=$("$root/tests/deps/debsrc.sh" "$pkg" "$suite")
# Upstream's build asks git for its commit: not ours, that tree is not one.
GIT_CEILING_DIRECTORIES=$(dirname "$build")
export GIT_CEILING_DIRECTORIES
# Cached: the prefix records the source tree and the switches it was
# built with.
stamp="$src${*:+ $*}"
if [ -x "$prefix/bin/$engine-server" ] &&
    [ "$(cat "$prefix/.source" 2>/dev/null)" = "$stamp" ]; then
	echo "$prefix/bin"
	exit 0
fi
rm -rf "$prefix" "$build"
mkdir -p "$(dirname "$build")"
cp -R "$src" "$build"
echo "building $(basename "$src")${*:+ with $*} as $name (log: ${log#"$root"/})" >&2
if ! { make -C "$build" -j"$(nproc)" MALLOC=libc BUILD_TLS=yes "$@" &&
    make -C "$build" PREFIX="$prefix" MALLOC=libc BUILD_TLS=yes "$@" install; } \
    >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "$name: build failed (log: $log)" >&2
	exit 1
fi
echo "$stamp" >"$prefix/.source"
echo "$prefix/bin"
