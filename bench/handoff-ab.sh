#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/handoff-ab.sh A B [N [MODE]]: the hand-off of two builds of
# redlock-cli (A and B, paths to binaries) and flock(1)'s, interleaved in
# one loop, N rounds (100) of all three, with --queue MODE (any, fifo or
# latest).  For telling a change from the noise: bench/queues.sh takes 20
# hand-offs per figure, which this shared 2-core machine moves by ±0.1 of
# flock's hand-off from one run to the next.
#
# A hand-off is as in bench/queues.sh: the holder's command (the static
# helper of run.sh) waits for a file, writes the clock and exits; the
# waiter's command writes the clock when it starts; the gap in µs.  One
# throwaway redis-server on a unix socket, stopped by its PID.  Prints
# one line: each side's median and its ratio to flock's.

set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
[[ $# -ge 2 ]] || { echo "usage: $0 A B [N [any|fifo|latest]]" >&2; exit 64; }
N=${3:-100}
MODE=${4:-any}
case $MODE in any | fifo | latest) ;; *) echo "$0: MODE: any, fifo or latest" >&2; exit 64 ;; esac
bench_setup bench/handoff-ab.sh

cp -p "$1" "$TMP/a" || die "no build $1"
cp -p "$2" "$TMP/b" || die "no build $2"
HELPER="$TMP/helper"
"${CC:-cc}" -O2 -static -o "$HELPER" "$ROOT/bench/helper.c" 2>/dev/null ||
    "${CC:-cc}" -O2 -o "$HELPER" "$ROOT/bench/helper.c" || die "no helper"
rcli() { redis-cli -s "$TMP/sock" "$@"; }
start_redis
# Shorter pauses than queues.sh's: three sides of N rounds.
export HANDOFF_PAUSE_MS=100 HANDOFF_SPREAD_MS=200

"$TMP/a" run "bench:q:$MODE" --queue "$MODE" -- true	# load the scripts
"$TMP/b" run "bench:q:$MODE" --queue "$MODE" -- true
for ((i = 0; i < N; i++)); do
	handoff flock >>"$TMP/flock.us"
	handoff "$MODE" "$TMP/a" >>"$TMP/a.us"
	handoff "$MODE" "$TMP/b" >>"$TMP/b.us"
done
f=$(median <"$TMP/flock.us")
a=$(median <"$TMP/a.us")
b=$(median <"$TMP/b.us")
awk -v m="$MODE" -v n="$N" -v f="$f" -v a="$a" -v b="$b" 'BEGIN {
	printf "--queue %s, %d rounds: flock %d us; A %d us (%.2f); B %d us (%.2f)\n",
	    m, n, f, a, a / f, b, b / f }'
