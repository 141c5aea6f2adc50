#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh: redlock-cli's benchmarks, in one run, against real peers:
# flock(1), `etcdctl lock` on a throwaway etcd, the redis-cli SET NX PX
# retry loop, and node-redlock (bench/node/lock-run.js).  Every wall-time
# figure is a ratio against a peer measured in the same run with the same
# harness (the machine is shared and noisy); CPU time comes from the
# kernel's schedstat, instruction counts from callgrind.  Writes
# bench/out/report.md (one table per case, the machine, the targets) and
# bench/out/report.svg (gnuplot); bench/out/results.md keeps the one-table
# format of the first five cases.  See bench/README.md.
#
# Cases (BENCH_CASES, in this order by default):
#   A (or uncontended)  lock; true; unlock, sequential, every peer
#   B (contended)       8 workers x 50 cycles on one key: cycles/s, overlaps
#   C (handoff)         holder's command end -> waiter's command start
#   D (hold)            a 20 s hold with a 10 s TTL: CPU, RSS, requests,
#                       whether a second client got in
#   E (servers)         acquire + release with 1, 3 and 5 Redis servers
#   F (herd)            100 waiters, 100 hand-offs: commands per hand-off
#   tls                 acquire + release over TLS next to plain TCP
#   pretls              `run k -- true` before and after TLS support
#   cost                bench/server-cost.sh: Redis CPU per cycle against
#                       the seeds' SET NX PX + EVAL (its own server;
#                       its BENCH_SC_* knobs)
#   pair run idle callgrind startup   the first benchmarks (unix socket)
#
# Knobs (environment): BENCH_N (timed iterations per side in pair, run,
# startup, E, tls; 200), BENCH_WARMUP (10), BENCH_HOLD (D and idle hold,
# s; 20), BENCH_TTL (D and idle TTL, s; 10), BENCH_CASES, BENCH_PEER_N (A:
# iterations per side; 40), BENCH_HANDOFF_N (C: hand-offs per peer; 20),
# BENCH_B_REPS (B: batches per peer; 3), BENCH_B_NODE_REPS (1),
# BENCH_B_NODE_CYCLES (B: cycles per node-redlock worker; 15),
# BENCH_WAITERS (F; 100), BENCH_RCLI_SLEEP (the redis-cli loop's retry
# sleep; 0.1), BENCH_PRE_TLS (revision to build for pretls; the parent of
# the first commit whose subject mentions TLS), BENCH_PUBLISH=1 (copy the
# report and chart to bench/report.md and bench/report.svg when every case
# ran), REDLOCK_CLI (binary, ./redlock-cli).

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
PEER_N=${BENCH_PEER_N:-40}
HANDOFF_N=${BENCH_HANDOFF_N:-20}
B_WORKERS=8
B_CYCLES=50
B_REPS=${BENCH_B_REPS:-3}
B_NODE_REPS=${BENCH_B_NODE_REPS:-1}
B_NODE_CYCLES=${BENCH_B_NODE_CYCLES:-15}
WAITERS=${BENCH_WAITERS:-100}
RCLI_SLEEP=${BENCH_RCLI_SLEEP:-0.1}
F_LIMIT=60		# F: seconds for the hand-offs of one peer
ALL_CASES="A B C D E F tls pretls cost pair run idle callgrind startup"
CASES=${BENCH_CASES:-$ALL_CASES}
CASE_LIMIT=110		# seconds per first-generation case (timeout); idle: HOLD + 40
COST_LIMIT=900		# seconds for bench/server-cost.sh (its 1000 waiters)
PEER_LIMIT=175		# seconds per peer case (A-F, tls, pretls)
OUT="$ROOT/bench/out"
NODE_JS="$ROOT/bench/node/lock-run.js"

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
	local name=$1 n
	shift
	sample "$name" "$N" "$WARMUP" "$((CASE_LIMIT - 10))" "$@"
	n=$(<"$TMP/$name.n")
	((n == N)) || die "$name: over the time limit after $n iterations"
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

### Helpers of the peer cases (A-F, tls, pretls).

# sample NAME N WARM BUDGET FUNC...: what harness does, with its own counts
# and a soft time limit: after BUDGET seconds it stops (keeping at least 5
# timed iterations per side) instead of failing.  The number of timed
# iterations goes to $TMP/NAME.n.
sample() {
	local name=$1 n=$2 warm=$3 budget=$4 i j k t0
	shift 4
	local -a fn=("$@") times=()
	local m=${#fn[@]} end=$((EPOCHSECONDS + budget))
	for ((i = 0; i < warm; i++)); do
		for ((j = 0; j < m; j++)); do "${fn[j]}"; done
	done
	for ((j = 0; j < m; j++)); do times[j]=""; done
	for ((i = 0; i < n; i++)); do
		((i < 5 || EPOCHSECONDS < end)) || break
		for ((k = 0; k < m; k++)); do
			j=$(((i + k) % m))
			now_us; t0=$REPLY
			"${fn[j]}"
			now_us
			times[j]+="$((REPLY - t0)) "
		done
	done
	echo "$i" >"$TMP/$name.n"
	for ((j = 0; j < m; j++)); do
		# shellcheck disable=SC2086 # split the list on purpose
		printf '%s\n' ${times[j]} >"$TMP/$name.$((j + 1))"
	done
}

# fstats: "MEDIAN P90 MIN MAX" of the numbers on stdin (p90: nearest rank).
fstats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan nan nan nan"; exit }
		med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		k = int(0.9 * NR); if (k < 0.9 * NR) k++
		print med, v[k], v[1], v[NR]
	}'
}

# div A B [FORMAT]: A / B, "%.2f" unless FORMAT.
div() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" \
	    'BEGIN { if (b == 0) print "nan"; else printf f "\n", a / b }'
}

# judge VALUE OP TARGET [UNIT]: "ok", or "MISSED by D UNIT (P %)".  OP is
# le (at most), lt (under) or ge (at least).
judge() {
	awk -v v="$1" -v op="$2" -v t="$3" -v u="${4:-}" 'BEGIN {
		if (v == "nan") { print "not measured"; exit }
		ok = op == "le" ? v <= t : op == "lt" ? v < t : v >= t
		if (ok) { print "ok"; exit }
		d = v - t; if (d < 0) d = -d
		if (t == 0) printf "MISSED by %g%s\n", d, u
		else printf "MISSED by %.2f%s (%.0f %%)\n", d, u, 100 * d / t
	}'
}

# verdict WHAT TARGET MEASURED RESULT: one line of the report's target table.
verdict() {
	printf '| %s | %s | %s | %s | %s |\n' "$CASE" "$1" "$2" "$3" "$4" \
	    >>"$TMP/verdict.$CASE"
}

# chart PANEL LABEL VALUE TARGET TOOL: one bar of the chart (TARGET may be
# "nan": no target mark).
chart() {
	local color
	case $5 in
	flock) color=8421504 ;;		# grey
	rlc*) color=2062260 ;;		# blue
	rcli) color=16744206 ;;		# orange
	etcd) color=2924588 ;;		# green
	node*) color=9725885 ;;		# purple
	*) color=12632256 ;;		# light grey: the command alone
	esac
	printf '%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "$color" >>"$TMP/chart.$1"
}

# label TOOL: the name of a peer in the tables.
label() {
	case $1 in
	flock) echo "flock(1)" ;;
	rlc) echo "**redlock-cli**" ;;
	rcli) echo "redis-cli loop" ;;
	etcd) echo "etcdctl lock" ;;
	node) echo "node-redlock" ;;
	nodeu) echo "node-redlock, using()" ;;
	pair) echo "**redlock-cli** acquire + release" ;;
	bare) echo "the command alone" ;;
	*) echo "$1" ;;
	esac
}

has() { [[ " $TOOLS " == *" $1 "* ]]; }

# rcli ARGS...: redis-cli to the TCP server of the peer cases.
rcli() { redis-cli -h 127.0.0.1 -p "$RPORT" "$@"; }

# cmdstat NAME on the TCP server (the same server as $SOCK).
tcmdstat() {
	rcli INFO commandstats |
	    awk -F'[:,=]' -v n="cmdstat_$1" '$1 == n { c = $3 } END { print c + 0 }'
}

# cmd_total: every command the server has executed (calls inside Lua scripts
# included, as INFO commandstats counts them), without our own INFO,
# MONITOR and CONFIG.
cmd_total() {
	rcli INFO commandstats | awk -F'[:,=]' '
	    /^cmdstat_/ && $1 != "cmdstat_info" && $1 != "cmdstat_monitor" &&
	    $1 != "cmdstat_config" { c += $3 } END { print c + 0 }'
}

blocked_clients() {
	rcli INFO clients | awk -F: '$1 == "blocked_clients" { print $2 + 0 }'
}

# The redis-cli method, as blog posts show it: SET key token NX PX ttl in a
# retry loop with a sleep, then the compare-and-delete script.  The token
# comes from the kernel with the `read` builtin (no process).
rcli_lock() {	# rcli_lock KEY TTL_MS: sets RCLI_TOKEN
	read -r RCLI_TOKEN </proc/sys/kernel/random/uuid
	until [[ $(rcli SET "$1" "$RCLI_TOKEN" NX PX "$2") == OK ]]; do
		sleep "$RCLI_SLEEP"
	done
}
rcli_unlock() {	# rcli_unlock KEY: fails if the token no longer held it
	[[ $(rcli EVAL "$CAD_LUA" 1 "$1" "$RCLI_TOKEN") == 1 ]]
}
rcli_run() {	# rcli_run KEY CMD...
	local key=$1 rc=0
	shift
	rcli_lock "$key" 30000
	"$@" || rc=$?
	rcli_unlock "$key" || { echo "rcli_run: lost $key" >&2; rc=70; }
	return "$rc"
}

# lockrun TOOL KEY CMD...: CMD under TOOL's lock KEY, waiting for it.
lockrun() {
	local tool=$1 key=$2
	shift 2
	case $tool in
	flock) flock "$TMP/lock.$key" "$@" ;;
	rlc) "$RL" -u "$TCP_URL" run "$key" -- "$@" ;;
	rcli) rcli_run "$key" "$@" ;;
	etcd) etcdctl --endpoints="$ETCD_EP" lock "$key" -- "$@" ;;
	node) node "$NODE_JS" -u "$TCP_URL" "$key" -- "$@" ;;
	*) die "lockrun: unknown tool $tool" ;;
	esac
}

# sleep_ms MS
sleep_ms() { sleep "$(awk -v m="$1" 'BEGIN { printf "%.3f", m / 1000 }')"; }


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
# kid_of PID: REPLY = the first process whose parent is PID, or empty (by
# /proc/*/stat: /proc/PID/task/*/children is not on every kernel).
kid_of() {
	local f s ppid
	REPLY=""
	for f in /proc/[0-9]*/stat; do
		read -r s 2>/dev/null <"$f" || continue
		s=${s##*) }
		read -r _ ppid _ <<<"$s"
		if [[ $ppid == "$1" ]]; then
			REPLY=${f#/proc/}
			REPLY=${REPLY%/stat}
			return 0
		fi
	done
}
# tool_chain PID: CHAIN = PID and its first descendants down to a leaf, the
# command: for redlock-cli run, redlock-cli, its guardian, the command.
tool_chain() {
	CHAIN=("$1")
	while kid_of "${CHAIN[-1]}" && [[ -n $REPLY ]]; do
		CHAIN+=("$REPLY")
	done
}
# tool_sample: cpu_ns = the CPU of every process of CHAIN but the command
# (the tool and its helpers), hwm = the tool's own VmHWM.
tool_sample() {
	local sum=0 top_hwm="" i
	for ((i = 0; i < ${#CHAIN[@]} - 1; i++)); do
		idle_sample "${CHAIN[i]}" || return 1
		sum=$((sum + cpu_ns))
		[[ -n $top_hwm ]] || top_hwm=$hwm
	done
	cpu_ns=$sum hwm=$top_hwm
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
	for ((i = 0; i < 200; i++)); do
		tool_chain "$pid"
		# The command runs once its process is sleep, not us.
		if ((${#CHAIN[@]} > 1)) &&
		    [[ $(<"/proc/${CHAIN[-1]}/comm") == sleep ]] 2>/dev/null; then
			child=${CHAIN[-1]}
			break
		fi
		sleep 0.01
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
		tool_sample || break
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
	v=$(cg "$RL" -h)
	t=$(cg /bin/true)
	row "instructions: \`acquire k -n\`" "$a" "redis-cli SET NX PX: $sa" \
	    "$(ratio "$a" "$sa")" "record" "info"
	row "instructions: \`release k --token T\`" "$r" \
	    "redis-cli EVAL: $sr" "$(ratio "$r" "$sr")" "record" "info"
	row "instructions: \`-h\` (start-up floor)" "$v" \
	    "/bin/true: $t" "$(ratio "$v" "$t")" "—" "info"
}

# 5. Diagnostic: process start-up alone, same harness.
start_redlock() { "$RL" -h >/dev/null; }
start_rediscli() { redis-cli --version >/dev/null; }
start_true() { /bin/true; }
case_startup() {
	local a b c
	harness startup start_redlock start_rediscli start_true
	read -r -a a < <(stats "$TMP/startup.1")
	read -r -a b < <(stats "$TMP/startup.2")
	read -r -a c < <(stats "$TMP/startup.3")
	row "start-up: \`redlock-cli -h\`, median" "$(ms "${a[0]}")" \
	    "/bin/true: $(ms "${c[0]}")" "$(ratio "${a[0]}" "${c[0]}")" \
	    "—" "info"
	row "start-up: \`redis-cli --version\`, median" "$(ms "${b[0]}")" \
	    "/bin/true: $(ms "${c[0]}")" "$(ratio "${b[0]}" "${c[0]}")" \
	    "—" "info"
}

### Peer cases.  Each prints its section of the report (a heading, what was
### measured, one table) on stdout, which goes to $TMP/sec.CASE, and adds
### target lines (verdict) and chart bars (chart).

# A. Uncontended lock; true; unlock, sequential.
a_flock() { flock "$TMP/a.flock" true; }
a_rlc() { "$RL" -u "$TCP_URL" run bench:a:rlc -- true; }
a_pair() {
	local tok
	tok=$("$RL" -u "$TCP_URL" acquire bench:a:pair -n)
	true
	"$RL" -u "$TCP_URL" release bench:a:pair --token "$tok"
}
a_rcli() { rcli_run bench:a:rcli true; }
a_etcd() { etcdctl --endpoints="$ETCD_EP" lock bench-a -- true; }
a_node() { node "$NODE_JS" -u "$TCP_URL" bench:a:node -- true; }
case_A() {
	local -a fns=(a_flock a_rlc a_pair a_rcli) ids=(flock rlc pair rcli)
	local j n f r res cmd
	if has etcd; then fns+=(a_etcd); ids+=(etcd); fi
	if has node; then fns+=(a_node); ids+=(node); fi
	sample A "$PEER_N" 3 140 "${fns[@]}"
	n=$(<"$TMP/A.n")
	read -r -a f < <(stats "$TMP/A.1")
	echo "## A. Uncontended cycle: lock; true; unlock"
	echo
	echo "One process after another on a free lock, all peers interleaved in one loop (order rotated each"
	echo "iteration), $n timed iterations per peer after 3 warm-up rounds; Redis and etcd on 127.0.0.1 TCP."
	echo
	echo "| peer | command | median | p90 | ÷ flock (median) | target | result |"
	echo "|---|---|---|---|---|---|---|"
	for ((j = 0; j < ${#ids[@]}; j++)); do
		read -r -a s < <(stats "$TMP/A.$((j + 1))")
		r=$(div "${s[0]}" "${f[0]}")
		res="info"
		# shellcheck disable=SC2016 # commands shown, not run
		case ${ids[j]} in
		flock) cmd='`flock FILE true`' ;;
		rlc) cmd='`redlock-cli run k -- true`' ;;
		pair) cmd='`t=$(redlock-cli acquire k -n); true; redlock-cli release k --token $t`' ;;
		rcli) cmd='`SET k t NX PX 30000` (retry loop, sleep '"$RCLI_SLEEP"'), `true`, `EVAL` compare-and-delete' ;;
		etcd) cmd='`etcdctl lock k -- true`' ;;
		node) cmd='`node lock-run.js k -- true` (acquire, spawnSync, release)' ;;
		esac
		if [[ ${ids[j]} == rlc ]]; then
			res=$(judge "$r" le 1.5 ×)
			verdict "uncontended \`run k -- true\` ÷ \`flock FILE true\` (median)" \
			    "≤ 1.5×" "${r}× ($(ms "${s[0]}") vs $(ms "${f[0]}"))" "$res"
		fi
		row "$(label "${ids[j]}")" \
		    "$cmd" "$(ms "${s[0]}")" "$(ms "${s[1]}")" "$r" \
		    "$([[ ${ids[j]} == rlc ]] && echo '≤ 1.5' || echo '—')" "$res"
		case ${ids[j]} in
		flock | pair) ;;
		*) chart ratios "A $(label "${ids[j]}" | tr -d '*')" "$r" \
		    "$([[ ${ids[j]} == rlc ]] && echo 1.5 || echo nan)" "${ids[j]}" ;;
		esac
	done
	echo
}

# B. Contention: WORKERS workers x CYCLES cycles on one key, a tiny critical
# section (bench/helper.c probe: mkdir, 100 us, rmdir; a failed mkdir is an
# overlap).
b_worker() {	# b_worker TOOL CYCLES OUT: OUT.ok (cycles that ran), OUT.lat
	local tool=$1 n=$2 out=$3 i t0 ok=0 lat=""
	for ((i = 0; i < n; i++)); do
		now_us; t0=$REPLY
		if lockrun "$tool" "bench:b:$tool" "$HELPER" probe \
		    "$TMP/b.cs.$tool" "$TMP/b.overlaps.$tool" 2>>"$TMP/b.err.$tool"; then
			ok=$((ok + 1))
		fi
		now_us
		lat+="$((REPLY - t0)) "
	done
	# shellcheck disable=SC2086 # split the list on purpose
	printf '%s\n' $lat >"$out.lat"
	echo "$ok" >"$out.ok"
}
# children_ms: REPLY = CPU (user + system) of this shell's reaped
# descendants, ms.  `times` must run in this shell (not in a subshell).
children_ms() {
	local u s
	times >"$TMP/times.out"
	{ read -r _; read -r u s; } <"$TMP/times.out"
	REPLY=$(awk -v u="$u" -v s="$s" 'BEGIN {
		split(u, a, /[ms]/); split(s, b, /[ms]/)
		printf "%d\n", (a[1] * 60 + a[2] + b[1] * 60 + b[2]) * 1000 }')
}
# server_ms TOOL: CPU so far of the server TOOL talks to, ms (0: none).
server_ms() {
	local pid=""
	case $1 in
	rlc | rcli | node) pid=$REDIS_PID ;;
	etcd) pid=$ETCD_PID ;;
	esac
	[[ -n $pid ]] || { echo 0; return; }
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%d\n", ($12 + $13) * 1000 / hz }' \
	    "/proc/$pid/stat"
}
b_batch() {	# b_batch TOOL REP: appends "CYCLES RAN MICROSECONDS CLIENT_MS SERVER_MS"
	local tool=$1 rep=$2 w t0 ok=0 cycles=$B_CYCLES p c0 s0
	local -a pids=()
	[[ $tool != node ]] || cycles=$B_NODE_CYCLES
	rmdir "$TMP/b.cs.$tool" 2>/dev/null || true
	children_ms
	c0=$REPLY s0=$(server_ms "$tool")
	now_us; t0=$REPLY
	for ((w = 0; w < B_WORKERS; w++)); do
		b_worker "$tool" "$cycles" "$TMP/b.$tool.$rep.$w" &
		pids+=("$!")
	done
	for p in "${pids[@]}"; do wait "$p"; done
	now_us
	for ((w = 0; w < B_WORKERS; w++)); do
		ok=$((ok + $(<"$TMP/b.$tool.$rep.$w.ok")))
		cat "$TMP/b.$tool.$rep.$w.lat" >>"$TMP/b.lat.$tool"
	done
	local us=$((REPLY - t0))
	children_ms
	echo "$((B_WORKERS * cycles)) $ok $us $((REPLY - c0))" \
	    "$(($(server_ms "$tool") - s0))" >>"$TMP/b.runs.$tool"
}
case_B() {
	local -a tools
	read -r -a tools <<<"$TOOLS"
	local m=${#tools[@]} r k t end=$((EPOCHSECONDS + 150)) t0
	local -A took=()
	for ((r = 0; r < B_REPS; r++)); do
		for ((k = 0; k < m; k++)); do
			t=${tools[(r + k) % m]}
			[[ $t != node ]] || ((r < B_NODE_REPS)) || continue
			# Soft limit: skip a batch that would end past it.
			((r == 0 || EPOCHSECONDS + ${took[$t]:-0} < end)) || continue
			t0=$EPOCHSECONDS
			b_batch "$t" "$r"
			took[$t]=$((EPOCHSECONDS - t0 + 1))
		done
	done
	local fc cps reps cyc ran lat ovl res r2 fail
	fc=$(awk '{ print $2 / ($3 / 1e6) }' "$TMP/b.runs.flock" | fstats | cut -d' ' -f1)
	echo "## B. Contention: $B_WORKERS workers × $B_CYCLES cycles on one key"
	echo
	echo "$B_WORKERS workers start at once, each runs its cycles one after another through the peer, on one"
	echo "key; the critical section is \`helper probe\` (mkdir DIR, 100 µs, rmdir DIR: a failed mkdir is"
	echo "an overlap). cycles/s = cycles that ran ÷ wall time of the batch; the batches of the peers"
	echo "alternate (order rotated). Cycle latency is what a worker saw, waiting included. node-redlock"
	echo "starts a Node process per cycle (about 0.2 s of CPU each here), so it runs $B_NODE_REPS batch(es) of"
	echo "$B_WORKERS × $B_NODE_CYCLES cycles to stay within the time limit: cycles/s is a rate and stays comparable."
	echo
	echo "CPU per cycle: the peer's processes (the workers' reaped descendants) + its server (Redis or"
	echo "etcd; flock's kernel work is in its processes), medians over the batches: on a saturated 2-core"
	echo "machine, cycles/s can be no better than the cores ÷ the CPU a cycle costs."
	echo
	echo "| peer | batches × cycles | cycles/s, median (min–max) | ÷ flock | cycle latency median / p90 | CPU per cycle: processes + server | overlaps | failed cycles | target | result |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for t in "${tools[@]}"; do
		[[ -s $TMP/b.runs.$t ]] || { row "$(label "$t")" "not run (time limit)" "" "" "" "" "" "" "" ""; continue; }
		read -r -a cps < <(awk '{ print $2 / ($3 / 1e6) }' "$TMP/b.runs.$t" | fstats)
		reps=$(wc -l <"$TMP/b.runs.$t")
		cyc=$(awk '{ c = $1 } END { print c / '"$B_WORKERS"' }' "$TMP/b.runs.$t")
		ran=$(awk '{ r += $2; c += $1 } END { print c - r }' "$TMP/b.runs.$t")
		read -r -a lat < <(fstats <"$TMP/b.lat.$t")
		local cc sc
		cc=$(awk '{ print $4 / $2 }' "$TMP/b.runs.$t" | fstats | cut -d' ' -f1)
		sc=$(awk '{ print $5 / $2 }' "$TMP/b.runs.$t" | fstats | cut -d' ' -f1)
		ovl=0
		[[ ! -f $TMP/b.overlaps.$t ]] || ovl=$(wc -l <"$TMP/b.overlaps.$t")
		r2=$(div "${cps[0]}" "$fc")
		res="info"
		fail=$(judge "$ovl" le 0)
		if [[ $t == rlc ]]; then
			res=$(judge "$r2" ge 0.8 ×)
			verdict "contended cycles/s ÷ flock's (8 × 50, median of $reps)" \
			    "≥ 0.8×" "${r2}× ($(printf '%.0f' "${cps[0]}") vs $(printf '%.0f' "$fc") cycles/s)" "$res"
			[[ $fail == ok ]] || res="$res; overlaps $fail"
		elif [[ $fail != ok ]]; then
			res="overlaps: $fail"
		fi
		verdict "contended: overlaps of $(label "$t" | tr -d '*')" "0" "$ovl" "$fail"
		row "$(label "$t")" "$reps × $B_WORKERS × $cyc" \
		    "$(printf '%.0f (%.0f–%.0f)' "${cps[0]}" "${cps[2]}" "${cps[3]}")" \
		    "$r2" "$(ms "${lat[0]}") / $(ms "${lat[1]}")" \
		    "$(awk -v c="$cc" -v s="$sc" 'BEGIN { printf "%.2f + %.2f ms", c, s }')" "$ovl" "$ran" \
		    "$([[ $t == rlc ]] && echo '≥ 0.8, 0 overlaps' || echo '0 overlaps')" "$res"
		[[ $t == flock ]] ||
		    chart ratios "B $(label "$t" | tr -d '*')" "$(div "$fc" "${cps[0]}")" \
		    "$([[ $t == rlc ]] && echo 1.25 || echo nan)" "$t"
	done
	echo
	if [[ -n $(cat "$TMP"/b.err.* 2>/dev/null) ]]; then
		echo "Messages from the peers (first 5):"
		echo
		cat "$TMP"/b.err.* | sort | uniq -c | sort -rn | head -n 5 | sed 's/^/    /'
		echo
	fi
}

# C. Hand-off: a holder's command waits for a signal; once the waiter waits,
# the holder's command writes the clock and exits; the waiter's command
# writes the clock when it starts.  The waiter is detected as waiting per
# peer (below); then a random 150-650 ms passes, so that a polling waiter's
# phase is random, before the signal.
c_waiting() {	# c_waiting TOOL KEY BEFORE: true once the waiter waits
	case $1 in
	flock) awk -v ino=":$C_INO" '$2 == "->" && substr($7, length($7) - length(ino) + 1) == ino { f = 1 } END { exit !f }' /proc/locks ;;
	rlc) (($(blocked_clients) >= 1)) ;;
	rcli) (($(tcmdstat set) > $3)) ;;
	node) (($(tcmdstat evalsha) + $(tcmdstat eval) > $3)) ;;
	etcd) (($(etcdctl --endpoints="$ETCD_EP" get --prefix "$2/" --keys-only | grep -c .) >= 2)) ;;
	esac
}
c_once() {	# c_once TOOL: one hand-off; appends the gap (us) to c.gaps.TOOL
	local tool=$1 key="bench:c:$1" d="$TMP/c.$1" h w before=0 i
	rm -f "$d.held" "$d.go" "$d.end" "$d.start"
	lockrun "$tool" "$key" "$HELPER" hold "$d.held" "$d.go" "$d.end" &
	h=$!
	for ((i = 0; i < 1000; i++)); do
		[[ ! -e $d.held ]] || break
		sleep 0.01
	done
	[[ -e $d.held ]] || die "C: $tool: the holder's command did not start"
	case $tool in
	flock) C_INO=$(stat -c %i "$TMP/lock.$key") ;;
	rcli) before=$(tcmdstat set) ;;
	node) before=$(($(tcmdstat evalsha) + $(tcmdstat eval))) ;;
	esac
	lockrun "$tool" "$key" "$HELPER" stamp "$d.start" &
	w=$!
	for ((i = 0; i < 500; i++)); do
		! c_waiting "$tool" "$key" "$before" || break
		sleep 0.01
	done
	((i < 500)) || die "C: $tool: the waiter did not wait"
	sleep_ms $((150 + RANDOM % 500))
	: >"$d.go"
	wait "$h" || die "C: $tool: the holder failed"
	wait "$w" || die "C: $tool: the waiter failed"
	[[ -s $d.start && -s $d.end ]] || die "C: $tool: no stamps"
	echo "$(($(<"$d.start") - $(<"$d.end")))" >>"$TMP/c.gaps.$tool"
}
case_C() {
	local -a tools
	read -r -a tools <<<"$TOOLS"
	local m=${#tools[@]} i k t end=$((EPOCHSECONDS + 140)) f s r res how
	for ((i = 0; i < HANDOFF_N; i++)); do
		((i < 3 || EPOCHSECONDS < end)) || break
		for ((k = 0; k < m; k++)); do
			c_once "${tools[(i + k) % m]}"
		done
	done
	read -r -a f < <(stats "$TMP/c.gaps.flock")
	echo "## C. Hand-off latency: holder's command ends → waiter's command starts"
	echo
	echo "$i hand-offs per peer, peers interleaved (order rotated). Both commands are a static C helper"
	echo "that writes the wall clock (bench/helper.c), so process start-up of a shell is not in the figure."
	echo "The release is signalled 150–650 ms (random) after the waiter is seen waiting."
	echo
	echo "| peer | how the waiter learns the lock is free | median | p90 | ÷ flock (median) | target | result |"
	echo "|---|---|---|---|---|---|---|"
	for t in "${tools[@]}"; do
		read -r -a s < <(stats "$TMP/c.gaps.$t")
		r=$(div "${s[0]}" "${f[0]}")
		res=info
		case $t in
		flock) how="kernel: flock(2) returns when the holder's descriptor closes" ;;
		rlc) how="BZPOPMIN on a wake key that the release fills" ;;
		rcli) how="polls: SET NX every ${RCLI_SLEEP} s" ;;
		etcd) how="watches its predecessor's key (revision order)" ;;
		node) how="polls: every 200 ± 100 ms (library defaults)" ;;
		esac
		if [[ $t == rlc ]]; then
			res=$(judge "$r" le 1.5 ×)
			verdict "hand-off latency ÷ flock's (median of $i)" "≤ 1.5×" \
			    "${r}× ($(ms "${s[0]}") vs $(ms "${f[0]}"))" "$res"
		fi
		row "$(label "$t")" "$how" "$(ms "${s[0]}")" "$(ms "${s[1]}")" "$r" \
		    "$([[ $t == rlc ]] && echo '≤ 1.5' || echo '—')" "$res"
		[[ $t == flock ]] ||
		    chart ratios "C $(label "$t" | tr -d '*')" "$r" \
		    "$([[ $t == rlc ]] && echo 1.5 || echo nan)" "$t"
	done
	echo
}


# D. A long hold: every peer holds its own lock over `helper sleepstamp HOLD`
# with a TTL of TTL seconds, all at once.  CPU and RSS of the lock tool's
# process are sampled as in the idle case (schedstat of every thread,
# VmHWM) while its command lives.  Every 2 s each peer's second client tries
# once (non-blocking) to take the same lock; its command stamps the clock,
# so a second holder while the first one's command still ran shows.
d_cmd() {	# d_cmd TOOL: DCMD = the first client's command line
	local -a h=("$HELPER" sleepstamp "$HOLD" "$TMP/d.$1.start" "$TMP/d.$1.end")
	case $1 in
	bare) DCMD=("${h[@]}") ;;
	flock) DCMD=(flock "$TMP/d.flock" "${h[@]}") ;;
	rlc) DCMD=("$RL" -u "$TCP_URL" run bench:d:rlc -t "${TTL}s" -- "${h[@]}") ;;
	etcd) DCMD=(etcdctl --endpoints="$ETCD_EP" lock --ttl "$TTL" bench:d:etcd -- "${h[@]}") ;;
	node) DCMD=(node "$NODE_JS" -u "$TCP_URL" -t "$((TTL * 1000))" bench:d:node -- "${h[@]}") ;;
	nodeu) DCMD=(node "$NODE_JS" --using -u "$TCP_URL" -t "$((TTL * 1000))" bench:d:nodeu -- "${h[@]}") ;;
	esac
}
d_probe() {	# d_probe TOOL K: one non-blocking attempt of a second client
	local out="$TMP/d.$1.in.$2"
	case $1 in
	flock) flock -n "$TMP/d.flock" "$HELPER" stamp "$out" ;;
	rlc) "$RL" -u "$TCP_URL" run bench:d:rlc -n -- "$HELPER" stamp "$out" ;;
	# etcdctl lock has no non-blocking mode: wait 1.5 s at most (SIGINT
	# makes it give up cleanly).
	etcd) timeout -s INT 1.5 etcdctl --endpoints="$ETCD_EP" lock --ttl 5 \
	    bench:d:etcd -- "$HELPER" stamp "$out" ;;
	node) node "$NODE_JS" -n -u "$TCP_URL" bench:d:node -- "$HELPER" stamp "$out" ;;
	nodeu) node "$NODE_JS" -n -u "$TCP_URL" bench:d:nodeu -- "$HELPER" stamp "$out" ;;
	esac
} >/dev/null 2>&1
d_probes() {	# every 2 s, each tool's second client once
	local k t
	for ((k = 1; 2 * k < HOLD; k++)); do
		sleep 2
		for t in "$@"; do d_probe "$t" "$k" & done
		wait
	done
}
# etcd_msgs [METHOD]: gRPC messages etcd has received (all, or one method).
etcd_msgs() {
	curl -s "$ETCD_EP/metrics" | awk -v m="${1:-}" '
	    /^grpc_server_msg_received_total/ &&
	    (m == "" || index($0, "grpc_method=\"" m "\"")) { c += $NF }
	    END { printf "%d\n", c }'
}
case_D() {
	local -a tools=(bare flock rlc) s DCMD
	local t i k p c mon alive st e0=0 e1=0 k0=0 k1=0 msg hwm cpu_ns
	local -A pid=() child=() chain=() first=() cpu=() rss=() fin=() xrc=()
	local leaf
	leaf=$(basename "$HELPER")
	leaf=${leaf:0:15}
	if has etcd; then tools+=(etcd); fi
	if has node; then tools+=(node nodeu); fi
	# Load the scripts first (steady state: a fresh server adds a NOSCRIPT
	# and an EVAL the first time a script is used).
	"$RL" -u "$TCP_URL" run bench:d:warm -n -t 300ms -- sleep 0.2
	if has node; then
		node "$NODE_JS" --using -u "$TCP_URL" -t 700 bench:d:warm -- sleep 0.5
	fi
	if has etcd && command -v curl >/dev/null; then
		e0=$(etcd_msgs) k0=$(etcd_msgs LeaseKeepAlive)
	fi
	redis-cli -h 127.0.0.1 -p "$RPORT" MONITOR >"$TMP/d.mon" &
	mon=$!
	for ((i = 0; i < 100; i++)); do
		[[ -s $TMP/d.mon ]] && break
		sleep 0.02
	done
	# Started straight from this shell (no function in between), so that
	# the little that bash does in the child before exec is the same for all.
	for t in "${tools[@]}"; do
		d_cmd "$t"
		"${DCMD[@]}" 2>"$TMP/d.$t.err" &
		pid[$t]=$!
		[[ $t != bare ]] || child[$t]=$!
	done
	d_probes "${tools[@]:1}" &
	p=$!
	# Sample while the commands live.
	while :; do
		alive=0
		for t in "${tools[@]}"; do
			[[ -z ${fin[$t]:-} ]] || continue
			alive=1
			if [[ -z ${chain[$t]:-} ]]; then
				# The tool's processes down to the command.
				tool_chain "${pid[$t]}"
				c=${CHAIN[-1]}
				[[ $(<"/proc/$c/comm") == "$leaf" ]] 2>/dev/null ||
				    continue
				child[$t]=$c
				chain[$t]="${CHAIN[*]}"
			fi
			st=""
			read -r st 2>/dev/null <"/proc/${child[$t]}/stat" || true
			st=${st##*) }
			if [[ -z $st || ${st:0:1} == Z ]]; then
				fin[$t]=1
				continue
			fi
			cpu_ns="" hwm=""
			if [[ $t == bare ]]; then
				idle_sample "${pid[$t]}" || { fin[$t]=1; continue; }
			else
				read -r -a CHAIN <<<"${chain[$t]}"
				tool_sample || { fin[$t]=1; continue; }
			fi
			cpu[$t]=$cpu_ns rss[$t]=$hwm
			[[ -n ${first[$t]:-} ]] || first[$t]=$cpu_ns
		done
		((alive)) || break
		sleep 0.1
	done
	for t in "${tools[@]}"; do
		xrc[$t]=0
		wait "${pid[$t]}" || xrc[$t]=$?
	done
	wait "$p" || true
	sleep 0.2	# let MONITOR print the releases
	kill "$mon" 2>/dev/null || true
	wait "$mon" 2>/dev/null || true
	if has etcd && command -v curl >/dev/null; then
		e1=$(etcd_msgs) k1=$(etcd_msgs LeaseKeepAlive)
	fi
	echo "## D. A ${HOLD} s hold with a ${TTL} s TTL"
	echo
	echo "Each peer holds its own lock over a ${HOLD} s command, all at the same time. CPU: the lock tool's"
	echo "process (every thread's schedstat, sampled every 0.1 s while the command lives; start-up +"
	echo "acquire + spawn is the first sample, the rest is the hold). RSS: its VmHWM. Requests: what the"
	echo "server got from the holder's connection during the whole run (MONITOR; Lua's own calls"
	echo "excluded); for etcd, gRPC messages the server received (metrics), the second clients' included."
	echo "Second client: every 2 s the same tool tries once, without waiting (etcdctl lock cannot: it"
	echo "waits at most 1.5 s); \"got in\" counts the tries whose command ran while the first one's did."
	echo
	echo "| peer | renews the lock? | CPU of the lock tool (start-up+acquire / hold) | max RSS | requests to the server | second client got in while the first ran | target | result |"
	echo "|---|---|---|---|---|---|---|---|"
	for t in "${tools[@]}"; do
		local renew req got=0 firstin="" tries=0 start="" end="" v res="info" cpu_ms rss_mb f
		case $t in
		bare) renew="— (the command alone, started the same way: the floor)" ;;
		flock) renew="no need: a kernel lock, released at exit" ;;
		rlc) renew="yes: extend every TTL/3" ;;
		etcd) renew="yes: lease keep-alive every TTL/3" ;;
		node) renew="**no**: acquire(), spawnSync, release()" ;;
		nodeu) renew="yes: using() extends 500 ms before expiry" ;;
		esac
		[[ ! -s $TMP/d.$t.start ]] || start=$(<"$TMP/d.$t.start")
		[[ ! -s $TMP/d.$t.end ]] || end=$(<"$TMP/d.$t.end")
		for f in "$TMP/d.$t.in."*; do
			[[ -e $f ]] || continue
			v=$(<"$f")
			if [[ -n $start && -n $end ]] && ((v >= start && v <= end)); then
				got=$((got + 1))
				[[ -n $firstin ]] || firstin=$v
				((v >= firstin)) || firstin=$v
			fi
		done
		tries=$((HOLD / 2 - (HOLD % 2 == 0 ? 1 : 0)))
		case $t in
		bare | flock) req="— (no server)" ;;
		etcd)
			if ((e1 > 0)); then
				req="$((e1 - e0)) gRPC messages, $((k1 - k0)) of them LeaseKeepAlive"
			else
				req="not measured (no curl)"
			fi
			;;
		*)
			req=$(awk -v key="\"bench:d:$t\"" '
			    NR == 1 || $3 == "lua]" { next }
			    addr == "" { for (i = 5; i <= NF; i++) if ($i == key) { addr = $3; break } }
			    addr != "" && $3 == addr { c = tolower($4); gsub(/"/, "", c); n[c]++; tot++ }
			    END {
				out = ""
				for (c in n) out = out (out == "" ? "" : ", ") n[c] " " toupper(c)
				printf "%d: %s\n", tot, out
			    }' "$TMP/d.mon")
			;;
		esac
		cpu_ms=$(awk -v n="${cpu[$t]:-0}" 'BEGIN { printf "%.2f", n / 1e6 }')
		rss_mb=$(awk -v k="${rss[$t]:-0}" 'BEGIN { printf "%.2f", k / 1024 }')
		local gotcell="$got of $tries"
		[[ $t != bare ]] || gotcell="—"
		[[ -z $firstin ]] ||
		    gotcell+=" (first $(awk -v a="$firstin" -v s="$start" 'BEGIN { printf "%.1f", (a - s) / 1e6 }') s into the hold)"
		((xrc[$t] == 0)) || gotcell+="; exit ${xrc[$t]}"
		if [[ -s $TMP/d.$t.err ]]; then
			gotcell+="; it said: \"$(head -n 1 "$TMP/d.$t.err" | cut -c1-120 | tr "|" "/")\""
		fi
		if [[ $t == rlc ]]; then
			local r1 r2 r3
			r1=$(judge "$cpu_ms" lt 2 " ms")
			r2=$(judge "$rss_mb" lt 4 " MiB")
			r3=$(judge "$got" le 0)
			verdict "${HOLD} s hold: CPU of redlock-cli" "< 2 ms" \
			    "$cpu_ms ms ($(awk -v n="${cpu[$t]:-0}" -v b="${cpu[bare]:-0}" 'BEGIN { printf "%.2f ms above the %.2f ms that the command alone costs", (n - b) / 1e6, b / 1e6 }'))" "$r1"
			verdict "${HOLD} s hold: max RSS of redlock-cli" "< 4 MiB" "$rss_mb MiB" "$r2"
			verdict "${HOLD} s hold (TTL ${TTL} s): second holder while the first ran" \
			    "0" "$got of $tries tries" "$r3"
			res="CPU $r1; RSS $r2; second holder $r3"
		fi
		row "$(label "$t")" "$renew" \
		    "$cpu_ms ms ($(awk -v a="${first[$t]:-0}" -v n="${cpu[$t]:-0}" 'BEGIN { printf "%.2f / %.2f", a / 1e6, (n - a) / 1e6 }'))" \
		    "$rss_mb MiB" "$req" "$gotcell" \
		    "$([[ $t == rlc ]] && echo '< 2 ms, < 4 MiB, 0' || echo '—')" "$res"
		chart cpu "$(label "$t" | tr -d '*')" "$cpu_ms" \
		    "$([[ $t == rlc ]] && echo 2 || echo nan)" "$t"
		chart rss "$(label "$t" | tr -d '*')" "$rss_mb" \
		    "$([[ $t == rlc ]] && echo 4 || echo nan)" "$t"
	done
	echo
	if has node; then
		echo "node-redlock's \`acquire()\` never renews: its lock expires after the TTL while the command"
		echo "still runs, and a second client gets in. Only \`using()\` renews, and it needs the event loop:"
		echo "with \`spawnSync\` (what lock-run.js does without --using) no timer can fire. redlock 5.0.0-beta.2"
		echo "also computes a lock's expiry from the start of the first attempt (node-redlock#169, fixed on"
		echo "main, not released), so \`using()\` after a long wait can fail to extend at all."
		echo
	fi
}

# E. Quorum: acquire -n + release over the first 1, 3 and 5 of five servers.
e_pair() {	# e_pair K
	local k=$1 tok out
	tok=$("$RL" "${E_ARGS[@]:0:2*k}" acquire "bench:e:$k" -n)
	out=$("$RL" "${E_ARGS[@]:0:2*k}" release "bench:e:$k" --token "$tok")
	[[ $tok =~ ^[0-9a-f]{32}$ && -z $out ]] ||
	    die "E: acquire/release on $k servers gave '$tok' '$out'"
}
e_flock() { flock "$TMP/e.flock" true; }
e_1() { e_pair 1; }
e_3() { e_pair 3; }
e_5() { e_pair 5; }
case_E() {
	local -a urls f a b c
	local u n k r3 r5 res
	read -r -a urls <<<"$E_URLS"
	E_ARGS=()
	for u in "${urls[@]}"; do E_ARGS+=(-u "$u"); done
	sample E "$N" "$WARMUP" 100 e_flock e_1 e_3 e_5
	n=$(<"$TMP/E.n")
	read -r -a f < <(stats "$TMP/E.1")
	read -r -a a < <(stats "$TMP/E.2")
	read -r -a b < <(stats "$TMP/E.3")
	read -r -a c < <(stats "$TMP/E.4")
	r3=$(div "${b[0]}" "${a[0]}")
	r5=$(div "${c[0]}" "${a[0]}")
	res=$(judge "$r5" le 1.3 ×)
	verdict "acquire+release, 5 servers ÷ 1 server (median of $n)" "≤ 1.3×" \
	    "${r5}× ($(ms "${c[0]}") vs $(ms "${a[0]}"))" "$res"
	echo "## E. Quorum: acquire + release with 1, 3 and 5 Redis servers"
	echo
	echo "Five redis-server processes on 127.0.0.1. redlock-cli: \`t=\$(redlock-cli -u U1 [-u U2 ...] acquire k -n);"
	echo "redlock-cli ... release k --token \$t\` (two processes), $n timed iterations per set after $WARMUP warm-up,"
	echo "interleaved with \`flock FILE true\`. node-redlock: the same pair inside one Node process"
	echo "(\`lock-run.js --bench\`: one ioredis client per server, connected once), so it has no process"
	echo "start-up in it; its absolute figures are not comparable with redlock-cli's, its ratios are."
	echo
	echo "| client | 1 server | 3 servers | 5 servers | 3 ÷ 1 | 5 ÷ 1 | target | result |"
	echo "|---|---|---|---|---|---|---|---|"
	row "**redlock-cli**, median" "$(ms "${a[0]}")" "$(ms "${b[0]}")" "$(ms "${c[0]}")" \
	    "$r3" "$r5" "5 ÷ 1 ≤ 1.3" "$res"
	row "**redlock-cli**, p90" "$(ms "${a[1]}")" "$(ms "${b[1]}")" "$(ms "${c[1]}")" \
	    "$(div "${b[1]}" "${a[1]}")" "$(div "${c[1]}" "${a[1]}")" "—" "info"
	local rl1=${a[0]}
	chart servers "redlock-cli 3÷1" "$r3" nan rlc
	chart servers "redlock-cli 5÷1" "$r5" 1.3 rlc
	if has node; then
		node "$NODE_JS" "${E_ARGS[@]}" --bench "$((N / 2))" --sets 1,3,5 bench:e:node \
		    >"$TMP/e.node" || die "E: node-redlock --bench failed"
		for k in 1 3 5; do
			awk -v k="$k" '$1 == k { print $2 }' "$TMP/e.node" >"$TMP/e.node.$k"
		done
		read -r -a a < <(stats "$TMP/e.node.1")
		read -r -a b < <(stats "$TMP/e.node.3")
		read -r -a c < <(stats "$TMP/e.node.5")
		row "node-redlock (in-process, $((N / 2)) each), median" "$(ms "${a[0]}")" \
		    "$(ms "${b[0]}")" "$(ms "${c[0]}")" "$(div "${b[0]}" "${a[0]}")" \
		    "$(div "${c[0]}" "${a[0]}")" "—" "info"
		row "node-redlock (in-process), p90" "$(ms "${a[1]}")" "$(ms "${b[1]}")" \
		    "$(ms "${c[1]}")" "$(div "${b[1]}" "${a[1]}")" "$(div "${c[1]}" "${a[1]}")" "—" "info"
		chart servers "node-redlock 3÷1" "$(div "${b[0]}" "${a[0]}")" nan node
		chart servers "node-redlock 5÷1" "$(div "${c[0]}" "${a[0]}")" nan node
	fi
	echo
	echo "For scale: \`flock FILE true\` took $(ms "${f[0]}") (median) in the same loop; redlock-cli's"
	echo "1-server pair is $(div "$rl1" "${f[0]}")× that (two processes, two round trips)."
	echo
}

# F. The herd: WAITERS waiters queue behind a holder; then the holder
# releases and they take the lock one after another.  Counted from the
# release to the last waiter's exit: every command INFO commandstats saw
# (calls inside Lua scripts included), and the requests clients sent
# (MONITOR lines that are not "[0 lua]").
f_phase() {	# f_phase TOOL: prints "HANDOFFS CMDS REQS SECONDS OVERLAPS RAN QUEUE_CMDS"
	local tool=$1 key="bench:f:$1" i tok="" mon t_rel t_done s0 s1 sq ran=0 p
	local -a pids=()
	rm -rf "$TMP/f.cs.$tool"
	rm -f "$TMP/f.ovl.$tool"
	case $tool in
	rlc) tok=$("$RL" -u "$TCP_URL" acquire "$key" -t 300s) ;;
	rcli) rcli_lock "$key" 300000 ;;
	esac
	redis-cli -h 127.0.0.1 -p "$RPORT" MONITOR >"$TMP/f.mon.$tool" &
	mon=$!
	sq=$(cmd_total)
	local set0
	set0=$(tcmdstat set)
	for ((i = 0; i < WAITERS; i++)); do
		case $tool in
		rlc) "$RL" -u "$TCP_URL" run "$key" -- "$HELPER" probe \
		    "$TMP/f.cs.$tool" "$TMP/f.ovl.$tool" 2>>"$TMP/f.err" & ;;
		rcli) rcli_run "$key" "$HELPER" probe "$TMP/f.cs.$tool" \
		    "$TMP/f.ovl.$tool" 2>>"$TMP/f.err" & ;;
		esac
		pids+=("$!")
	done
	# Queued: every redlock-cli waiter blocked in BZPOPMIN; every redis-cli
	# loop has tried once.
	for ((i = 0; i < 600; i++)); do
		case $tool in
		rlc) (($(blocked_clients) >= WAITERS)) && break ;;
		rcli) (($(tcmdstat set) - set0 >= WAITERS)) && break ;;
		esac
		sleep 0.1
	done
	((i < 600)) || die "F: $tool: the waiters did not queue"
	sleep 0.5
	s0=$(cmd_total)
	now_us; t_rel=$REPLY
	case $tool in
	rlc) "$RL" -u "$TCP_URL" release "$key" --token "$tok" ;;
	rcli) rcli_unlock "$key" || die "F: the redis-cli holder lost its lock" ;;
	esac
	# Until every waiter is done, or F_LIMIT seconds (the redis-cli loops
	# can take minutes on 2 cores): then the rest are stopped, and the
	# figures are per hand-off that happened.
	local left deadline=$((EPOCHSECONDS + F_LIMIT))
	while :; do
		left=0
		for p in "${pids[@]}"; do
			! kill -0 "$p" 2>/dev/null || left=$((left + 1))
		done
		((left > 0 && EPOCHSECONDS < deadline)) || break
		sleep 0.1
	done
	now_us; t_done=$REPLY
	s1=$(cmd_total)
	for p in "${pids[@]}"; do
		! kill -0 "$p" 2>/dev/null || kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		if wait "$p" 2>/dev/null; then ran=$((ran + 1)); fi
	done
	sleep 0.2
	kill "$mon" 2>/dev/null || true
	wait "$mon" 2>/dev/null || true
	local reqs ovl=0
	reqs=$(awk -v a="$t_rel" -v b="$t_done" '
	    NR == 1 || $3 == "lua]" { next }
	    { t = $1; sub(/\./, "", t); c = tolower($4); gsub(/"/, "", c) }
	    t >= a && t <= b && c != "info" && c != "monitor" { n++ }
	    END { print n + 0 }' "$TMP/f.mon.$tool")
	[[ ! -f $TMP/f.ovl.$tool ]] || ovl=$(wc -l <"$TMP/f.ovl.$tool")
	# What the hand-offs were made of: per command, requests and Lua's calls.
	awk -v a="$t_rel" -v b="$t_done" -v n="$ran" '
	    NR == 1 { next }
	    { t = $1; sub(/\./, "", t); c = toupper($4); gsub(/"/, "", c) }
	    t < a || t > b || c == "INFO" || c == "MONITOR" { next }
	    $3 == "lua]" { lua[c]++; next }
	    { req[c]++ }
	    END {
		if (n == 0) n = 1
		for (c in req) out = out sprintf("%s%s %.2f", out == "" ? "" : ", ", c, req[c] / n)
		for (c in lua) in_ = in_ sprintf("%s%s %.2f", in_ == "" ? "" : ", ", c, lua[c] / n)
		printf "requests: %s; inside scripts: %s\n", out, (in_ == "" ? "none" : in_)
	    }' "$TMP/f.mon.$tool" >"$TMP/f.mix.$tool"
	echo "$ran $((s1 - s0)) $reqs $(((t_done - t_rel) / 1000)) $ovl $ran $((s0 - sq))"
}
case_F() {
	local t res res2 v
	local -a r
	echo "## F. The herd: $WAITERS waiters on one key, $WAITERS hand-offs"
	echo
	echo "A holder takes the lock; $WAITERS waiters start and queue (redlock-cli: all blocked in BZPOPMIN;"
	echo "redis-cli loop: each has tried once); then the holder releases and the waiters take the lock one"
	echo "after another (critical section: the mkdir probe). Counted from the release to the last exit:"
	echo "*commands* = INFO commandstats calls (calls made inside Lua scripts included, as commandstats"
	echo "counts them), *requests* = what clients sent (MONITOR lines not from Lua). The target (issue 4:"
	echo "\"O(1) acquisition attempts per release\") is read on requests; commands are shown too."
	echo "node-redlock is left out: $WAITERS Node processes need about 5 GB and minutes of CPU here."
	echo
	echo "| peer | hand-offs | requests per hand-off | commands per hand-off (commandstats) | hand-off phase | overlaps | ran | target | result |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for t in rlc rcli; do
		read -r -a r < <(f_phase "$t")
		res=info
		if [[ $t == rlc ]]; then
			v=$(div "${r[2]}" "${r[0]}")
			res=$(judge "$v" lt 10)
			res2=$(judge "$(div "${r[1]}" "${r[0]}")" lt 10)
			verdict "herd: requests per hand-off ($WAITERS waiters)" "< 10" "$v" "$res"
			verdict "herd: commandstats calls per hand-off, Lua's included" "< 10" \
			    "$(div "${r[1]}" "${r[0]}")" "$res2"
			res="requests $res; commands $res2"
		fi
		verdict "herd: overlaps of $(label "$t" | tr -d '*')" "0" "${r[4]}" "$(judge "${r[4]}" le 0)"
		row "$(label "$t")" "${r[0]}" "$(div "${r[2]}" "${r[0]}" %.1f)" \
		    "$(div "${r[1]}" "${r[0]}" %.1f)" \
		    "$(awk -v ms="${r[3]}" 'BEGIN { printf "%.2f s", ms / 1000 }')" \
		    "${r[4]}" "${r[5]} of $WAITERS$( ((r[5] == WAITERS)) || echo " (stopped after ${F_LIMIT} s)")" \
		    "$([[ $t == rlc ]] && echo '< 10' || echo '—')" "$res"
		chart herd "$(label "$t" | tr -d '*') requests" "$(div "${r[2]}" "${r[0]}" %.1f)" \
		    "$([[ $t == rlc ]] && echo 10 || echo nan)" "$t"
		chart herd "$(label "$t" | tr -d '*') commands" "$(div "${r[1]}" "${r[0]}" %.1f)" \
		    "$([[ $t == rlc ]] && echo 10 || echo nan)" "$t"
		printf '%s\n' "${r[6]}" >"$TMP/f.queue.$t"
	done
	echo
	echo "Per hand-off, by command (MONITOR): redlock-cli $(<"$TMP/f.mix.rlc");"
	echo "redis-cli loop $(<"$TMP/f.mix.rcli")."
	echo
	echo "While queueing (before the release, not in the table): redlock-cli's waiters caused"
	echo "$(<"$TMP/f.queue.rlc") commands, the redis-cli loops $(<"$TMP/f.queue.rcli") (they poll the whole time)."
	echo
}

# tls: acquire + release over TLS next to plain TCP, one server with both.
tls_pair() {	# tls_pair URL [OPTIONS...]
	local url=$1 tok out
	shift
	tok=$("$RL" -u "$url" "$@" acquire bench:tls -n)
	out=$("$RL" -u "$url" "$@" release bench:tls --token "$tok")
	[[ $tok =~ ^[0-9a-f]{32}$ && -z $out ]] ||
	    die "tls: acquire/release gave '$tok' '$out'"
}
tls_rlc() { tls_pair "rediss://127.0.0.1:$TLS_PORT" --cacert "$TLS_DIR/ca.crt"; }
plain_rlc() { tls_pair "redis://127.0.0.1:$TLS_PLAIN_PORT"; }
rcli_pair() {	# rcli_pair REDIS-CLI-OPTIONS...
	local tok r1 r2
	read -r tok </proc/sys/kernel/random/uuid
	r1=$(redis-cli "$@" SET bench:tls:cli "$tok" NX PX 30000)
	r2=$(redis-cli "$@" EVAL "$CAD_LUA" 1 bench:tls:cli "$tok")
	[[ $r1 == OK && $r2 == 1 ]] || die "tls: redis-cli gave '$r1' '$r2'"
}
tls_rcli() { rcli_pair -h 127.0.0.1 -p "$TLS_PORT" --tls --cacert "$TLS_DIR/ca.crt"; }
plain_rcli() { rcli_pair -h 127.0.0.1 -p "$TLS_PLAIN_PORT"; }
case_tls() {
	local n
	local -a a b c d
	sample tls "$((N / 2))" 5 100 plain_rlc tls_rlc plain_rcli tls_rcli
	n=$(<"$TMP/tls.n")
	read -r -a a < <(stats "$TMP/tls.1")
	read -r -a b < <(stats "$TMP/tls.2")
	read -r -a c < <(stats "$TMP/tls.3")
	read -r -a d < <(stats "$TMP/tls.4")
	echo "## TLS: acquire + release over TLS next to plain TCP"
	echo
	echo "One redis-server with a plain port and a TLS port (a throwaway CA and server certificate from"
	echo "openssl, P-256), $n timed iterations per side, interleaved. Each side is two processes (acquire,"
	echo "release), so each pays a TCP connect and, with TLS, a full handshake with chain and IP verification."
	echo
	echo "| client | plain TCP, median / p90 | TLS, median / p90 | TLS ÷ plain (median) |"
	echo "|---|---|---|---|"
	row "**redlock-cli** (\`rediss://\`, \`--cacert\`)" "$(ms "${a[0]}") / $(ms "${a[1]}")" \
	    "$(ms "${b[0]}") / $(ms "${b[1]}")" "$(div "${b[0]}" "${a[0]}")"
	row "redis-cli SET NX PX + EVAL (\`--tls --cacert\`)" "$(ms "${c[0]}") / $(ms "${c[1]}")" \
	    "$(ms "${d[0]}") / $(ms "${d[1]}")" "$(div "${d[0]}" "${c[0]}")"
	echo
	chart tls "redlock-cli TLS÷plain" "$(div "${b[0]}" "${a[0]}")" nan rlc
	chart tls "redis-cli TLS÷plain" "$(div "${d[0]}" "${c[0]}")" nan rcli
}

# pretls: `run k -- true` over plain TCP, built from the commit before TLS
# support and the binary under test, with flock for scale, in one loop.
pt_flock() { flock "$TMP/pt.flock" true; }
pt_old() { "$TMP/redlock-cli-pretls" -u "$TCP_URL" run bench:pt:old -- true; }
pt_new() { "$RL" -u "$TCP_URL" run bench:pt:new -- true; }
case_pretls() {
	local first pre wt="$TMP/pretls-src" n r pr res
	local -a f o w
	first=$(git -C "$ROOT" log --reverse --format='%H %s' |
	    awk 'tolower($0) ~ /tls/ { print $1; exit }')
	[[ -n $first ]] || die "pretls: no commit mentions TLS"
	pre=$(git -C "$ROOT" rev-parse --short "${BENCH_PRE_TLS:-$first^}")
	git -C "$ROOT" worktree add --detach "$wt" "$pre" >"$TMP/pretls.log" 2>&1 ||
	    die "pretls: git worktree add failed: $(tail -n 2 "$TMP/pretls.log")"
	env -u CFLAGS -u LDFLAGS make -C "$wt" -j"$(nproc)" redlock-cli \
	    >>"$TMP/pretls.log" 2>&1 || die "pretls: build of $pre failed"
	cp "$wt/redlock-cli" "$TMP/redlock-cli-pretls"
	git -C "$ROOT" worktree remove --force "$wt" >>"$TMP/pretls.log" 2>&1 || true
	sample pretls "$((2 * N))" "$WARMUP" 110 pt_flock pt_old pt_new
	n=$(<"$TMP/pretls.n")
	read -r -a f < <(stats "$TMP/pretls.1")
	read -r -a o < <(stats "$TMP/pretls.2")
	read -r -a w < <(stats "$TMP/pretls.3")
	r=$(div "${w[0]}" "${o[0]}" %.3f)
	pr=$(paste "$TMP/pretls.3" "$TMP/pretls.2" | awk '{ print $1 / $2 }' | fstats | cut -d' ' -f1)
	res=$(judge "$r" le 1.05 ×)
	verdict "\`run k -- true\` over TCP, after ÷ before TLS support (median of $n)" \
	    "≤ 1.05×" "${r}× ($(ms "${w[0]}") vs $(ms "${o[0]}"))" "$res"
	echo "## Plain TCP before and after TLS support"
	echo
	echo "\`redlock-cli -u redis://127.0.0.1:PORT run k -- true\`, built from $pre (the parent of the first"
	echo "commit about TLS, built in a temporary git worktree with the same Makefile defaults) and the binary"
	echo "under test, with \`flock FILE true\` for scale; $n timed iterations per side, interleaved."
	echo
	echo "| binary | median | p90 | ÷ before | ÷ flock | target | result |"
	echo "|---|---|---|---|---|---|---|"
	row "before TLS ($pre, sha256 $(sha256sum "$TMP/redlock-cli-pretls" | cut -c1-12))" \
	    "$(ms "${o[0]}")" "$(ms "${o[1]}")" "1" "$(div "${o[0]}" "${f[0]}")" "—" "—"
	row "**after** (under test, sha256 $(sha256sum "$RL" | cut -c1-12))" "$(ms "${w[0]}")" \
	    "$(ms "${w[1]}")" "$r (paired: median of per-iteration ratios $(printf '%.3f' "$pr"))" \
	    "$(div "${w[0]}" "${f[0]}")" "≤ 1.05" "$res"
	row "flock(1)" "$(ms "${f[0]}")" "$(ms "${f[1]}")" "—" "1" "—" "—"
	echo
	chart tls "run after÷before TLS" "$r" 1.05 rlc
}


# cost: bench/server-cost.sh on a server of its own, its section as it
# prints it, and the contract's target on its ratio.
case_cost() {
	local m r
	REDLOCK_CLI="$RL" bash "$ROOT/bench/server-cost.sh" >"$TMP/cost.md" \
	    2>"$TMP/cost.log" || die "cost: $(tail -n 2 "$TMP/cost.log")"
	m=$(sed -n 's/.*Measured: \([0-9.]*\) (\([0-9.]*–[0-9.]*\)).*/\1 \2/p' "$TMP/cost.md")
	[[ -n $m ]] || die "cost: no ratio in bench/server-cost.sh's output"
	r=${m%% *}
	verdict "Redis CPU of an exclusive cycle (acquire, extend, release) ÷ the seeds' (SET NX PX, EVAL renew, EVAL compare-and-delete), commandstats, median of 3 rounds" \
	    "≤ 1.2×" "${r}× (${m#* })" "$(judge "$r" le 1.2 ×)"
	cat "$TMP/cost.md"
}

### Report.

# The first five cases: one table each, in their original six columns.
OLD_HEAD="| benchmark | redlock-cli | peer (same run) | ratio | target | result |"
old_title() {
	case $1 in
	pair) echo "acquire + release against redis-cli (unix socket)" ;;
	run) echo "\`run k -- true\` against \`flock FILE true\` (unix socket)" ;;
	idle) echo "idle cost of a long hold (unix socket)" ;;
	callgrind) echo "instruction counts (callgrind)" ;;
	startup) echo "process start-up" ;;
	esac
}

# old_verdicts CASE: target lines from a first-generation case's rows.
old_verdicts() {
	awk -F' \\| ' -v c="$1" '
	    { gsub(/^\| | \|$/, "") }
	    $6 == "ok" || $6 ~ /^MISS/ {
		m = ($5 ~ /^≤/) ? $4 "×" : $2
		r = "ok"
		if ($6 != "ok") {
			r = "MISSED"
			# by how much, when target and figure are numbers
			if (match($5, /[0-9.]+/)) {
				t = substr($5, RSTART, RLENGTH) + 0
				if (match(m, /^[0-9.]+/) && t > 0) {
					v = substr(m, RSTART, RLENGTH) + 0
					r = sprintf("MISSED by %.2f (%.0f %%)", v - t, 100 * (v - t) / t)
				}
			}
		}
		printf "| %s | %s | %s | %s | %s |\n", c, $1, $5, m, r
	    }' "$TMP/rows.$1"
}

describe_machine() {
	local cpu mem
	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	echo "- CPU: ${cpu:-unknown}; \`nproc\`: $(nproc); memory $mem; kernel \`$(uname -r)\` ($(uname -m))"
	echo "- load average (1/5/15 min): $LOAD0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end (a shared machine: other processes ran too)"
	echo "- $(redis-server --version | cut -d' ' -f1-3); $(flock --version 2>&1 | head -n 1)"
	if has etcd; then
		echo "- etcd $(etcd --version | awk '/^etcd Version/ { print $3 }'), etcdctl $(etcdctl version | awk '/^etcdctl version/ { print $3 }'); data directory on ${ETCD_DIR%/*} (tmpfs when /dev/shm; Redis runs without persistence too)"
	fi
	if has node; then
		echo "- node $(node --version), redlock $(node -p 'require(process.argv[1]).version' "$ROOT/bench/node/node_modules/redlock/package.json"), ioredis $(node -p 'require(process.argv[1]).version' "$ROOT/bench/node/node_modules/ioredis/package.json")"
	fi
	echo "- redlock-cli: commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || echo ' (src modified)'), binary built $RL_BUILT, sha256 $(sha256sum "$RL" | cut -c1-12); shared libraries: $(ldd "$RL" 2>/dev/null | awk '/=>/ { printf "%s%s", s, $1; s = ", " }')"
}

# make_chart: bench/out/report.svg from the chart.* files, one panel each.
make_chart() {
	local -a panels=() titles=() logs=()
	local p i cols rows
	command -v gnuplot >/dev/null || return 1
	for p in ratios cpu rss servers herd tls; do
		[[ -s $TMP/chart.$p ]] || continue
		panels+=("$p")
		case $p in
		ratios) titles+=("A-C: time relative to flock, lower is better (B: flock cycles/s ÷ peer cycles/s)"); logs+=(1) ;;
		cpu) titles+=("D: CPU of the lock tool over a ${HOLD} s hold (ms)"); logs+=(1) ;;
		rss) titles+=("D: max RSS of the lock tool (MiB)"); logs+=(1) ;;
		servers) titles+=("E: acquire+release, N servers ÷ 1 server"); logs+=(0) ;;
		herd) titles+=("F: per hand-off, ${WAITERS} waiters"); logs+=(1) ;;
		tls) titles+=("TLS ÷ plain; run after ÷ before TLS support"); logs+=(0) ;;
		esac
	done
	((${#panels[@]} > 0)) || return 1
	cols=2
	rows=$(((${#panels[@]} + 1) / 2))
	{
		echo "set terminal svg size 1400,$((rows * 420)) dynamic font 'sans,11' background rgb 'white'"
		echo "set output '$OUT/report.svg'"
		printf '%s\n' 'set datafile separator "\t"'
		echo "set datafile missing 'nan'"
		echo "set style fill solid 0.85 border -1"
		echo "set boxwidth 0.7"
		echo "set grid ytics"
		echo "set xtics rotate by -30 left noenhanced"
		echo "set key off"
		echo "set bmargin 7"
		echo "set multiplot layout $rows,$cols title 'redlock-cli against its peers, $(date -u '+%Y-%m-%d') (red marks: targets)' font 'sans,14'"
		for ((i = 0; i < ${#panels[@]}; i++)); do
			p=${panels[i]}
			echo "set title '${titles[i]}' noenhanced"
			echo "set xrange [-0.6:$(($(wc -l <"$TMP/chart.$p") - 1)).6]"
			if ((logs[i])); then
				echo "set logscale y"
				echo "set yrange [*:*]"
				echo "stats '$TMP/chart.$p' using 2 nooutput"
				echo "set yrange [(STATS_min < 1 ? STATS_min : 1) / 2 : STATS_max * 3]"
			else
				echo "unset logscale y"
				echo "set yrange [*:*]"
				echo "stats '$TMP/chart.$p' using 2 nooutput"
				echo "set yrange [0 : (STATS_max > 1.3 ? STATS_max : 1.3) * 1.15]"
			fi
			echo "unset arrow"
			case $p in
			ratios | servers | tls) echo "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#555555'" ;;
			esac
			echo "plot '$TMP/chart.$p' using 0:2:4:xtic(1) with boxes lc rgb variable, \\"
			echo "     '' using 0:3:(0.42) with xerrorbars pt -1 lw 3 lc rgb '#d62728', \\"
			echo "     '' using 0:2:(sprintf('%.3g', \$2)) with labels offset 0,0.7 font 'sans,10'"
		done
		echo "unset multiplot"
	} >"$TMP/chart.gp"
	gnuplot "$TMP/chart.gp" 2>"$TMP/gnuplot.err"
}

### Driver.

# Stop our own background jobs however a case ends.
reap_jobs() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done
}

if [[ ${1:-} == __case ]]; then
	trap reap_jobs EXIT
	trap 'exit 143' TERM
	CASE=$2
	if [[ " pair run idle callgrind startup " == *" $2 "* ]]; then
		"case_$2" >"$TMP/rows.$2"
	else
		"case_$2" >"$TMP/sec.$2"
	fi
	exit 0
fi

# Case names: letters or words.
sel=""
for c in $CASES; do
	case $c in
	A | a | uncontended) c=A ;;
	B | b | contended) c=B ;;
	C | c | handoff) c=C ;;
	D | d | hold) c=D ;;
	E | e | servers) c=E ;;
	F | f | herd) c=F ;;
	tls | pretls | cost | pair | run | idle | callgrind | startup) ;;
	*) die "unknown case '$c' (known: $ALL_CASES)" ;;
	esac
	sel+=" $c"
done
CASES="$sel "
wants() { local c; for c; do [[ $CASES == *" $c "* ]] && return 0; done; return 1; }

[[ -x $RL ]] || die "$RL not built: run make first"
for tool in redis-server redis-cli flock timeout git; do
	command -v "$tool" >/dev/null || die "$tool not installed (make deps)"
done
[[ $N =~ ^[1-9][0-9]*$ && $WARMUP =~ ^[0-9]+$ ]] || die "bad BENCH_N/WARMUP"
[[ $HOLD =~ ^[1-9][0-9]*$ && $TTL =~ ^[1-9][0-9]*$ ]] ||
    die "bad BENCH_HOLD/BENCH_TTL (whole seconds)"
for v in PEER_N HANDOFF_N B_REPS B_NODE_CYCLES WAITERS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "bad BENCH_$v"
done

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench.XXXXXX")
ETCD_DIR=""
case_pid=""
# Every server we start goes into $TMP/pids; they are stopped by PID here.
cleanup() {
	local pid i
	if [[ -n $case_pid ]]; then
		kill "$case_pid" 2>/dev/null || true
		wait "$case_pid" 2>/dev/null || true
	fi
	if [[ -d $TMP/pretls-src ]]; then
		git -C "$ROOT" worktree remove --force "$TMP/pretls-src" >/dev/null 2>&1 || true
		git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
	fi
	if [[ -f $TMP/pids ]]; then
		while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$TMP/pids"
		while read -r pid; do
			for ((i = 0; i < 100; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.05
			done
			kill -9 "$pid" 2>/dev/null || true
		done <"$TMP/pids"
	fi
	wait 2>/dev/null || true
	[[ -z $ETCD_DIR ]] || rm -rf "$ETCD_DIR"
	if [[ ${BENCH_KEEP:-} == 1 ]]; then
		printf 'bench: kept %s\n' "$TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port: REPLY = a loopback port nobody answers on (never 6379).
USED_PORTS=" 6379 "
free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		[[ $USED_PORTS != *" $p "* ]] || continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			USED_PORTS+="$p "
			REPLY=$p
			return 0
		fi
	done
	die "no free port found"
}

# start_redis NAME [ARGS...]: a redis-server on 127.0.0.1 and a free port
# (REPLY), no persistence, checked to be ours by its process id.
start_redis() {
	local name=$1 try port i pid got
	shift
	for ((try = 0; try < 5; try++)); do
		free_port
		port=$REPLY
		rm -f "$TMP/$name.pid"
		redis-server --bind 127.0.0.1 --port "$port" --save '' \
		    --appendonly no --daemonize yes --pidfile "$TMP/$name.pid" \
		    --dir "$TMP" --logfile "$TMP/$name.log" "$@" \
		    </dev/null >/dev/null 2>&1 || true
		for ((i = 0; i < 100; i++)); do
			if [[ -s $TMP/$name.pid ]]; then
				pid=$(<"$TMP/$name.pid")
				got=$(redis-cli -h 127.0.0.1 -p "$port" INFO server 2>/dev/null |
				    awk -F: '$1 == "process_id" { print $2 + 0 }')
				if [[ $got == "$pid" ]]; then
					echo "$pid" >>"$TMP/pids"
					REPLY=$port
					return 0
				fi
			fi
			sleep 0.05
		done
		if [[ -s $TMP/$name.pid ]]; then
			kill "$(<"$TMP/$name.pid")" 2>/dev/null || true
		fi
	done
	die "redis-server $name did not start: $(tail -n 3 "$TMP/$name.log" 2>/dev/null)"
}

# start_etcd: a single-member etcd on two free loopback ports; ETCD_EP.
start_etcd() {
	local try c p i pid
	if [[ -d /dev/shm && -w /dev/shm ]]; then
		ETCD_DIR=$(mktemp -d /dev/shm/redlock-bench-etcd.XXXXXX)
	else
		ETCD_DIR="$TMP/etcd"
		mkdir -p "$ETCD_DIR"
	fi
	for ((try = 0; try < 5; try++)); do
		free_port; c=$REPLY
		free_port; p=$REPLY
		rm -rf "$ETCD_DIR/data"
		etcd --name bench --data-dir "$ETCD_DIR/data" \
		    --listen-client-urls "http://127.0.0.1:$c" \
		    --advertise-client-urls "http://127.0.0.1:$c" \
		    --listen-peer-urls "http://127.0.0.1:$p" \
		    --initial-advertise-peer-urls "http://127.0.0.1:$p" \
		    --initial-cluster "bench=http://127.0.0.1:$p" \
		    --initial-cluster-state new --logger zap \
		    --log-outputs "$TMP/etcd.log" --log-level error \
		    </dev/null >/dev/null 2>&1 &
		pid=$!
		echo "$pid" >>"$TMP/pids"
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			if etcdctl --endpoints="http://127.0.0.1:$c" endpoint health \
			    >/dev/null 2>&1; then
				ETCD_EP="http://127.0.0.1:$c"
				ETCD_PID=$pid
				return 0
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	die "etcd did not start: $(tail -n 3 "$TMP/etcd.log" 2>/dev/null)"
}

# Measure a private copy: a rebuild during the run must not mix binaries.
RL_BUILT=$(date -u -r "$RL" '+%Y-%m-%d %H:%M:%S UTC')
cp -p "$RL" "$TMP/redlock-cli"
RL="$TMP/redlock-cli"
export REDLOCK_CLI="$RL"	# the cases re-read it

# The commands run under the locks (bench/helper.c).
HELPER="$TMP/helper"
command -v "${CC:-cc}" >/dev/null || die "no C compiler (${CC:-cc})"
"${CC:-cc}" -O2 -static -o "$HELPER" "$ROOT/bench/helper.c" 2>/dev/null ||
    "${CC:-cc}" -O2 -o "$HELPER" "$ROOT/bench/helper.c" ||
    die "cannot build bench/helper.c"

# The peers that are installed.
TOOLS="flock rlc rcli"
if wants A B C D E; then
	if command -v etcd >/dev/null && command -v etcdctl >/dev/null; then
		TOOLS+=" etcd"
	else
		printf 'bench: etcd/etcdctl not installed (make bench-deps): etcdctl lock left out\n' >&2
	fi
	if command -v node >/dev/null && [[ -d $ROOT/bench/node/node_modules/redlock ]]; then
		TOOLS+=" node"
	else
		printf 'bench: node or bench/node/node_modules missing (make bench-deps): node-redlock left out\n' >&2
	fi
fi

# The main server: a unix socket for the first cases and a TCP port for the
# peer cases.
SOCK="$TMP/sock"
start_redis main --unixsocket "$SOCK" --unixsocketperm 700
RPORT=$REPLY
REDIS_PID=$(<"$TMP/main.pid")
TCP_URL="redis://127.0.0.1:$RPORT"
ETCD_EP="" ETCD_PID="" E_URLS="" TLS_PORT="" TLS_PLAIN_PORT="" TLS_DIR=""
if has etcd && wants A B C D; then start_etcd; fi
if wants E; then
	E_URLS=$TCP_URL
	for i in 2 3 4 5; do
		start_redis "e$i"
		E_URLS+=" redis://127.0.0.1:$REPLY"
	done
fi
if wants tls; then
	command -v openssl >/dev/null || die "openssl not installed"
	TLS_DIR="$TMP/tls"
	mkdir -p "$TLS_DIR"
	(
		cd "$TLS_DIR"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		    -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=bench-ca
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
		    -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >ext
		openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key \
		    -CAcreateserial -out srv.crt -days 2 -extfile ext
	) >"$TMP/openssl.log" 2>&1 || die "openssl: $(tail -n 3 "$TMP/openssl.log")"
	free_port
	TLS_PORT=$REPLY
	start_redis tls --tls-port "$TLS_PORT" --tls-cert-file "$TLS_DIR/srv.crt" \
	    --tls-key-file "$TLS_DIR/srv.key" --tls-ca-cert-file "$TLS_DIR/ca.crt" \
	    --tls-auth-clients no
	TLS_PLAIN_PORT=$REPLY
fi

unset REDIS_URL REDLOCK_TOKEN REDLOCK_PREFIX REDISCLI_AUTH REDLOCK_PASSWORD
export REDLOCK_URL="unix://$SOCK"
export ETCDCTL_API=3
export TMP SOCK RL N WARMUP HOLD TTL HELPER TOOLS RPORT TCP_URL ETCD_EP ETCD_DIR \
    REDIS_PID ETCD_PID \
    E_URLS TLS_PORT TLS_PLAIN_PORT TLS_DIR

failed=0
ran=""
for c in $ALL_CASES; do
	wants "$c" || continue
	limit=$PEER_LIMIT
	case $c in
	idle) limit=$((HOLD + 40)) ;;
	D) limit=$((HOLD + 60)) ;;
	cost) limit=$COST_LIMIT ;;
	pair | run | callgrind | startup) limit=$CASE_LIMIT ;;
	esac
	printf 'bench: %s...\n' "$c" >&2
	rc=0
	# In the background so that a Ctrl-C here reaches the traps at once.
	timeout -k 5 "$limit" "$BASH" "$SELF" __case "$c" &
	case_pid=$!
	wait "$case_pid" || rc=$?
	case_pid=""
	ran+=" $c"
	if ((rc != 0)); then
		failed=1
		msg="FAILED (exit $rc)"
		((rc != 124)) || msg="FAILED (over ${limit}s)"
		if [[ " pair run idle callgrind startup " == *" $c "* ]]; then
			row "$c" "$msg" "" "" "" "" >"$TMP/rows.$c"
		else
			printf '## %s\n\n%s\n\n' "$c" "$msg" >"$TMP/sec.$c"
			printf '| %s | the whole case | — | — | %s |\n' "$c" "$msg" >"$TMP/verdict.$c"
		fi
	fi
done

mkdir -p "$OUT"
rm -f "$OUT/report.svg"
chart_ok=0
if make_chart; then chart_ok=1; fi

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
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') by \`bench/run.sh\` (cases:$ran). Every wall-clock figure is a"
	echo "ratio against a peer measured in the same run, in the same loop; see bench/README.md."
	echo
	echo "## Machine"
	echo
	describe_machine
	echo
	echo "## Targets"
	echo
	echo "| case | what | target | measured | result |"
	echo "|---|---|---|---|---|"
	for c in $ALL_CASES; do
		if [[ -f $TMP/verdict.$c ]]; then
			cat "$TMP/verdict.$c"
		elif [[ -f $TMP/rows.$c ]]; then
			old_verdicts "$c"
		fi
	done
	echo
	if ((chart_ok)); then
		echo "![Ratios per case: redlock-cli and its peers](report.svg)"
		echo
	fi
	for c in $ALL_CASES; do
		if [[ -f $TMP/sec.$c ]]; then
			cat "$TMP/sec.$c"
		elif [[ -f $TMP/rows.$c ]]; then
			echo "## $(old_title "$c")"
			echo
			echo "$OLD_HEAD"
			echo "|---|---|---|---|---|---|"
			cat "$TMP/rows.$c"
			echo
		fi
	done
} >"$OUT/report.md"

if [[ -s $TMP/table.md && $(wc -l <"$TMP/table.md") -gt 2 ]]; then
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
fi

cat "$OUT/report.md"
printf 'bench: wrote %s%s\n' "${OUT#"$ROOT"/}/report.md" \
    "$( ((chart_ok)) && echo " and ${OUT#"$ROOT"/}/report.svg" || echo " (no chart: no chart data, or gnuplot missing or failed)")" >&2
if [[ ${BENCH_PUBLISH:-} == 1 ]]; then
	if ((failed == 0 && chart_ok)) && [[ $CASES == " $ALL_CASES " ]]; then
		cp "$OUT/report.md" "$ROOT/bench/report.md"
		cp "$OUT/report.svg" "$ROOT/bench/report.svg"
		printf 'bench: published bench/report.md and bench/report.svg\n' >&2
	else
		printf 'bench: not published: only a full run without failures is\n' >&2
	fi
fi
exit "$failed"
