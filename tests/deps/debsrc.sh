#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/debsrc.sh PKG [SUITE]: unpack the Debian source package PKG of
# SUITE (trixie, Debian 13, by default; sid or experimental for servers newer
# than a release has) into build/deps/src/SUITE/ and print the unpacked
# directory on stdout (one line, an absolute path).  Progress and errors go
# to stderr; exit 0 or 1.
#
#   dir=$(tests/deps/debsrc.sh hiredis)    # e.g. .../build/deps/src/trixie/hiredis-1.2.0
#   dir=$(tests/deps/debsrc.sh valkey sid) # e.g. .../build/deps/src/sid/valkey-9.1.0
#
# The system's apt configuration is never touched: a private apt tree per
# suite, build/deps/apt/SUITE/, has its own sources.list (one deb-src line
# for that suite, checked against the Debian archive keyring), its own
# lists, cache and state, and no sources.list.d; so this works on any
# Debian-based host that has apt, dpkg-dev (dpkg-source) and
# debian-archive-keyring, as root or not.  One tree per suite, because
# apt-get source takes the newest version its lists name: with two suites
# in one list, trixie's valkey would become sid's.  An unpacked source is
# reused: the second call for the same PKG and SUITE does not touch the
# network (delete build/deps/src/SUITE/PKG.dir to fetch it again).
# Run from anywhere; paths are relative to the repository's top.

set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
	echo "usage: tests/deps/debsrc.sh PKG [SUITE]" >&2
	exit 1
fi
pkg=$1
suite=${2:-trixie}
case $pkg in
*[!a-z0-9.+-]*) echo "debsrc.sh: bad package name '$pkg'" >&2; exit 1 ;;
esac
# The suites whose sources the tests build; another name would only make
# apt fail later, with a less plain message.
case $suite in
trixie | sid | experimental) ;;
*) echo "debsrc.sh: unknown suite '$suite' (trixie, sid, experimental)" >&2
   exit 1 ;;
esac

top=$(cd "$(dirname "$0")/../.." && pwd)
deps=$top/build/deps
src=$deps/src/$suite
apt=$deps/apt/$suite
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
mark=$src/$pkg.dir

# Already unpacked: the marker names the directory.
if [ -f "$mark" ]; then
	dir=$(cat "$mark")
	if [ -d "$dir" ]; then
		printf '%s\n' "$dir"
		exit 0
	fi
fi

for tool in apt-get dpkg-source; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "debsrc.sh: $tool not found (Debian: apt, dpkg-dev)" >&2
		exit 1
	}
done
[ -r "$keyring" ] || {
	echo "debsrc.sh: $keyring missing (Debian: debian-archive-keyring)" >&2
	exit 1
}

mkdir -p "$apt/etc" "$apt/state/lists/partial" "$apt/cache/archives/partial" \
    "$src"
printf 'deb-src [signed-by=%s] http://deb.debian.org/debian %s main\n' \
    "$keyring" "$suite" >"$apt/etc/sources.list"
# apt-get wants a dpkg status file; an empty one keeps it away from the
# host's (nothing is installed through this tree).
: >"$apt/state/status"

# As root, apt downloads as the unprivileged _apt user, which cannot write
# to a directory it does not own; the files are checked against the signed
# index either way.
sandbox=
if [ "$(id -u)" = 0 ]; then
	sandbox="-o APT::Sandbox::User=root"
fi

aptget() {
	# shellcheck disable=SC2086 # $sandbox is one option or none
	apt-get -q \
	    -o Dir::Etc::sourcelist="$apt/etc/sources.list" \
	    -o Dir::Etc::sourceparts=- \
	    -o Dir::Etc::preferencesparts=- \
	    -o Dir::State="$apt/state" \
	    -o Dir::State::status="$apt/state/status" \
	    -o Dir::Cache="$apt/cache" \
	    -o Debug::NoLocking=0 \
	    $sandbox "$@"
}

echo "debsrc.sh: apt-get update ($suite, private lists in $apt)" >&2
aptget update >&2

dl=$src/$pkg.download
rm -rf "$dl"
mkdir -p "$dl"
echo "debsrc.sh: downloading the source of $pkg ($suite)" >&2
# The archive here may serve a package's upstream tarball but not the .dsc
# and Debian diff of its current revision (valkey and redis in trixie, as
# of this writing): apt fails the download then, yet it has checked the
# tarball it did get against the signed Sources index.
(cd "$dl" && aptget source --download-only "$pkg") >&2 || true

set -- "$dl"/*.dsc
if [ ! -f "$1" ]; then
	set -- "$dl"/"${pkg}"_*.orig.tar.*
	if [ $# -ne 1 ] || [ ! -f "$1" ]; then
		echo "debsrc.sh: neither a .dsc nor one upstream tarball of $pkg in $dl" >&2
		exit 1
	fi
	upstream=${1##*/}
	upstream=${upstream#"${pkg}"_}
	upstream=${upstream%.orig.tar.*}
	dir=$src/$pkg-$upstream
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "debsrc.sh: no .dsc of $pkg on the archive: unpacking its upstream tarball, without Debian's patches" >&2
	tar -xf "$1" -C "$dir" --strip-components=1 >&2
	printf '%s\n' "$dir" >"$mark"
	printf '%s\n' "$dir"
	exit 0
fi
if [ $# -ne 1 ]; then
	echo "debsrc.sh: expected one .dsc for $pkg in $dl" >&2
	exit 1
fi
dsc=$1
# PKG_VERSION without the epoch and the Debian revision: the directory
# name dpkg-source would pick.
version=$(sed -n 's/^Version: *//p' "$dsc" | head -n 1)
upstream=${version#*:}
upstream=${upstream%-*}
dir=$src/$pkg-$upstream
rm -rf "$dir"
# The .dsc's hashes were checked by apt against the signed Sources index;
# dpkg-source checks the tarballs against the .dsc (it cannot check the
# uploader's signature without debian-keyring, and only warns about that).
dpkg-source -x "$dsc" "$dir" >&2
printf '%s\n' "$dir" >"$mark"
printf '%s\n' "$dir"
