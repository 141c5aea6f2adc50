#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/history.sh: what a lock's run history costs the server (issue 36).
#   - Redis CPU per `run -n K -- true` cycle with the history on (the
#     default) and off (--history-size 0), from INFO commandstats
#     (usec of every command, scripts included), one connection per
#     command as a CLI makes; the ratio of the two, per round of N cycles
#     each, the rounds interleaved; the median and range of 3 rounds.
#   - Calls a client sends per cycle (commandstats' calls of those
#     commands, the same in both: the entry rides with the release, no
#     round trip of its own).
#   - Bytes per entry: MEMORY USAGE of a history of 1000 entries / 1000.
# Target (issue 36): no extra round trip, at most +15 % Redis CPU per
# cycle.  Knobs: BENCH_HN (cycles per round; 300), REDLOCK_CLI.
# Prints markdown to stdout.

set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
RL=${REDLOCK_CLI:-$ROOT/redlock-cli}
N=${BENCH_HN:-300}
bench_setup history
rcli() { redis-cli -s "$TMP/sock" "$@"; }
start_redis

# stats: "USEC CALLS" of the commands a client sends (a script's usec
# includes the commands it calls, which commandstats also counts apart:
# those are left out, as are INFO and CONFIG).
stats() {
	rcli INFO commandstats | tr -d '\r' | awk -F'[:,=]' '
	    $1 ~ /^cmdstat_(evalsha|eval|bzpopmin|hello|auth|select|client.*|ping)$/ {
		calls += $3; usec += $5 }
	    END { printf "%d %d\n", usec, calls }'
}

# round SIZE: "USEC CALLS" of N cycles with --history-size SIZE.
round() {
	local i
	rcli CONFIG RESETSTAT >/dev/null
	for ((i = 0; i < N; i++)); do
		"$RL" --history-size "$1" run bench:h -n -- true
	done
	stats
}

"$RL" run bench:h -n -- true		# the scripts loaded
ratios=() calls_on="" calls_off=""
for r in 1 2 3; do
	read -r on con < <(round 1000)
	read -r off coff < <(round 0)
	ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')")
	calls_on=$con calls_off=$coff
	printf 'round %d: %.1f us/cycle with history, %.1f without\n' "$r" \
	    "$(awk -v u="$on" -v n="$N" 'BEGIN { print u / n }')" \
	    "$(awk -v u="$off" -v n="$N" 'BEGIN { print u / n }')" >&2
done
read -r med lo hi < <(printf '%s\n' "${ratios[@]}" | sort -n |
    awk '{ v[NR] = $1 } END { print v[2], v[1], v[3] }')

# 1000 entries of a typical command line.
rcli DEL '{bench:b}:history' >/dev/null
for ((i = 0; i < 1000; i++)); do
	"$RL" run bench:b -n -- true nightly-backup --target s3://bucket/db \
	    2>/dev/null || true
done
bytes=$(rcli MEMORY USAGE '{bench:b}:history' SAMPLES 0)

cat <<EOF
| history (\`bench/history.sh\`, $N cycles × 3 rounds) | figure | target |
|---|---|---|
| Redis CPU per \`run -n K -- true\` cycle, history on ÷ off | $med ($lo–$hi) | ≤ 1.15 |
| calls sent per cycle (round trips), on / off | $(awk -v c="$calls_on" -v n="$N" 'BEGIN { printf "%.2f", c / n }') / $(awk -v c="$calls_off" -v n="$N" 'BEGIN { printf "%.2f", c / n }') | equal: no extra round trip |
| bytes per entry (MEMORY USAGE of 1000 ÷ 1000) | $((bytes / 1000)) | — |
EOF
