#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Queues (issue 15): --queue any|fifo|latest (--fair is fifo), --order N,
# --skip-outdated, --cancel-running[=GRACE], exit codes 80-82 and their
# overrides, status's queue and waiting.  Real servers: main for most
# tests, q1..q3 for a quorum with one of them stopped.  Timing assertions
# are bounds against polling, not benchmarks.

load helpers

setup_file() { redis_start_each q1 q2 q3 main; }
teardown_file() { redis_stop_each main q1 q2 q3; }

setup() {
	redis_ready_each main q1 q2 q3
	export REDLOCK_URL="unix://$(redis_sock main)"
	D=$BATS_TEST_TMPDIR
	HOST=$(hostname)
}

teardown() {
	stop_bg_jobs
}

url_of() { echo "unix://$(redis_sock "$1")"; }
queue_len_on() { [ "$(rcli "$1" ZCARD '{k}:queue')" = "$2" ]; }
queue_len_is() { queue_len_on main "$1"; }
# status --json's "waiting" is N.
waiting_is() {
	[ "$(redlock-cli status k --json | sed -n 's/.*"waiting":\([0-9]*\).*/\1/p')" = "$1" ]
}
# A holder that stays until $D/stop exists.
hold() {
	run --separate-stderr redlock-cli acquire k -t 30s "$@"
	assert_success
	TOK=$output
}
# superseded_line PID [ORDER]: the line of a waiter superseded by PID, which
# gave --order ORDER, or none.
superseded_line() {
	if [ -n "${2:-}" ]; then
		echo "redlock-cli: lock 'k': superseded by order $2 on $HOST (pid $1)"
	else
		echo "redlock-cli: lock 'k': superseded by a newer waiter on $HOST (pid $1)"
	fi
}
# queue_in_turn "LABEL..." OPTS...: behind a holder, one waiter per LABEL
# in turn, each queued before the next comes, with OPTS (in which @ is its
# LABEL); each appends its LABEL to $D/order when it runs.
queue_in_turn() {
	local l opts
	hold
	IN_TURN=()
	for l in $1; do
		opts=("${@:2}")
		opts=("${opts[@]//@/$l}")
		start_bg "w$l" run k "${opts[@]}" -w 60s -- \
		    sh -c 'echo "$2" >>"$1/order"' sh "$D" "$l"
		IN_TURN+=("$BG_PID")
		wait_until queue_len_is "${#IN_TURN[@]}"
	done
}
# release_in_turn: the holder releases; every waiter must exit 0.
release_in_turn() {
	local pid
	run --separate-stderr redlock-cli release k --token "$TOK"
	assert_success
	for pid in "${IN_TURN[@]}"; do
		wait_bg "$pid"
		assert_equal "$BG_STATUS" 0
	done
}

# --- latest ---------------------------------------------------------------

@test "--queue latest: a superseded waiter exits 80 within 1 s of the newer one's arrival, naming it, without running" {
	local old new t0 t1
	hold
	start_bg old run k --queue latest -- touch "$D/old-ran"
	old=$BG_PID
	wait_until queue_len_is 1
	sleep 0.3	# blocked in its BZPOPMIN by now
	t0=$(now_ms)
	start_bg new run k --queue latest -- touch "$D/new-ran"
	new=$BG_PID
	wait_bg "$old"
	t1=$(now_ms)
	assert_equal "$BG_STATUS" 80
	echo "superseded after $((t1 - t0)) ms"
	[ $((t1 - t0)) -lt 1000 ]
	assert_equal "$(cat "$D/old.err")" "$(superseded_line "$new")"
	[ ! -s "$D/old.out" ]
	run --separate-stderr redlock-cli release k --token "$TOK"
	assert_success
	wait_bg "$new"
	assert_equal "$BG_STATUS" 0
	[ ! -e "$D/old-ran" ]
	[ -e "$D/new-ran" ]
}

@test "--queue latest: of five waiters in a row only the last runs; acquire is superseded too" {
	local i pids=()
	hold
	start_bg a0 acquire k --queue latest
	pids+=("$BG_PID")
	wait_until queue_len_is 1
	for i in 1 2 3 4; do
		start_bg "w$i" run k --queue latest -- touch "$D/ran$i"
		pids+=("$BG_PID")
		wait_until grep -q 'superseded' "$D/$([ "$i" = 1 ] && echo a0 || echo "w$((i - 1))").err"
	done
	wait_bg "${pids[0]}"
	assert_equal "$BG_STATUS" 80
	[ ! -s "$D/a0.out" ]
	for i in 1 2 3; do
		wait_bg "${pids[$i]}"
		assert_equal "$BG_STATUS" 80
		assert_equal "$(cat "$D/w$i.err")" "$(superseded_line "${pids[$((i + 1))]}")"
	done
	run --separate-stderr redlock-cli release k --token "$TOK"
	wait_bg "${pids[4]}"
	assert_equal "$BG_STATUS" 0
	assert_equal "$(ls "$D" | grep -c '^ran')" 1
	[ -e "$D/ran4" ]
}

# --- --order ----------------------------------------------------------------

@test "--order with fifo: waiters take the lock lowest order first, whatever their arrival" {
	queue_in_turn "30 10 40 20" --queue fifo --order @
	release_in_turn
	assert_equal "$(cat "$D/order")" "$(printf '10\n20\n30\n40')"
}

@test "--order with latest: a lower order than the queued one is superseded at once, a higher one supersedes it" {
	local five three nine t0
	hold
	start_bg five run k --queue latest --order 5 -- touch "$D/five"
	five=$BG_PID
	wait_until queue_len_is 1
	t0=$(now_ms)
	run --separate-stderr redlock-cli run k --queue latest --order 3 -- touch "$D/three"
	assert_failure 80
	assert_stderr_line "$(superseded_line "$five" 5)"
	[ $(($(now_ms) - t0)) -lt 1000 ]
	start_bg nine run k --queue latest --order 9 -- touch "$D/nine"
	nine=$BG_PID
	wait_bg "$five"
	assert_equal "$BG_STATUS" 80
	assert_equal "$(cat "$D/five.err")" "$(superseded_line "$nine" 9)"
	run --separate-stderr redlock-cli release k --token "$TOK"
	wait_bg "$nine"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/nine" ]
	[ ! -e "$D/five" ]
	[ ! -e "$D/three" ]
}

@test "--queue latest: a waiter superseded while the lock lay free leaves no place in the queue, though its attempt behind the wait came after the note" {
	local one two
	hold
	start_bg one run k --queue latest --order 1 -- touch "$D/one"
	one=$BG_PID
	wait_until queue_len_is 1
	wait_until blocked_at_least 1
	# The holder's lock goes without a release (as at its expiry): nobody
	# is woken, so the newcomer finds the lock free and takes it, leaving
	# the older waiter its note.  That waiter's next attempt, sent behind
	# its BZPOPMIN, runs once the note is popped, finds the queue empty,
	# and would queue it again.
	rcli main DEL k >/dev/null
	start_bg two run k --queue latest --order 2 -- \
	    sh -c 'while [ ! -e "$1/stop" ]; do sleep 0.05; done' sh "$D"
	two=$BG_PID
	wait_bg "$one"
	assert_equal "$BG_STATUS" 80
	assert_equal "$(cat "$D/one.err")" "$(superseded_line "$two" 2)"
	# Out of line at once, not after its lease.
	queue_len_is 0
	[ ! -e "$D/one" ]
	touch "$D/stop"
	wait_bg "$two"
	assert_equal "$BG_STATUS" 0
}

# --- --skip-outdated -------------------------------------------------------

@test "--skip-outdated runs only orders above the last completed one, and exit 0 only counts" {
	run --separate-stderr redlock-cli run k --order 7 --skip-outdated -- touch "$D/7"
	assert_success
	run --separate-stderr redlock-cli run k --order 6 --skip-outdated -- touch "$D/6"
	assert_failure 81
	[ "${#lines[@]}" = 0 ]
	[[ $stderr =~ ^"redlock-cli: lock 'k': outdated: order 7 already ran ($HOST, "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z")"$ ]]
	# A retry of the same order is not outdated.
	run --separate-stderr redlock-cli run k --order 7 --skip-outdated -- touch "$D/7b"
	assert_success
	# A failed run is no record: 9 may run again.
	run --separate-stderr redlock-cli run k --order 9 --skip-outdated -- false
	assert_failure 1
	run --separate-stderr redlock-cli run k --order 8 --skip-outdated -- touch "$D/8"
	assert_success
	[ -e "$D/7" ] && [ -e "$D/8" ] && [ ! -e "$D/6" ] && [ -e "$D/7b" ]
	# Kept 7 days after its last use.
	local ttl
	ttl=$(rcli main PTTL '{k}:done')
	[ "$ttl" -gt $((7 * 86400000 - 60000)) ] && [ "$ttl" -le $((7 * 86400000)) ]
}

@test "--skip-outdated: a waiter whose order was overtaken while it waited exits 81 without running" {
	hold
	start_bg old run k --order 4 --skip-outdated -w 30s -- touch "$D/old-ran"
	wait_until blocked_at_least 1
	# A newer order runs first, on a lock of its own making.
	run --separate-stderr redlock-cli release k --token "$TOK"
	wait_bg "$BG_PID"
	[ "$BG_STATUS" = 0 ] || [ "$BG_STATUS" = 81 ]
	run --separate-stderr redlock-cli run k --order 5 --skip-outdated -- true
	run --separate-stderr redlock-cli run k --order 4 --skip-outdated -- touch "$D/late"
	assert_failure 81
	[ ! -e "$D/late" ]
}

blocked_at_least() { [ "$(blocked_on main)" -ge "$1" ]; }

# --- --cancel-running -------------------------------------------------------

# A command that logs when it got TERM and when it ended, then exits.
trap_cmd() {
	printf 'trap "date +%%s%%N >%q/term; exit 3" TERM; while :; do sleep 0.02; done' "$D"
}

@test "--cancel-running: the holder's command gets its --lost-signal at once, the holder exits 82, the new run starts after it is gone" {
	local old new t0 t_term t_start
	start_bg old run k --queue latest -c "$(trap_cmd)"
	old=$BG_PID
	wait_until key_exists main k
	sleep 0.3
	t0=$(date +%s%N)
	start_bg new run k --queue latest --cancel-running -- sh -c 'date +%s%N >"$1/start"' sh "$D"
	new=$BG_PID
	wait_bg "$old"
	assert_equal "$BG_STATUS" 82
	# (sh may add "Terminated" for its sleep: the one line of ours.)
	assert_equal "$(grep '^redlock-cli' "$D/old.err")" "redlock-cli: lock 'k': cancelled by a newer run on $HOST (pid $new)"
	wait_bg "$new"
	assert_equal "$BG_STATUS" 0
	t_term=$(cat "$D/term")
	t_start=$(cat "$D/start")
	echo "TERM $(( (t_term - t0) / 1000000 )) ms after the new run's start; it started $(( (t_start - t_term) / 1000000 )) ms after"
	[ $(( (t_term - t0) / 1000000 )) -lt 1000 ]
	[ "$t_start" -gt "$t_term" ]
}

@test "--cancel-running=GRACE: a command that ignores the signal is killed after GRACE, then the new run starts" {
	local old new t0 t_start
	start_bg old run k --queue latest --lost-signal USR1 -- sh -c 'trap "" USR1; while :; do sleep 0.02; done'
	old=$BG_PID
	wait_until key_exists main k
	sleep 0.3
	t0=$(now_ms)
	start_bg new run k --queue latest --cancel-running=500ms -- sh -c 'date +%s%N >"$1/start"' sh "$D"
	new=$BG_PID
	wait_bg "$old"
	assert_equal "$BG_STATUS" 82
	wait_bg "$new"
	assert_equal "$BG_STATUS" 0
	t_start=$(( $(cat "$D/start") / 1000000 ))
	echo "new run started $((t_start - t0)) ms after it asked"
	[ $((t_start - t0)) -ge 500 ] && [ $((t_start - t0)) -lt 3000 ]
}

@test "--cancel-running: a manual acquire holder is not interrupted; the canceller waits for it" {
	hold --queue latest
	run --separate-stderr redlock-cli run k --queue latest --cancel-running -w 1s -- touch "$D/ran"
	assert_failure 1
	assert_busy_line k 1s
	[ ! -e "$D/ran" ]
	[ "$(rcli main GET k)" = "$TOK" ]
	start_bg late run k --queue latest --cancel-running -w 10s -- touch "$D/ran"
	wait_until queue_len_is 1
	run --separate-stderr redlock-cli release k --token "$TOK"
	assert_success
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/ran" ]
}

# The listening call blocks for the TTL: one per renewal was a wake-up
# more per renewal, since the server answers a timeout on its own tick.
@test "a listening holder blocks a TTL at a time, not once per renewal" {
	local n
	rcli main CONFIG RESETSTAT >/dev/null
	run --separate-stderr redlock-cli run k --queue latest -t 1500ms -- sleep 3.2
	assert_success
	n=$(rcli main INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_bzpopmin:calls=\([0-9]*\),.*/\1/p')
	# 3.2 s, a TTL of 1.5 s: 3 calls (Redis counts one as it blocks,
	# Valkey as it returns), where a call per renewal (every 0.5 s) made 6.
	((${n:-0} >= 2 && ${n:-0} <= 4)) || fail "$n BZPOPMIN calls"
}

@test "a listening holder's blocking call lasts its TTL, to the millisecond" {
	redis-cli -s "$(redis_sock main)" MONITOR >"$D/monitor" 2>&1 &
	BG_PIDS+=($!)
	wait_until grep -q '^OK' "$D/monitor"
	run --separate-stderr redlock-cli run k --queue latest -t 2005ms -- sleep 0.5
	assert_success
	run --separate-stderr redlock-cli run k --queue latest -t 1250ms -- sleep 0.5
	assert_success
	wait_until grep -q '"BZPOPMIN" "{k}:cancel:[0-9a-f]*" "1.250"' "$D/monitor" ||
	    fail "$(grep BZPOPMIN "$D/monitor")"
	grep -q '"BZPOPMIN" "{k}:cancel:[0-9a-f]*" "2.005"' "$D/monitor" ||
	    fail "$(grep BZPOPMIN "$D/monitor")"
}

@test "a run without --queue latest does not listen, and is not cancelled" {
	start_bg old run k -- sh -c 'sleep 1.5; touch "$1/old-done"' sh "$D"
	wait_until key_exists main k
	run --separate-stderr redlock-cli run k --queue latest --cancel-running -w 10s -- sh -c 'test -e "$1/old-done"' sh "$D"
	assert_success
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
}

# --- exit codes ---------------------------------------------------------------

@test "--superseded-exit-code, --outdated-exit-code and --cancelled-exit-code replace 80, 81 and 82" {
	hold
	start_bg old run k --queue latest --superseded-exit-code 0 -- touch "$D/x"
	wait_until queue_len_is 1
	run --separate-stderr redlock-cli run k --queue latest --order 0 --superseded-exit-code 7 -- true
	assert_failure 7
	start_bg new run k --queue latest -- true
	wait_bg "${BG_PIDS[0]}"
	assert_equal "$BG_STATUS" 0
	grep -q 'superseded by a newer waiter' "$D/old.err"
	run --separate-stderr redlock-cli release k --token "$TOK"
	wait_bg "$BG_PID"
	run --separate-stderr redlock-cli run k --order 3 -- true
	run --separate-stderr redlock-cli run k --order 2 --skip-outdated --outdated-exit-code 0 -- touch "$D/x"
	assert_success
	[[ $stderr == *"outdated: order 3 already ran"* ]]
	start_bg held run k --queue latest --cancelled-exit-code 9 -- sleep 30
	wait_until key_exists main k
	sleep 0.2
	run --separate-stderr redlock-cli run k --queue latest --cancel-running=1s -- true
	assert_success
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 9
	[ ! -e "$D/x" ]
}

# --- fifo = --fair ----------------------------------------------------------

# Five waiters with OPTS... arrive in turn; they must run in that order.
five_in_order() {
	queue_in_turn "1 2 3 4 5" "$@"
	run --separate-stderr redlock-cli status k --json
	[[ $output == *'"queue":"fifo","waiting":5'* ]]
	release_in_turn
	assert_equal "$(cat "$D/order")" "$(seq 1 5)"
}

@test "--fair behaves exactly as --queue fifo" {
	five_in_order --fair
	rm -f "$D/order"
	redis_flush main
	five_in_order --queue fifo
	# The same arguments reach the server either way.
	run --separate-stderr redlock-cli -v -v acquire k2 --fair -w 1 --token t1
	local a=$stderr
	run --separate-stderr redlock-cli -v -v acquire k3 --queue fifo -w 1 --token t1
	printf '%s\n' "$a" | grep -q ' fifo '
	printf '%s\n' "$stderr" | grep -q ' fifo ' 
}

@test "status and list show the queue mode and how many wait, as text and JSON" {
	hold
	# Without a queue, the text is as it always was; JSON says so.
	run --separate-stderr redlock-cli status k
	refute_line --partial 'queue:'
	run --separate-stderr redlock-cli status k --json
	[[ $output == *'"mode":"exclusive","queue":"any","waiting":0,'* ]]
	start_bg w1 run k --queue fifo -- true
	start_bg w2 run k --queue fifo -- true
	wait_until queue_len_is 2
	run --separate-stderr redlock-cli status k
	assert_line 'queue: fifo'
	assert_line 'waiting: 2'
	run --separate-stderr redlock-cli status k --json
	[[ $output == *'"queue":"fifo","waiting":2'* ]]
	# list carries the queue's mode too.
	run -0 --separate-stderr redlock-cli list
	assert_line --regexp '^k exclusive .* queue fifo waiting 2$'
	run -0 --separate-stderr redlock-cli list --json
	[[ $output == *'"queue":"fifo","waiting":2'* ]]
}

# --- quorum ---------------------------------------------------------------

@test "with 3 servers, one of them stopped, five fifo waiters keep their order, and latest keeps only the last" {
	local i pids=() tok
	export REDLOCK_URL="$(url_of q1),$(url_of q2),$(url_of q3)"
	redis_stop q3
	run --separate-stderr redlock-cli acquire k -t 30s
	assert_success
	tok=$output
	for i in 1 2 3 4 5; do
		start_bg "f$i" run k --queue fifo -w 60s -- sh -c 'echo "$2" >>"$1/order"' sh "$D" "$i"
		pids+=("$BG_PID")
		wait_until queue_len_on q1 "$i"
		wait_until queue_len_on q2 "$i"
		# Long enough that each has retried (and met the stopped server)
		# before the next one comes.
		sleep 0.3
	done
	sleep 1.5
	TOK=$tok IN_TURN=("${pids[@]}")
	release_in_turn
	assert_equal "$(cat "$D/order")" "$(seq 1 5)"

	run --separate-stderr redlock-cli acquire k -t 30s
	tok=$output
	pids=()
	for i in 1 2 3 4 5; do
		start_bg "l$i" run k --queue latest -w 60s -- touch "$D/latest$i"
		pids+=("$BG_PID")
		wait_until queue_len_on q1 1
		sleep 0.3
	done
	run --separate-stderr redlock-cli release k --token "$tok"
	for i in 0 1 2 3; do
		wait_bg "${pids[$i]}"
		assert_equal "$BG_STATUS" 80
	done
	wait_bg "${pids[4]}"
	assert_equal "$BG_STATUS" 0
	assert_equal "$(ls "$D" | grep '^latest')" latest5
}

# --- dead waiters and keys ------------------------------------------------

@test "a waiter killed with SIGKILL drops out of every mode within seconds" {
	local mode dead
	hold
	for mode in any fifo latest; do
		start_bg "dead-$mode" run k --queue "$mode" -- touch "$D/dead-ran"
		dead=$BG_PID
		[ "$mode" = any ] && wait_until blocked_at_least 1
		[ "$mode" = any ] || wait_until waiting_is 1
		kill -KILL "$dead"
		wait_bg "$dead"
		assert_equal "$BG_STATUS" 137
		WAIT_TRIES=140 wait_until waiting_is 0
	done
	# fifo: the next waiter is not held up by the dead one's place.
	start_bg dead run k --queue fifo -- touch "$D/dead-ran"
	dead=$BG_PID
	wait_until queue_len_is 1
	start_bg next run k --queue fifo -w 30s -- touch "$D/next-ran"
	wait_until queue_len_is 2
	kill -KILL "$dead"
	wait_bg "$dead"
	run --separate-stderr redlock-cli release k --token "$TOK"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/next-ran" ]
	[ ! -e "$D/dead-ran" ]
}

@test "every key a queue adds expires on its own within seconds, but the --skip-outdated record" {
	local k ttl
	hold
	start_bg w run k --queue latest -- true
	wait_until queue_len_is 1
	run --separate-stderr redlock-cli run k --queue latest --order 0 -- true
	assert_failure 80
	run --separate-stderr redlock-cli release k --token "$TOK"
	wait_bg "$BG_PID"
	start_bg held run k --queue latest --order 0 -- sleep 30
	wait_until key_exists main k
	sleep 0.2
	run --separate-stderr redlock-cli run k --queue latest --cancel-running=100ms --order 1 -- true
	assert_success
	for k in $(rcli main --scan); do
		case $k in
		'{k}:fence' | '{k}:wake') continue ;;	# one small key per lock, as before
		'{k}:done' | '{k}:history')	# the records, 7 days
			[ "$(rcli main PTTL "$k")" -gt 86400000 ]; continue ;;
		esac
		ttl=$(rcli main PTTL "$k")
		echo "$k $ttl"
		[ "$ttl" -gt 0 ] && [ "$ttl" -le 10000 ]
	done
}

# --- usage errors ---------------------------------------------------------

@test "options that need one another are usage errors (64), one line each" {
	run --separate-stderr redlock-cli run k --skip-outdated -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: --skip-outdated needs --order"
	run --separate-stderr redlock-cli run k --cancel-running -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: --cancel-running needs --queue latest"
	run --separate-stderr redlock-cli acquire k --queue fifo --cancel-running=5s
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: acquire: --cancel-running needs --queue latest"
	run --separate-stderr redlock-cli run k --queue lifo -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: invalid --queue 'lifo': not any, fifo or latest"
	run --separate-stderr redlock-cli run k --order -1 -- true
	assert_failure 64
	[[ $stderr == "redlock-cli: invalid --order '-1': not a number from 0 to "* ]]
	run --separate-stderr redlock-cli run k --queue latest --cancel-running=soon -- true
	assert_failure 64
	[[ $stderr == "redlock-cli: invalid --cancel-running 'soon'"* ]]
	run --separate-stderr redlock-cli run k --superseded-exit-code 256 -- true
	assert_failure 64
	[ "${#lines[@]}" = 0 ]
	refute_key main k
}

@test "with 3 servers, one of which lost the lock, every fifo waiter keeps its place there, and they run in order" {
	local i pids=() tok short=0 was_short=0 n looks=
	export REDLOCK_URL="$(url_of q1),$(url_of q2),$(url_of q3)"
	run --separate-stderr redlock-cli acquire k -t 30s
	assert_success
	tok=$output
	for i in 1 2 3; do
		start_bg "f$i" run k --queue fifo -w 60s -- sh -c 'echo "$2" >>"$1/order"' sh "$D" "$i"
		pids+=("$BG_PID")
		for n in q1 q2 q3; do
			wait_until queue_len_on "$n" "$i"
		done
	done
	# q1 loses the lock (a restart without persistence): each waiter
	# takes it there at its next try, is busy on q2 and q3, and gives it
	# back.  Giving back must put it back in line at its rank, or the
	# others move ahead of it on q1.
	rcli q1 DEL k >/dev/null
	for i in $(seq 1 50); do
		n=$(rcli q1 ZCARD '{k}:queue')
		looks+=" $n"
		if [ "$n" = 3 ]; then
			was_short=0
		else
			[ "$was_short" = 0 ] || short=$((short + 1))
			was_short=1
		fi
		sleep 0.05
	done
	# A look may fall between a take and its give-back (a millisecond or
	# a few), but not two in a row: a waiter out of line stays out until
	# its next try, about a second later.
	echo "q1's queue, every 50 ms:$looks; short in two looks in a row $short times"
	[ "$short" = 0 ]
	TOK=$tok IN_TURN=("${pids[@]}")
	release_in_turn
	assert_equal "$(cat "$D/order")" "$(seq 1 3)"
}

@test "a waiter whose --queue is not that of the waiters in line is told so once, and still waits" {
	run -0 redlock-cli acquire k -t 2s
	start_bg fifo run k --queue fifo -w 10s -- true
	wait_until queue_len_is 1
	# --queue any does not wait in the fifo line: said, once.
	run --separate-stderr redlock-cli run k -w 10s -- true
	assert_success
	[ "$(grep -c 'do not wait in one line' <<<"$stderr")" = 1 ] ||
	    fail "stderr: $stderr"
	assert_stderr_line "redlock-cli: lock 'k': its waiters queue with --queue fifo, this one with --queue any: they do not wait in one line; give every client of the lock the same --queue"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	# The same mode: nothing said.
	run -0 redlock-cli acquire k -t 1s
	start_bg fifo2 run k --queue fifo -w 10s -- true
	wait_until queue_len_is 1
	run --separate-stderr redlock-cli run k --queue fifo -w 10s -- true
	assert_success
	assert_equal "$stderr" ''
	wait_bg "$BG_PID"
}
