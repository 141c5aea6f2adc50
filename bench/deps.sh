#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/deps.sh: install what bench/run.sh measures redlock-cli against
# (`make bench-deps`).  Debian packages: flock(1) (util-linux), etcd and
# etcdctl (etcd-server, etcd-client), gnuplot for the chart (gnuplot-nox),
# Redis, openssl (the TLS case), curl (etcd's metrics), valgrind (the
# instruction counts), a C compiler (bench/helper.c), git (the pre-TLS
# build), hyperfine (bench/hardened.sh), and Node.js with npm when no
# `node` is on PATH.  Then the npm
# packages of the node-redlock peer, exactly as bench/node/package-lock.json
# pins them, into bench/node/node_modules (`npm ci`).
#
# On a machine with systemd, Debian's etcd-server package starts an etcd
# service on 127.0.0.1:2379.  The benchmarks do not use it (they start their
# own etcd on free ports); `systemctl disable --now etcd` stops it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

pkgs="util-linux etcd-server etcd-client gnuplot-nox redis-server redis-tools hyperfine"
pkgs+=" openssl curl valgrind gcc libc6-dev git"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	pkgs+=" nodejs npm"
fi

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed' || missing+=" $p"
done
if [[ -n $missing ]]; then
	echo "bench-deps: installing:$missing"
	SUDO=""
	[[ $(id -u) == 0 ]] || SUDO=sudo
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086 # a list of package names
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
	    --no-install-recommends $missing >/dev/null
fi

echo "bench-deps: npm ci in bench/node (redlock, ioredis)"
cd "$ROOT/bench/node"
npm ci --no-audit --no-fund --loglevel=error
