#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/queues.sh: the queues' figures (issue 15), each a ratio against
# flock(1)'s hand-off measured in the same run, on a throwaway redis-server
# (TCP, a free high port).  See bench/README.md, "Queues".
#
#   handoff  holder's command ends -> waiter's command starts: flock, and
#            redlock-cli run with --queue fifo and --queue latest
#   supersede  a newer waiter's start -> the superseded waiter's exit
#   cancel   a newer waiter's start (--cancel-running) -> SIGTERM in the
#            holder's command
#   idle     a HOLD s run with a TTL s TTL, with and without --queue latest
#            (a holder that listens for cancels): CPU of redlock-cli, and
#            the commands the server ran (INFO commandstats)
#
# Knobs: BENCH_QN (iterations of each timed case; 20), BENCH_HOLD (20),
# BENCH_TTL (10), BENCH_QUEUE_TRANSPORT (unix, as case C of bench/run.sh,
# whose hand-off target these share, or tcp), REDLOCK_CLI (./redlock-cli).
# Prints markdown to stdout.

set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
RL=${REDLOCK_CLI:-$ROOT/redlock-cli}
N=${BENCH_QN:-20}
HOLD=${BENCH_HOLD:-20}
TTL=${BENCH_TTL:-10}
bench_setup bench/queues.sh

HELPER="$TMP/helper"
"${CC:-cc}" -O2 -static -o "$HELPER" "$ROOT/bench/helper.c" 2>/dev/null ||
    "${CC:-cc}" -O2 -o "$HELPER" "$ROOT/bench/helper.c" || die "no helper"
cp -p "$RL" "$TMP/redlock-cli"
RL="$TMP/redlock-cli"

for _ in 1 2 3 4 5 6 7 8 9 10; do
	PORT=$((30000 + RANDOM % 20000))
	redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
	    --unixsocket "$TMP/sock" --unixsocketperm 700 \
	    --daemonize yes --pidfile "$TMP/redis.pid" --dir "$TMP" \
	    --logfile "$TMP/redis.log" </dev/null && sleep 0.2 &&
	    redis-cli -p "$PORT" PING >/dev/null 2>&1 && break
done
RPID=$(<"$TMP/redis.pid")
case ${BENCH_QUEUE_TRANSPORT:-unix} in
unix) export REDLOCK_URL="unix://$TMP/sock" ;;
tcp) export REDLOCK_URL="redis://127.0.0.1:$PORT" ;;
*) die "BENCH_QUEUE_TRANSPORT: unix or tcp" ;;
esac
rcli() { redis-cli -p "$PORT" "$@"; }
now_us() { REPLY=${EPOCHREALTIME/./}; }
key_held() { [[ $(rcli EXISTS "$1") == 1 ]]; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }

# A newer waiter's start -> the superseded one's exit, in microseconds.
supersede() {
	local tok old new t0 t1
	tok=$("$RL" acquire bench:q:s -t 30s)
	"$RL" run bench:q:s --queue latest -- true 2>/dev/null &
	old=$!
	until_ok at_least_blocked 1
	sleep "0.$((150 + RANDOM % 500))"
	now_us; t0=$REPLY
	"$RL" run bench:q:s --queue latest -- true &
	new=$!
	wait "$old" || [[ $? == 80 ]] || die "superseded waiter: not 80"
	now_us; t1=$REPLY
	"$RL" release bench:q:s --token "$tok"
	wait "$new"
	echo $((t1 - t0))
}

# A newer run's start -> SIGTERM in the holder's command, in microseconds.
cancel() {
	local d="$TMP/c" old new t0
	rm -f "$d".*
	"$RL" run bench:q:c --queue latest -- "$HELPER" termstamp "$d.held" "$d.term" 2>/dev/null &
	old=$!
	until_ok exists "$d.held"
	until_ok at_least_blocked 1	# listening
	sleep "0.$((150 + RANDOM % 500))"
	now_us; t0=$REPLY
	"$RL" run bench:q:c --queue latest --cancel-running -- true &
	new=$!
	wait "$old" || [[ $? == 82 ]] || die "cancelled holder: not 82"
	wait "$new"
	echo $(($(<"$d.term") - t0))
}

# A HOLD s run (OPTS...): "CPU_MS EVALSHA BZPOPMIN OTHER" of redlock-cli.
idle() {
	local pid f ns sum cpu=0 stats
	rcli CONFIG RESETSTAT >/dev/null
	"$RL" run bench:q:idle -t "${TTL}s" "$@" -- sleep "$HOLD" &
	pid=$!
	while [[ -e /proc/$pid/stat ]]; do
		sum=0
		for f in /proc/"$pid"/task/*/schedstat; do
			read -r ns _ 2>/dev/null <"$f" || break
			sum=$((sum + ns))
		done
		((sum == 0)) || cpu=$sum
		sleep 0.1
	done
	wait "$pid"
	stats=$(rcli INFO commandstats | tr -d '\r')
	[[ -z ${BENCH_DEBUG:-} ]] || echo "$stats" >&2
	awk -v cpu="$cpu" '
	    /^cmdstat_/ { split($0, a, /[:=,]/); n[a[1]] = a[3] }
	    END {
		e = n["cmdstat_evalsha"] + n["cmdstat_eval"]; b = n["cmdstat_bzpopmin"]
		o = 0
		for (c in n) if (c != "cmdstat_evalsha" && c != "cmdstat_eval" &&
		    c != "cmdstat_bzpopmin" && c !~ /^cmdstat_config/ &&
		    c != "cmdstat_info" && c !~ /^cmdstat_(pexpire|get|set|incr|hset|hmget|zadd|zrange|zscore|time|zrangebyscore|zrank|zrem|hdel|del|zcount|hget|pttl|type|exists)$/)
			o += n[c]
		printf "%.2f %d %d %d\n", cpu / 1e6, e, b, o
	    }' <<<"$stats"
}

"$RL" run bench:q:warm -n -t 300ms --queue latest -- sleep 0.2	# load the scripts, extend too
"$RL" run bench:q:warm -n -t 300ms --queue fifo -- true
for ((i = 0; i < N; i++)); do
	for t in flock any fifo latest; do handoff "$t" >>"$TMP/handoff.$t"; done
	supersede >>"$TMP/supersede"
	cancel >>"$TMP/cancel"
done
read -r plain_cpu plain_e plain_b plain_o < <(idle)
read -r listen_cpu listen_e listen_b listen_o < <(idle --queue latest)

f=$(median <"$TMP/handoff.flock")
echo "| case | median | ÷ flock's hand-off ($(ms "$f") ms) | target |"
echo "|---|---|---|---|"
for t in any fifo latest; do
	m=$(median <"$TMP/handoff.$t")
	echo "| hand-off, --queue $t$([[ $t != any ]] || echo " (today's)") | $(ms "$m") ms | $(awk -v a="$m" -v b="$f" 'BEGIN { printf "%.2f", a / b }') | ≤ 1.5 |"
done
m=$(median <"$TMP/supersede")
echo "| superseded: newer waiter's start → old waiter's exit | $(ms "$m") ms | $(awk -v a="$m" -v b="$f" 'BEGIN { printf "%.2f", a / b }') | ≤ 2 |"
m=$(median <"$TMP/cancel")
echo "| cancel: newer waiter's start → SIGTERM in the holder's command | $(ms "$m") ms | $(awk -v a="$m" -v b="$f" 'BEGIN { printf "%.2f", a / b }') | ≤ 2 |"
echo
echo "| ${HOLD} s hold, ${TTL} s TTL | CPU of redlock-cli | EVALSHA (acquire, renewals, release) | BZPOPMIN | other commands |"
echo "|---|---|---|---|---|"
echo "| run (today's) | $plain_cpu ms | $plain_e | $plain_b | $plain_o |"
echo "| run --queue latest (listens) | $listen_cpu ms | $listen_e | $listen_b | $listen_o |"
echo "| difference | $(awk -v a="$listen_cpu" -v b="$plain_cpu" 'BEGIN { printf "%+.2f", a - b }') ms (target ≤ +0.3) | | | |"
