#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# run --metrics-file (issue 36): node_exporter's textfile format, written
# atomically at the end of every run that ended, its counts kept across
# runs in the file itself.  Each file is checked by a strict parser of the
# text format (tests/metrics-parse.py).

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	need python3
	redis_flush
	D=$BATS_TEST_TMPDIR
	M=$D/prom/redlock.prom
	mkdir -p "$D/prom"
}

teardown() {
	stop_bg_jobs
}

# metric NAME KEY [OUTCOME]: the value of that sample of $M, which must
# parse; fails if there is no such sample.
metric() {
	python3 "$ROOT/tests/metrics-parse.py" "$M" "$@"
}

# assert_metric NAME KEY [OUTCOME] VALUE
assert_metric() {
	local want=${*: -1} got
	got=$(metric "${@:1:$#-1}") || fail "no sample $* in: $(cat "$M")"
	assert_equal "$got" "$want"
}

# counts KEY: its redlock_runs_total of each outcome, "ok=N failed=N ...".
counts() {
	local o out=""
	for o in ok failed signal lost forced cancelled superseded outdated busy; do
		out+="$o=$(metric redlock_runs_total "$1" "$o") "
	done
	echo "${out% }"
}

@test "run --metrics-file writes the five gauges and the counter, each with HELP and TYPE once" {
	local before after
	before=$(date +%s)
	run --separate-stderr redlock-cli run k --metrics-file "$M" -- sleep 0.3
	assert_success
	[ -z "$stderr" ] || fail "stderr: $stderr"
	after=$(date +%s)
	run python3 "$ROOT/tests/metrics-parse.py" "$M"
	assert_success
	assert_equal "$(grep -c '^# HELP ' "$M")" 6
	assert_equal "$(grep -c '^# TYPE ' "$M")" 6
	grep -qx '# TYPE redlock_runs_total counter' "$M"
	grep -qx '# TYPE redlock_last_held_seconds gauge' "$M"
	assert_metric redlock_last_exit_status k 0
	assert_equal "$(counts k)" "ok=1 failed=0 signal=0 lost=0 forced=0 cancelled=0 superseded=0 outdated=0 busy=0"
	local ts
	ts=$(metric redlock_last_run_timestamp_seconds k)
	[ "${ts%.*}" -ge "$before" ] && [ "${ts%.*}" -le "$after" ] ||
	    fail "timestamp $ts not in $before..$after"
	assert_equal "$(metric redlock_last_success_timestamp_seconds k)" "$ts"
	python3 -c 'import sys; h, w = map(float, sys.argv[1:]); sys.exit(not (0.3 <= h < 5 and 0 <= w < 2))' \
	    "$(metric redlock_last_held_seconds k)" "$(metric redlock_last_wait_seconds k)" ||
	    fail "held/wait: $(grep -E 'held|wait' "$M")"
	assert_equal "$(stat -c %a "$M")" 644
}

@test "the counts survive runs and count each outcome; the last success stays when a run fails" {
	local tok success
	run -0 redlock-cli run k --metrics-file "$M" -- true
	success=$(metric redlock_last_success_timestamp_seconds k)
	sleep 0.01
	run -3 redlock-cli run k --metrics-file "$M" -- sh -c 'exit 3'
	assert_metric redlock_last_exit_status k 3
	run -143 redlock-cli run k --metrics-file "$M" -c 'kill -TERM $$'
	tok=$(redlock-cli acquire k)
	# busy: -n, and -E's status is the one recorded
	run -1 redlock-cli run k -n --metrics-file "$M" -- true
	run -9 redlock-cli run k -n -E 9 --metrics-file "$M" -- true
	assert_metric redlock_last_exit_status k 9
	redlock-cli release k --token "$tok"
	# superseded: a waiter below the --queue latest holder's order
	tok=$(redlock-cli acquire k --queue latest --order 5)
	run -80 redlock-cli run k --queue latest --order 3 -w 5s --metrics-file "$M" -- true
	redlock-cli release k --token "$tok"
	run -0 redlock-cli run k --metrics-file "$M" -- true
	assert_equal "$(counts k)" "ok=2 failed=1 signal=1 lost=0 forced=0 cancelled=0 superseded=1 outdated=0 busy=2"
	assert_metric redlock_last_exit_status k 0
	[ "$(metric redlock_last_success_timestamp_seconds k)" != "$success" ]
}

@test "the last success moves only on ok: a failure after one keeps it" {
	local success
	run -0 redlock-cli run k --metrics-file "$M" -- true
	success=$(metric redlock_last_success_timestamp_seconds k)
	sleep 0.01
	run -1 redlock-cli run k --metrics-file "$M" -- false
	assert_metric redlock_last_success_timestamp_seconds k "$success"
	[ "$(metric redlock_last_run_timestamp_seconds k)" != "$success" ]
}

@test "REDLOCK_METRICS_FILE is --metrics-file's default" {
	REDLOCK_METRICS_FILE=$M run -0 redlock-cli run k -- true
	assert_metric redlock_runs_total k ok 1
	# the option wins
	REDLOCK_METRICS_FILE=$M run -0 redlock-cli run k --metrics-file "$D/other.prom" -- true
	assert_metric redlock_runs_total k ok 1
	M=$D/other.prom assert_metric redlock_runs_total k ok 1
}

@test "two keys in one file: each run keeps the other key's lines" {
	run -0 redlock-cli run a --metrics-file "$M" -- true
	run -2 redlock-cli run b --metrics-file "$M" -- sh -c 'exit 2'
	run -0 redlock-cli run a --metrics-file "$M" -- true
	assert_metric redlock_runs_total a ok 2
	assert_metric redlock_runs_total b failed 1
	assert_metric redlock_last_exit_status a 0
	assert_metric redlock_last_exit_status b 2
	# a never-successful key has no last success
	run metric redlock_last_success_timestamp_seconds b
	assert_failure 2
	assert_equal "$(grep -c '^# HELP redlock_runs_total ' "$M")" 1
}

@test "a key with a quote, a backslash and a newline is escaped in its label" {
	local key=$'we"ird\\key\nline2'
	run -0 redlock-cli run "$key" --metrics-file "$M" -- true
	grep -qF 'redlock_runs_total{key="we\"ird\\key\nline2",outcome="ok"} 1' "$M" ||
	    fail "not escaped: $(cat "$M")"
	assert_metric redlock_runs_total "$key" ok 1
	# read back and counted again
	run -0 redlock-cli run "$key" --metrics-file "$M" -- true
	assert_metric redlock_runs_total "$key" ok 2
}

@test "a reader never sees a partial file: thousands of reads during 50 runs all parse and have every metric" {
	local stop=$D/stop i reader reads
	run -0 redlock-cli run k0 --metrics-file "$M" -- true
	python3 "$ROOT/tests/metrics-parse.py" --loop "$M" "$stop" >"$D/reader.out" 3>&- &
	reader=$!
	BG_PIDS+=("$reader")
	# Each command takes a moment, so that the reader reads thousands of
	# times, some of them while a run replaces the file.
	for i in $(seq 1 50); do
		redlock-cli run "k$((i % 5))" --metrics-file "$M" -- sleep 0.02 ||
		    fail "run $i failed"
	done
	touch "$stop"
	wait "$reader" || fail "a read failed: $(cat "$D/reader.out")"
	reads=$(cat "$D/reader.out")
	echo "reads: $reads"
	[ "$reads" -ge 1000 ] || fail "only $reads reads"
	assert_metric redlock_runs_total k0 ok 11
	assert_metric redlock_runs_total k1 ok 10
	# no temporary file is left behind
	assert_equal "$(ls -A "$D/prom")" redlock.prom
}

# run_in_readonly DIR CMD...: CMD with DIR not writable: mode 555, or for
# root (whom modes do not stop) a read-only tmpfs over it, in a mount
# namespace of its own.
run_in_readonly() {
	local dir=$1
	shift
	if [ "$(id -u)" != 0 ]; then
		chmod 555 "$dir"
		"$@"
		return
	fi
	unshare -m true 2>/dev/null || skip "unshare -m is not permitted here"
	unshare -m sh -c 'mount --make-rprivate / &&
	    mount -t tmpfs -o ro,mode=755 readonly "$0" && exec "$@"' "$dir" "$@"
}

@test "an unwritable directory: one warning line, and run keeps the command's exit status" {
	local why
	run --separate-stderr run_in_readonly "$D/prom" \
	    redlock-cli run k --metrics-file "$M" -- sh -c 'exit 7'
	assert_failure 7
	why="Permission denied"
	[ "$(id -u)" != 0 ] || why="Read-only file system"
	assert_equal "$stderr" "redlock-cli: cannot write metrics file $M: $why"
	chmod 755 "$D/prom"
	assert_equal "$(ls -A "$D/prom")" ""
}

@test "a file that is not ours is said once, and the counts start from 0" {
	printf 'node_load1 0.5\n' >"$M"
	run --separate-stderr redlock-cli run k --metrics-file "$M" -- true
	assert_success
	assert_equal "$stderr" "redlock-cli: metrics file $M: line 1: not a line of redlock-cli's metrics: starting the counts from 0"
	assert_metric redlock_runs_total k ok 1
	# a cut file of ours
	head -c 200 "$M" >"$D/cut" && mv "$D/cut" "$M"
	run --separate-stderr redlock-cli run k --metrics-file "$M" -- true
	assert_success
	assert_equal "$stderr" "redlock-cli: metrics file $M: no newline at its end: starting the counts from 0"
	assert_metric redlock_runs_total k ok 1
	# an edited count
	sed -i 's/outcome="ok"} 1$/outcome="ok"} 1e3/' "$M"
	run --separate-stderr redlock-cli run k --metrics-file "$M" -- true
	[[ $stderr == "redlock-cli: metrics file $M: line "*": starting the counts from 0" ]] ||
	    fail "stderr: $stderr"
	assert_metric redlock_runs_total k ok 1
}

@test "a file over 1 MiB is not read, and is replaced" {
	head -c 1100000 /dev/zero | tr '\0' '#' >"$M"
	run --separate-stderr redlock-cli run k --metrics-file "$M" -- true
	assert_success
	assert_equal "$stderr" "redlock-cli: metrics file $M: larger than 1 MiB: starting the counts from 0"
	assert_metric redlock_runs_total k ok 1
}

@test "--metrics-file is run's only, and takes a path" {
	run --separate-stderr redlock-cli acquire k --metrics-file "$M"
	assert_failure 64
	run --separate-stderr redlock-cli run k --metrics-file '' -- true
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --metrics-file '': empty"
	[ ! -e "$M" ]
}
