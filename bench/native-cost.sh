#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/native-cost.sh [CYCLES]: the Redis CPU of an uncontended exclusive
# cycle (acquire -t 30s, extend, release, each a process of its own) played
# by the scripts, and by the native commands that stand in for them on a
# server that refuses scripts (src/scripts-native.c: here an ACL user
# without @scripting), on one throwaway server (REDIS_SERVER, say a
# valkey-server, else redis-server).  As bench/server-cost.sh counts it: the
# usec of the commands the clients sent, from INFO commandstats after
# CONFIG RESETSTAT; for the scripts, EVALSHA's (it includes what the script
# calls); for the native cycle every command but the AUTH of each
# connection (a cost of the ACL user, not of the path).  One warm-up pass
# each.  Prints both per cycle, and the calls the native cycle sent.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
N=${1:-100}
RL=${RL:-./redlock-cli}
[ -x "$RL" ] || { echo "native-cost: build first (make)" >&2; exit 1; }
bench_setup native-cost
start_redis
rcli() { redis-cli -s "$TMP/sock" "$@"; }
rcli ACL SETUSER native on '>native-pw' '~*' '&*' '+@all' '-@scripting' >/dev/null

cycles() {
	local i tok
	for ((i = 0; i < N; i++)); do
		tok=$("$RL" acquire k -t 30s)
		"$RL" extend k --token "$tok" >/dev/null
		"$RL" release k --token "$tok"
	done
}
# usec PATTERN: the usec of the commands whose names match PATTERN.
usec() {
	rcli INFO commandstats | tr -d '\r' | awk -F'[:=,]' -v p="$1" '
	    /^cmdstat_/ { c = $1; sub("cmdstat_", "", c); if (c ~ p) t += $5 }
	    END { print t + 0 }'
}
measure() {
	cycles
	rcli CONFIG RESETSTAT >/dev/null
	cycles
}

measure
scripted=$(usec '^(evalsha|eval)$')
export REDLOCK_USER=native REDLOCK_PASSWORD=native-pw
measure
native=$(usec '^(get|set|del|delifeq|delex|hget|hmget|hset|hgetall|incr|pexpire|pttl|watch|unwatch|multi|exec|zadd|xadd|exists)$')
echo "$("${REDIS_SERVER:-redis-server}" --version | cut -d' ' -f1-3), $N cycles"
awk -v s="$scripted" -v n="$native" -v c="$N" 'BEGIN {
	printf "scripts: %.1f us a cycle (EVALSHA)\n", s / c
	printf "native:  %.1f us a cycle (%.2f of the scripts)\n", n / c, n / s }'
echo "native calls a cycle:"
rcli INFO commandstats | tr -d '\r' | awk -F'[:=,]' -v c="$N" '
    /^cmdstat_/ { n = $1; sub("cmdstat_", "", n)
	if (n !~ /^(info|config.*|acl.*|auth|evalsha|eval)$/) printf "  %s %.1f\n", n, $3 / c }' | sort
