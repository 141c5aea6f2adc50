#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Redlock quorum (issue 5): several -u URLs (or a comma/space list in
# $REDLOCK_URL) are independent masters; every operation goes to all of
# them, the lock is held iff a majority took it.  Five real servers q1..q5
# on unix sockets; tests stop (redis_stop) or freeze (SIGSTOP) some of
# them, and setup() brings every server back for the next test.

load helpers

SERVERS="q1 q2 q3 q4 q5"

setup_file() {
	local s
	for s in $SERVERS; do
		redis_start "$s"
	done
}

teardown_file() {
	local s
	for s in $SERVERS; do
		redis_stop "$s"
	done
}

setup() {
	local s
	for s in $SERVERS; do
		server_up "$s"
	done
	# redis_start (in server_up) exports REDLOCK_URL: every test says
	# which servers it uses.
	unset REDLOCK_URL
	for s in $SERVERS; do
		rcli "$s" FLUSHALL >/dev/null
	done
	U3=(-u "$(url_of q1)" -u "$(url_of q2)" -u "$(url_of q3)")
	U5=("${U3[@]}" -u "$(url_of q4)" -u "$(url_of q5)")
	D=$BATS_TEST_TMPDIR
}

# Thaw every server a test froze, then end its background processes, so
# that nothing of this test outlives it.
teardown() {
	local s
	for s in $SERVERS; do
		thaw "$s"
	done
	stop_bg_jobs
}

url_of() { echo "unix://$(redis_sock "$1")"; }

# server_up NAME: thaw it, and start it again if a test stopped it
# (redis_stop removes the pid file).
server_up() {
	local pid
	pid=$(redis_pid "$1") || true
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -CONT "$pid" 2>/dev/null || true
		return 0
	fi
	redis_start "$1"
}

freeze() { kill -STOP "$(redis_pid "$1")"; }
thaw() {
	local pid
	pid=$(redis_pid "$1") || true
	[ -z "$pid" ] || kill -CONT "$pid" 2>/dev/null || true
}

# held_on KEY TOKEN NAME...: the key holds exactly TOKEN on every server.
held_on() {
	local key=$1 token=$2 s
	shift 2
	for s in "$@"; do
		[ "$(rcli "$s" GET "$key")" = "$token" ] || return 1
	done
}

# held_everywhere KEY NAME...: one token holds KEY on all of them.
held_everywhere() {
	local key=$1 token
	shift
	token=$(rcli "$1" GET "$key")
	[ -n "$token" ] && held_on "$key" "$token" "$@"
}

# blocked_everywhere NAME...: a client is blocked (BZPOPMIN) on each of them.
blocked_everywhere() {
	local s
	for s in "$@"; do
		[ "$(blocked_on "$s")" -ge 1 ] || return 1
	done
}

# --- acquire ----------------------------------------------------------

@test "quorum of 3: acquire sets the key with the same token on all three servers" {
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	[[ "$output" =~ ^[0-9a-f]{32}$ ]]
	held_on k "$output" q1 q2 q3
	for s in q1 q2 q3; do
		key_exists "$s" '{k}:meta'
		pttl=$(rcli "$s" PTTL k)
		[ "$pttl" -gt 9000 ] && [ "$pttl" -le 10000 ]
	done
	# Servers that are not in the list are left alone.
	key_gone q4 k
	key_gone q5 k
}

@test "quorum of 5: acquire sets the key with the same token on all five servers" {
	need jq
	run --separate-stderr redlock-cli "${U5[@]}" acquire k -t 10s --json
	assert_success
	[ -z "$stderr" ]
	token=$(jq -r .token <<<"$output")
	[[ "$token" =~ ^[0-9a-f]{32}$ ]]
	[ "$(jq -r .fence <<<"$output")" -ge 1 ]
	held_on k "$token" q1 q2 q3 q4 q5
}

@test "quorum of 3 with one server stopped: acquire succeeds and status shows that server's error" {
	redis_stop q3
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	token=$output
	held_on k "$token" q1 q2
	run --separate-stderr redlock-cli "${U3[@]}" status k
	assert_success
	assert_line --regexp "^server $(url_of q1): holds ${token:0:8}\.\.\. \(ttl [0-9.]+m?s\)$"
	assert_line --regexp "^server $(url_of q2): holds ${token:0:8}\.\.\. \(ttl [0-9.]+m?s\)$"
	assert_line "server $(url_of q3): error: cannot connect to $(url_of q3): No such file or directory"
	# The stopped server's lines do not hide the holder.
	assert_line "token: ${token:0:8}..."
}

@test "quorum of 3 with two servers stopped: acquire exits 69 with the quorum message and leaves nothing on the live one" {
	redis_stop q2
	redis_stop q3
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -t 10s
	assert_failure 69
	assert_output ''
	# Every server that failed is named, not only the first (issue 18).
	assert_stderr_line "redlock-cli: quorum not reached (1 of 3 servers, 2 needed): cannot connect to $(url_of q2): No such file or directory; cannot connect to $(url_of q3): No such file or directory"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	key_gone q1 k
	key_gone q1 '{k}:meta'
}

@test "quorum of 5 with three servers stopped: acquire exits 69 and leaves nothing on the two live ones" {
	redis_stop q3
	redis_stop q4
	redis_stop q5
	run --separate-stderr redlock-cli "${U5[@]}" acquire k -t 10s
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: quorum not reached (2 of 5 servers, 3 needed): cannot connect to $(url_of q3): No such file or directory; cannot connect to $(url_of q4): No such file or directory; cannot connect to $(url_of q5): No such file or directory"
	for s in q1 q2; do
		key_gone "$s" k
		key_gone "$s" '{k}:meta'
	done
}

@test "quorum of 3 with two servers stopped: run exits 69 without running the command" {
	redis_stop q1
	redis_stop q3
	run --separate-stderr redlock-cli "${U3[@]}" run k -- touch "$D/ran"
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: quorum not reached (1 of 3 servers, 2 needed): cannot connect to $(url_of q1): No such file or directory; cannot connect to $(url_of q3): No such file or directory"
	[ ! -e "$D/ran" ]
	key_gone q2 k
	key_gone q2 '{k}:meta'
}

@test "a foreign lock on two of three servers blocks acquire -n (exit 1) and leaves no key of ours on the third" {
	rcli q1 SET k other PX 10000 >/dev/null
	rcli q2 SET k other PX 10000 >/dev/null
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -n
	assert_failure 1
	assert_output ''
	assert_stderr_line "redlock-cli: lock 'k' is held by another owner"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	key_gone q3 k
	key_gone q3 '{k}:meta'
	# The foreign holder is untouched.
	held_on k other q1 q2
	[ "$(rcli q1 PTTL k)" -gt 5000 ]
}

@test "a foreign lock on two of three servers blocks run -n without running the command" {
	rcli q2 SET k other PX 10000 >/dev/null
	rcli q3 SET k other PX 10000 >/dev/null
	run --separate-stderr redlock-cli "${U3[@]}" run k -n -- touch "$D/ran"
	assert_failure 1
	assert_stderr_line "redlock-cli: lock 'k' is held by another owner"
	[ ! -e "$D/ran" ]
	key_gone q1 k
	key_gone q1 '{k}:meta'
	held_on k other q2 q3
}

@test "a foreign lock on one of three servers does not block: the other two are a majority" {
	rcli q1 SET k other PX 10000 >/dev/null
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -n -t 10s
	assert_success
	held_on k "$output" q2 q3
	held_on k other q1
}

@test "acquire -w keeps waiting when one of three servers is stopped and another owner holds the lock on one live server" {
	skip_if_slow
	redis_stop q2
	rcli q1 SET k other PX 1000 >/dev/null
	t0=$(now_ms)
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -w 5s -t 10s
	elapsed=$(( $(now_ms) - t0 ))
	echo "exit $status after ${elapsed} ms: $stderr"
	# A majority (q1 and q3) is reachable: wait for the other owner's
	# lock to expire on q1, as a single server would, instead of 69.
	assert_success
	[ "$elapsed" -ge 800 ] && [ "$elapsed" -lt 4000 ]
	held_on k "$output" q1 q3
}

@test "with one of three servers SIGSTOPped and the live fence counters out of step, acquire -t 200ms --io-timeout 100ms reports a lock with validity left" {
	need jq
	skip_if_slow
	# Ahead of the clock that fences start from (µs, issue 32).
	local ahead=$(($(date +%s%N) / 1000 + 100000000000))
	rcli q1 SET '{k}:fence' "$ahead" >/dev/null
	freeze q2
	run --separate-stderr redlock-cli "${U3[@]}" --io-timeout 100ms \
	    acquire k -t 200ms --json
	echo "exit $status: $output $stderr"
	assert_success
	[ "$(jq -r .fence <<<"$output")" -eq $((ahead + 1)) ]
	# Held iff TTL - elapsed - drift > 0: a lock reported as acquired
	# must still be valid when it is reported.
	[ "$(jq -r .validity_ms <<<"$output")" -gt 0 ]
}

# --- release, extend, status ------------------------------------------

@test "quorum of 2 with -t 12ms returns within 3 s: taken, or refused, never retried for ever" {
	skip_if_slow
	local start=$SECONDS
	run --separate-stderr timeout 3 redlock-cli -u "$(url_of q1)" \
	    -u "$(url_of q1)" acquire k -t 12ms
	((SECONDS - start <= 3)) || fail "took $((SECONDS - start)) s"
	[ "$status" -ne 124 ] || fail "still trying after 3 s: $stderr"
	assert_success
}

@test "a frozen minority holds a short-TTL quorum round to the validity's margin: acquire -n gives it back, exit 69 'taken too late', and runs nothing" {
	skip_if_slow
	freeze q3
	# TTL 400ms: the round may last until 400 - 6 - 100 = 294 ms, and the
	# frozen server holds it that long (its I/O timeout is 1 s).
	run --separate-stderr redlock-cli "${U3[@]}" run k -t 400ms -n -- \
	    touch "$D/ran"
	assert_failure 69
	[ ! -e "$D/ran" ] || fail "the command ran"
	[[ $stderr =~ ^redlock-cli:\ lock\ \'k\':\ taken\ too\ late\ to\ be\ used:\ the\ servers\ took\ [0-9.]+m?s,\ leaving\ less\ than\ the\ 100ms\ safety\ margin\ of\ its\ validity$ ]] ||
	    fail "stderr: $stderr"
	# Given back on the two live servers.
	assert_equal "$(rcli q1 EXISTS k)" 0
	assert_equal "$(rcli q2 EXISTS k)" 0
}

@test "release on a quorum deletes the key on every server" {
	token=$(redlock-cli "${U3[@]}" acquire k -t 10s)
	held_on k "$token" q1 q2 q3
	run --separate-stderr redlock-cli "${U3[@]}" release k --token "$token"
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	for s in q1 q2 q3; do
		key_gone "$s" k
		key_gone "$s" '{k}:meta'
	done
}

@test "release on a quorum with one server stopped still succeeds and clears the live ones" {
	token=$(redlock-cli "${U3[@]}" acquire k -t 10s)
	redis_stop q2
	run --separate-stderr redlock-cli "${U3[@]}" release k --token "$token"
	assert_success
	key_gone q1 k
	key_gone q3 k
}

@test "extend on a quorum resets the PTTL on every server" {
	token=$(redlock-cli "${U3[@]}" acquire k -t 20s)
	for s in q1 q2 q3; do
		[ "$(rcli "$s" PTTL k)" -le 20000 ]
	done
	run --separate-stderr redlock-cli "${U3[@]}" extend k --token "$token" -t 60s
	assert_success
	[ -z "$stderr" ]
	for s in q1 q2 q3; do
		pttl=$(rcli "$s" PTTL k)
		[ "$pttl" -gt 55000 ] && [ "$pttl" -le 60000 ]
	done
	held_on k "$token" q1 q2 q3
}

@test "extend with a token that holds only one of three servers exits 3 and extends nothing" {
	rcli q1 SET k mine PX 2000 >/dev/null
	rcli q2 SET k other PX 2000 >/dev/null
	rcli q3 SET k other PX 2000 >/dev/null
	run --separate-stderr redlock-cli "${U3[@]}" extend k --token mine -t 60s
	assert_failure 3
	assert_stderr_line "redlock-cli: cannot extend lock 'k': it is held by another owner"
	for s in q2 q3; do
		[ "$(rcli "$s" PTTL k)" -le 2000 ]
	done
}

@test "status on a quorum shows a holds line for each of the 3 servers and exits 0" {
	need jq
	token=$(redlock-cli "${U3[@]}" acquire k -t 10s)
	run --separate-stderr redlock-cli "${U3[@]}" status k
	assert_success
	[ -z "$stderr" ]
	assert_line "key: k"
	assert_line "token: ${token:0:8}..."
	for s in q1 q2 q3; do
		assert_line --regexp "^server $(url_of "$s"): holds ${token:0:8}\.\.\. \(ttl [0-9.]+m?s\)$"
	done
	[ "$(grep -c '^server ' <<<"$output")" -eq 3 ]
	run --separate-stderr redlock-cli "${U3[@]}" status k --json
	assert_success
	[ "$(jq -r .held <<<"$output")" = true ]
	[ "$(jq '.servers | length' <<<"$output")" -eq 3 ]
	[ "$(jq '[.servers[] | select(.held == true)] | length' <<<"$output")" -eq 3 ]
	[ "$(jq -r '.servers[0].url' <<<"$output")" = "$(url_of q1)" ]
}

@test "status on a free quorum prints free and a free line per server, exit 1" {
	run --separate-stderr redlock-cli "${U3[@]}" status k
	assert_failure 1
	assert_line --index 0 free
	for s in q1 q2 q3; do
		assert_line "server $(url_of "$s"): free"
	done
}

@test "REDLOCK_URL with a comma and space separated list is a quorum" {
	export REDLOCK_URL="$(url_of q1),$(url_of q2) $(url_of q3)"
	run --separate-stderr redlock-cli acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	token=$output
	held_on k "$token" q1 q2 q3
	run --separate-stderr redlock-cli status k
	assert_success
	for s in q1 q2 q3; do
		assert_line --regexp "^server $(url_of "$s"): holds ${token:0:8}\.\.\. \(ttl [0-9.]+m?s\)$"
	done
	run --separate-stderr redlock-cli release k --token "$token"
	assert_success
	for s in q1 q2 q3; do
		key_gone "$s" k
	done
}

# --- run: frozen servers ----------------------------------------------

@test "run keeps the lock when one of three servers is SIGSTOPped: the command runs to its end, exit 0" {
	skip_if_slow
	start_bg holder "${U3[@]}" run k -t 1s --io-timeout 200ms -- \
	    sh -c 'touch "$1/started"; sleep 3; touch "$1/finished"' sh "$D"
	holder=$BG_PID
	wait_until test -e "$D/started"
	freeze q2
	t0=$(now_ms)
	wait_bg "$holder"
	elapsed=$(( $(now_ms) - t0 ))
	echo "run ended ${elapsed} ms after the freeze; stderr:"
	cat "$D/holder.err"
	[ "$BG_STATUS" -eq 0 ]
	[ -e "$D/finished" ]
	if grep -q "lost" "$D/holder.err"; then
		fail "the lock was reported lost"
	fi
	# Released on the live majority at the end.
	key_gone q1 k
	key_gone q3 k
}

@test "run loses the lock when two of three servers are SIGSTOPped: the child gets SIGTERM and run exits 75" {
	need jq
	skip_if_slow
	start_bg holder "${U3[@]}" run k -t 1s --io-timeout 200ms -- \
	    sh -c 'trap "echo TERM >\"\$1/marker\"; exit 0" TERM
	           touch "$1/started"; sleep 3 & wait; touch "$1/finished"' \
	    sh "$D"
	holder=$BG_PID
	wait_until test -e "$D/started"
	freeze q1
	freeze q3
	t0=$(now_ms)
	wait_bg "$holder"
	elapsed=$(( $(now_ms) - t0 ))
	echo "run ended ${elapsed} ms after the freeze; stderr:"
	cat "$D/holder.err"
	[ "$BG_STATUS" -eq 75 ]
	[ "$(cat "$D/marker")" = TERM ]
	[ ! -e "$D/finished" ]
	grep -qE "^redlock-cli: lock 'k' lost: .+" "$D/holder.err"
	# Told before the 1 s TTL could run out, not after the 3 s command.
	[ "$elapsed" -lt 1500 ]
}

# --- fencing ----------------------------------------------------------

# fence_rounds MODE: 20 acquisitions by two holders taking turns, each
# with one of the three servers down (a different one each round): MODE
# stop (redis_stop: it comes back empty) or freeze (SIGSTOP, with
# --io-timeout 100ms).  Holder 0 releases, holder 1 lets its 200 ms lock
# expire, so the next round waits for it.  Every fence must be higher
# than the last.
fence_rounds() {
	local mode=$1 round prev=0 down= fence token who
	for round in $(seq 0 19); do
		[ -z "$down" ] || server_up "$down"
		down=q$(( round % 3 + 1 ))
		if [ "$mode" = freeze ]; then
			freeze "$down"
		else
			redis_stop "$down"
		fi
		who=$(( round % 2 ))
		run --separate-stderr redlock-cli "${U3[@]}" --io-timeout 100ms \
		    acquire k -t 200ms -w 5s --json
		echo "round $round (holder $who, $down down): exit $status: $output $stderr"
		assert_success
		fence=$(jq -r .fence <<<"$output")
		token=$(jq -r .token <<<"$output")
		[ "$fence" -gt "$prev" ]
		prev=$fence
		if [ "$who" -eq 0 ]; then
			redlock-cli "${U3[@]}" --io-timeout 100ms \
			    release k --token "$token" || true
		fi
	done
}

@test "fences strictly increase across 20 alternating holders while one server (rotating) is stopped" {
	fence_rounds stop
}

@test "fences strictly increase across 20 alternating holders while one server (rotating) is SIGSTOPped" {
	fence_rounds freeze
}

# --- waiting ----------------------------------------------------------

@test "a run -w waiter on a quorum starts within 200 ms of the holder's release (blocked on every server)" {
	skip_if_slow
	start_bg holder "${U3[@]}" run k -- sh -c \
	    "$(hold_until_cmd "$D/go"); date +%s%N >\"$D/end\""
	holder=$BG_PID
	wait_until held_everywhere k q1 q2 q3
	start_bg waiter "${U3[@]}" run k -w 10s -- \
	    sh -c 'date +%s%N >"$1/start"' sh "$D"
	waiter=$BG_PID
	wait_until blocked_everywhere q1 q2 q3
	touch "$D/go"
	wait_bg "$holder"
	[ "$BG_STATUS" -eq 0 ]
	wait_bg "$waiter"
	echo "waiter: exit $BG_STATUS; stderr: $(cat "$D/waiter.err")"
	[ "$BG_STATUS" -eq 0 ]
	gap=$(( ($(cat "$D/start") - $(cat "$D/end")) / 1000000 ))
	echo "waiter started ${gap} ms after the holder's command ended"
	[ "$gap" -lt 200 ]
}

@test "a run -w waiter on a quorum with one server stopped still starts within 200 ms of the release" {
	skip_if_slow
	redis_stop q2
	start_bg holder "${U3[@]}" run k -- sh -c \
	    "$(hold_until_cmd "$D/go"); date +%s%N >\"$D/end\""
	holder=$BG_PID
	wait_until key_exists q1 k
	wait_until key_exists q3 k
	start_bg waiter "${U3[@]}" run k -w 10s -- \
	    sh -c 'date +%s%N >"$1/start"' sh "$D"
	waiter=$BG_PID
	wait_until blocked_everywhere q1 q3
	touch "$D/go"
	wait_bg "$holder"
	[ "$BG_STATUS" -eq 0 ]
	wait_bg "$waiter"
	echo "waiter: exit $BG_STATUS; stderr: $(cat "$D/waiter.err")"
	[ "$BG_STATUS" -eq 0 ]
	gap=$(( ($(cat "$D/start") - $(cat "$D/end")) / 1000000 ))
	echo "waiter started ${gap} ms after the holder's command ended"
	[ "$gap" -lt 200 ]
}

# --- a lock that one server lost ------------------------------------------

# evalsha_calls NAME: how many EVALSHA the server ran since the last
# CONFIG RESETSTAT.
evalsha_calls() {
	rcli "$1" INFO commandstats |
	    sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p' | tr -d '\r'
}

# lost_on_one N MODE_OPTS...: the lock (taken N times with MODE_OPTS: a
# semaphore's slots) is held on q1..q3, then q1 loses it (as a restart without persistence would); a
# waiter with MODE_OPTS takes it on q1 at every attempt and is busy on the
# others: it must give q1 back and wait for the release, not try again at
# once, over and over.  Then the holder releases, and it gets the lock.
lost_on_one() {
	local holders=() i calls t0 n=$1 rel s
	shift
	# release takes --limit, not --queue.
	rel=("$@")
	[ "${1:-}" != --queue ] || rel=()
	for i in $(seq 1 "$n"); do
		run --separate-stderr redlock-cli "${U3[@]}" acquire k -t 30s "$@"
		assert_success
		holders+=("$output")
	done
	rcli q1 FLUSHALL >/dev/null
	rcli q2 CONFIG RESETSTAT >/dev/null
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -w 1500ms "$@"
	assert_failure 1
	calls=$(evalsha_calls q2)
	echo "EVALSHA on q2 in 1.5 s of waiting: $calls"
	# 5 quick tries after a split vote (10 ms to 160 ms apart), then one
	# per fallback poll (1 s or more): 8 at most (each give-back is an
	# EVAL, not counted), where a waiter that woke itself made thousands.
	[ "$calls" -lt 20 ]
	# Nothing of the waiter is left on q1, where it took the lock.
	[ "$(rcli q1 EXISTS k)" = 0 ]
	# Still woken by the release itself, at once.
	start_bg waiter "${U3[@]}" acquire k -w 10s "$@"
	sleep 0.5	# past the quick tries (310 ms at most)
	t0=$(now_ms)
	run --separate-stderr redlock-cli "${U3[@]}" release k \
	    --token "${holders[0]}" "${rel[@]}"
	assert_success
	wait_bg "$BG_PID"
	echo "waiter: exit $BG_STATUS after $(($(now_ms) - t0)) ms"
	assert_equal "$BG_STATUS" 0
	[ $(($(now_ms) - t0)) -lt 1000 ]
	for s in q1 q2 q3; do
		rcli "$s" FLUSHALL >/dev/null
	done
}

@test "a waiter for a lock that one of three servers lost waits for the release instead of trying thousands of times a second" {
	lost_on_one 1
}

@test "the same for a semaphore slot (--limit 2), a reader (-s) behind a writer, and a --queue fifo waiter" {
	lost_on_one 2 --limit 2
	lost_on_one 1 --queue fifo
	# A reader waits for the exclusive holder: the holder takes -x.
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -t 30s
	assert_success
	rcli q1 FLUSHALL >/dev/null
	rcli q2 CONFIG RESETSTAT >/dev/null
	run --separate-stderr redlock-cli "${U3[@]}" acquire k -s -w 1500ms
	assert_failure 1
	echo "reader: EVALSHA on q2: $(evalsha_calls q2)"
	[ "$(evalsha_calls q2)" -lt 20 ]
}

# Found by the model checker (tests/model/regressions/quorum-force-semaphore.json):
# the type check read the joined answers of three servers as one kind.
@test "release --force without --limit on a quorum's semaphore removes every slot, as with one server" {
	local n
	for n in 1 2; do
		run -0 redlock-cli "${U3[@]}" acquire s --limit 2
	done
	run --separate-stderr redlock-cli "${U3[@]}" release s --force
	assert_success
	[ "$(grep -c "^redlock-cli: lock 's': forced release of " <<<"$stderr")" = 2 ] ||
	    fail "stderr: $stderr"
	for n in q1 q2 q3; do
		refute_key "$n" s
	done
	run -0 redlock-cli "${U3[@]}" acquire s --limit 2 -n
}

@test "a quorum's semaphore without --limit, and its mutex with --limit: exit 64 with the one-server lines" {
	run -0 redlock-cli "${U3[@]}" acquire s --limit 2
	run --separate-stderr redlock-cli "${U3[@]}" acquire s -n
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: lock 's' is a semaphore: use --limit"
	run -0 redlock-cli "${U3[@]}" acquire m
	run --separate-stderr redlock-cli "${U3[@]}" acquire m --limit 2 -n
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: lock 'm' is a mutex: it cannot be used with --limit"
}

# --- history (issue 36) -----------------------------------------------

@test "quorum history: each server keeps its copy, history merges a majority's, each entry shown once" {
	local pid
	run -0 redlock-cli "${U3[@]}" run k -- sh -c 'exit 0 # A'
	for s in q1 q2 q3; do
		[ "$(rcli "$s" XLEN '{k}:history')" = 1 ] || fail "$s has no entry"
	done
	# q3 restarts empty (no persistence): it lost its copy of A.
	redis_stop q3
	redis_start q3
	# q2 goes down with A saved, and misses B.
	pid=$(redis_pid q2)
	rcli q2 SHUTDOWN SAVE >/dev/null 2>&1 || true
	wait_until proc_gone "$pid"
	run -3 redlock-cli "${U3[@]}" run k -- sh -c 'exit 3 # B'
	redis_start q2
	# Now q1 has A and B, q2 A only, q3 B only.
	run -0 redlock-cli "${U3[@]}" history k --json
	assert_equal "$(entries)" "failed:sh -c exit 3 # B ok:sh -c exit 0 # A"
	# Without q1, the majority q2 and q3 still tell both.
	redis_stop q1
	run -0 redlock-cli "${U3[@]}" history k --json
	assert_equal "$(entries)" "failed:sh -c exit 3 # B ok:sh -c exit 0 # A"
	# With two down, no majority: exit 69 with the quorum line.
	redis_stop q3
	run --separate-stderr redlock-cli "${U3[@]}" history k
	assert_failure 69
	[[ $stderr == "redlock-cli: quorum not reached (1 of 3 servers, 2 needed): "* ]] ||
	    fail "stderr: $stderr"
}

# entries: "outcome:command ..." of `history --json` in $output.
entries() {
	python3 -c '
import json, sys
print(" ".join(e["outcome"] + ":" + e["command"] for e in json.load(sys.stdin)))' <<<"$output"
}
