#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# run KEY -- CMD: exit codes, arguments, stdio, environment, holding the
# lock, -n/-w, renewal, -c, usage errors, --min-hold, --jitter, --syslog.
# Signals, the lost lock and the child's process state: supervise.bats.

load helpers
load syslog

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
}

teardown() {
	stop_bg_jobs
}

clients_at_least() { [ "$(rcli main CLIENT LIST | wc -l)" -ge "$1" ]; }

@test "run exits 0 when the command exits 0 and releases the lock" {
	run --separate-stderr redlock-cli run k -- true
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	key_gone main k
}

@test "run passes exit code 3 through" {
	run --separate-stderr redlock-cli run k -- sh -c 'exit 3'
	assert_failure 3
	[ -z "$stderr" ]
	key_gone main k
}

@test "run passes exit code 42 through" {
	run --separate-stderr redlock-cli run k -- sh -c 'exit 42'
	assert_failure 42
	[ -z "$stderr" ]
	key_gone main k
}

@test "run exits 137 when the command is killed by SIGKILL" {
	run --separate-stderr redlock-cli run k -c 'kill -9 $$'
	assert_failure 137
	[ -z "$stderr" ]
	key_gone main k
}

# The guardian could not start the command (here: no descriptor left for
# its pipe): it says so in its first word, which the supervisor hears in
# its loop, and exits.  One line, exit 69, the lock given back, and no
# word about a guardian gone wrong.
@test "a command the guardian cannot start: exit 69 with one line, and the lock is released" {
	# valgrind itself needs more descriptors than 7.
	[ "${REDLOCK_TEST_VALGRIND:-0}" = 1 ] &&
	    skip "a descriptor limit of 7 leaves valgrind none of its own"
	# Only 0, 1 and 2 open, whatever the harness left us, then 7 at most:
	# enough for redlock-cli's socket and pair, not for the guardian's.
	run --separate-stderr bash -c 'for f in /proc/$$/fd/*; do
	    n=${f##*/}; ((n > 2)) && eval "exec $n>&-"; done
	    ulimit -n 7 && exec redlock-cli run k -- true'
	assert_failure 69
	[ -z "$output" ]
	[ "$stderr" = "redlock-cli: cannot start the command: Too many open files" ]
	key_gone main k
	run -0 redlock-cli acquire k -n
}

@test "run exits 126 for a file that is not executable" {
	local f="$BATS_TEST_TMPDIR/not-exec"
	printf '#!/bin/sh\necho ran\n' >"$f"
	chmod 644 "$f"
	run --separate-stderr redlock-cli run k -- "$f"
	assert_failure 126
	assert_output ''
	assert_stderr_line "redlock-cli: $f: Permission denied"
	key_gone main k
}

@test "run exits 127 for a command that is not found" {
	run -127 --separate-stderr redlock-cli run k -- nosuchcmd
	assert_failure 127
	assert_output ''
	assert_stderr_line "redlock-cli: nosuchcmd: command not found"
	key_gone main k
}

@test "run passes arguments with spaces and quotes verbatim" {
	run --separate-stderr redlock-cli run k -- printf '%s\n' 'a b' \
	    "it's" 'say "hi"' '' '  lead' '$HOME' '*' 'x\ty' '--' '-n'
	assert_success
	[ -z "$stderr" ]
	assert_output "$(printf '%s\n' 'a b' "it's" 'say "hi"' '' '  lead' \
	    '$HOME' '*' 'x\ty' '--' '-n')"
}

@test "run passes stdin to the command and its stdout back" {
	run --separate-stderr bash -c 'printf "hi\nthere\n" | redlock-cli run k -- cat'
	assert_success
	assert_output $'hi\nthere'
	[ -z "$stderr" ]
}

@test "run exports REDLOCK_KEY, REDLOCK_TOKEN, REDLOCK_FENCE, REDLOCK_TTL_MS and the token is the key's value" {
	local sock
	sock=$(redis_sock main)
	run --separate-stderr redlock-cli run job -t 5s -- sh -c '
	    printf "%s\n" "$REDLOCK_KEY" "$REDLOCK_TOKEN" "$REDLOCK_FENCE" \
	        "$REDLOCK_TTL_MS"
	    redis-cli -s "$1" GET "$REDLOCK_KEY"' sh "$sock"
	assert_success
	[ -z "$stderr" ]
	assert_equal "${#lines[@]}" 5
	assert_equal "${lines[0]}" job
	assert_regex "${lines[1]}" '^[0-9a-f]{32}$'
	assert_regex "${lines[2]}" '^[0-9]+$'
	assert_equal "${lines[3]}" 5000
	assert_equal "${lines[4]}" "${lines[1]}"
	key_gone main job
}

@test "run inside another run's command: the inner command sees its own lock's REDLOCK_* once each, and the rest of the environment" {
	run --separate-stderr env REDLOCK_KEY=outer REDLOCK_TOKEN=stale \
	    REDLOCK_FENCE=999 REDLOCK_TTL_MS=1 KEEP_ME='a b=c' \
	    redlock-cli run inner -t 4s -- env
	assert_success
	[ -z "$stderr" ]
	assert_equal "$(grep -c '^REDLOCK_KEY=' <<<"$output")" 1
	assert_equal "$(grep -c '^REDLOCK_TOKEN=' <<<"$output")" 1
	assert_equal "$(grep -c '^REDLOCK_FENCE=' <<<"$output")" 1
	assert_equal "$(grep -c '^REDLOCK_TTL_MS=' <<<"$output")" 1
	assert_line 'REDLOCK_KEY=inner'
	assert_line 'REDLOCK_TTL_MS=4000'
	assert_line 'KEEP_ME=a b=c'
	assert_line --regexp '^REDLOCK_TOKEN=[0-9a-f]{32}$'
	refute_line 'REDLOCK_FENCE=999'
}

@test "run gives each successive holder a larger REDLOCK_FENCE" {
	local first
	run --separate-stderr redlock-cli run k -- sh -c 'echo "$REDLOCK_FENCE"'
	assert_success
	first=$output
	run --separate-stderr redlock-cli run k -- sh -c 'echo "$REDLOCK_FENCE"'
	assert_success
	[ "$output" -gt "$first" ]
}

@test "run holds the lock while the command runs, shows it in status, and releases it after" {
	local go="$BATS_TEST_TMPDIR/go"
	start_bg holder run k -- sh -c "$(hold_until_cmd "$go")"
	wait_until key_exists main k
	run --separate-stderr redlock-cli status k
	assert_success
	assert_line "key: k"
	assert_line --regexp "^command: sh -c while \[ ! -e .*go \]; do sleep 0.05; done$"
	assert_line "pid: $BG_PID"
	key_exists main k
	touch "$go"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	key_gone main k
	[ ! -s "$BATS_TEST_TMPDIR/holder.err" ]
}

@test "run -n exits 1 without running its command while another run holds the lock" {
	local go="$BATS_TEST_TMPDIR/go" marker="$BATS_TEST_TMPDIR/marker"
	start_bg holder run k -- sh -c "$(hold_until_cmd "$go")"
	wait_until key_exists main k
	run --separate-stderr redlock-cli run k -n -- touch "$marker"
	assert_failure 1
	assert_output ''
	assert_busy_line "k"
	[ ! -e "$marker" ]
	touch "$go"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
}

@test "run -n -E 5 exits 5 when the lock is busy" {
	local go="$BATS_TEST_TMPDIR/go" marker="$BATS_TEST_TMPDIR/marker"
	start_bg holder run k -- sh -c "$(hold_until_cmd "$go")"
	wait_until key_exists main k
	run --separate-stderr redlock-cli run k -n -E 5 -- touch "$marker"
	assert_failure 5
	assert_output ''
	assert_busy_line "k"
	[ ! -e "$marker" ]
	touch "$go"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
}

@test "run -w waits for the holder to finish, then runs its command" {
	local go="$BATS_TEST_TMPDIR/go" marker="$BATS_TEST_TMPDIR/marker"
	local holder waiter
	start_bg holder run k -- sh -c "$(hold_until_cmd "$go")"
	holder=$BG_PID
	wait_until key_exists main k
	start_bg waiter run k -w 10s -- touch "$marker"
	waiter=$BG_PID
	# The waiter has connected (holder + waiter + this redis-cli), is
	# alive, and has not run its command while k is held.
	wait_until clients_at_least 3
	kill -0 "$waiter"
	[ ! -e "$marker" ]
	touch "$go"
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 0
	wait_bg "$waiter"
	assert_equal "$BG_STATUS" 0
	[ -e "$marker" ]
	[ ! -s "$BATS_TEST_TMPDIR/waiter.err" ]
	key_gone main k
}

@test "run renews a 1s lock so that it stays held through a 3s command" {
	skip_if_slow
	local marker="$BATS_TEST_TMPDIR/marker" start pttl
	start=$(now_ms)
	start_bg holder run k -t 1s -- sleep 3
	wait_until key_exists main k
	# Sample until 2.5 s: the key never goes away and nobody gets in.
	while [ $(( $(now_ms) - start )) -lt 2500 ]; do
		pttl=$(rcli main PTTL k)
		[ "$pttl" -gt 0 ] || fail "PTTL was $pttl at $(( $(now_ms) - start ))ms"
		run redlock-cli run k -n -q -- touch "$marker"
		assert_failure 1
		sleep 0.1
	done
	pttl=$(rcli main PTTL k)
	[ "$pttl" -gt 0 ]
	[ "$pttl" -le 1000 ]
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	[ $(( $(now_ms) - start )) -ge 3000 ]
	[ ! -e "$marker" ]
	[ ! -s "$BATS_TEST_TMPDIR/holder.err" ]
	key_gone main k
}

@test "run -c runs the string with /bin/sh -c" {
	run --separate-stderr redlock-cli run k -c 'echo "$0"; echo abc | tr b x; exit 5'
	assert_failure 5
	assert_output $'/bin/sh\naxc'
	[ -z "$stderr" ]
	key_gone main k
}

@test "run without a command exits 64 with one line pointing at help run" {
	run --separate-stderr redlock-cli run k
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" \
	    "redlock-cli: run: no command given (see 'redlock-cli help run')"
	key_gone main k
}

@test "run with an empty command after -- exits 64 with one line pointing at help run" {
	run --separate-stderr redlock-cli run k --
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" \
	    "redlock-cli: run: no command given (see 'redlock-cli help run')"
}

@test "run with both -c and -- CMD exits 64 and runs nothing" {
	local marker="$BATS_TEST_TMPDIR/marker"
	run --separate-stderr redlock-cli run k -c "touch $marker" -- touch "$marker"
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: run: give either -c STRING or -- CMD, not both"
	[ ! -e "$marker" ]
	key_gone main k
}

@test "run --min-hold 2s keeps the lock after a quick command, then lets it expire" {
	skip_if_slow
	local pttl done_at gone_at
	run --separate-stderr redlock-cli run k --min-hold 2s -- true
	assert_success
	[ -z "$stderr" ]
	done_at=$(now_ms)
	key_exists main k
	pttl=$(rcli main PTTL k)
	[ "$pttl" -gt 0 ]
	[ "$pttl" -le 2000 ]
	# Still held by us: another run cannot get it.
	run --separate-stderr redlock-cli run k -n -- true
	assert_failure 1
	assert_busy_line "k"
	wait_until key_gone main k
	gone_at=$(now_ms)
	[ $(( gone_at - done_at )) -ge 1000 ]
	[ $(( gone_at - done_at )) -lt 2500 ]
}

@test "run --min-hold shorter than the command releases the lock when the command ends" {
	run --separate-stderr redlock-cli run k --min-hold 100ms -- sleep 0.3
	assert_success
	[ -z "$stderr" ]
	key_gone main k
}

@test "run --min-hold -v says how long the lock is kept" {
	run --separate-stderr redlock-cli -v run k --min-hold 2s -- true
	assert_success
	printf '%s\n' "$stderr" |
	    grep -qE "^redlock-cli: keeping lock 'k' for (1[0-9]{3}|2000)ms more \(--min-hold\)$" ||
	    fail "no --min-hold line in: $stderr"
}

@test "run --min-hold 3s after a wait keeps the lock 3s from when it was taken, not from when it asked" {
	skip_if_slow
	local go="$BATS_TEST_TMPDIR/go" go_at gone_at kept
	start_bg holder run k -- sh -c "$(hold_until_cmd "$go")"
	wait_until key_exists main k
	start_bg waiter -v run k -w 10s --min-hold 3s -- true
	wait_until clients_at_least 3
	sleep 1.5
	go_at=$(now_ms)
	touch "$go"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	# The take came after go_at: the key stays 3 s from then at least.
	WAIT_TRIES=200 wait_until key_gone main k
	gone_at=$(now_ms)
	(( gone_at - go_at >= 2950 )) ||
	    fail "held $(( gone_at - go_at )) ms after the holder let go"
	(( gone_at - go_at < 6000 )) ||
	    fail "held $(( gone_at - go_at )) ms after the holder let go"
	kept=$(sed -n "s/^redlock-cli: keeping lock 'k' for \([0-9]*\)ms more (--min-hold)\$/\1/p" \
	    "$BATS_TEST_TMPDIR/waiter.err")
	[ -n "$kept" ] && (( kept > 2500 && kept <= 3000 )) ||
	    fail "kept '$kept': $(cat "$BATS_TEST_TMPDIR/waiter.err")"
}

@test "run -v after a wait says how long it held the lock from the take, not from the first try" {
	skip_if_slow
	local go="$BATS_TEST_TMPDIR/go"
	start_bg holder run k -- sh -c "$(hold_until_cmd "$go")"
	wait_until key_exists main k
	start_bg waiter -v run k -w 10s -- true
	wait_until clients_at_least 3
	sleep 1.5
	touch "$go"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	# true takes milliseconds; the wait took 1.5 s and is "waited".
	grep -qE "^redlock-cli: run 'k' done: fence [0-9]+, waited 1\.[0-9]s, held [0-9]+ms, exit 0\$" \
	    "$BATS_TEST_TMPDIR/waiter.err" ||
	    fail "$(cat "$BATS_TEST_TMPDIR/waiter.err")"
}

@test "run --min-hold that ends a few ms after the command still keeps the lock for them, and never warns" {
	skip_if_slow
	local x d t failed=''
	# The command ends at every millisecond of --min-hold: some runs
	# have 1-3 ms of it left, too little for a timeout counted from it.
	for ((x = 0; x < 100; x++)); do
		printf -v d '0.%03d' "$x"
		run --separate-stderr redlock-cli run k --min-hold 100ms -- \
		    sleep "$d"
		[ "$status" -eq 0 ] && [ -z "$stderr" ] ||
		    failed+=$'\n'"  sleep $d: exit $status: $stderr"
		t=$(rcli main PTTL k)
		((t <= 100)) || failed+=$'\n'"  sleep $d: PTTL $t after the run"
		redis_flush
	done
	[ -z "$failed" ] || fail "failing runs:$failed"
}

@test "run --jitter 1s sleeps between 0 and 1s before taking the lock" {
	skip_if_slow
	local i start took slept total=0
	for i in 1 2 3; do
		start=$(now_ms)
		run --separate-stderr redlock-cli -v run k --jitter 1s -- true
		took=$(( $(now_ms) - start ))
		assert_success
		slept=$(printf '%s\n' "$stderr" |
		    sed -n 's/^redlock-cli: sleeping \([0-9]*\)ms (--jitter)$/\1/p')
		[ -n "$slept" ] || fail "no jitter line in: $stderr"
		[ "$slept" -ge 0 ] && [ "$slept" -lt 1000 ]
		[ "$took" -ge "$slept" ]
		[ "$took" -lt 1500 ]
		total=$(( total + slept ))
	done
	# Three draws from 0..1000ms that are all 0 would mean no jitter.
	[ "$total" -gt 0 ]
}

@test "run --jitter 0 does not sleep" {
	skip_if_slow
	local start
	start=$(now_ms)
	run --separate-stderr redlock-cli run k --jitter 0 -- true
	assert_success
	[ -z "$stderr" ]
	[ $(( $(now_ms) - start )) -lt 500 ]
}

@test "run --syslog still runs the command and prints the lines on stderr" {
	run --separate-stderr redlock-cli --syslog -v run k -- echo hi
	assert_success
	assert_output hi
	assert_stderr_line "redlock-cli: released lock 'k'"
	printf '%s\n' "$stderr" |
	    grep -qE "^redlock-cli: acquired lock 'k' in [0-9.]+m?s, fence [0-9]+$" ||
	    fail "no acquire line in: $stderr"
	key_gone main k
}

# The test syslog: tests/syslog.bash.
@test "run --syslog sends the same lines to syslog as LOG_USER with the pid" {
	syslog_need
	local t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "released lock" redlock-cli --syslog -v run k -- echo hi
	assert_success
	assert_equal "$(cat "$t/rc")" 0
	assert_equal "$(cat "$t/out")" hi
	stderr=$(cat "$t/err")
	assert_stderr_line "redlock-cli: released lock 'k'"
	# <14> is LOG_USER|LOG_INFO; the tag carries the pid.
	grep -qE "^<14>.* redlock-cli\[[0-9]+\]: acquired lock 'k' in [0-9.]+m?s, fence [0-9]+" \
	    <(sed 's/<14>/\n<14>/g' "$t/syslog") ||
	    fail "no acquire message in syslog: $(cat -v "$t/syslog")"
	grep -qE "^<14>.* redlock-cli\[[0-9]+\]: released lock 'k'" \
	    <(sed 's/<14>/\n<14>/g' "$t/syslog") ||
	    fail "no release message in syslog: $(cat -v "$t/syslog")"
}
