#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stress mode: mutual exclusion and fencing of `redlock-cli run` under
# faults, checked from a history.  Prints one summary line (check.awk) and
# exits non-zero when the history shows a violation.
#
#   bash tests/stress/stress.sh            (make stress: 16 workers x 200)
#
# It starts its own redis-server(s) on unix sockets in a temporary
# directory (never port 6379), then STRESS_WORKERS workers (worker.c), each
# doing STRESS_CYCLES cycles of
#   redlock-cli --io-timeout 200ms run -w 30s -t TTL stress -- stress-child child
# on one key.  The child (child.c) logs `start`/`end` with CLOCK_MONOTONIC
# times and writes its fence to a resource that accepts only growing fences.
# Faults (STRESS_FAULTS=1, the default) while it runs:
#   kills   SIGKILL of a running redlock-cli: half of them any worker's,
#           half of them the lock holder's (its child is running)
#   pauses  SIGSTOP of one of our servers for up to 2 x TTL, then SIGCONT
#   delays  a child's write handed to a process that delivers it up to
#           2 x TTL later: the stale write that fencing must reject
#   (and, always: some children hold for up to 2 x TTL so that a pause
#   makes run lose their lock, and some ignore run's SIGTERM so that run's
#   SIGKILL at the lock's expiry is what stops them)
# When every worker is done it waits one more TTL and looks for the lock
# key on every server (a leak), stops everything by PID and runs check.awk.
#
# Settings (environment; `make stress` passes make variables through):
#   STRESS_WORKERS=16 STRESS_CYCLES=200 STRESS_SERVERS=1 (3: a quorum)
#   STRESS_TTL_MS=500 STRESS_IO_TIMEOUT=200ms STRESS_WAIT=30s
#   STRESS_FAULTS=1 STRESS_KILL_MS=700 STRESS_PAUSE_MS=2000 (mean ms between)
#   STRESS_DELAY_PCT=3 STRESS_LONG_PCT=8 STRESS_STUBBORN_PCT=50 STRESS_HOLD_MS=4
#   STRESS_SEED (bash RANDOM seed)  STRESS_KEEP=1 (keep the temp dir)
#   STRESS_VERBOSE=1 (the checker's details on stderr even when it passes)
#   STRESS_REDLOCK_CLI (default: the redlock-cli built next to tests/)

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
rlcli=${STRESS_REDLOCK_CLI:-$root/redlock-cli}

workers=${STRESS_WORKERS:-16}
cycles=${STRESS_CYCLES:-200}
servers=${STRESS_SERVERS:-1}
ttl_ms=${STRESS_TTL_MS:-500}
io_timeout=${STRESS_IO_TIMEOUT:-200ms}
wait_for=${STRESS_WAIT:-30s}
faults=${STRESS_FAULTS:-1}
kill_ms=${STRESS_KILL_MS:-700}
pause_ms=${STRESS_PAUSE_MS:-2000}
key=stress

die() { printf 'stress: %s\n' "$*" >&2; exit 2; }
for v in workers cycles servers ttl_ms kill_ms pause_ms; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer: '${!v}'"
done
((kill_ms >= 100 && pause_ms >= 100)) || die "STRESS_KILL_MS and STRESS_PAUSE_MS are at least 100"
[ -x "$rlcli" ] || die "$rlcli not built (run make)"
command -v redis-server >/dev/null || die "redis-server not installed"
if [ -n "${STRESS_SEED:-}" ]; then
	RANDOM=$STRESS_SEED
fi
if [ "$faults" = 1 ]; then
	export STRESS_DELAY_PCT=${STRESS_DELAY_PCT:-3}
else
	export STRESS_DELAY_PCT=0
fi
export STRESS_LONG_PCT=${STRESS_LONG_PCT:-8}
export STRESS_STUBBORN_PCT=${STRESS_STUBBORN_PCT:-50}
export STRESS_HOLD_MS=${STRESS_HOLD_MS:-4}
# Only our servers, and no developer settings.
unset REDIS_URL REDLOCK_PREFIX REDLOCK_TOKEN REDISCLI_AUTH REDLOCK_PASSWORD \
    REDLOCK_USER

tmp=$(mktemp -d "${TMPDIR:-/tmp}/redlock-stress.XXXXXX")
log=$tmp/log
server_pids=()
worker_pids=()
result=2
started=$SECONDS

# Everything we started, stopped by its PID (workers SIGKILL their own
# redlock-cli; the children die with it by PR_SET_PDEATHSIG).  Run by trap:
# shellcheck disable=SC2317
cleanup() {
	local pid
	set +e
	for pid in "${worker_pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${worker_pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	worker_pids=()
	for pid in "${server_pids[@]}"; do
		kill -CONT "$pid" 2>/dev/null
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${server_pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	server_pids=()
	if [ "$result" = 0 ] && [ "${STRESS_KEEP:-0}" != 1 ]; then
		rm -rf "$tmp"
	else
		printf 'stress: files kept in %s\n' "$tmp" >&2
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Our own copy: a rebuild of the tree (make clean, make sanitize) during
# the run must not pull the binary from under the workers.
cp "$rlcli" "$tmp/redlock-cli"
rlcli=$tmp/redlock-cli

cflags=(-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra)
"${CC:-cc}" "${cflags[@]}" -o "$tmp/stress-child" "$here/child.c"
"${CC:-cc}" "${cflags[@]}" -o "$tmp/stress-worker" "$here/worker.c"
now() { "$tmp/stress-child" now; }

# The servers: unix sockets only, no persistence.
urls=()
for ((i = 1; i <= servers; i++)); do
	dir=$tmp/redis$i
	mkdir "$dir"
	redis-server --port 0 --unixsocket "$dir/sock" --unixsocketperm 700 \
	    --save '' --appendonly no --dir "$dir" --logfile "$dir/log" \
	    </dev/null >/dev/null 2>&1 &
	server_pids+=("$!")
	for ((try = 0; try < 100; try++)); do
		[ "$(redis-cli -s "$dir/sock" PING 2>/dev/null)" = PONG ] && break
		sleep 0.05
	done
	[ "$(redis-cli -s "$dir/sock" PING 2>/dev/null)" = PONG ] ||
	    die "redis-server $i did not start: $(cat "$dir/log")"
	urls+=("unix://$dir/sock")
done
export REDLOCK_URL="${urls[*]}"

STRESS_T0=$(now)
export STRESS_T0 STRESS_LOG=$log STRESS_RES=$tmp/resource STRESS_DIR=$tmp
printf 'config workers %d cycles %d ttl_ms %d servers %d faults %d\n' \
    "$workers" "$cycles" "$ttl_ms" "$servers" "$faults" >"$log"

for ((i = 1; i <= workers; i++)); do
	"$tmp/stress-worker" "$i" "$cycles" -- "$rlcli" \
	    --io-timeout "$io_timeout" --connect-timeout "$io_timeout" \
	    run -w "$wait_for" -t "${ttl_ms}ms" "$key" -- \
	    "$tmp/stress-child" child 2>"$tmp/worker$i.err" &
	worker_pids+=("$!")
done

all_done() {
	local i
	for ((i = 1; i <= workers; i++)); do
		[ -e "$tmp/done.$i" ] || return 1
	done
}

# A worker that died early is an error of the harness, not a result.
check_workers() {
	local pid running
	running=$(jobs -pr)
	for pid in "${worker_pids[@]}"; do
		grep -qx "$pid" <<<"$running" || die "a worker exited early; see $tmp"
	done
}

# kill: half the time the holder's redlock-cli (SIGUSR2 to every worker:
# only the one whose child runs acts), else any one worker's.
inject_kill() {
	local pid
	if ((RANDOM % 2)); then
		for pid in "${worker_pids[@]}"; do
			kill -USR2 "$pid"
		done
	else
		kill -USR1 "${worker_pids[RANDOM % workers]}"
	fi
}

# pause: SIGSTOP one server for 1 .. 2*TTL ms.
inject_pause() {
	local s=$((RANDOM % servers)) d=$((1 + RANDOM % (2 * ttl_ms)))
	kill -STOP "${server_pids[s]}"
	printf 'pause %d %d %d\n' "$((s + 1))" "$d" "$(now)" >>"$log"
	sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
	kill -CONT "${server_pids[s]}"
}

# Faults, in 100 ms ticks, until every worker is done.
while ! all_done; do
	sleep 0.1
	check_workers
	[ "$faults" = 1 ] || continue
	if ((RANDOM % kill_ms < 100)); then
		inject_kill
	fi
	if ((RANDOM % pause_ms < 100)); then
		inject_pause
	fi
done

for pid in "${worker_pids[@]}"; do
	kill -TERM "$pid"
done
for pid in "${worker_pids[@]}"; do
	wait "$pid" || die "worker $pid failed; see $tmp"
done
worker_pids=()

# Leaks: every redlock-cli has ended; after one more TTL no lock key may
# be left (a killed holder's key expires by then).  Other keys that still
# have a TTL (wake-up lists live 10 s) are noted, not counted.
sleep "$(((ttl_ms + 500) / 1000)).$(printf '%03d' $(((ttl_ms + 500) % 1000)))"
for ((i = 1; i <= servers; i++)); do
	sock=$tmp/redis$i/sock
	if [ "$(redis-cli -s "$sock" EXISTS "$key")" != 0 ]; then
		printf 'leaked %d %s %s\n' "$i" "$key" \
		    "$(redis-cli -s "$sock" PTTL "$key")" >>"$log"
	fi
	while read -r k; do
		[ -n "$k" ] || continue
		printf 'note server %d key %s pttl %s\n' "$i" "$k" \
		    "$(redis-cli -s "$sock" PTTL "$k")" >>"$log"
	done < <(redis-cli -s "$sock" --scan)
	printf 'checked %d\n' "$i" >>"$log"
done

result=0
awk -f "$here/check.awk" "$log" 2>"$tmp/check.txt" || result=$?
if [ "$result" != 0 ] || [ "${STRESS_VERBOSE:-0}" = 1 ]; then
	cat "$tmp/check.txt" >&2
fi
printf 'stress: took %ds\n' "$((SECONDS - started))" >&2
exit "$result"
