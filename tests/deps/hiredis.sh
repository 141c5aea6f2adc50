#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/hiredis.sh: build hiredis 1.2 from Debian 13's source package
# (fetched by tests/deps/debsrc.sh) into build/deps/hiredis, and print that
# prefix on stdout (one line, an absolute path).  Progress goes to stderr;
# exit 0 or 1.
#
#   prefix=$(tests/deps/hiredis.sh)
#   $prefix/include/hiredis/*.h
#   $prefix/lib/libhiredis.a, $prefix/lib/libhiredis.so*
#   $prefix/lib/pkgconfig/hiredis.pc
#
#   PKG_CONFIG_PATH=$prefix/lib/pkgconfig make ...      redlock-cli itself
#   make -f tests/fuzz/fuzz.mk HIREDIS_PREFIX=$prefix   the fuzz targets
#
# Without TLS (redlock-cli does its own).  A prefix already built from the
# same source is reused without building again; delete build/deps/hiredis
# to rebuild.  Needs cc and make, plus what debsrc.sh needs.

set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$top/build/deps/hiredis
mark=$prefix/.built-from

src=$("$top/tests/deps/debsrc.sh" hiredis)

if [ -f "$mark" ] && [ "$(cat "$mark")" = "$src" ] &&
    [ -f "$prefix/lib/libhiredis.a" ] &&
    [ -f "$prefix/lib/pkgconfig/hiredis.pc" ]; then
	printf '%s\n' "$prefix"
	exit 0
fi

# Out of the unpacked tree, so that it stays as debsrc.sh left it.
build=$top/build/deps/build/hiredis
rm -rf "$build" "$prefix"
mkdir -p "$(dirname "$build")"
cp -R "$src" "$build"
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
echo "hiredis.sh: building $(basename "$src") into $prefix" >&2
# PREFIX goes into hiredis.pc and the .so's install name; LIBRARY_PATH
# keeps Debian's multiarch default out of it.
make -C "$build" -j"$jobs" USE_SSL=0 PREFIX="$prefix" LIBRARY_PATH=lib \
    >&2
make -C "$build" USE_SSL=0 PREFIX="$prefix" LIBRARY_PATH=lib install >&2
for f in include/hiredis/hiredis.h include/hiredis/read.h lib/libhiredis.a \
    lib/pkgconfig/hiredis.pc; do
	[ -f "$prefix/$f" ] || {
		echo "hiredis.sh: $prefix/$f was not installed" >&2
		exit 1
	}
done
set -- "$prefix"/lib/libhiredis.so*
[ -e "$1" ] || {
	echo "hiredis.sh: no libhiredis.so in $prefix/lib" >&2
	exit 1
}
printf '%s\n' "$src" >"$mark"
printf '%s\n' "$prefix"
