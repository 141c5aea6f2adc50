#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# run's supervisor: signal forwarding, Ctrl-C at a terminal, the lost lock
# (overwritten key, paused server), SIGKILL escalation, SIGKILL of run itself,
# and the state the command starts in (descriptors, dispositions, mask).

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
	D=$BATS_TEST_TMPDIR
	write_child
}

# Never leave the server stopped, nor our processes running.
teardown() {
	local pid
	kill -CONT "$(redis_pid main)" 2>/dev/null || true
	stop_bg_jobs KILL
	for pid in $(cat "$D/ready" "$D/grandchild" 2>/dev/null); do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# $D/child.sh SIG [STAY]: the command under test.  Writes its pid to
# $D/ready; appends "SIG <epoch ns>" to $D/got for each SIG received;
# exits 7 about 0.3 s after the first one (room for a second, unwanted,
# delivery to show up), or never if STAY is given.  Gives up after 10 s
# without a signal (exit 99).  Its own stderr goes to $D/child.err: a
# signal passed on to its group reaches its `sleep` too, and sh reports
# that ("Terminated"), which is not redlock-cli's to say.
write_child() {
	cat >"$D/child.sh" <<EOF
exec 2>>"$D/child.err"
sig=\$1
trap 'echo "\$sig \$(date +%s%N)" >>"$D/got"' "\$sig"
echo \$\$ >"$D/ready.tmp" && mv "$D/ready.tmp" "$D/ready"
n=0
while [ ! -s "$D/got" ]; do
	[ \$n -ge 200 ] && exit 99
	sleep 0.05
	n=\$((n + 1))
done
[ -n "\${2-}" ] && while :; do sleep 0.05; done
n=0
while [ \$n -lt 6 ]; do sleep 0.05; n=\$((n + 1)); done
exit 7
EOF
}

now_ns() { date +%s%N; }
child_ready() { [ -s "$D/ready" ]; }
got_signal() { [ -s "$D/got" ]; }

# Number of times the child received SIG.
got_count() { grep -c "^$1 " "$D/got" 2>/dev/null || true; }

# First time (epoch ns) the child received a signal.
got_at() { head -n 1 "$D/got" | cut -d' ' -f2; }

# $BG_PID's stderr into $stderr, for assert_stderr_line.
bg_stderr() { stderr=$(cat "$D/$1.err"); }

# forwarded SIG: SIG sent to redlock-cli's pid reaches the command once,
# run exits with the command's status, and the lock is then released.
forwarded() {
	local sig=$1
	start_bg runner run k -- sh "$D/child.sh" "$sig"
	wait_until child_ready
	key_exists main k
	kill -s "$sig" "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 7
	assert_equal "$(got_count "$sig")" 1
	assert_equal "$(wc -l <"$D/got")" 1
	[ ! -s "$D/runner.err" ]
	key_gone main k
}

@test "SIGTERM sent to run reaches the command once, run exits with its status and releases the lock" {
	forwarded TERM
}

@test "SIGINT sent to run reaches the command once, run exits with its status and releases the lock" {
	forwarded INT
}

@test "SIGHUP sent to run reaches the command once, run exits with its status and releases the lock" {
	forwarded HUP
}

@test "SIGQUIT sent to run reaches the command once, run exits with its status and releases the lock" {
	forwarded QUIT
}

@test "SIGUSR1 sent to run reaches the command once, run exits with its status and releases the lock" {
	forwarded USR1
}

@test "SIGUSR2 sent to run reaches the command once, run exits with its status and releases the lock" {
	forwarded USR2
}

@test "the lock is held until the command exits after a forwarded signal" {
	start_bg runner run k -- sh "$D/child.sh" TERM STAY
	wait_until child_ready
	kill -TERM "$BG_PID"
	wait_until got_signal
	# The command outlives the signal: the lock stays ours meanwhile.
	key_exists main k
	kill -0 "$BG_PID"
	kill -KILL "$(cat "$D/ready")"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 137
	key_gone main k
}

@test "Ctrl-C at a terminal interrupts the command exactly once" {
	need script
	local status=0
	# The pipe stays open until the lock is released, so that script
	# never sees EOF while the command runs.  SIGINT back to its default:
	# a suite started in the background (make test &) has it ignored,
	# the command would inherit that, as it should, and ^C would do
	# nothing.
	{
		wait_until child_ready
		printf '\003'
		wait_until got_signal
		wait_until key_gone main k
	} | SHELL=/bin/sh env --default-signal=INT script -qfec \
	    "redlock-cli run k -- sh '$D/child.sh' INT" /dev/null \
	    >"$D/tty.out" 3>&- || status=$?
	assert_equal "$status" 7
	assert_equal "$(got_count INT)" 1
	assert_equal "$(wc -l <"$D/got")" 1
	key_gone main k
}

# proc_state PID: the state letter in /proc/PID/stat (T: stopped).
proc_state() {
	local s
	read -r s <"/proc/$1/stat" || return 1
	s=${s##*) }
	printf '%s\n' "${s%% *}"
}

# proc_parent PID: its parent's pid.
proc_parent() { awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$1/stat"; }

# The job is stopped: the command and redlock-cli, its grandparent (the
# parent is redlock-cli's guardian, which never stops: it must be there
# to kill the job should redlock-cli be killed meanwhile).
job_stopped() {
	local cmd rl
	cmd=$(cat "$D/ready")
	rl=$(proc_parent "$(proc_parent "$cmd")")
	[ "$(proc_state "$cmd")" = T ] && [ "$(proc_state "$rl")" = T ]
}

# ctrl_z_job SECONDS 'RUN OPTIONS' CHECK: in an interactive bash under
# script(1), for job control, start `redlock-cli run k OPTIONS` over a job
# that sleeps SECONDS, press Ctrl-Z, wait until the job is stopped, call
# CHECK meanwhile, then fg.  Run's exit status ends up in $D/rc, the
# terminal's output in $D/tty.out.
ctrl_z_job() {
	local secs=$1 opts=$2 check=$3
	# One process throughout (exec): a Ctrl-Z that caught sh in vfork()
	# would stop the child before its exec and wedge sh, a shell matter.
	cat >"$D/job.sh" <<EOF
echo \$\$ >"$D/ready"
exec sleep $secs
EOF
	# The pipe stays open until the job has ended.
	{
		printf '%s\n' "redlock-cli run k $opts -- sh '$D/job.sh'"
		wait_until child_ready
		printf '\032'
		wait_until job_stopped
		"$check"
		# The second line waits in the terminal until fg returns.
		printf 'fg\n'
		printf '%s\n' "echo \$? >'$D/rc'"
		WAIT_TRIES=200 wait_until test -s "$D/rc"
		printf 'exit\n'
	} | SHELL=/bin/bash timeout 60 script -qfec \
	    "bash --norc --noprofile -i" /dev/null >"$D/tty.out" 3>&-
}

# It stays so (no one continued it behind the shell's back), and the lock
# stays held meanwhile.
stays_stopped_with_lock() {
	sleep 1
	job_stopped || echo "the job did not stay stopped" >>"$D/bad"
	key_exists main k || echo "lock gone while stopped" >>"$D/bad"
}

# Past a 1 s TTL: the lock is gone, maybe someone else's.
outlasts_ttl() { sleep 1.5; }

@test "Ctrl-Z at a terminal stops the job with the lock kept, and fg resumes it" {
	need script
	ctrl_z_job 3 '' stays_stopped_with_lock
	[ ! -e "$D/bad" ] || fail "$(cat "$D/bad")"
	assert_equal "$(cat "$D/rc")" 0
	grep -q Stopped "$D/tty.out" ||
	    fail "the shell saw no stopped job: $(cat "$D/tty.out")"
	key_gone main k
}

@test "Ctrl-Z held past the lock's validity: after fg the command is killed, not resumed, and run exits 75" {
	need script
	ctrl_z_job 30 '-t 1s' outlasts_ttl
	# Within the 10 s wait for rc, not after the command's 30 s.
	assert_equal "$(cat "$D/rc")" 75
	grep -q "lock 'k' lost" "$D/tty.out" ||
	    fail "no lost-lock line: $(cat "$D/tty.out")"
	[ ! -e "/proc/$(cat "$D/ready")" ] || fail "the command is still there"
}

command_stopped() { [ "$(proc_state "$(cat "$D/ready")")" = T ]; }

@test "SIGTSTP sent to redlock-cli stops the command, not the supervisor: the lock stays renewed, and SIGCONT resumes the command" {
	# kill -TSTP %1 reaches redlock-cli's group, not the command's.  A
	# stopped supervisor would let the lock expire under a command that
	# still runs; the job is paused instead, holding its lock as a
	# stopped flock(1) would.
	cat >"$D/job.sh" <<EOF
echo \$\$ >"$D/ready"
exec sleep 2
EOF
	start_bg runner run k -t 1s -- sh "$D/job.sh"
	wait_until child_ready
	kill -TSTP "$BG_PID"
	wait_until command_stopped
	# Past the 1 s TTL, and then some: renewed all along.
	sleep 1.5
	command_stopped || fail "the command did not stay stopped"
	[ "$(proc_state "$BG_PID")" != T ] || fail "redlock-cli itself stopped"
	key_exists main k
	kill -CONT "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	key_gone main k
}

@test "a lock overwritten by another owner sends SIGTERM to the command and run exits 75, leaving the key alone" {
	start_bg runner run k -t 1s -- sh "$D/child.sh" TERM
	wait_until child_ready
	rcli main SET k other >/dev/null
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(got_count TERM)" 1
	bg_stderr runner
	printf '%s\n' "$stderr" | grep -qE "^redlock-cli: lock 'k' lost: another owner holds it; last confirmed [0-9.]+(ms|s) ago; sending SIGTERM to the command$" ||
	    fail "no lost-lock line in: $stderr"
	assert_equal "$(rcli main GET k)" other
}

@test "--lost-signal USR1 and --lost-exit-code 9 are used when the lock is lost" {
	start_bg runner run k -t 1s --lost-signal USR1 --lost-exit-code 9 -- \
	    sh "$D/child.sh" USR1
	wait_until child_ready
	rcli main SET k other >/dev/null
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 9
	assert_equal "$(got_count USR1)" 1
	assert_equal "$(wc -l <"$D/got")" 1
	bg_stderr runner
	printf '%s\n' "$stderr" | grep -qE "^redlock-cli: lock 'k' lost: another owner holds it; .*; sending SIGUSR1 to the command$" ||
	    fail "no lost-lock line in: $stderr"
	assert_equal "$(rcli main GET k)" other
}

@test "a paused server makes run signal the command before the 1s TTL has passed and exit 75" {
	skip_if_slow
	local pid t0 ms
	pid=$(redis_pid main)
	start_bg runner --io-timeout 200ms run k -t 1s -- sh "$D/child.sh" TERM
	wait_until child_ready
	t0=$(now_ns)
	kill -STOP "$pid"
	wait_until got_signal || true
	kill -CONT "$pid"
	got_signal || fail "the command got no signal while the server was paused"
	ms=$(( ($(got_at) - t0) / 1000000 ))
	[ "$ms" -lt 1000 ] || fail "SIGTERM came ${ms}ms after the pause"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(got_count TERM)" 1
	bg_stderr runner
	printf '%s\n' "$stderr" | grep -qE "^redlock-cli: lock 'k' lost: .*; sending SIGTERM to the command$" ||
	    fail "no lost-lock line in: $stderr"
}

@test "a command that does not exit on SIGTERM is SIGKILLed, with its group, when the lost lock expires" {
	skip_if_slow
	local term_ns end_ns ms gc
	start_bg runner run k -t 1s -- sh -c '
	    (trap "" TERM; exec sleep 300) &
	    echo $! >"$1/grandchild"
	    exec sh "$1/child.sh" TERM STAY' sh "$D"
	wait_until child_ready
	rcli main SET k other >/dev/null
	wait_bg "$BG_PID"
	end_ns=$(now_ns)
	assert_equal "$BG_STATUS" 75
	assert_equal "$(got_count TERM)" 1
	term_ns=$(got_at)
	ms=$(( (end_ns - term_ns) / 1000000 ))
	# SIGKILL at the lock's local expiry: more than half a TTL after the
	# SIGTERM (it came at a renewal, TTL/3 after the last good one) and
	# no later than the TTL.
	[ "$ms" -ge 400 ] || fail "SIGKILL came ${ms}ms after SIGTERM"
	[ "$ms" -lt 1300 ] || fail "SIGKILL came ${ms}ms after SIGTERM"
	bg_stderr runner
	assert_stderr_line "redlock-cli: lock 'k' expired: killing the command"
	gc=$(cat "$D/grandchild")
	WAIT_TRIES=20 wait_until proc_gone "$gc"
	proc_gone "$(cat "$D/ready")"
}

@test "--kill-after 300ms SIGKILLs a command that does not exit on SIGTERM before the lock expires" {
	skip_if_slow
	local term_ns end_ns ms
	start_bg runner run k -t 1s --kill-after 300ms -- \
	    sh "$D/child.sh" TERM STAY
	wait_until child_ready
	rcli main SET k other >/dev/null
	wait_bg "$BG_PID"
	end_ns=$(now_ns)
	assert_equal "$BG_STATUS" 75
	assert_equal "$(got_count TERM)" 1
	term_ns=$(got_at)
	ms=$(( (end_ns - term_ns) / 1000000 ))
	[ "$ms" -ge 250 ] || fail "SIGKILL came ${ms}ms after SIGTERM"
	[ "$ms" -lt 600 ] || fail "SIGKILL came ${ms}ms after SIGTERM"
	bg_stderr runner
	assert_stderr_line "redlock-cli: lock 'k' expired: killing the command"
	proc_gone "$(cat "$D/ready")"
}

@test "SIGKILL of run takes the command down within 2s and the lock expires by its TTL" {
	skip_if_slow
	local child
	start_bg runner run k -t 2s -- sh "$D/child.sh" TERM STAY
	wait_until child_ready
	child=$(cat "$D/ready")
	kill -KILL "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 137
	WAIT_TRIES=40 wait_until proc_gone "$child"
	# Nobody released it: it is still there, until the TTL ends it.
	key_exists main k
	wait_until key_gone main k
}

@test "the command inherits no descriptor of redlock-cli" {
	run --separate-stderr bash -c '
	    for f in /proc/$$/fd/*; do
		fd=${f##*/}
		[ "$fd" -gt 2 ] && eval "exec $fd>&-"
	    done
	    exec redlock-cli run k -- ls -l /proc/self/fd' 3>&-
	assert_success
	[ -z "$stderr" ]
	# ls's own descriptor for the listing is 3; nothing else beyond 0-2.
	assert_equal "$(printf '%s\n' "$output" | awk 'NR > 1 { print $9 }' |
	    tr '\n' ' ')" "0 1 2 3 "
	refute_output --partial 'socket:'
	assert_line --regexp '^l.* 3 -> /proc/[0-9]+/fd$'
}

@test "the command inherits an ignored SIGHUP (nohup) and redlock-cli's own dispositions do not leak" {
	local ign
	# A command run by the same shell shows what a command inherits
	# (bash itself ignores SIGQUIT, but not for what it execs).
	run --separate-stderr bash -c '
	    trap "" HUP
	    grep SigIgn /proc/self/status
	    exec redlock-cli run k -- grep SigIgn /proc/self/status' 3>&-
	assert_success
	[ -z "$stderr" ]
	assert_equal "${#lines[@]}" 2
	assert_equal "${lines[1]}" "${lines[0]}"
	ign=$(printf '%s\n' "${lines[1]}" | awk '{ print $2 }')
	# Bit 0 is signal 1, SIGHUP.
	(( 16#$ign & 1 )) || fail "SIGHUP not ignored in the command: $ign"
}

@test "started with SIGCHLD ignored: the exit code still passes through, at once, and the command inherits the ignore" {
	# Programs that ignore SIGCHLD (to have their children reaped for
	# them) pass the ignore on through exec.  With it, the kernel neither
	# signals nor keeps the child's status: run must undo it for itself,
	# or it would learn of the end only at the next renewal, and as exit
	# status 0.  The command still gets the disposition run was given.
	local t0 t1
	t0=$(date +%s%N)
	run --separate-stderr perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or die' \
	    redlock-cli run k -t 30s -- sh -c 'exit 3'
	t1=$(date +%s%N)
	assert_failure 3
	[ -z "$stderr" ]
	# The next renewal would be 10 s away.
	[ $(( (t1 - t0) / 1000000 )) -lt 5000 ]
	key_gone main k
	# Under valgrind the command starts with valgrind's dispositions.
	[ "${REDLOCK_TEST_VALGRIND:-0}" != 1 ] || return 0
	run --separate-stderr perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or die' \
	    redlock-cli run k -- grep SigIgn /proc/self/status
	assert_success
	# Bit 16 is signal 17, SIGCHLD.
	(( 16#$(printf '%s\n' "$output" | awk '{ print $2 }') & 16#10000 )) ||
	    fail "SIGCHLD not ignored in the command: $output"
}

@test "as PID 1, a container's entry point, run reaps the command's orphans instead of leaving zombies" {
	unshare -fp --mount-proc true 2>/dev/null ||
	    skip "cannot make a PID namespace here"
	# The subshell's sleep is orphaned at once, reparented to PID 1 (us),
	# and ends while the command still runs.
	run --separate-stderr unshare -fp --mount-proc redlock-cli run k -- \
	    sh -c '(sleep 0.1 &); sleep 0.6
		grep -l "^State:.*zombie" /proc/[0-9]*/status; exit 4'
	assert_equal "$status" 4
	[ -z "$stderr" ]
	assert_output ''
	key_gone main k
}

@test "the command starts with exactly the ignored signals redlock-cli was started with" {
	# Not all zeros: make and some CI runners start us with signals
	# ignored.  What matters is that redlock-cli adds none (it ignores
	# SIGPIPE itself, and must not pass that on).
	run --separate-stderr bash -c '
	    grep SigIgn /proc/self/status
	    exec redlock-cli run k -- grep SigIgn /proc/self/status' 3>&-
	assert_success
	[ -z "$stderr" ]
	assert_equal "${#lines[@]}" 2
	assert_equal "${lines[1]}" "${lines[0]}"
}

@test "the command starts with an empty signal mask" {
	run --separate-stderr redlock-cli run k -- grep SigBlk /proc/self/status
	assert_success
	[ -z "$stderr" ]
	assert_output $'SigBlk:\t0000000000000000'
}

@test "the command gets the signal mask redlock-cli was started with" {
	need python3
	run --separate-stderr python3 -c '
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
os.execvp("redlock-cli", ["redlock-cli", "run", "k", "--",
    "grep", "SigBlk", "/proc/self/status"])' 3>&-
	assert_success
	[ -z "$stderr" ]
	# SIGUSR1 is 10: bit 9.
	assert_output $'SigBlk:\t0000000000000200'
}
