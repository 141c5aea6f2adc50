# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# bench/lib.sh: what the queue and shared-lock benchmarks share; sourced
# by bench/queues.sh, bench/handoff-ab.sh, bench/shared.sh,
# bench/history.sh and bench/server-cost.sh.  The
# caller calls bench_setup first; sets, for the hand-off, HELPER (run.sh's
# static helper) and RL (the redlock-cli to run); and defines rcli ARGS...
# (redis-cli to its server).

# bench_setup NAME: TMP, a temporary directory removed on exit, after the
# server of RPID (if one was started) and those of BENCH_PIDS are stopped;
# die MESSAGE then says "NAME: MESSAGE" and exits 1.
bench_setup() {
	BENCH_NAME=$1
	TMP=$(mktemp -d)
	RPID=""
	BENCH_PIDS=()
	trap bench_cleanup EXIT
}
# ... and the servers whose pids the caller added to BENCH_PIDS.
bench_cleanup() {
	local pid
	stop_redis
	for pid in "${BENCH_PIDS[@]}"; do
		stop_pid "$pid"
	done
	rm -rf "$TMP"
}
die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

# start_redis [ARGS...]: a throwaway redis-server (REDIS_SERVER, say a
# valkey-server, if set) on the unix socket $TMP/sock, with ARGS, RPID its
# pid (stop_redis stops it), REDLOCK_URL exported to it.
# shellcheck disable=SC2120 # most callers give no ARGS
start_redis() {
	"${REDIS_SERVER:-redis-server}" --port 0 --unixsocket "$TMP/sock" \
	    --unixsocketperm 700 --save '' --appendonly no --daemonize yes \
	    --pidfile "$TMP/pid" --dir "$TMP" --logfile "$TMP/log" "$@" \
	    </dev/null >/dev/null
	for _ in $(seq 100); do
		redis-cli -s "$TMP/sock" PING >/dev/null 2>&1 && break
		sleep 0.05
	done
	RPID=$(cat "$TMP/pid")
	export REDLOCK_URL="unix://$TMP/sock"
}

# stop_redis: stop the server of RPID, if any, and wait until it is gone,
# so that it writes nothing more into $TMP as the caller removes it.
stop_redis() { stop_pid "${RPID:-}"; }
# stop_pid PID: SIGTERM, and wait (5 s at most) until it is gone.
stop_pid() {
	[[ -n $1 ]] || return 0
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
}

blocked() { rcli INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p'; }
# until CMD...: poll every 5 ms, for 5 s at most.
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

# handoff MODE [BIN]: one hand-off, the gap in microseconds from the
# holder's command's end to the waiter's command's start, through flock
# (MODE flock) or BIN (RL) with --queue MODE.  The holder's command ends
# HANDOFF_PAUSE_MS (150) plus up to HANDOFF_SPREAD_MS (500) after the
# waiter is seen waiting, so that nothing polls in phase with it.
handoff() {
	local tool=$1 bin=${2:-${RL:-}} d="$TMP/h.$1" h w
	rm -f "$d".*
	case $tool in
	flock) flock "$TMP/flock" "$HELPER" hold "$d.held" "$d.go" "$d.end" & ;;
	*) "$bin" run "bench:q:$tool" --queue "$tool" -- "$HELPER" hold "$d.held" "$d.go" "$d.end" & ;;
	esac
	h=$!
	until_ok exists "$d.held"
	case $tool in
	flock) flock "$TMP/flock" "$HELPER" stamp "$d.start" &
	    w=$!
	    until_ok grep -q -- '->' /proc/locks ;;
	*) "$bin" run "bench:q:$tool" --queue "$tool" -- "$HELPER" stamp "$d.start" &
	    w=$!
	    # (a latest holder listens: one client blocked already)
	    until_ok at_least_blocked "$([[ $tool == latest ]] && echo 2 || echo 1)" ;;
	esac
	sleep "$(awk -v ms=$((${HANDOFF_PAUSE_MS:-150} + RANDOM % ${HANDOFF_SPREAD_MS:-500})) \
	    'BEGIN { printf "%.3f", ms / 1000 }')"
	: >"$d.go"
	wait "$h" "$w"
	echo $(($(<"$d.start") - $(<"$d.end")))
}
