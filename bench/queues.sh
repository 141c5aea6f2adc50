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
#   idle     IDLE_RUNS (5) pairs of HOLD s runs with a TTL s TTL, without
#            and with --queue latest (a holder that listens for cancels),
#            side by side on two servers: median CPU of one redlock-cli of
#            each, and the commands its server ran for one run (INFO
#            commandstats)
#
# Knobs: BENCH_QN (iterations of each timed case; 20), BENCH_HOLD (20),
# BENCH_TTL (10), IDLE_RUNS (5), BENCH_QUEUE_TRANSPORT (unix, as case C of
# bench/run.sh, whose hand-off target these share, or tcp), REDLOCK_CLI
# (./redlock-cli).
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

# cpu_ns PID: the CPU time of PID's tasks so far, in ns (0 once gone).
cpu_ns() {
	local f ns sum=0
	for f in /proc/"$1"/task/*/schedstat; do
		read -r ns _ 2>/dev/null <"$f" || return 0
		sum=$((sum + ns))
	done
	echo "$sum"
}
# The listening holds' own server, so that each mode's commands are
# counted apart while the two run side by side; ICPID its pid.
start_idle_server() {
	redis-server --port 0 --unixsocket "$TMP/idle.sock" --unixsocketperm 700 \
	    --save '' --appendonly no --daemonize yes --pidfile "$TMP/idle.pid" \
	    --dir "$TMP" --logfile "$TMP/idle.log" </dev/null >/dev/null
	until_ok icli_up
	ICPID=$(<"$TMP/idle.pid")
	BENCH_PIDS+=("$ICPID")
	# Its scripts loaded first, as the main server's: a first use is a
	# NOSCRIPT and an EVAL of the whole script.
	"$RL" -u "unix://$TMP/idle.sock" run bench:q:warm -n -t 300ms \
	    --queue latest -- sleep 0.2
}
icli() { redis-cli -s "$TMP/idle.sock" "$@"; }
icli_up() { icli PING >/dev/null 2>&1; }
# idle_line RUNS STATS CPU_NS...: "CPU_MS RANGE EVALSHA BZPOPMIN OTHER",
# the median CPU of one run and the range, and the commands in STATS (INFO
# commandstats) for one run (their counts divided by RUNS).
idle_line() {
	local runs=$1 stats
	stats=$(tr -d '\r' <<<"$2")
	shift 2
	[[ -z ${BENCH_DEBUG:-} ]] || echo "$stats" >&2
	printf '%s\n' "$@" | sort -n | awk -v runs="$runs" -v stats="$stats" '
	    { v[NR] = $1 }
	    END {
		m = v[int((NR + 1) / 2)]
		split(stats, line, "\n")
		for (i in line) if (line[i] ~ /^cmdstat_/) {
			split(line[i], a, /[:=,]/); c[a[1]] = a[3]
		}
		e = c["cmdstat_evalsha"] + c["cmdstat_eval"]; b = c["cmdstat_bzpopmin"]
		o = 0
		for (k in c) if (k != "cmdstat_evalsha" && k != "cmdstat_eval" &&
		    k != "cmdstat_bzpopmin" && k !~ /^cmdstat_config/ &&
		    k != "cmdstat_info" && k !~ /^cmdstat_(pexpire|get|set|incr|hset|hmget|zadd|zrange|zscore|time|zrangebyscore|zrank|zrem|hdel|del|zcount|hget|pttl|type|exists)$/)
			o += c[k]
		printf "%.2f %.2f–%.2f %.1f %.1f %.1f\n", m / 1e6, v[1] / 1e6,
		    v[NR] / 1e6, e / runs, b / runs, o / runs
	    }'
}
# IDLE_RUNS (5) pairs of HOLD s runs with a TTL s TTL, a plain one (on the
# main server) and one of --queue latest (on the idle server), all at once,
# each started 0.25 s after the one before, so that their start-ups do not
# meet: one idle_line for the plain runs, then one for the listening ones.
# A run's CPU is mostly its start-up, which moves by a millisecond from
# one moment to the next on this machine: five of each, side by side,
# tell 0.3 ms apart where one after the other did not.
idle_pair() {
	local j n=${IDLE_RUNS:-5} pids=() cpu=() plain=() listen=() ns alive
	rcli CONFIG RESETSTAT >/dev/null
	icli CONFIG RESETSTAT >/dev/null
	for ((j = 0; j < 2 * n; j++)); do
		if ((j % 2 == 0)); then
			"$RL" run "bench:q:idle:$j" -t "${TTL}s" -- sleep "$HOLD" &
		else
			"$RL" -u "unix://$TMP/idle.sock" run "bench:q:idle:$j" \
			    -t "${TTL}s" --queue latest -- sleep "$HOLD" &
		fi
		pids+=($!)
		cpu+=(0)
		sleep 0.25
	done
	for ((alive = 1; alive > 0; )); do
		alive=0
		for ((j = 0; j < 2 * n; j++)); do
			ns=$(cpu_ns "${pids[j]}")
			((ns == 0)) || { cpu[j]=$ns; alive=$((alive + 1)); }
		done
		sleep 0.1
	done
	wait "${pids[@]}"
	for ((j = 0; j < 2 * n; j += 2)); do
		plain+=("${cpu[j]}")
		listen+=("${cpu[j + 1]}")
	done
	idle_line "$n" "$(rcli INFO commandstats)" "${plain[@]}"
	idle_line "$n" "$(icli INFO commandstats)" "${listen[@]}"
}
"$RL" run bench:q:warm -n -t 300ms --queue latest -- sleep 0.2	# load the scripts, extend too
"$RL" run bench:q:warm -n -t 300ms --queue fifo -- true
for ((i = 0; i < N; i++)); do
	for t in flock any fifo latest; do handoff "$t" >>"$TMP/handoff.$t"; done
	supersede >>"$TMP/supersede"
	cancel >>"$TMP/cancel"
done
start_idle_server
{
	read -r plain_cpu plain_range plain_e plain_b plain_o
	read -r listen_cpu listen_range listen_e listen_b listen_o
} < <(idle_pair)

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
echo "| ${HOLD} s hold, ${TTL} s TTL, median of ${IDLE_RUNS:-5} | CPU of redlock-cli (range) | EVALSHA (acquire, renewals, release) | BZPOPMIN | other commands |"
echo "|---|---|---|---|---|"
echo "| run (today's) | $plain_cpu ms ($plain_range) | $plain_e | $plain_b | $plain_o |"
echo "| run --queue latest (listens) | $listen_cpu ms ($listen_range) | $listen_e | $listen_b | $listen_o |"
echo "| difference | $(awk -v a="$listen_cpu" -v b="$plain_cpu" 'BEGIN { printf "%+.2f", a - b }') ms (target ≤ +0.3) | | | |"
