#!/usr/bin/env bash
# bench/run.sh: redlock-cli's benchmarks, in one run, against a throwaway
# redis-server on a unix socket.  Every wall-time figure is a ratio against
# a peer measured in the same run with the same harness (the machine is
# shared and noisy); CPU time comes from the kernel's schedstat, instruction
# counts from callgrind.  Prints a markdown table and writes it, with the
# environment, to bench/out/results.md.  See bench/README.md.
#
# Knobs (environment): BENCH_N (timed iterations per side, 200),
# BENCH_WARMUP (untimed iterations per side first, 10), BENCH_HOLD (idle
# hold in seconds, 20), BENCH_TTL (idle TTL in seconds, 10), BENCH_CASES
# (which cases, "pair run idle callgrind startup"), REDLOCK_CLI (binary,
# ./redlock-cli).

# Cases and iterations are called by name (harness, __case), cleanup by trap:
# shellcheck disable=SC2317
set -euo pipefail
export LC_ALL=C	# EPOCHREALTIME must use a '.' separator

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$ROOT/bench/run.sh"
RL=${REDLOCK_CLI:-$ROOT/redlock-cli}
N=${BENCH_N:-200}
WARMUP=${BENCH_WARMUP:-10}
HOLD=${BENCH_HOLD:-20}
TTL=${BENCH_TTL:-10}
CASES=${BENCH_CASES:-pair run idle callgrind startup}
CASE_LIMIT=110		# seconds per case (timeout), idle case: HOLD + 40
OUT="$ROOT/bench/out"

# Compare-and-delete, as every SET NX PX lock client does it.
CAD_LUA="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"

die() {
	printf 'bench: %s\n' "$*" >&2
	exit 1
}

# row CELL...: one markdown table row.
row() {
	local out="|" cell
	for cell in "$@"; do out+=" $cell |"; done
	printf '%s\n' "$out"
}

# ms MICROSECONDS: "1.23 ms".
ms() { awk -v u="$1" 'BEGIN { printf "%.2f ms", u / 1000 }'; }

# ratio A B [TARGET]: "A/B" to two places; with TARGET also " ok"/" MISS"
# on a second output word (ratio <= target passes).
ratio() {
	awk -v a="$1" -v b="$2" -v t="${3:-}" 'BEGIN {
		r = b > 0 ? a / b : 0
		printf "%.2f", r
		if (t != "") printf " %s", (r <= t ? "ok" : "MISS")
		printf "\n"
	}'
}

# stats FILE: "MEDIAN P90" in microseconds (p90 by nearest rank).
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) exit 1
		med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		k = int(0.9 * NR); if (k < 0.9 * NR) k++
		printf "%d %d\n", med, v[k]
	}'
}

# now_us: wall clock in microseconds, no fork.
now_us() { REPLY=${EPOCHREALTIME/./}; }

# harness NAME FUNC...: WARMUP untimed then N timed calls of each FUNC,
# interleaved and with the order rotated every iteration so that every side
# sees the same machine; wall time of each call in microseconds goes to
# $TMP/NAME.1, $TMP/NAME.2, ...  A FUNC is one iteration and fails loudly.
harness() {
	local name=$1 i j k t0 deadline=$((EPOCHSECONDS + CASE_LIMIT - 10))
	shift
	local -a fn=("$@") times=()
	local m=${#fn[@]}
	for ((i = 0; i < WARMUP; i++)); do
		for ((j = 0; j < m; j++)); do "${fn[j]}"; done
	done
	for ((j = 0; j < m; j++)); do times[j]=""; done
	for ((i = 0; i < N; i++)); do
		for ((k = 0; k < m; k++)); do
			j=$(((i + k) % m))
			now_us; t0=$REPLY
			"${fn[j]}"
			now_us
			times[j]+="$((REPLY - t0)) "
		done
		((EPOCHSECONDS < deadline)) ||
		    die "$name: over the time limit after $i iterations"
	done
	for ((j = 0; j < m; j++)); do
		# shellcheck disable=SC2086 # split the list on purpose
		printf '%s\n' ${times[j]} >"$TMP/$name.$((j + 1))"
	done
}

# compare NAME LABEL PEER_LABEL TARGET: two rows (median with the verdict,
# p90 for information) from harness files NAME.1 (redlock-cli) and NAME.2.
compare() {
	local name=$1 label=$2 peer=$3 target=$4 a b r
	read -r -a a < <(stats "$TMP/$name.1")
	read -r -a b < <(stats "$TMP/$name.2")
	read -r -a r < <(ratio "${a[0]}" "${b[0]}" "$target")
	row "$label, median of $N" "$(ms "${a[0]}")" \
	    "$peer: $(ms "${b[0]}")" "${r[0]}" "≤ $target" "${r[1]}"
	row "$label, p90" "$(ms "${a[1]}")" "$peer: $(ms "${b[1]}")" \
	    "$(ratio "${a[1]}" "${b[1]}")" "—" "info"
}

### Cases.  Each runs in its own process under timeout(1) and writes its
### table rows to $TMP/rows.CASE.

# 1. acquire + release vs the same two round trips by redis-cli.
pair_redlock() {
	local tok out
	tok=$("$RL" acquire bench:pair -n)
	out=$("$RL" release bench:pair --token "$tok")
	[[ $tok =~ ^[0-9a-f]{32}$ && -z $out ]] ||
	    die "pair: redlock-cli acquire/release gave '$tok' '$out'"
}
pair_rediscli() {
	local tok r1 r2
	read -r tok </proc/sys/kernel/random/uuid	# a builtin: no process
	r1=$(redis-cli -s "$SOCK" SET bench:pair:cli "$tok" NX PX 30000)
	r2=$(redis-cli -s "$SOCK" EVAL "$CAD_LUA" 1 bench:pair:cli "$tok")
	[[ $r1 == OK && $r2 == 1 ]] ||
	    die "pair: redis-cli SET/EVAL gave '$r1' '$r2'"
}
case_pair() {
	harness pair pair_redlock pair_rediscli
	compare pair "acquire + release pair" "redis-cli SET NX PX + EVAL" 0.5
}

# 2. run KEY -- true vs flock FILE true.
run_redlock() { "$RL" run bench:run -- true; }
run_flock() { flock "$TMP/flock" true; }
case_run() {
	harness run run_redlock run_flock
	compare run "\`run k -- true\` cycle" "\`flock FILE true\`" 1.5
}

# 3. Idle cost of a long hold.  CPU from /proc/PID/task/*/schedstat (ns on
# CPU; utime+stime in /proc/PID/stat only count 10 ms ticks), RSS from VmHWM, both sampled
# every 0.1 s while the child is alive: the first sample (start-up, acquire,
# fork) and the last one (just before the child exits) are kept.  What the
# server saw: INFO commandstats before and after (EVALSHA/EVAL calls), and
# MONITOR during the run, which tells our requests from the calls our Lua
# scripts make inside the server.
cmdstat() {	# cmdstat NAME: calls of one command so far
	redis-cli -s "$SOCK" INFO commandstats |
	    awk -F'[:,=]' -v n="cmdstat_$1" '$1 == n { c = $3 } END { print c + 0 }'
}
idle_sample() {	# idle_sample PID: sets cpu_ns and hwm
	local f ns sum=0 line
	for f in /proc/"$1"/task/*/schedstat; do
		read -r ns _ 2>/dev/null <"$f" || return 1
		sum=$((sum + ns))
	done
	while read -r line; do
		[[ $line == VmHWM:* ]] && read -r _ hwm _ <<<"$line"
	done 2>/dev/null <"/proc/$1/status"
	cpu_ns=$sum
}
case_idle() {
	local pid mon child="" i rc=0 cpu_ns="" hwm="" first="" s
	local fpid fcpu="" fhwm="" spid scpu=""
	local sha0 sha1 ev0 ev1
	# Load the extend script first, so that the figures are steady state
	# (the first renewal on a fresh server adds one NOSCRIPT + EVAL).
	"$RL" run bench:idle -n -t 300ms -- sleep 0.2
	sha0=$(cmdstat evalsha) ev0=$(cmdstat eval)
	redis-cli -s "$SOCK" MONITOR >"$TMP/monitor" &
	mon=$!
	for ((i = 0; i < 100; i++)); do
		[[ -s $TMP/monitor ]] && break
		sleep 0.02
	done
	# The peers, meanwhile: flock holding a file lock over the same command,
	# and the bare command (what any process costs to start, from bash).
	flock "$TMP/idle.flock" sleep "$HOLD" &
	fpid=$!
	sleep "$HOLD" &
	spid=$!
	"$RL" run bench:idle -n -t "${TTL}s" -- sleep "$HOLD" &
	pid=$!
	for ((i = 0; i < 200 && ${#child} == 0; i++)); do
		read -r child _ 2>/dev/null <"/proc/$pid/task/$pid/children" || true
		[[ -n $child ]] || sleep 0.01
	done
	[[ -n $child ]] || die "idle: the command did not start"
	# Sample while the child lives (a zombie is dead).
	while read -r s 2>/dev/null <"/proc/$child/stat"; do
		s=${s##*) }
		[[ ${s:0:1} != Z ]] || break
		if idle_sample "$fpid"; then
			fcpu=$cpu_ns fhwm=$hwm
		fi
		if idle_sample "$spid"; then
			scpu=$cpu_ns
		fi
		idle_sample "$pid" || break
		[[ -n $first ]] || first=$cpu_ns
		sleep 0.1
	done
	wait "$fpid" || true
	wait "$spid" || true
	wait "$pid" || rc=$?
	sleep 0.1	# let MONITOR print the release
	kill "$mon" 2>/dev/null || true
	wait "$mon" 2>/dev/null || true
	((rc == 0)) || die "idle: redlock-cli run exited $rc"
	[[ -n $cpu_ns ]] || die "idle: no sample of redlock-cli"
	sha1=$(cmdstat evalsha) ev1=$(cmdstat eval)
	# Our requests: MONITOR lines from a client, not "[0 lua]".
	read -r -a s < <(awk '
	    NR == 1 || $3 == "lua]" { next }
	    { c = tolower($4); gsub(/"/, "", c) }
	    c == "evalsha" { sha++; next }
	    c == "eval" { ev++; next }
	    { other++; names = names " " c }
	    END { printf "%d %d %d%s\n", sha, ev, other, names }' \
	    "$TMP/monitor")
	local renewals=$((s[0] - 2)) expect
	expect=$(awk -v h="$HOLD" -v t="$TTL" 'BEGIN { printf "%.1f", h / (t / 3) }')
	row "idle: \`run -t ${TTL}s -- sleep $HOLD\`, CPU of redlock-cli" \
	    "$(awk -v a="$first" -v n="$cpu_ns" 'BEGIN {
		printf "%.3f ms (start-up+acquire+fork %.2f, then %.2f holding)",
		    n / 1e6, a / 1e6, (n - a) / 1e6 }')" \
	    "$(awk -v f="$fcpu" -v s="$scpu" 'BEGIN {
		printf "`flock FILE sleep %s`: %.2f ms; bare `sleep` (start-up floor): %.2f ms",
		    ENVIRON["HOLD"], f / 1e6, s / 1e6 }')" \
	    "$(ratio "$cpu_ns" "$fcpu")" "< 2 ms" \
	    "$(awk -v n="$cpu_ns" 'BEGIN { print (n < 2e6 ? "ok" : "MISS") }')"
	row "idle: max RSS (VmHWM) of redlock-cli" \
	    "$(awk -v k="$hwm" 'BEGIN { printf "%.2f MiB", k / 1024 }')" \
	    "\`flock FILE sleep $HOLD\`: $(awk -v k="$fhwm" 'BEGIN { printf "%.2f MiB", k / 1024 }')" \
	    "$(ratio "$hwm" "$fhwm")" "< 4 MiB" \
	    "$(awk -v k="$hwm" 'BEGIN { print (k < 4096 ? "ok" : "MISS") }')"
	row "idle: requests the server saw" \
	    "${s[0]} EVALSHA = 1 acquire + $renewals renewals + 1 release; ${s[1]} EVAL; ${s[2]} other" \
	    "renewals expected ≈ $HOLD s / ($TTL s / 3) = $expect; commandstats: $((sha1 - sha0)) EVALSHA, $((ev1 - ev0)) EVAL" \
	    "—" "renewals only" \
	    "$( ((s[1] + s[2] == 0)) && echo ok || echo "MISS:${s[*]:3}")"
}

# 4. Instruction counts (callgrind), with the redis-cli equivalents.
cg() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" \
	    >"$TMP/cg.out" 2>"$TMP/cg.err" ||
	    die "callgrind: $* failed: $(tail -n 3 "$TMP/cg.err")"
	awk '/Collected :/ { n = $NF } END { if (n == "") exit 1; print n }' \
	    "$TMP/cg.err" || die "callgrind: no count for $*"
}
case_callgrind() {
	if ! command -v valgrind >/dev/null; then
		row "callgrind" "skipped: valgrind not installed" "" "" "" ""
		return 0
	fi
	local a r sa sr tok v t
	a=$(cg "$RL" acquire bench:cg -n)
	tok=$(cat "$TMP/cg.out")
	r=$(cg "$RL" release bench:cg --token "$tok")
	read -r tok </proc/sys/kernel/random/uuid
	sa=$(cg redis-cli -s "$SOCK" SET bench:cg:cli "$tok" NX PX 30000)
	sr=$(cg redis-cli -s "$SOCK" EVAL "$CAD_LUA" 1 bench:cg:cli "$tok")
	v=$(cg "$RL" --version)
	t=$(cg /bin/true)
	row "instructions: \`acquire k -n\`" "$a" "redis-cli SET NX PX: $sa" \
	    "$(ratio "$a" "$sa")" "record" "info"
	row "instructions: \`release k --token T\`" "$r" \
	    "redis-cli EVAL: $sr" "$(ratio "$r" "$sr")" "record" "info"
	row "instructions: \`--version\` (start-up floor)" "$v" \
	    "/bin/true: $t" "$(ratio "$v" "$t")" "—" "info"
}

# 5. Diagnostic: process start-up alone, same harness.
start_redlock() { "$RL" --version >/dev/null; }
start_rediscli() { redis-cli --version >/dev/null; }
start_true() { /bin/true; }
case_startup() {
	local a b c
	harness startup start_redlock start_rediscli start_true
	read -r -a a < <(stats "$TMP/startup.1")
	read -r -a b < <(stats "$TMP/startup.2")
	read -r -a c < <(stats "$TMP/startup.3")
	row "start-up: \`redlock-cli --version\`, median" "$(ms "${a[0]}")" \
	    "/bin/true: $(ms "${c[0]}")" "$(ratio "${a[0]}" "${c[0]}")" \
	    "—" "info"
	row "start-up: \`redis-cli --version\`, median" "$(ms "${b[0]}")" \
	    "/bin/true: $(ms "${c[0]}")" "$(ratio "${b[0]}" "${c[0]}")" \
	    "—" "info"
}

### Driver.

# Stop our own background jobs (idle case) however a case ends.
reap_jobs() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
}

if [[ ${1:-} == __case ]]; then
	trap reap_jobs EXIT
	"case_$2" >"$TMP/rows.$2"
	exit 0
fi

[[ -x $RL ]] || die "$RL not built: run make first"
for tool in redis-server redis-cli flock timeout; do
	command -v "$tool" >/dev/null || die "$tool not installed (make deps)"
done
[[ $N =~ ^[1-9][0-9]*$ && $WARMUP =~ ^[0-9]+$ ]] || die "bad BENCH_N/WARMUP"
[[ $HOLD =~ ^[1-9][0-9]*$ && $TTL =~ ^[1-9][0-9]*$ ]] ||
    die "bad BENCH_HOLD/BENCH_TTL (whole seconds)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench.XXXXXX")
case_pid=""
cleanup() {
	local pid i
	if [[ -n $case_pid ]]; then
		kill "$case_pid" 2>/dev/null || true
		wait "$case_pid" 2>/dev/null || true
	fi
	if pid=$(cat "$TMP/pid" 2>/dev/null); then
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Measure a private copy: a rebuild during the run must not mix binaries.
RL_BUILT=$(date -u -r "$RL" '+%Y-%m-%d %H:%M:%S UTC')
cp -p "$RL" "$TMP/redlock-cli"
RL="$TMP/redlock-cli"
export REDLOCK_CLI="$RL"	# the cases re-read it

SOCK="$TMP/sock"
redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 \
    --save '' --appendonly no --daemonize yes --pidfile "$TMP/pid" \
    --dir "$TMP" --logfile "$TMP/log" </dev/null >/dev/null
for ((i = 0; i < 100; i++)); do
	[[ $(redis-cli -s "$SOCK" PING 2>/dev/null) == PONG ]] && break
	sleep 0.05
done
((i < 100)) || die "redis-server did not start: $(tail -n 3 "$TMP/log")"

unset REDIS_URL REDLOCK_TOKEN REDLOCK_PREFIX REDISCLI_AUTH REDLOCK_PASSWORD
export REDLOCK_URL="unix://$SOCK"
export TMP SOCK RL N WARMUP HOLD TTL

failed=0
for c in pair run idle callgrind startup; do
	[[ " $CASES " == *" $c "* ]] || continue
	limit=$CASE_LIMIT
	[[ $c != idle ]] || limit=$((HOLD + 40))
	printf 'bench: %s...\n' "$c" >&2
	rc=0
	# In the background so that a Ctrl-C here reaches the traps at once.
	timeout -k 5 "$limit" "$BASH" "$SELF" __case "$c" &
	case_pid=$!
	wait "$case_pid" || rc=$?
	case_pid=""
	if ((rc != 0)); then
		failed=1
		msg="FAILED (exit $rc)"
		((rc != 124)) || msg="FAILED (over ${limit}s)"
		row "$c" "$msg" "" "" "" "" >"$TMP/rows.$c"
	fi
done

mkdir -p "$OUT"
{
	echo "| benchmark | redlock-cli | peer (same run) | ratio | target | result |"
	echo "|---|---|---|---|---|---|"
	for c in pair run idle callgrind startup; do
		[[ ! -f $TMP/rows.$c ]] || cat "$TMP/rows.$c"
	done
} >"$TMP/table.md"

{
	echo "# redlock-cli benchmarks"
	echo
	printf 'Run %s on %s, %s CPUs, kernel %s; %s; %s; commit %s%s; binary built %s (sha256 %s).\n' \
	    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(uname -m)" "$(nproc)" \
	    "$(uname -r)" "$(redis-server --version | cut -d' ' -f1-3)" \
	    "$(ldd "$RL" | awk '/hiredis/ { print $1; exit }')" \
	    "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')" \
	    "$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)')" \
	    "$RL_BUILT" "$(sha256sum "$RL" | cut -c1-12)"
	echo "Redis on a unix socket; N=$N timed iterations per side after $WARMUP warm-up, sides interleaved."
	echo
	cat "$TMP/table.md"
} >"$OUT/results.md"

cat "$TMP/table.md"
printf 'bench: wrote %s\n' "${OUT#"$ROOT"/}/results.md" >&2
exit "$failed"
