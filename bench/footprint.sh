#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/footprint.sh: what locks cost the server (issue 17), on a
# throwaway redis-server (unix socket, no persistence, stopped by PID):
#   - MEMORY USAGE of each key of a held lock, a semaphore slot, a fair
#     waiter; used_memory for LOCKS (10,000) locks held at once;
#   - list over those LOCKS locks: wall time and commands (commandstats);
#   - WAITERS (1,000) waiters on one key: server commands per hand-off,
#     and the hand-off latency against flock with as many waiters;
#   - DBSIZE 10 s after the last TTL once everything is released.
# Usage: bash bench/footprint.sh [LOCKS [WAITERS]]
set -eu
LOCKS=${1:-10000}
WAITERS=${2:-1000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/redlock-cli
T=$(mktemp -d)
trap 'kill "$(cat "$T/pid" 2>/dev/null)" 2>/dev/null; rm -rf "$T"' EXIT
redis-server --port 0 --unixsocket "$T/sock" --save '' --appendonly no \
    --daemonize yes --pidfile "$T/pid" --dir "$T" --logfile "$T/log" \
    --maxclients 10000 </dev/null 3>&-
R() { redis-cli -s "$T/sock" "$@"; }
for _ in $(seq 100); do R PING >/dev/null 2>&1 && break; sleep 0.05; done
export REDLOCK_URL="unix://$T/sock"
calls() { R INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_[^:]*:calls=\([0-9]*\).*/\1/p' |
    awk '{s += $1} END {print s + 0}'; }
mem() { R INFO memory | tr -d '\r' | sed -n 's/^used_memory://p'; }
ms() { echo $(($(date +%s%N) / 1000000)); }

echo "== bytes per key (MEMORY USAGE)"
"$BIN" acquire deploy-1234 -t 60s >/dev/null
for k in deploy-1234 '{deploy-1234}:fence' '{deploy-1234}:meta'; do
	echo "exclusive lock: $k $(R MEMORY USAGE "$k")"
done
"$BIN" acquire pool --limit 10 -t 60s >/dev/null
a=$(( $(R MEMORY USAGE pool) + $(R MEMORY USAGE '{pool}:meta') ))
"$BIN" acquire pool --limit 10 -t 60s >/dev/null
b=$(( $(R MEMORY USAGE pool) + $(R MEMORY USAGE '{pool}:meta') ))
echo "semaphore slot: $((b - a)) bytes (sorted set + metadata)"
"$BIN" acquire deploy-1234 --fair -w 3s 2>/dev/null &
"$BIN" acquire deploy-1234 --fair -w 3s 2>/dev/null &
sleep 1
echo "fair waiters (2): queue $(R MEMORY USAGE '{deploy-1234}:queue')," \
    "leases $(R MEMORY USAGE '{deploy-1234}:leases')"
wait
R FLUSHALL >/dev/null

echo "== $LOCKS locks held at once, taken by acquire processes"
m0=$(mem)
for i in $(seq 1 "$LOCKS"); do
	"$BIN" acquire "job-$i" -t 300s >/dev/null
done
m1=$(mem)
echo "used_memory: +$((m1 - m0)) bytes, $(((m1 - m0) / LOCKS)) per lock;" \
    "DBSIZE $(R DBSIZE)"
R CONFIG RESETSTAT >/dev/null
t0=$(ms)
n=$("$BIN" list | wc -l)
t1=$(ms)
echo "list: $n lines in $((t1 - t0)) ms, $(calls) server commands" \
    "(SCAN and EVALSHA with the scripts' own calls: $(R INFO commandstats |
    tr -d '\r' | grep -E 'cmdstat_(scan|evalsha)' | sed 's/,usec=.*//' | tr '\n' ' '))"
R FLUSHALL >/dev/null

echo "== $WAITERS waiters on one key"
tok=$("$BIN" acquire k -t 60s)
for i in $(seq 1 "$WAITERS"); do
	# shellcheck disable=SC2016 # $1 is for the sh -c below
	"$BIN" run k -t 2s -w 600s -- sh -c 'date +%s%N >>"$1"' sh "$T/ran" \
	    </dev/null >/dev/null 2>>"$T/err" 3>&- &
done
until [ "$(R INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" -ge "$WAITERS" ]; do
	sleep 0.2
done
R CONFIG RESETSTAT >/dev/null
t0=$(ms)
"$BIN" release k --token "$tok"
wait
t1=$(ms)
echo "redlock-cli: $WAITERS hand-offs in $((t1 - t0)) ms," \
    "$(( (t1 - t0) * 1000 / WAITERS )) us each," \
    "$(( $(calls) / WAITERS )).$(( $(calls) * 10 / WAITERS % 10 )) server commands per hand-off"
exec 9>"$T/flock"
flock 9
for i in $(seq 1 "$WAITERS"); do
	flock "$T/flock" true 9>&- &
done
sleep 2
t0=$(ms)
flock -u 9
wait
t1=$(ms)
echo "flock: $WAITERS hand-offs in $((t1 - t0)) ms," \
    "$(( (t1 - t0) * 1000 / WAITERS )) us each"

echo "== after everything is released"
# The last TTL: the 2 s of the last hand-off's run.
sleep 12
echo "DBSIZE 10 s after the last TTL: $(R DBSIZE)"
