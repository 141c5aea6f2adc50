#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Nothing of a job outlives its lock (the "Safety" issue): every process
# the command starts, also those that leave its process group or session,
# is run's to wait for, to signal and to kill.
#
#   SIGKILL of redlock-cli: a pipeline, a background job, a setsid()
#	descendant and a double-forked one are all gone within 1.5 s
#   SIGTERM to redlock-cli: the command's whole group gets it; the lock
#	is held until the last of them has exited
#   a process the command leaves behind: the lock stays held (status,
#	a second run -n) until it exits; --release-on-exit: released when
#	the command exits
#   a lost lock: a stray in another session gets the signal, and SIGKILL
#	at the lock's expiry if it ignores that
#   the guardian itself killed: what is left of the job is killed
#   the guardian's own end: it waits for the release, and is gone with
#	redlock-cli, also when redlock-cli is killed while it releases
#   a run that waits has its guardian while it waits: gone when the wait
#	ends without the lock or redlock-cli is killed meanwhile; killed
#	itself meanwhile, the run starts its command with a new one; it
#	keeps no copy of redlock-cli's connections, and the command still
#	gets the caller's descriptors; stopped at the take, the lock is
#	renewed until it is continued and starts the command
#
# The job's processes write their pids to $D/pids (one line each, before
# they exec or wait); "gone" is proc_gone (a zombie counts: it has ended).

load ../helpers
load faults

setup_file() {
	redis_start tree
}

teardown_file() {
	redis_stop tree
}

setup() {
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	redis_flush tree
	write_stray
}

# Our runs first, then whatever they recorded, by pid; never leave the
# server stopped.
teardown() {
	local pid
	kill -CONT "$(redis_pid tree)" 2>/dev/null || true
	kill_bg_runs
	for pid in $(cat "$D/pids" "$D/cmdpid" "$D/guard" 2>/dev/null); do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# $D/stray.sh [linger]: a process of the job.  Records its pid in
# $D/pids; on SIGTERM appends "TERM <epoch ns>" to $D/got and exits 143,
# or with "linger" stays until $D/go exists; without a signal it runs
# until $D/go exists (exit 0), at most 30 s (exit 99).  Its stderr goes to
# $D/stray.err: its sleep gets the group's signals too, and sh says so.
write_stray() {
	cat >"$D/stray.sh" <<EOF
exec 2>>"$D/stray.err"
echo \$\$ >>"$D/pids"
linger=\${1-}
trap 'echo "TERM \$(date +%s%N)" >>"$D/got"; [ -n "\$linger" ] || exit 143' TERM
n=0
while [ ! -e "$D/go" ]; do
	[ \$n -ge 600 ] && exit 99
	sleep 0.05
	n=\$((n + 1))
done
exit 0
EOF
}

# recorded N: at least N pids are in $D/pids.
recorded() { [ "$(cat "$D/pids" 2>/dev/null | wc -l)" -ge "$1" ]; }

# all_gone: every recorded pid has ended.
all_gone() {
	local pid
	for pid in $(cat "$D/pids"); do
		proc_gone "$pid" || return 1
	done
}

# any_alive: some recorded pid still runs.
any_alive() {
	local pid
	for pid in $(cat "$D/pids"); do
		proc_alive "$pid" && return 0
	done
	return 1
}

# killed_within_1500ms N ARGS...: run ARGS in the background, wait for N
# recorded pids, SIGKILL redlock-cli: all of them are gone within 1.5 s.
killed_within_1500ms() {
	local n=$1
	shift
	start_bg runner "$@"
	wait_until recorded "$n" ||
	    fail "only $(cat "$D/pids" 2>/dev/null | wc -l) of $n pids recorded: $(cat "$D/runner.err")"
	kill -KILL "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 137
	WAIT_TRIES=30 wait_until all_gone ||
	    fail "still running 1.5 s after redlock-cli's SIGKILL: $(for p in $(cat "$D/pids"); do proc_alive "$p" && ps -o pid=,sid=,pgid=,args= -p "$p"; done)"
}

# A shell that records its pid and then execs CMD...: for -c strings.
rec() { printf 'sh -c '\''echo $$ >>"%s/pids"; exec %s'\''' "$D" "$*"; }

@test "SIGKILL of redlock-cli during -c 'sleep 30 | cat': both ends of the pipeline are gone within 1.5 s" {
	slow_skip
	killed_within_1500ms 2 run k -t 30s -c "$(rec sleep 30) | $(rec cat)"
}

@test "SIGKILL of redlock-cli during -c 'sleep 30 & wait': the background sleep is gone within 1.5 s" {
	slow_skip
	killed_within_1500ms 1 run k -t 30s -c "$(rec sleep 30) & wait"
}

@test "SIGKILL of redlock-cli: a descendant that called setsid, and one that double-forked into it, are gone within 1.5 s" {
	slow_skip
	# setsid(1) execs in place (a background job leads no group): a
	# new session.  The second one's parent exits at once: it is
	# re-parented, in a session of its own, while the command runs on.
	killed_within_1500ms 2 run k -t 30s -c "
	    setsid $(rec sleep 30) &
	    (setsid $(rec sleep 30) &)
	    sleep 30"
}

@test "SIGTERM to redlock-cli running -c 'sleep 30 & wait': the sleep gets it too, and run exits with the command's 143" {
	start_bg runner run k -c "$(rec sleep 30) & wait"
	wait_until recorded 1
	kill -TERM "$BG_PID"
	wait_bg "$BG_PID"
	# Within wait_bg's 20 s, so not after sleep's 30 s: TERM ended it.
	assert_equal "$BG_STATUS" 143
	all_gone || fail "sleep is still running"
	assert_equal "$(cat "$D/runner.err")" ""
	refute_key tree k
}

@test "SIGTERM to redlock-cli: the lock is held until the last process of the group that got it has exited" {
	start_bg runner run k -c "sh '$D/stray.sh' linger & wait"
	wait_until recorded 1
	kill -TERM "$BG_PID"
	wait_until test -s "$D/got" || fail "the background process got no SIGTERM"
	assert_equal "$(grep -c '^TERM ' "$D/got")" 1
	# The command (sh) died of it; its background process lingers.
	any_alive || fail "the background process is gone already"
	run -0 redlock-cli status k
	run -1 redlock-cli run k -n -- true
	touch "$D/go"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 143
	refute_key tree k
}

@test "a process left behind by the command keeps the lock held until it exits; -v says so" {
	start_bg runner -v run k -c "$(rec sleep 30) & exit 3"
	wait_until recorded 1
	wait_until grep -q 'holding lock' "$D/runner.err" ||
	    fail "no line about holding the lock: $(cat "$D/runner.err")"
	run -0 redlock-cli status k
	run --separate-stderr redlock-cli run k -n -- true
	assert_failure 1
	assert_busy_line k
	key_present tree k
	kill -TERM "$(cat "$D/pids")"
	wait_bg "$BG_PID"
	# The command's status, not the leftover's.
	assert_equal "$BG_STATUS" 3
	refute_key tree k
	bg_stderr runner
	assert_stderr_match "redlock-cli: acquired lock 'k' in [0-9.]+m?s, fence [0-9]+"
	assert_stderr_match "redlock-cli: command exited 3; holding lock 'k' until its 1 remaining process exits"
	assert_stderr_match "redlock-cli: released lock 'k'"
	# The audit line (-v), held until the leftover's end.
	assert_stderr_match "redlock-cli: run 'k' done: fence [0-9]+, waited [0-9.]+m?s, held [0-9.]+m?s, exit 3"
	# and its start line
	assert_stderr_match "redlock-cli: run 'k' start: fence [0-9]+, command: .*"
	assert_equal "$(printf '%s\n' "$stderr" | wc -l)" 5
}

@test "--release-on-exit releases the lock when the command exits, leaving its background process running" {
	start_bg runner -v run k --release-on-exit -c "$(rec sleep 30) & exit 0"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	refute_key tree k
	recorded 1 || fail "the background process never started"
	any_alive || fail "the background process did not outlive the command"
	bg_stderr runner
	assert_stderr_match "redlock-cli: command exited 0; releasing lock 'k' while 1 of its processes still runs \(--release-on-exit\)"
	assert_stderr_match "redlock-cli: released lock 'k'"
	kill -TERM "$(cat "$D/pids")"
	wait_until all_gone
}

@test "a signal sent to redlock-cli after the command exited reaches what it left behind, even in another session" {
	start_bg runner -v run k -c "setsid sh '$D/stray.sh' & exit 0"
	wait_until recorded 1
	wait_until grep -q 'holding lock' "$D/runner.err"
	kill -TERM "$BG_PID"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	assert_equal "$(grep -c '^TERM ' "$D/got")" 1
	all_gone
	refute_key tree k
}

@test "a lost lock signals a stray in another session too, and run exits 75 once it has gone" {
	start_bg runner run k -t 1s -c "setsid sh '$D/stray.sh' & wait"
	wait_until recorded 1
	rcli tree SET k other >/dev/null
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(grep -c '^TERM ' "$D/got")" 1
	all_gone
	bg_stderr runner
	assert_stderr_match "redlock-cli: lock 'k' lost: another owner holds it; last confirmed [0-9.]+m?s ago; sending SIGTERM to the command"
	assert_equal "$(rcli tree GET k)" other
}

@test "a stray in another session that ignores the lost lock's SIGTERM is SIGKILLed when the lock expires" {
	slow_skip
	start_bg runner run k -t 1s -c "setsid sh '$D/stray.sh' linger & exit 0"
	wait_until recorded 1
	rcli tree SET k other >/dev/null
	wait_until test -s "$D/got" || fail "the stray got no SIGTERM"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	all_gone || fail "the stray survived the lock's expiry"
	[ ! -e "$D/go" ]
	bg_stderr runner
	assert_stderr_line "redlock-cli: lock 'k' expired: killing the command"
}

@test "the guardian killed: the command dies with it, what it left is killed, and run says so and exits 137" {
	local guard
	start_bg runner run k -c "echo \$\$ >'$D/cmdpid'; setsid sh '$D/stray.sh' & wait"
	wait_until recorded 1
	wait_until test -s "$D/cmdpid"
	guard=$(awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$(cat "$D/cmdpid")/stat")
	[ "$guard" != "$BG_PID" ] || fail "the command's parent is redlock-cli itself"
	kill -KILL "$guard"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 137
	all_gone
	proc_gone "$(cat "$D/cmdpid")"
	refute_key tree k
	bg_stderr runner
	assert_stderr_line "redlock-cli: the command's guardian (pid $guard) was killed by SIGKILL: killing what is left of the job"
}

# Found by the model checker (seed 1677783090): the command ended while
# its guardian was stopped, so nobody told run; the guardian was killed
# then.  run, the job's subreaper, gets the command's zombie and its status.
# The command stops its guardian at once, maybe before the guardian ran
# again after starting it: so the command itself says that it runs (CI's
# fresh-root leg, on one CPU 3 runs of 6, ran into that before).
@test "the guardian stopped when the command ends, then killed: run exits with the command's own status" {
	local guard cmd
	start_bg runner run k -c "echo \$PPID >'$D/guard'; echo \$\$ >'$D/cmdpid'; kill -STOP \$PPID; exit 5"
	wait_until test -s "$D/cmdpid"
	cmd=$(cat "$D/cmdpid")
	guard=$(cat "$D/guard")
	# Exited, but not reaped: its guardian is stopped.
	wait_until eval '[ "$(awk '"'"'{ sub(/.*\) /, ""); print $1 }'"'"' "/proc/$cmd/stat" 2>/dev/null)" = Z ]' ||
	    fail "the command did not end as a zombie"
	kill -KILL "$guard"
	wait_bg "$BG_PID"
	bg_stderr runner
	[[ $stderr != *"before it started the command"* ]] ||
	    fail "run says no command started: $stderr"
	assert_equal "$BG_STATUS" 5
	refute_key tree k
}

@test "once run has exited, the command's guardian is gone too" {
	start_bg runner run k -c "echo \$PPID >'$D/guard'"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	wait_until proc_gone "$(cat "$D/guard")" ||
	    fail "the guardian outlived run"
}

# The guardian's exit is kept out of the way of the release (it waits for
# redlock-cli to close its end), but never outlives redlock-cli.
@test "the guardian waits for the release, and exits when redlock-cli is killed while it releases" {
	local guard
	start_bg runner run k -c "echo \$PPID >'$D/guard'; echo \$\$ >'$D/cmdpid'; kill -STOP $(redis_pid tree)"
	wait_until test -s "$D/cmdpid"
	wait_until proc_gone "$(cat "$D/cmdpid")"
	guard=$(cat "$D/guard")
	sleep 0.3
	proc_alive "$BG_PID" || fail "run did not wait for the frozen server's answer"
	proc_alive "$guard" || fail "the guardian exited before the lock was released"
	kill -KILL "$BG_PID"
	wait_until proc_gone "$guard" || fail "the guardian outlived redlock-cli"
	kill -CONT "$(redis_pid tree)"
}

# children_of PID: the pids whose parent is PID, from /proc.
children_of() {
	local f stat
	for f in /proc/[0-9]*/stat; do
		read -r stat <"$f" 2>/dev/null || continue
		stat=${stat##*) }	# "STATE PPID ..."
		stat=${stat#* }
		[ "${stat%% *}" = "$1" ] || continue
		f=${f#/proc/}
		echo "${f%/stat}"
	done
}

# guardian_of PID: the one child of a waiting run PID (its guardian),
# once there is one, in $D/guard.
guardian_of() {
	local kids
	kids=$(children_of "$1")
	[ -n "$kids" ] && [ "$(wc -w <<<"$kids")" = 1 ] || return 1
	echo "$kids" >"$D/guard"
}

# A waiter forks its guardian before the lock is free, so that the
# command starts without a fork once it is (supervise_pre_start).
@test "a run that waits has its guardian already; it is gone once the wait ends without the lock" {
	local guard
	redlock-cli acquire k -t 30s >/dev/null
	start_bg waiter run k -w 1500ms -- true
	wait_until guardian_of "$BG_PID" ||
	    fail "no guardian while waiting: $(children_of "$BG_PID")"
	guard=$(cat "$D/guard")
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 1
	wait_until proc_gone "$guard" || fail "the waiter's guardian outlived it"
}

@test "a waiting run killed with SIGKILL leaves no guardian behind" {
	redlock-cli acquire k -t 30s >/dev/null
	start_bg waiter run k -- true
	wait_until guardian_of "$BG_PID" || fail "no guardian while waiting"
	kill -KILL "$BG_PID"
	wait_until proc_gone "$(cat "$D/guard")" ||
	    fail "the guardian outlived the killed waiter"
}

@test "the waiting run's guardian killed meanwhile: the command still runs, under a new one, with its lock's fence" {
	local tok old
	tok=$(redlock-cli acquire k -t 30s)
	start_bg waiter run k -c "echo \$PPID >'$D/guard2'; echo \$REDLOCK_FENCE >'$D/fence'"
	wait_until guardian_of "$BG_PID" || fail "no guardian while waiting"
	old=$(cat "$D/guard")
	kill -KILL "$old"
	wait_until proc_gone "$old"
	redlock-cli release k --token "$tok"
	wait_bg "$BG_PID"
	bg_stderr waiter
	assert_equal "$BG_STATUS" 0
	[ -s "$D/fence" ] || fail "the command did not run: $stderr"
	assert_regex "$(cat "$D/fence")" '^[0-9]+$'
	[ "$(cat "$D/guard2")" != "$old" ] || fail "the dead guardian started it"
}

# Found by the model checker (seed 942169812): the guardian killed after
# the lock was taken, before it started the command.  The command never
# runs, the lock is given back, and run says what happened, as when a
# guardian is killed later: 137, not 69 ("Redis unavailable").
@test "a waiting run's guardian killed after the take, before the command starts: no command, lock released, exit 137 naming it" {
	local tok guard
	tok=$(redlock-cli acquire k -t 30s)
	start_bg waiter -v run k -t 3s -c "touch '$D/ran'"
	wait_until guardian_of "$BG_PID" || fail "no guardian while waiting"
	guard=$(cat "$D/guard")
	# Stopped, it cannot start the command when told to.
	kill -STOP "$guard"
	redlock-cli release k --token "$tok"
	wait_until key_present tree k || fail "the waiter did not take the lock"
	sleep 0.2
	kill -KILL "$guard"
	wait_bg "$BG_PID"
	bg_stderr waiter
	assert_equal "$BG_STATUS" 137
	[ ! -e "$D/ran" ] || fail "the command ran"
	refute_key tree k
	assert_stderr_line "redlock-cli: the command's guardian (pid $guard) was killed by SIGKILL before it started the command"
}

# waiter_stopped_guardian TTL: a waiting run whose guardian is stopped
# (so that it cannot start the command when told to) takes the lock;
# its token in $D/tok, the guardian's pid in $D/guard, the run's in BG_PID.
waiter_stopped_guardian() {
	local tok
	tok=$(redlock-cli acquire k -t 30s)
	start_bg waiter -v run k -t "$1" -c "echo \$REDLOCK_TOKEN >'$D/ran'"
	wait_until guardian_of "$BG_PID" || fail "no guardian while waiting"
	kill -STOP "$(cat "$D/guard")"
	redlock-cli release k --token "$tok"
	wait_until key_present tree k || fail "the waiter did not take the lock"
	rcli tree GET k >"$D/tok"
}

# continued_guardian_ran: continue the guardian of waiter_stopped_guardian;
# the command ran with the lock's token, run exits 0 and releases it.
continued_guardian_ran() {
	kill -CONT "$(cat "$D/guard")"
	wait_bg "$BG_PID"
	bg_stderr waiter
	assert_equal "$BG_STATUS" 0
	assert_equal "$(cat "$D/ran")" "$(cat "$D/tok")"
	refute_key tree k
}

# Found by the model checker (3 servers, seed 463505665): the guardian
# stopped when the lock was taken, continued past the safety margin.  run
# renews while it waits for the command's start, as it does while the
# command runs: the command starts under a lock that is still safely ours,
# and run exits with its status, not 75 ("lost") at the command's start.
@test "a waiting run's guardian stopped at the take, continued past the safety margin: the lock is renewed, the command runs, exit 0" {
	waiter_stopped_guardian 3s
	sleep 2.6		# the margin ends at 2.25 s, the lock at 3 s
	continued_guardian_ran
}

# Stopped for longer than the TTL: the lock stays ours, renewed, for as long
# as the guardian is stopped (a stopped job keeps its lock, as with
# SIGTSTP), and the command runs once it is continued.
@test "a waiting run's guardian stopped at the take for longer than the TTL: the lock stays ours, the command runs when continued" {
	waiter_stopped_guardian 2s
	sleep 3
	assert_equal "$(rcli tree GET k)" "$(cat "$D/tok")"
	proc_alive "$BG_PID" || fail "run gave up the stopped guardian"
	[ ! -e "$D/ran" ] || fail "the command ran under a stopped guardian"
	continued_guardian_ran
}

# The same, and the server stops answering too: the lock is lost (the
# renewals fail) and expires while the guardian is stopped.  Continued, the
# guardian finds the lost lock's requests waiting and never starts the
# command, on a lock that may be someone else's by now; run says so and
# exits 69, as when a take comes too late to start the command.
@test "a waiting run's guardian stopped at the take, the lock lost meanwhile: the command never starts, exit 69" {
	local guard
	waiter_stopped_guardian 2s
	guard=$(cat "$D/guard")
	kill -STOP "$(redis_pid tree)"
	wait_until grep -q "killing the command" "$D/waiter.err" ||
	    fail "the lock was not lost: $(cat "$D/waiter.err")"
	kill -CONT "$(redis_pid tree)"
	kill -CONT "$guard"
	wait_bg "$BG_PID"
	bg_stderr waiter
	assert_equal "$BG_STATUS" 69
	# Started, it would have been killed at once: the last line says so.
	[[ $stderr != *"killed by SIG"* ]] && [ ! -e "$D/ran" ] ||
	    fail "the command started after its lock was lost: $stderr"
	assert_stderr_line "redlock-cli: cannot start the command: lock 'k' was lost before its guardian (pid $guard) could start it"
	wait_until proc_gone "$guard" || fail "the guardian outlived run"
}

# sockets_of PID: how many of its descriptors are sockets.
sockets_of() {
	local f n=0
	for f in /proc/"$1"/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) == socket:* ]] && n=$((n + 1))
	done
	echo "$n"
}

# The guardian forked during the wait closes its copies of redlock-cli's
# descriptors (a copy of the waiting connection would keep it open on the
# server after redlock-cli gave it up), and only those: a descriptor the
# caller gave the run still reaches the command.
@test "a waiting run's guardian keeps no copy of its connections, and the command still gets the caller's descriptors" {
	local tok
	tok=$(redlock-cli acquire k -t 30s)
	redlock-cli run k -c "echo handed >&5" </dev/null >"$D/waiter.out" \
	    2>"$D/waiter.err" 3>&- 5>"$D/five" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
	wait_until guardian_of "$BG_PID" || fail "no guardian while waiting"
	assert_equal "$(sockets_of "$BG_PID")" 2	# its connection, the pair
	assert_equal "$(sockets_of "$(cat "$D/guard")")" 1	# the pair only
	redlock-cli release k --token "$tok"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	assert_equal "$(cat "$D/five")" handed
}
