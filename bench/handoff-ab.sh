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
[[ $# -ge 2 ]] || { echo "usage: $0 A B [N [any|fifo|latest]]" >&2; exit 64; }
N=${3:-100}
MODE=${4:-any}
case $MODE in any | fifo | latest) ;; *) echo "$0: MODE: any, fifo or latest" >&2; exit 64 ;; esac
TMP=$(mktemp -d)
RPID=""
cleanup() {
	[[ -z $RPID ]] || kill "$RPID" 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT
die() { echo "bench/handoff-ab.sh: $*" >&2; exit 1; }

cp -p "$1" "$TMP/a" || die "no build $1"
cp -p "$2" "$TMP/b" || die "no build $2"
HELPER="$TMP/helper"
"${CC:-cc}" -O2 -static -o "$HELPER" "$ROOT/bench/helper.c" 2>/dev/null ||
    "${CC:-cc}" -O2 -o "$HELPER" "$ROOT/bench/helper.c" || die "no helper"
redis-server --port 0 --unixsocket "$TMP/sock" --unixsocketperm 700 \
    --save '' --appendonly no --daemonize yes --pidfile "$TMP/redis.pid" \
    --dir "$TMP" --logfile "$TMP/redis.log" </dev/null >/dev/null
for _ in $(seq 100); do
	redis-cli -s "$TMP/sock" PING >/dev/null 2>&1 && break
	sleep 0.05
done
RPID=$(<"$TMP/redis.pid")
export REDLOCK_URL="unix://$TMP/sock"

blocked() {
	redis-cli -s "$TMP/sock" INFO clients |
	    awk -F: '/^blocked_clients/ { print $2 + 0 }'
}
until_ok() {
	local i
	for ((i = 0; i < 1000; i++)); do
		"$@" && return 0
		sleep 0.005
	done
	die "timed out: $*"
}
at_least_blocked() { (($(blocked) >= $1)); }
exists() { [[ -e $1 ]]; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# handoff SIDE: one hand-off through flock, or the build SIDE (a or b).
handoff() {
	local d="$TMP/h" h w
	rm -f "$d".*
	if [[ $1 == flock ]]; then
		flock "$TMP/flock" "$HELPER" hold "$d.held" "$d.go" "$d.end" &
		h=$!
		until_ok exists "$d.held"
		flock "$TMP/flock" "$HELPER" stamp "$d.start" &
		w=$!
		until_ok grep -q -- '->' /proc/locks
	else
		"$TMP/$1" run ab --queue "$MODE" -- \
		    "$HELPER" hold "$d.held" "$d.go" "$d.end" &
		h=$!
		until_ok exists "$d.held"
		"$TMP/$1" run ab --queue "$MODE" -- "$HELPER" stamp "$d.start" &
		w=$!
		# (a latest holder listens: one client blocked already)
		until_ok at_least_blocked "$([[ $MODE == latest ]] && echo 2 || echo 1)"
	fi
	sleep "0.$((100 + RANDOM % 200))"
	: >"$d.go"
	wait "$h" "$w"
	echo $(($(<"$d.start") - $(<"$d.end")))
}

"$TMP/a" run ab --queue "$MODE" -- true	# load the scripts
"$TMP/b" run ab --queue "$MODE" -- true
for ((i = 0; i < N; i++)); do
	for side in flock a b; do handoff "$side" >>"$TMP/$side.us"; done
done
f=$(median <"$TMP/flock.us")
a=$(median <"$TMP/a.us")
b=$(median <"$TMP/b.us")
awk -v m="$MODE" -v n="$N" -v f="$f" -v a="$a" -v b="$b" 'BEGIN {
	printf "--queue %s, %d rounds: flock %d us; A %d us (%.2f); B %d us (%.2f)\n",
	    m, n, f, a, a / f, b, b / f }'
