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
# times and writes its fence to a resource that accepts no lower fence than
# the last.  Jobs come in three shapes (worker.c picks one per cycle): the
# child alone; a pipeline, `child | sink` under sh -c (STRESS_PIPE_PCT);
# the child leaving a daemon behind that writes the resource too, up to
# STRESS_BG_MS after the child exited (STRESS_BG_PCT).  A job's section
# lasts until its last process is gone.
# Faults (STRESS_FAULTS=1, the default) while it runs:
#   kills   SIGKILL of a running redlock-cli: half of them any worker's,
#           half of them the lock holder's (a process of its job runs),
#           pipelines and jobs with a background process among them
#   pauses  SIGSTOP of one of our servers for up to 2 x TTL, then SIGCONT
#   delays  a child's write handed to a process that delivers it up to
#           2 x TTL later: the stale write that fencing must reject
#   replicas  with STRESS_REPLICAS=1, each server has a replica and the
#           workers run with --wait-replicas 1 --wait-timeout
#           $STRESS_WAIT_TIMEOUT (5s); a replica is SIGKILLed, and
#           restarted 0.1 .. 2 x TTL later
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
#   STRESS_PIPE_PCT=15 STRESS_BG_PCT=15 STRESS_BG_MS=TTL/2
#   STRESS_REPLICAS=0 STRESS_REPLICA_MS=3000 (mean ms between replica kills)
#   STRESS_WAIT_TIMEOUT=5s
#   STRESS_CYCLE_LIMIT_S=120 (a redlock-cli that runs longer, waits included,
#       has hung: its worker says where it is blocked and the run fails)
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
replicas=${STRESS_REPLICAS:-0}
replica_ms=${STRESS_REPLICA_MS:-3000}
wait_timeout=${STRESS_WAIT_TIMEOUT:-5s}
key=stress

die() { printf 'stress: %s\n' "$*" >&2; exit 2; }
for v in workers cycles servers ttl_ms kill_ms pause_ms replica_ms; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer: '${!v}'"
done
((kill_ms >= 100 && pause_ms >= 100 && replica_ms >= 100)) ||
    die "STRESS_KILL_MS, STRESS_PAUSE_MS and STRESS_REPLICA_MS are at least 100"
[[ $replicas == [01] ]] || die "STRESS_REPLICAS is 0 or 1: '$replicas'"
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
export STRESS_PIPE_PCT=${STRESS_PIPE_PCT:-15}
export STRESS_BG_PCT=${STRESS_BG_PCT:-15}
export STRESS_BG_MS=${STRESS_BG_MS:-$((ttl_ms / 2))}
# Only our servers, and no developer settings.
unset REDIS_URL REDLOCK_PREFIX REDLOCK_TOKEN REDISCLI_AUTH REDLOCK_PASSWORD \
    REDLOCK_USER

tmp=$(mktemp -d "${TMPDIR:-/tmp}/redlock-stress.XXXXXX")
log=$tmp/log
server_pids=()
replica_pids=()
worker_pids=()
result=2
started=$SECONDS

# Everything we started, stopped by its PID (workers SIGKILL their own
# redlock-cli, whose guardian kills its job).  Run by trap:
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
	for pid in "${server_pids[@]}" "${replica_pids[@]}"; do
		[ "$pid" != - ] || continue
		kill -CONT "$pid" 2>/dev/null
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${server_pids[@]}" "${replica_pids[@]}"; do
		[ "$pid" != - ] || continue
		wait "$pid" 2>/dev/null
	done
	server_pids=()
	replica_pids=()
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

# up SOCK: the server on SOCK answers (bounded: about 5 s).
up() {
	local try
	for ((try = 0; try < 100; try++)); do
		[ "$(redis-cli -s "$1" PING 2>/dev/null)" = PONG ] && return 0
		sleep 0.05
	done
	return 1
}

# free_port: a TCP port in 20000-59999 that nobody listens on (not 6379).
free_port() {
	local p try
	for ((try = 0; try < 50; try++)); do
		p=$((20000 + RANDOM % 40000))
		ss -ltnH "( sport = :$p )" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# master_start DIR: a server on DIR/sock, no persistence; with replicas,
# also on a free TCP port of 127.0.0.1 for its replica to connect to (a
# port taken meanwhile by someone else: another one).  Sets port.
master_start() {
	local dir=$1 try bind=() pid
	for ((try = 0; try < 5; try++)); do
		port=0
		if [ "$replicas" = 1 ]; then
			port=$(free_port) || die "no free port"
			# A (re)started replica's full sync at once, not
			# after the 5 s that Redis waits for more replicas.
			bind=(--bind 127.0.0.1 --repl-diskless-sync-delay 0)
		fi
		redis-server --port "$port" "${bind[@]}" \
		    --unixsocket "$dir/sock" --unixsocketperm 700 --save '' \
		    --appendonly no --dir "$dir" --logfile "$dir/log" \
		    </dev/null >/dev/null 2>&1 &
		pid=$!
		if up "$dir/sock"; then
			server_pids+=("$pid")
			return 0
		fi
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	die "redis-server in $dir did not start: $(cat "$dir/log")"
}

urls=()
master_ports=()
for ((i = 1; i <= servers; i++)); do
	dir=$tmp/redis$i
	mkdir "$dir"
	master_start "$dir"
	master_ports+=("$port")
	urls+=("unix://$dir/sock")
done
export REDLOCK_URL="${urls[*]}"

# replica_start S: the replica of server S (1-based), unix socket only,
# SLAVEOF its master's TCP port; its pid in replica_pids[S-1].
replica_start() {
	local s=$1 dir=$tmp/replica$1
	mkdir -p "$dir"
	redis-server --port 0 --unixsocket "$dir/sock" --unixsocketperm 700 \
	    --save '' --appendonly no --dir "$dir" --logfile "$dir/log" \
	    --replicaof 127.0.0.1 "${master_ports[s - 1]}" \
	    </dev/null >/dev/null 2>&1 &
	replica_pids[s - 1]=$!
}

# replica_linked S: the replica of server S has synced with its master.
replica_linked() {
	redis-cli -s "$tmp/replica$1/sock" INFO replication 2>/dev/null |
	    tr -d '\r' | grep -qx 'master_link_status:up'
}

wait_args=()
if [ "$replicas" = 1 ]; then
	for ((i = 1; i <= servers; i++)); do
		replica_start "$i"
		for ((try = 0; try < 100; try++)); do
			replica_linked "$i" && break
			sleep 0.05
		done
		replica_linked "$i" ||
		    die "replica $i did not sync: $(cat "$tmp/replica$i/log")"
	done
	wait_args=(--wait-replicas 1 --wait-timeout "$wait_timeout")
fi

STRESS_T0=$(now)
export STRESS_T0 STRESS_LOG=$log STRESS_RES=$tmp/resource STRESS_DIR=$tmp
export STRESS_CHILD=$tmp/stress-child
printf 'config workers %d cycles %d ttl_ms %d servers %d faults %d replicas %d\n' \
    "$workers" "$cycles" "$ttl_ms" "$servers" "$faults" "$replicas" >"$log"

# The worker adds the command, by the shape of the cycle's job.
for ((i = 1; i <= workers; i++)); do
	"$tmp/stress-worker" "$i" "$cycles" -- "$rlcli" \
	    --io-timeout "$io_timeout" --connect-timeout "$io_timeout" \
	    "${wait_args[@]}" run -w "$wait_for" -t "${ttl_ms}ms" "$key" \
	    2>"$tmp/worker$i.err" &
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
	local i running
	running=$(jobs -pr)
	for i in "${!worker_pids[@]}"; do
		grep -qx "${worker_pids[i]}" <<<"$running" ||
		    die "worker $((i + 1)) exited early; see $tmp:" \
		    "$(cat "$tmp/worker$((i + 1)).err")"
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

# Replicas: SIGKILL one (by its pid) and have it restart 100 .. 2*TTL ms
# later, at the tick when that is due (ms since the epoch in replica_back).
replica_back=()
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
inject_replica_kill() {
	local s=$((RANDOM % servers))
	[ "${replica_pids[s]}" != - ] || return 0
	kill -KILL "${replica_pids[s]}"
	wait "${replica_pids[s]}" 2>/dev/null || true
	replica_pids[s]=-
	replica_back[s]=$(($(now_ms) + 100 + RANDOM % (2 * ttl_ms)))
	printf 'replica-kill %d %d\n' "$((s + 1))" "$(now)" >>"$log"
}
replicas_restart() {
	local s
	for ((s = 0; s < servers; s++)); do
		[ "${replica_pids[s]}" = - ] || continue
		(($(now_ms) >= replica_back[s])) || continue
		replica_start "$((s + 1))"
		printf 'replica-restart %d %d\n' "$((s + 1))" "$(now)" >>"$log"
	done
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
	[ "$replicas" = 1 ] || continue
	replicas_restart
	if ((RANDOM % replica_ms < 100)); then
		inject_replica_kill
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
