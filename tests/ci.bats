#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# run in a CI job: how it ended, written to $GITHUB_OUTPUT as outcome= and
# order= whatever exit status it was mapped to, and GitHub's cancel (SIGINT,
# then SIGTERM 7.5 s later) ends with the lock released in time.

load helpers

setup_file() { redis_start main; }
teardown_file() { redis_stop main; }

setup() {
	redis_flush
	export REDLOCK_URL="unix://$(redis_sock main)"
	D=$BATS_TEST_TMPDIR
	export GITHUB_OUTPUT=$D/github-output
	BG_PIDS=()
}

teardown() {
	touch "$D/stop"
	stop_bg_jobs
}

queue_len_is() { [ "$(rcli main ZCARD '{k}:queue')" = "$1" ]; }

# outputs_are LINES...: $GITHUB_OUTPUT holds exactly these lines; emptied.
outputs_are() {
	assert_equal "$(cat "$GITHUB_OUTPUT")" "$(printf '%s\n' "$@")"
	: >"$GITHUB_OUTPUT"
}

@test "\$GITHUB_OUTPUT gets outcome=ok or failed, and the run's order" {
	run -0 redlock-cli run k -- true
	outputs_are outcome=ok order=
	run -3 redlock-cli run k --order 7 -- sh -c 'exit 3'
	outputs_are outcome=failed order=7
	run -143 redlock-cli run k -- sh -c 'kill -TERM $$'
	outputs_are outcome=signal order=
}

@test "\$GITHUB_OUTPUT says busy, and outdated even when --outdated-exit-code maps it to 0" {
	local t
	t=$(redlock-cli acquire k)
	run -1 redlock-cli run k -n -- true
	outputs_are outcome=busy order=
	run -0 redlock-cli release k --token "$t"
	run -0 redlock-cli run k --order 5 --skip-outdated -- true
	outputs_are outcome=ok order=5
	run -0 redlock-cli run k --order 4 --skip-outdated \
	    --outdated-exit-code 0 -- touch "$D/old-ran"
	outputs_are outcome=outdated order=4
	[ ! -e "$D/old-ran" ]
	# -q: an outdated run is an expected outcome, as a busy lock is.
	run --separate-stderr redlock-cli -q run k --order 3 --skip-outdated -- true
	assert_failure 81
	assert_equal "$stderr" ''
	outputs_are outcome=outdated order=3
}

@test "\$GITHUB_OUTPUT says superseded for a waiter a newer run replaced, cancelled for a holder it stopped" {
	start_bg old run k --queue latest --order 1 -- sh -c "$(hold_until_cmd "$D/stop")"
	local old=$BG_PID
	wait_until key_exists main k
	start_bg mid run k --queue latest --order 2 -w 30s -- true
	local mid=$BG_PID
	wait_until queue_len_is 1
	start_bg new run k --queue latest --order 3 --cancel-running=1s \
	    -w 30s -- true
	local new=$BG_PID
	wait_bg "$mid"
	assert_equal "$BG_STATUS" 80
	wait_bg "$old"
	assert_equal "$BG_STATUS" 82
	wait_bg "$new"
	assert_equal "$BG_STATUS" 0
	# Each run appends its pair of lines in one write.
	run -0 bash -c "paste -d ' ' - - <'$GITHUB_OUTPUT' | LC_ALL=C sort"
	assert_output "$(printf '%s\n' 'outcome=cancelled order=1' \
	    'outcome=ok order=3' 'outcome=superseded order=2')"
}

@test "a cannot-write \$GITHUB_OUTPUT is said in one line and changes no exit status" {
	GITHUB_OUTPUT=$D/no/such/dir/out run --separate-stderr redlock-cli run k -- true
	assert_success
	assert_equal "$stderr" "redlock-cli: cannot write the outcome to \$GITHUB_OUTPUT ($D/no/such/dir/out): No such file or directory"
}

@test "GitHub's cancel, SIGINT then SIGTERM 7.5 s later, to a job that ignores SIGINT: released within 8 s, exit 143" {
	skip_if_slow
	local pid t0
	start_bg job run k -- sh -c 'trap "" INT; sleep 30 & wait $!; sleep 30'
	pid=$BG_PID
	wait_until key_exists main k
	t0=$(date +%s%N)
	kill -INT "$pid"
	sleep 7.5
	proc_alive "$pid" || fail "run ended on SIGINT although its job ignores it"
	kill -TERM "$pid"
	wait_bg "$pid"
	assert_equal "$BG_STATUS" 143
	refute_key main k
	(( ($(date +%s%N) - t0) / 1000000 < 8000 + 500 )) ||
	    fail "released $(( ($(date +%s%N) - t0) / 1000000 )) ms after the SIGINT"
}

@test "GitHub's cancel to a job that stops on SIGINT: released at once, exit 130" {
	local pid
	start_bg job run k -- sleep 30
	pid=$BG_PID
	wait_until key_exists main k
	kill -INT "$pid"
	wait_bg "$pid"
	assert_equal "$BG_STATUS" 130
	refute_key main k
	run -0 cat "$GITHUB_OUTPUT"
	assert_line outcome=signal
}
