#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/server-cost.sh: what a lock cycle costs the Redis server, ours
# against the seeds' protocol (CONTRACT.md, "Protocol and server cost": an
# uncontended exclusive cycle at most 1.2 times the seeds' Redis CPU).
#
#   - Redis CPU per cycle: the usec of the commands the clients sent, from
#     INFO commandstats, CONFIG RESETSTAT before each scenario.  A
#     script's usec includes the commands it calls, which commandstats
#     also counts on lines of their own: those are shown, never added.
#     Which commands a client sent and which a script called is read once
#     per scenario from MONITOR (its "lua" lines), outside the rounds.
#   - One process, so one connection, per command, as a CLI makes: ours
#     are redlock-cli processes, the seeds' redis-cli processes.
#   - Ours: exclusive (acquire -t 30s, extend, release), the same on a
#     fresh key (no history yet), run -n K -- true, shared (-s), semaphore
#     (--limit 3), queued (--queue fifo); every key but the fresh one has
#     a full history (1000 entries), as a lock in use for a while has.
#   - The seeds: SET K TOK NX PX 30000, a compare-and-pexpire EVAL (the
#     renewal), a compare-and-delete EVAL, each by redis-cli; the same
#     with EVALSHA (scripts loaded once); and without the renewal (what
#     run -n, which renews nothing, compares with).  For scale, a floor:
#     an EVALSHA of `return 0` by redis-cli, and the same 1000 times on
#     one connection.
#   - The first exclusive cycle after SCRIPT FLUSH (NOSCRIPT, then EVAL).
#   - REPS rounds of N cycles of each, the order rotated every round: the
#     sums of all rounds per command, and the median and range of the
#     rounds' usec per cycle and of ours ÷ the seeds' in the same round.
#   - Per verb: VERB_N cycles more with INFO between the verbs.
#   - The longest single call (SLOWLOG) with W waiters queued (--queue
#     fifo) on one key, for W in WAITERS: over 2 s of their polls, then
#     over one hand-off (the release and the next holder's take).
#
# Knobs: BENCH_SC_N (cycles per round; 200), BENCH_SC_REPS (3),
# BENCH_SC_VERB_N (20), BENCH_SC_WAITERS ("10 100 1000"; "" skips),
# BENCH_SC_SLOWLOG_US (0: every call is logged; N: calls of N us or
# more),
# REDIS_SERVER (the server to start, e.g. a valkey-server; redis-server),
# REDLOCK_CLI (./redlock-cli).  Prints markdown to stdout, progress on
# stderr.

set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
RL=${REDLOCK_CLI:-$ROOT/redlock-cli}
N=${BENCH_SC_N:-200}
REPS=${BENCH_SC_REPS:-3}
VERB_N=${BENCH_SC_VERB_N:-20}
WAITERS=${BENCH_SC_WAITERS-10 100 1000}
SLOW_US=${BENCH_SC_SLOWLOG_US:-0}
SERVER=${REDIS_SERVER:-redis-server}
bench_setup bench/server-cost.sh
WPIDS=()
trap 'stop_waiters; bench_cleanup' EXIT

for v in N REPS VERB_N; do
	[[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "bad $v: '${!v}'"
done
[[ $SLOW_US =~ ^[0-9]+$ ]] || die "bad SLOW_US: '$SLOW_US'"
[[ -x $RL ]] || die "$RL not built: run make first"
for tool in "$SERVER" redis-cli jq; do
	command -v "$tool" >/dev/null || die "$tool not installed (make deps)"
done
# Measure a private copy: a rebuild during the run must not mix binaries.
cp -p "$RL" "$TMP/redlock-cli"
RL="$TMP/redlock-cli"
rcli() { redis-cli -s "$TMP/sock" "$@"; }
start_redis --maxclients 4000
rcli PING >/dev/null || die "$SERVER did not start: $(tail -n 3 "$TMP/log")"

# The seeds' scripts, as users write them.
RENEW="if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('pexpire',KEYS[1],ARGV[2]) else return 0 end"
CAD="if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end"
RENEW_SHA=$(rcli SCRIPT LOAD "$RENEW")
CAD_SHA=$(rcli SCRIPT LOAD "$CAD")
FLOOR_SHA=$(rcli SCRIPT LOAD "return 0")

### The steps of a cycle: one process each, checked.

acquire() {
	TOK=$("$RL" acquire "$KEY" -t 30s "${AMODE[@]}") || die "acquire $KEY failed"
	[[ $TOK =~ ^[0-9a-f]{32}$ ]] || die "acquire $KEY: '$TOK'"
}
extend() { "$RL" extend "$KEY" --token "$TOK" "${XMODE[@]}" || die "extend $KEY failed"; }
release() { "$RL" release "$KEY" --token "$TOK" "${XMODE[@]}" || die "release $KEY failed"; }
run_true() { "$RL" run -n "$KEY" -- true || die "run $KEY failed"; }
# Each a redis-cli of its own; the token read without a process.
seed_set() {
	read -r TOK </proc/sys/kernel/random/uuid
	[[ $(rcli SET "$KEY" "$TOK" NX PX 30000) == OK ]] || die "SET $KEY"
}
seed_renew() { [[ $(rcli EVAL "$RENEW" 1 "$KEY" "$TOK" 30000) == 1 ]] || die "renew $KEY"; }
seed_del() { [[ $(rcli EVAL "$CAD" 1 "$KEY" "$TOK") == 1 ]] || die "del $KEY"; }
seed_renew_sha() { [[ $(rcli EVALSHA "$RENEW_SHA" 1 "$KEY" "$TOK" 30000) == 1 ]] || die "renew $KEY"; }
seed_del_sha() { [[ $(rcli EVALSHA "$CAD_SHA" 1 "$KEY" "$TOK") == 1 ]] || die "del $KEY"; }
# The least a script call costs on this server and machine.
script_floor() { [[ $(rcli EVALSHA "$FLOOR_SHA" 0) == 0 ]] || die "EVALSHA return 0"; }

SCENARIOS="exclusive fresh run shared semaphore fifo seeds seeds_sha seeds_2 floor"
# use S: KEY, the flags and the STEPS of scenario S.
use() {
	KEY=bench:$1 AMODE=() XMODE=() STEPS=(acquire extend release)
	case $1 in
	run) STEPS=(run_true) ;;
	shared) AMODE=(-s) ;;
	semaphore) AMODE=(--limit 3) XMODE=(--limit 3) ;;
	fifo) AMODE=(--queue fifo) ;;
	seeds) STEPS=(seed_set seed_renew seed_del) ;;
	seeds_sha) STEPS=(seed_set seed_renew_sha seed_del_sha) ;;
	seeds_2) STEPS=(seed_set seed_del) ;;
	floor) STEPS=(script_floor) ;;
	esac
}
label() {
	case $1 in
	exclusive) echo "exclusive: acquire -t 30s, extend, release" ;;
	fresh) echo "exclusive, fresh key (no history yet)" ;;
	run) echo "\`run -n K -- true\`" ;;
	shared) echo "shared (\`-s\`): acquire, extend, release" ;;
	semaphore) echo "semaphore (\`--limit 3\`): acquire, extend, release" ;;
	fifo) echo "queued (\`--queue fifo\`): acquire, extend, release" ;;
	seeds) echo "seeds: SET NX PX, EVAL renew, EVAL compare-and-delete" ;;
	seeds_sha) echo "seeds with EVALSHA (scripts loaded once)" ;;
	seeds_2) echo "seeds without the renewal: SET NX PX, EVAL compare-and-delete" ;;
	floor) echo "floor: one EVALSHA of \`return 0\` by redis-cli" ;;
	esac
}
# The seeds' cycle each of ours is set against.
peer() {
	case $1 in
	run) echo seeds_2 ;;
	*) echo seeds ;;
	esac
}
cycle() { local s; for s in "${STEPS[@]}"; do "$s"; done; }

### What the server counted.

# stats FILE: "name calls usec" of every command in the INFO commandstats
# of FILE but the harness's own (INFO, CONFIG, SLOWLOG).
stats() {
	tr -d '\r' <"$1" | awk -F'[:,=]' '$1 ~ /^cmdstat_/ {
		n = substr($1, 9)
		if (n !~ /^(info|config\|.*|slowlog\|.*)$/) print n, $3, $5 }'
}
# info_num FILE FIELD: FIELD's value in the INFO output FILE.
info_num() { tr -d '\r' <"$1" | awk -F: -v f="$2" '$1 == f { print $2 }'; }
# cpu FILE: the server process's user + system CPU, in microseconds.
cpu() {
	tr -d '\r' <"$1" | awk -F: '$1 == "used_cpu_user" || $1 == "used_cpu_sys" {
		s += $2 } END { printf "%.0f\n", s * 1e6 }'
}
# client S: the commands that clients sent in scenario S, one a line.
client() { cat "$TMP/client.$1"; }
# sent S FILE: "calls usec" of the commands clients sent, per stats FILE.
sent() {
	stats "$2" | awk 'NR == FNR { c[$1] = 1; next }
	    $1 in c { calls += $2; usec += $3 }
	    END { printf "%d %d\n", calls, usec }' "$TMP/client.$1" -
}

# classify S: which commands of a cycle of S a client sent (client.S) and
# which a script called (lua.S), from MONITOR: a script's are "[0 lua]".
classify() {
	local f="$TMP/mon.$1" mpid
	use "$1"
	: >"$f"
	: >"$TMP/client.$1"
	: >"$TMP/lua.$1"
	rcli MONITOR >"$f" 2>/dev/null &
	mpid=$!
	until_ok grep -q '^OK' "$f"
	cycle
	rcli ECHO bench:classified >/dev/null
	until_ok grep -q '"bench:classified"' "$f"
	kill "$mpid" 2>/dev/null || true
	wait "$mpid" 2>/dev/null || true
	awk -v c="$TMP/client.$1" -v l="$TMP/lua.$1" '
	    match($0, /\[[0-9]+ [^]]*\] "[^"]*"/) {
		s = substr($0, RSTART, RLENGTH)
		n = tolower(substr(s, index(s, "] \"") + 3))
		sub(/"$/, "", n)
		if (n == "echo") next
		if (s ~ /^\[[0-9]+ lua\]/) print n >l; else print n >c
	    }' "$f"
	sort -u -o "$TMP/client.$1" "$TMP/client.$1"
	sort -u -o "$TMP/lua.$1" "$TMP/lua.$1"
	[[ -s $TMP/client.$1 ]] || die "MONITOR saw no command of $1"
}

# round S R: N cycles of S after CONFIG RESETSTAT; the server's INFO at
# the end in stats.S.R, its CPU before in cpu0.S.R.
round() {
	local i
	use "$1"
	[[ $1 != fresh ]] || rcli DEL "{$KEY}:history" >/dev/null
	rcli CONFIG RESETSTAT >/dev/null
	rcli INFO cpu >"$TMP/cpu0.$1.$2"
	for ((i = 0; i < N; i++)); do cycle; done
	rcli INFO stats commandstats cpu >"$TMP/stats.$1.$2"
}

# per_cycle S R: "usec calls conns commands cpu inner" per cycle of round
# R of S: inner is the usec of the commands that scripts called.
per_cycle() {
	local f="$TMP/stats.$1.$2" sc cc all au
	read -r cc sc < <(sent "$1" "$f")
	read -r all au < <(stats "$f" | awk '{ c += $2; u += $3 } END { print c + 0, u + 0 }')
	# The connections: the cycles', INFO cpu's and this INFO's.
	awk -v u="$sc" -v c="$cc" -v k="$(info_num "$f" total_connections_received)" \
	    -v a="$all" -v p0="$(cpu "$TMP/cpu0.$1.$2")" -v p1="$(cpu "$f")" -v n="$N" \
	    -v i="$((au - sc))" 'BEGIN { printf "%.2f %.2f %.2f %.2f %.1f %.1f\n",
		u / n, c / n, (k - 2) / n, a / n, (p1 - p0) / n, i / n }'
}

# range: "MEDIAN (MIN–MAX)" of the numbers on stdin, to F decimals.
range() {
	sort -g | awk -v f="${1:-1}" '{ v[NR] = $1 } END {
		fmt = "%." f "f"
		printf fmt " (" fmt "–" fmt ")\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
median_of() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

### The longest call with waiters queued.

stop_waiters() {
	((${#WPIDS[@]} > 0)) || return 0
	kill "${WPIDS[@]}" 2>/dev/null || true
	wait "${WPIDS[@]}" 2>/dev/null || true
	WPIDS=()
}
# The scripts' names by their SHA-1 (the build's src/scripts-sha.h).
script_name() {
	local name
	name=$(sed -n "s/^#define SHA_\\([A-Z_]*\\)[[:space:]]*\"$1\".*/\\1/p" \
	    "$ROOT/src/scripts-sha.h" 2>/dev/null | tr '[:upper:]' '[:lower:]')
	echo "${name:-${1:0:8}}"
}
# window_start: CONFIG RESETSTAT, SLOWLOG RESET, the server's CPU noted.
window_start() {
	rcli SLOWLOG RESET >/dev/null
	rcli CONFIG RESETSTAT >/dev/null
	rcli INFO cpu >"$TMP/window.cpu"
}
# window: what the server ran since window_start, "CALLS MEAN CPU P50 P99
# MAX RELEASE LONGEST COMMAND": the EVALSHA calls, their mean µs
# (commandstats) and the server process's CPU µs per EVALSHA (getrusage:
# the work, where the µs of a call count its waits for a core too); the
# median, p99 and longest EVALSHA (the slowlog holds every call of SLOW_US
# or more: "<SLOW_US" when the rank falls below it), the release
# script's, the longest call of any command (the harness's own left out)
# and its command, a script named by its SHA-1.
window() {
	local calls mean cpu p50 p99 max rel us cmd arg
	rcli INFO commandstats cpu >"$TMP/window"
	read -r calls mean < <(stats "$TMP/window" | awk '$1 == "evalsha" {
	    c = $2; u = $3 } END { printf "%d %.1f\n", c, (c ? u / c : 0) }')
	cpu=$(awk -v a="$(cpu "$TMP/window.cpu")" -v b="$(cpu "$TMP/window")" \
	    -v c="$calls" 'BEGIN { printf "%.1f", (c ? (b - a) / c : 0) }')
	read -r p50 p99 max rel us cmd arg < <(rcli -2 --json SLOWLOG GET -1 |
	    jq -r --argjson n "$calls" --arg lt "<$SLOW_US" --arg rel \
		"$(sed -n 's/^#define SHA_MUTEX_RELEASE[[:space:]]*"\([0-9a-f]*\)".*/\1/p' \
		"$ROOT/src/scripts-sha.h" 2>/dev/null)" '
	    def rank($q; $d): (($q * $n) | ceil) as $k |
		if $k >= 1 and $k <= ($d | length) then $d[$k - 1] else $lt end;
	    [.[] | select((.[3][0] | ascii_downcase) as $c |
		["slowlog", "config", "info", "get", "zcard"] | index($c) | not)] as $all
	    | ([$all[] | select((.[3][0] | ascii_downcase) == "evalsha") | .[2]]
		| sort | reverse) as $d
	    | ([$all[] | select(.[3][1] == $rel) | .[2]] | max // $lt) as $r
	    | if ($all | length) == 0 then "\($lt) \($lt) \($lt) \($lt) 0 none -" else
		($all | max_by(.[2])) as $m |
		"\(rank(0.5; $d)) \(rank(0.01; $d)) \($d[0] // $lt) \($r) \($m[2]) \($m[3][0] | ascii_downcase) \($m[3][1] // "-")" end')
	case $cmd in
	evalsha) cmd="EVALSHA $(script_name "$arg")" ;;
	*) cmd=${cmd^^} ;;
	esac
	echo "$calls $mean $cpu $p50 $p99 $max $rel $us $cmd"
}
queued() { rcli ZCARD '{bench:w}:queue'; }

# herd W: W waiters queued on bench:w; appends "W QUEUED | WINDOW |
# WINDOW" to $TMP/herds: what the server ran over 2 s of their polls,
# then over one hand-off (the release to the next holder's take).  Not in
# a subshell: the EXIT trap stops the waiters if it dies.
herd() {
	local w=$1 tok i started=0 t0 q polls
	rcli FLUSHALL >/dev/null
	tok=$("$RL" acquire bench:w --queue fifo -t 600s)
	# In batches of 50, each queued before the next starts, so that 2
	# cores start them without a herd of process starts.
	while ((started < w)); do
		for ((i = 0; i < 50 && started < w; i++, started++)); do
			"$RL" acquire bench:w --queue fifo -t 5s -w 600s \
			    </dev/null >/dev/null 2>&1 3>&- &
			WPIDS+=($!)
		done
		t0=$SECONDS
		until (($(queued) >= started)); do
			((SECONDS - t0 < 60)) || die "$w waiters: $(queued) queued after 60 s"
			sleep 0.05
		done
	done
	rcli CONFIG SET slowlog-max-len 100000 >/dev/null
	rcli CONFIG SET slowlog-log-slower-than "$SLOW_US" >/dev/null
	window_start
	sleep 2
	q=$(queued)
	polls=$(window)
	window_start
	"$RL" release bench:w --token "$tok" || die "release with $w waiters"
	t0=$SECONDS
	# The hand-off is over when the next holder's take has run.
	until [[ $(rcli GET bench:w) =~ ^[0-9a-f]{32}$ && $(rcli GET bench:w) != "$tok" ]]; do
		((SECONDS - t0 < 30)) || die "$w waiters: no hand-off after 30 s"
		sleep 0.01
	done
	echo "$w $q | $polls | $(window)" >>"$TMP/herds"
	rcli CONFIG SET slowlog-log-slower-than 10000 >/dev/null
	rcli CONFIG SET slowlog-max-len 128 >/dev/null
	stop_waiters
}

### The run.

say() { echo "bench/server-cost.sh: ${SECONDS}s: $*" >&2; }
say "$("$SERVER" --version | cut -d' ' -f1-3), N=$N, $REPS rounds"
# Every scenario once: the scripts loaded, then which commands are whose.
for s in $SCENARIOS; do
	use "$s"
	cycle
	classify "$s"
done
# A full history (1000 entries, --history-size's default) on every key but
# the fresh one: copies of a real run's entry, through one redis-cli.
say "filling the history..."
use exclusive
"$RL" run -n "$KEY" -- true
rcli -2 --json XRANGE "{$KEY}:history" - + COUNT 1 | jq -r --arg k "{$KEY}:history" '
    .[0][1] | map(@json) | join(" ") as $f |
    range(999) | "XADD \($k) MAXLEN 1000 * \($f)"' | rcli >/dev/null
[[ $(rcli XLEN "{$KEY}:history") == 1000 ]] || die "the history is not full"
for s in run shared semaphore fifo; do
	rcli COPY "{$KEY}:history" "{bench:$s}:history" REPLACE >/dev/null
done
# The first cycle after SCRIPT FLUSH: NOSCRIPT, then EVAL, for each verb.
rcli SCRIPT FLUSH >/dev/null
rcli CONFIG RESETSTAT >/dev/null
use exclusive
cycle
rcli INFO commandstats >"$TMP/stats.cold"
read -r cold_calls cold_us < <(stats "$TMP/stats.cold" |
    awk '$1 == "evalsha" || $1 == "eval" { c += $2; u += $3 } END { print c, u }')
# The scripts loaded again, the seeds' too.
rcli SCRIPT LOAD "$RENEW" >/dev/null
rcli SCRIPT LOAD "$CAD" >/dev/null
rcli SCRIPT LOAD "return 0" >/dev/null
for s in $SCENARIOS; do
	use "$s"
	cycle
done

# shellcheck disable=SC2086 # the names, split on purpose
set -- $SCENARIOS
for ((r = 1; r <= REPS; r++)); do
	say "round $r of $REPS..."
	# The order rotated every round.
	for ((j = 0; j < $#; j++)); do
		k=$(((j + r - 1) % $# + 1))
		round "${!k}" "$r"
	done
done

# For scale: the floor's call, 1000 times on one connection (hot).
rcli CONFIG RESETSTAT >/dev/null
rcli -r 1000 EVALSHA "$FLOOR_SHA" 0 >/dev/null
rcli INFO commandstats >"$TMP/stats.hot"
hot=$(stats "$TMP/stats.hot" | awk '$1 == "evalsha" { printf "%.2f", $3 / $2 }')

say "per verb..."
# verbs S: VERB_N cycles of S, INFO commandstats after each step (files
# v.S.NNNNN), then per step "STEP calls usec" in verbs.S, one line per
# step and cycle.
verbs() {
	local sc=$1 i n=0 st f
	use "$sc"
	rcli INFO commandstats >"$TMP/v.$sc.00000"
	for ((i = 0; i < VERB_N; i++)); do
		for st in "${STEPS[@]}"; do
			"$st"
			n=$((n + 1))
			rcli INFO commandstats >"$TMP/v.$sc.$(printf %05d "$n")"
			echo "$st" >>"$TMP/vsteps.$sc"
		done
	done
	for f in "$TMP/v.$sc".*; do
		sent "$sc" "$f"
	done | awk 'NR > 1 { print $1 - c, $2 - u } { c = $1; u = $2 }' |
	    paste -d' ' "$TMP/vsteps.$sc" - >"$TMP/verbs.$sc"
}
for s in $SCENARIOS; do
	verbs "$s"
done

: >"$TMP/herds"
for w in $WAITERS; do
	say "longest call with $w waiters..."
	herd "$w"
done

### The report.

# Per round and scenario: "usec calls conns commands cpu" per cycle.
for s in $SCENARIOS; do
	for ((r = 1; r <= REPS; r++)); do per_cycle "$s" "$r"; done >"$TMP/pc.$s"
done
col() { awk -v c="$2" '{ print $c }' "$TMP/pc.$1"; }
# ratio_rounds S P: S ÷ P per round, one a line.
ratio_rounds() {
	paste -d' ' <(col "$1" 1) <(col "$2" 1) |
	    awk '{ printf "%.3f\n", ($2 > 0 ? $1 / $2 : 0) }'
}

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "## Server cost (\`bench/server-cost.sh\`)"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)'); $("$SERVER" --version | cut -d' ' -f1-3) on a unix socket;"
echo "$(nproc) CPUs ($cpu_model), load $(cut -d' ' -f1-3 /proc/loadavg); $REPS rounds of $N cycles per scenario, the order rotated."
echo
echo "| scenario | calls sent per cycle | connections per cycle | Redis µs per cycle, median (range) of $REPS rounds | of which in the commands scripts call | µs per call sent | commands run per cycle, scripts' own included | server process CPU per cycle (getrusage, µs) | ÷ its seeds' cycle, same round |"
echo "|---|---|---|---|---|---|---|---|---|"
for s in $SCENARIOS; do
	p=$(peer "$s")
	rat="—"
	[[ $s == seeds* || $s == floor ]] || rat="$(ratio_rounds "$s" "$p" | range 2) ($p)"
	read -r calls usec_all < <(for ((r = 1; r <= REPS; r++)); do
		sent "$s" "$TMP/stats.$s.$r"; done | awk '{ c += $1; u += $2 } END { print c, u }')
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(label "$s")" \
	    "$(col "$s" 2 | median_of)" "$(col "$s" 3 | median_of)" \
	    "$(col "$s" 1 | range 1)" "$(col "$s" 6 | median_of)" \
	    "$(awk -v u="$usec_all" -v c="$calls" 'BEGIN { printf "%.1f", u / c }')" \
	    "$(col "$s" 4 | median_of)" "$(col "$s" 5 | range 0)" "$rat"
done
echo
read -r med lo hi < <(ratio_rounds exclusive seeds | sort -g |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }')
verdict=$(awk -v m="$med" 'BEGIN { print (m <= 1.2 ? "met" : "NOT met") }')
echo "**Contract target: an uncontended exclusive cycle (acquire, one renewal, release) at most 1.2 × the seeds' Redis CPU. Measured: $med ($lo–$hi) — $verdict.**"
echo "Against the seeds with EVALSHA: $(ratio_rounds exclusive seeds_sha | range 2); a fresh key's cycle against the seeds: $(ratio_rounds fresh seeds | range 2)."
echo "The first cycle after SCRIPT FLUSH (each verb's EVALSHA answered NOSCRIPT, then EVAL): $cold_calls calls, $cold_us µs."
echo "The floor's EVALSHA of \`return 0\`, 1000 times on one connection instead: $hot µs per call."
echo
echo "Per command, the sums of the $REPS rounds per cycle (\`sent\`: a client's call, whose µs include the calls of its script; \`script\`: called by a script):"
echo
echo "| scenario | command | by | calls per cycle | µs per cycle | µs per call |"
echo "|---|---|---|---|---|---|"
for s in $SCENARIOS; do
	for ((r = 1; r <= REPS; r++)); do stats "$TMP/stats.$s.$r"; done |
	    awk -v s="$(label "$s")" -v n=$((N * REPS)) -v cf="$TMP/client.$s" \
		-v lf="$TMP/lua.$s" '
		BEGIN {
			while ((getline l < cf) > 0) sent[l] = 1
			while ((getline l < lf) > 0) lua[l] = 1
		}
		{ c[$1] += $2; u[$1] += $3 }
		END {
			for (k in c) {
				by = (k in sent) ? "sent" : (k in lua) ? "script" : "? (not in MONITOR)"
				printf "%d\t| %s | %s | %s | %.2f | %.1f | %.2f |\n",
				    (k in sent) ? 0 : 1, s, toupper(k), by,
				    c[k] / n, u[k] / n, (c[k] ? u[k] / c[k] : 0)
			}
		}' | sort -t'	' -k1,1n -k2 | cut -f2
done
echo
echo "Per verb ($VERB_N cycles more, INFO commandstats after each step): calls sent and Redis µs per invocation:"
echo
echo "| scenario | step | calls sent | µs, mean | µs, median |"
echo "|---|---|---|---|---|"
for s in $SCENARIOS; do
	use "$s"
	for st in "${STEPS[@]}"; do
		awk -v st="$st" '$1 == st { print $2, $3 }' "$TMP/verbs.$s" >"$TMP/v.$st"
		printf '| %s | %s | %s | %s | %s |\n' "$(label "$s")" "$st" \
		    "$(awk '{ c += $1 } END { printf "%.2f", c / NR }' "$TMP/v.$st")" \
		    "$(awk '{ u += $2 } END { printf "%.1f", u / NR }' "$TMP/v.$st")" \
		    "$(awk '{ print $2 }' "$TMP/v.$st" | median_of)"
	done
done
if [[ -s $TMP/herds ]]; then
	echo
	echo "The longest single call with W waiters queued by \`acquire K --queue fifo -t 5s -w 600s\` processes (started 50 at a time, each batch queued before the next): over 2 s of the waiters' polls, then over one hand-off (the release to the next holder's take, the polls meanwhile included). EVALSHA calls and their mean µs from commandstats; the server process's CPU per EVALSHA from getrusage (the work: a call's µs also count its waits for a core); the median, p99 and longest EVALSHA from SLOWLOG, which logs every call of $SLOW_US µs or more:"
	echo
	echo "| W | queued | window | EVALSHA calls | mean µs | server process CPU µs per EVALSHA (all its work) | median µs | p99 µs | longest EVALSHA µs | the release's µs | longest call of any command |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	while IFS='|' read -r a b c; do
		read -r w q <<<"$a"
		for x in "$b" "$c"; do
			read -r n m u p50 p99 mx rel us cmd <<<"$x"
			[[ $x == "$b" ]] && win="2 s of polls" rel="—" || win="hand-off"
			echo "| $w | $q | $win | $n | $m | $u | $p50 | $p99 | $mx | $rel | $us µs ($cmd) |"
		done
	done <"$TMP/herds"
fi
