#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/fresh-root.sh: the README's two commands on a machine that has
# nothing (the suite's files as FRESH_SUITE says, by default a few): debootstrap a minimal Debian 12 (bookworm) into a scratch
# directory, install only make and git there, clone this commit into it
# and run `make demo` and `make test` in a chroot with /proc, /sys, /dev
# (with /dev/pts) and /dev/shm mounted.  Everything is unmounted and
# removed afterwards, also on failure or interruption.  Needs root and
# debootstrap (make deps does not install it; .ci/run does).
# FRESH_ROOT_BASE: a directory where `.ci/fresh-root.sh --base DIR` has
# already debootstrapped that system (.ci/run does it while the test leg
# runs); it is used, then removed, as the scratch root.  Without it, or
# if that did not finish, the debootstrap happens here.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
commit=$(git -C "$top" rev-parse HEAD)

# debootstrap DIR: the minimal Debian 12 with make and git, its log beside
# DIR, shown if it fails.
debootstrap_into() {
	debootstrap --variant=minbase --include=make,git bookworm "$1" \
	    "$mirror" >"$1.debootstrap.log" 2>&1 ||
	    { tail -n 20 "$1.debootstrap.log"; return 1; }
	rm -f "$1.debootstrap.log"
}

if [ "${1-}" = --base ]; then
	debootstrap_into "$2" && touch "$2/.debootstrapped"
	exit
fi
base=${FRESH_ROOT_BASE-}
if [ -n "$base" ] && [ -e "$base/.debootstrapped" ]; then
	root=$base
	rm -f "$root/.debootstrapped"
else
	root=$(mktemp -d "${TMPDIR:-/var/tmp}/redlock-fresh-root.XXXXXX")
fi
mounts=(proc sys dev dev/pts dev/shm)

cleanup() {
	local rc=$? i m left=0
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		m=$root/${mounts[i]}
		mountpoint -q "$m" || continue
		umount "$m" 2>/dev/null || umount -l "$m" || left=1
	done
	# Never remove through a mount that is still there (the host's /dev).
	if [ $left = 0 ] && ! grep -qF " $root/" /proc/self/mounts; then
		rm -rf --one-file-system "$root"
	else
		echo "fresh-root: $root still has mounts; left in place" >&2
		rc=1
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$root" = "$base" ]; then
	echo "fresh-root: Debian 12 debootstrapped earlier, in $root"
else
	echo "fresh-root: debootstrap --variant=minbase bookworm into $root"
	t0=$SECONDS
	debootstrap_into "$root"
	echo "fresh-root: debootstrap took $((SECONDS - t0)) s"
fi

mount -t proc proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# What an installed system has and debootstrap does not write: without it
# "localhost" is looked up in the DNS.
[ -e "$root/etc/hosts" ] ||
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    >"$root/etc/hosts"
# The host's extra CA certificates (a TLS proxy's, say) go along, so that
# npm in the root trusts the registry as npm on the host does.
extra_ca=()
if [ -r "${NODE_EXTRA_CA_CERTS:-}" ]; then
	cp "$NODE_EXTRA_CA_CERTS" "$root/etc/host-extra-ca.crt"
	extra_ca=(NODE_EXTRA_CA_CERTS=/etc/host-extra-ca.crt)
fi

# The whole suite runs in the test leg on the CI host; here, the files
# that use each tool make deps installs (bats, Redis and its Sentinel,
# TLS, node and python3, faketime, luac, nftables and unshare, the
# shells, readelf, man and mandoc, socat, script), and then make
# deps-check says whether every package of make deps is installed.
suite=${FRESH_SUITE:-tests/cli.bats
    tests/completions.bats tests/interop.bats tests/tls.bats tests/fences.bats
    tests/scripts.bats tests/man.bats tests/build.bats tests/sentinel.bats
    tests/errors.bats tests/faults/network.bats tests/faults/tree.bats}
suite=$(echo $suite)

git clone -q --no-local "$top" "$root/src/redlock-cli"
git -C "$root/src/redlock-cli" checkout -q "$commit"

# The README's two commands, as a new user would type them, with none of
# our environment.
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 CI=true "${extra_ca[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    FRESH_SUITE="$suite" sh -c 'cd /src/redlock-cli && make demo &&
        make test SUITE="$FRESH_SUITE" &&
        make -s deps-check' </dev/null
