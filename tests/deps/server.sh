#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/server.sh PKG ENGINE: build the server of Debian 13's source
# package PKG (valkey, redis) into build/deps/PKG, once, and print the
# directory that holds ENGINE-server, ENGINE-sentinel and ENGINE-cli.
# valkey.sh and redis8.sh call it, so both servers are built the same way:
# the bundled deps/ (no system Lua or jemalloc), libc malloc, TLS on (the
# suite's tls.bats needs it), nothing else of upstream's build changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$1 engine=$2
prefix=$root/build/deps/$pkg
log=$root/build/deps/$pkg.log

src=$("$root/tests/deps/debsrc.sh" "$pkg")
# Upstream's build asks git for its commit: not ours, that tree is not one.
GIT_CEILING_DIRECTORIES=$(dirname "$src")
export GIT_CEILING_DIRECTORIES
# Cached: the prefix records the source tree it was built from.
if [ -x "$prefix/bin/$engine-server" ] &&
    [ "$(cat "$prefix/.source" 2>/dev/null)" = "$src" ]; then
	echo "$prefix/bin"
	exit 0
fi
rm -rf "$prefix"
echo "building $(basename "$src") (log: ${log#"$root"/})" >&2
if ! { make -C "$src" -j"$(nproc)" MALLOC=libc BUILD_TLS=yes &&
    make -C "$src" PREFIX="$prefix" MALLOC=libc BUILD_TLS=yes install; } \
    >"$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "$pkg: build failed (log: $log)" >&2
	exit 1
fi
echo "$src" >"$prefix/.source"
echo "$prefix/bin"
