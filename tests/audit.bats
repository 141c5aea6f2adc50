#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# What a run leaves on record (issues 18, 36): with --syslog, a start line
# and an end line per run, each at the level of what happened, and one line
# per lost lock; every syslog line names the lock; one line per failure on
# stderr; and who holds a manual acquire's lock, as status shows it.

load helpers
load syslog

setup_file() {
	redis_start_tcp main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
}

teardown() {
	stop_bg_jobs
	redis_stop_each q1 q2 q3
}

# audit_line REGEX: the syslog of $t has exactly one line matching REGEX.
audit_line() {
	local n
	n=$(syslog_lines "$t" | grep -cE -- "$1") || true
	[ "$n" = 1 ] ||
	    fail "expected 1 syslog line matching $1, got $n: $(syslog_lines "$t" | cat -v)"
}

SPAN='[0-9]+(ms|\.[0-9]s|m[0-9]+s|h[0-9]+m)'
# The priorities, LOG_USER (8) plus the level: <11> LOG_ERR, <12>
# LOG_WARNING, <13> LOG_NOTICE, <14> LOG_INFO.

@test "run --syslog, without -v, logs a start line and an end line at LOG_INFO when the command exits 0" {
	syslog_need
	t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "done:" redlock-cli --syslog run k -- true
	assert_success
	assert_equal "$(cat "$t/rc")" 0
	assert_equal "$(cat "$t/err")" ""
	audit_line "^<14>.* redlock-cli\[[0-9]+\]: run 'k' start: fence [0-9]+, command: true$"
	audit_line "^<14>.* redlock-cli\[[0-9]+\]: run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, exit 0$"
	assert_equal "$(syslog_lines "$t" | grep -c .)" 2
}

@test "run --syslog: the start line names the fence the command got and its command, secrets masked" {
	syslog_need
	t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "done:" redlock-cli --syslog run k -- \
	    env DB_PASSWORD=hunter2 sh -c 'echo "$REDLOCK_FENCE"'
	assert_success
	assert_equal "$(cat "$t/rc")" 0
	local fence
	fence=$(cat "$t/out")
	audit_line "^<14>.* run 'k' start: fence $fence, command: env DB_PASSWORD=\*\*\* sh -c echo \"\\\$REDLOCK_FENCE\"$"
	! grep -q hunter2 "$t/syslog" || fail "a secret in syslog: $(cat "$t/syslog")"
}

@test "run --syslog logs a failed command's end at LOG_WARNING, with its exit status" {
	syslog_need
	t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "done:" redlock-cli --syslog run k -- sh -c 'exit 3'
	assert_success
	assert_equal "$(cat "$t/rc")" 3
	audit_line "^<14>.* run 'k' start: "
	audit_line "^<12>.* run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, exit 3$"
}

@test "run --syslog logs the signal that killed the command, at LOG_WARNING" {
	syslog_need
	t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "done:" redlock-cli --syslog run k -c 'kill -TERM $$'
	assert_success
	assert_equal "$(cat "$t/rc")" 143
	audit_line "^<12>.* run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, killed by SIGTERM$"
}

@test "run --syslog: the audit line names the fence the command got and the time it held the lock" {
	syslog_need
	t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "done:" redlock-cli --syslog run k -c \
	    'echo "$REDLOCK_FENCE"; sleep 1.2'
	assert_success
	local fence
	fence=$(cat "$t/out")
	audit_line "^<14>.* run 'k' done: fence $fence, waited [0-9]+ms, held 1\.[2-9]s, exit 0$"
}

@test "run --syslog: a lost lock is one line at LOG_ERR, and the end line says so, at LOG_ERR too" {
	syslog_need
	t="$BATS_TEST_TMPDIR/ns"
	run syslog_run "$t" "done:" redlock-cli --syslog run k -t 1s -c \
	    "redis-cli -p $REDIS_PORT SET k other >/dev/null; sleep 10"
	assert_success
	assert_equal "$(cat "$t/rc")" 75
	audit_line "^<11>.* redlock-cli\[[0-9]+\]: lock 'k' lost: another owner holds it; last confirmed $SPAN ago; sending SIGTERM to the command$"
	audit_line "^<11>.* run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, killed by SIGTERM, lock lost$"
	assert_equal "$(syslog_lines "$t" | grep -c '^<11>')" 2
	assert_equal "$(cat "$t/err")" \
	    "redlock-cli: $(syslog_lines "$t" | sed -n 's/^<11>.*\]: \(.* lost: \)/\1/p')"
}

@test "release --force --syslog: the operator's line is at LOG_NOTICE; the run it ended logs at LOG_ERR" {
	syslog_need
	local t="$BATS_TEST_TMPDIR/run" op="$BATS_TEST_TMPDIR/op" pid
	syslog_run "$t" "done:" redlock-cli --syslog run k -- sleep 20 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	wait_until key_exists main k
	run syslog_run "$op" "forced release" redlock-cli --syslog release k --force
	assert_success
	assert_equal "$(cat "$op/rc")" 0
	t=$op audit_line "^<13>.* redlock-cli\[[0-9]+\]: lock 'k': forced release of [^ ]+ pid [0-9]+, held since [0-9T:Z-]+$"
	assert_equal "$(syslog_lines "$op" | grep -c .)" 1
	grep -qE "^redlock-cli: lock 'k': forced release of [^ ]+ pid [0-9]+, held since " "$op/err" ||
	    fail "stderr: $(cat "$op/err")"
	wait_bg "$pid"
	assert_equal "$(cat "$t/rc")" 75
	audit_line "^<11>.* lock 'k' was force-released by [^ ]+ \(pid [0-9]+\); sending SIGTERM to the command$"
	audit_line "^<11>.* run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, killed by SIGTERM, lock lost$"
}

@test "run --syslog: a run cancelled by a newer one logs at LOG_ERR" {
	syslog_need
	local t="$BATS_TEST_TMPDIR/ns" pid
	syslog_run "$t" "done:" redlock-cli --syslog run k --queue latest \
	    --order 1 -- sleep 20 3>&- &
	pid=$!
	BG_PIDS+=("$pid")
	wait_until key_exists main k
	run -0 redlock-cli run k --queue latest --order 2 --cancel-running=2s \
	    -w 10s -- true
	wait_bg "$pid"
	assert_equal "$(cat "$t/rc")" 82
	audit_line "^<11>.* lock 'k': cancelled by order 2 on [^ ]+ \(pid [0-9]+\)$"
	audit_line "^<11>.* run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, killed by SIGTERM$"
}

@test "every syslog line names the lock: a server that cannot be reached, for run and acquire; stderr as it was" {
	syslog_need
	local t url="unix://$BATS_TEST_TMPDIR/none.sock" verb
	for verb in run acquire; do
		t="$BATS_TEST_TMPDIR/$verb"
		if [ "$verb" = run ]; then
			run syslog_run "$t" "connect" redlock-cli --syslog -u "$url" run k -- true
		else
			run syslog_run "$t" "connect" redlock-cli --syslog -u "$url" acquire k
		fi
		assert_success
		assert_equal "$(cat "$t/rc")" 69
		assert_equal "$(cat "$t/err")" \
		    "redlock-cli: cannot connect to $url: No such file or directory"
		audit_line "^<11>.* redlock-cli\[[0-9]+\]: lock 'k': cannot connect to $url: No such file or directory$"
		assert_equal "$(syslog_lines "$t" | grep -c .)" 1
	done
}

@test "quorum: a server that does not answer is one LOG_WARNING line for the whole run, naming it; -v prints it" {
	syslog_need
	local t="$BATS_TEST_TMPDIR/ns" q3 u=()
	redis_start_each q1 q2 q3
	u=(-u "unix://$(redis_sock q1)" -u "unix://$(redis_sock q2)" -u "unix://$(redis_sock q3)")
	q3="unix://$(redis_sock q3)"
	redis_stop q3
	# acquire, renewals every 200 ms, release: each of them finds q3 gone
	run syslog_run "$t" "done:" redlock-cli --syslog "${u[@]}" run k -t 3s \
	    --renew 200ms -- sleep 1
	assert_success
	assert_equal "$(cat "$t/rc")" 0
	assert_equal "$(cat "$t/err")" ""
	audit_line "^<12>.* redlock-cli\[[0-9]+\]: lock 'k': server $q3 did not answer: cannot connect to $q3: .+ \(quorum still reached\)$"
	assert_equal "$(syslog_lines "$t" | grep -c 'did not answer')" 1
	audit_line "^<14>.* run 'k' done: .*, exit 0$"
	run --separate-stderr redlock-cli -v "${u[@]}" run k -t 3s --renew 200ms -- sleep 0.5
	assert_success
	assert_equal "$(printf '%s\n' "$stderr" | grep -c 'did not answer')" 1
	printf '%s\n' "$stderr" | grep -qE "^redlock-cli: lock 'k': server $q3 did not answer: cannot connect to $q3: .+ \(quorum still reached\)$" ||
	    fail "stderr: $stderr"
	run --separate-stderr redlock-cli "${u[@]}" run k -- true
	assert_success
	assert_equal "$stderr" ""
}

@test "run -v prints the audit line on stderr too" {
	run --separate-stderr redlock-cli -v run k -- sh -c 'exit 4'
	assert_failure 4
	printf '%s\n' "$stderr" |
	    grep -qE "^redlock-cli: run 'k' done: fence [0-9]+, waited $SPAN, held $SPAN, exit 4$" ||
	    fail "no audit line in: $stderr"
}

@test "run without -v or --syslog prints no audit line" {
	run --separate-stderr redlock-cli run k -- true
	assert_success
	[ -z "$stderr" ]
}

@test "a lock deleted by someone else while the command ran is one line: released or deleted, or expired" {
	run --separate-stderr redlock-cli run k -t 20s -- \
	    sh -c "redis-cli -p $REDIS_PORT DEL k >/dev/null"
	assert_success
	assert_equal "$stderr" \
	    "redlock-cli: lock 'k' was released or deleted by someone else, or had expired, when the command ended"
}

@test "a lock taken by another owner while the command ran is one line" {
	run --separate-stderr redlock-cli run k -t 20s -- sh -c \
	    "redis-cli -p $REDIS_PORT DEL k >/dev/null; redis-cli -p $REDIS_PORT SET k other >/dev/null"
	assert_success
	assert_equal "$stderr" \
	    "redlock-cli: lock 'k' was held by another owner when the command ended"
	assert_equal "$(rcli main GET k)" other
}

@test "a lost lock whose release fails too is one line on stderr, exit 75" {
	local err="$BATS_TEST_TMPDIR/runner.err" pid
	redlock-cli --io-timeout 200ms run k -t 1s -- sleep 10 \
	    </dev/null >/dev/null 2>"$err" 3>&- &
	BG_PIDS+=("$!")
	pid=$!
	wait_until key_exists main k
	kill -STOP "$(redis_pid main)"
	wait_bg "$pid"
	kill -CONT "$(redis_pid main)"
	assert_equal "$BG_STATUS" 75
	[ "$(wc -l <"$err")" = 1 ] || fail "expected one line: $(cat "$err")"
	grep -qE "^redlock-cli: lock 'k' lost: (renewal failed|no renewal succeeded in time): .+; last confirmed $SPAN ago; sending SIGTERM to the command$" "$err" ||
	    fail "not the lost line: $(cat "$err")"
}

@test "status of a manual acquire shows the calling script's pid and command line" {
	local t="$BATS_TEST_TMPDIR"
	cat >"$t/deploy.sh" <<'EOF'
echo $$ >"$1/pid"
redlock-cli acquire k -t 20s >/dev/null || exit 1
echo acquired
EOF
	run -0 bash "$t/deploy.sh" "$t"
	run --separate-stderr redlock-cli status k
	assert_success
	assert_line "pid: $(cat "$t/pid")"
	assert_line "command: manual: bash $t/deploy.sh $t"
	run -0 redlock-cli status k --json
	[ "$(json_field pid)" = "$(cat "$t/pid")" ]
	[ "$(json_field command)" = "\"manual: bash $t/deploy.sh $t\"" ]
}

@test "a manual acquire's command line is cut at 1024 bytes, as run's" {
	local t="$BATS_TEST_TMPDIR" long
	long=$(printf 'x%.0s' $(seq 2000))
	printf 'redlock-cli acquire k >/dev/null; echo\n' >"$t/s.sh"
	run -0 bash "$t/s.sh" "$long"
	run -0 redlock-cli status k
	local cmd
	cmd=$(printf '%s\n' "$output" | sed -n 's/^command: //p')
	assert_equal "${#cmd}" 1024
	[[ $cmd == "manual: bash $t/s.sh xxx"* ]] || fail "command: $cmd"
}
