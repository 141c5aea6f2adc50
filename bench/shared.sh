#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/shared.sh: shared (reader) locks, issue 16, against flock -s/-x in
# the same run (see bench/README.md, "Shared locks"):
#   S1 (readers)  8 shared workers x 50 cycles: cycles/s, ratio to flock -s
#   S2 (stream)   readers holding 200 ms each, a new one every 50 ms, and
#                 one writer arriving in the middle, between two readers:
#                 the writer's wait, median and max of ROUNDS, against the
#                 longest reader hold + 1.5 x flock's hand-off; flock's
#                 writer in the same stream for contrast; then the same
#                 with the writer launched in the same instant as a reader
#                 (reported)
#   S3 (mixed)    7 readers + 1 writer x 50 cycles: cycles/s, ratio to
#                 flock with -s/-x in the same mix
# One redis-server on a unix socket in a temporary directory, stopped by
# its PID on exit.  Knobs: BENCH_SHARED_RUNS (3), BENCH_SHARED_ROUNDS (20),
# BENCH_SHARED_CYCLES (50), REDLOCK_CLI (./redlock-cli).
set -euo pipefail
export LC_ALL=C

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
RL=${REDLOCK_CLI:-$ROOT/redlock-cli}
RUNS=${BENCH_SHARED_RUNS:-3}
ROUNDS=${BENCH_SHARED_ROUNDS:-20}
CYCLES=${BENCH_SHARED_CYCLES:-50}
bench_setup bench/shared.sh

now_ms() { local t=${EPOCHREALTIME/./}; REPLY=$((t / 1000)); }
now_us() { REPLY=${EPOCHREALTIME/./}; }

# one TOOL MODE CMD...: one locked command, by redlock-cli or flock.
one() {
	local tool=$1 mode=$2
	shift 2
	if [ "$tool" = flock ]; then
		flock "-$mode" "$TMP/flock" "$@"
	else
		"$RL" run "-$mode" bench:shared -- "$@"
	fi
}

# worker TOOL MODE N: N cycles of a locked `true`.
worker() {
	local i
	for ((i = 0; i < $3; i++)); do
		one "$1" "$2" true
	done
}

# rate TOOL MODES...: one worker per mode at once; cycles/s of them all.
rate() {
	local tool=$1 t0 m pids=()
	shift
	now_ms; t0=$REPLY
	for m in "$@"; do
		worker "$tool" "$m" "$CYCLES" & pids+=($!)
	done
	wait "${pids[@]}"
	now_ms
	awk -v n=$(($# * CYCLES)) -v ms=$((REPLY - t0)) \
	    'BEGIN { printf "%.1f\n", n * 1000 / ms }'
}

# flock_handoff: flock's hand-off, µs from a holder's end to a waiter's
# start.  S2 is timed in µs throughout: at 1 ms, this median of 10 came
# out 2 or 3 ms from one run to the next, and the bound moved by 1.5 ms.
flock_handoff() {
	flock -x "$TMP/flock" sh -c "sleep 0.1; date +%s%6N >$TMP/end" &
	sleep 0.03
	flock -x "$TMP/flock" sh -c "date +%s%6N >$TMP/start"
	wait
	echo $(($(cat "$TMP/start") - $(cat "$TMP/end")))
}

# stream TOOL [TIE]: readers of 200 ms every 50 ms for 1.5 s and one
# writer, 25 ms after the 15th reader (mid-gap, at about 0.73 s), or with
# TIE in the same instant as the 16th; prints the writer's wait in µs
# (arrival to its command's start) and the longest reader hold (its
# command's start to end), as measured.  The tie is the stream's worst
# case and says nothing of writer preference: the reader launched with
# the writer gets in first whenever its take reaches the server before the
# writer's first attempt, and then the writer waits for the whole of its
# hold, plus its start (bench/README.md, "Shared locks").
stream() {
	local tool=$1 tie=${2:-} i t0 pids=()
	rm -f "$TMP"/r.*
	for ((i = 0; i < 30; i++)); do
		if ((i == 15)) && [ -n "$tie" ]; then
			now_us; t0=$REPLY
			one "$tool" x sh -c "date +%s%6N >$TMP/w" & pids+=($!)
		fi
		one "$tool" s sh -c "date +%s%6N >$TMP/r.$i.s; sleep 0.2;
		    date +%s%6N >$TMP/r.$i.e" & pids+=($!)
		if ((i == 14)) && [ -z "$tie" ]; then
			sleep 0.025
			now_us; t0=$REPLY
			one "$tool" x sh -c "date +%s%6N >$TMP/w" & pids+=($!)
			sleep 0.025
		else
			sleep 0.05
		fi
	done
	wait "${pids[@]}"
	for ((i = 0; i < 30; i++)); do
		echo $(($(cat "$TMP/r.$i.e") - $(cat "$TMP/r.$i.s")))
	done | sort -n | tail -1 >"$TMP/hold"
	echo "$(($(cat "$TMP/w") - t0)) $(cat "$TMP/hold")"
}

# median and max of numbers on stdin, divided by DIV (1)
medmax() {
	sort -n | awk -v div="${1:-1}" '{ v[NR] = $1 / div } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f %.1f\n", m, v[NR] }'
}

one_run() {
	local r f hand w fw
	r=$(rate redlock s s s s s s s s)
	f=$(rate flock s s s s s s s s)
	echo "S1 readers: redlock-cli $r/s, flock -s $f/s, ratio $(awk \
	    -v a="$r" -v b="$f" 'BEGIN { printf "%.2f", a / b }')"
	hand=$(for _ in $(seq 10); do flock_handoff; done | medmax 1000)
	for _ in $(seq "$ROUNDS"); do stream redlock; done >"$TMP/s2"
	w=$(cut -d' ' -f1 "$TMP/s2" | medmax 1000)
	hold=$(cut -d' ' -f2 "$TMP/s2" | medmax 1000)
	fw=$(for _ in $(seq 3); do stream flock; done | cut -d' ' -f1 |
	    medmax 1000)
	echo "S2 stream: writer waits median/max ${w% *}/${w#* } ms;" \
	    "bound: longest reader hold ${hold#* } ms + 1.5 x flock's" \
	    "hand-off ${hand% *} ms = $(awk -v h="${hold#* }" -v f="${hand% *}" \
	    'BEGIN { printf "%.1f", h + 1.5 * f }') ms;" \
	    "flock's writer ${fw% *}/${fw#* } ms"
	for _ in $(seq "$ROUNDS"); do stream redlock tie; done >"$TMP/s2t"
	w=$(cut -d' ' -f1 "$TMP/s2t" | medmax 1000)
	hold=$(cut -d' ' -f2 "$TMP/s2t" | medmax 1000)
	echo "S2 tie (writer launched with a reader): writer waits" \
	    "median/max ${w% *}/${w#* } ms; longest reader hold ${hold#* } ms"
	r=$(rate redlock s s s s s s s x)
	f=$(rate flock s s s s s s s x)
	echo "S3 mixed: redlock-cli $r/s, flock $f/s, ratio $(awk \
	    -v a="$r" -v b="$f" 'BEGIN { printf "%.2f", a / b }')"
}

command -v redis-server >/dev/null || { echo "bench: no redis-server" >&2; exit 1; }
[ -x "$RL" ] || { echo "bench: no $RL (make first)" >&2; exit 1; }
start_redis
echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$RL" -V)"
for run in $(seq "$RUNS"); do
	echo "## run $run"
	one_run
done
