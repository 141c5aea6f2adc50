#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The stress mode (tests/stress/): a short run of `redlock-cli run` under
# SIGKILLs (of pipelines and of jobs that leave a process behind too),
# server pauses, delayed writes and replica restarts must show no
# overlapping critical sections, no accepted stale write and no leaked
# lock; and the
# history checker must be able to fail: on hand-made bad histories, and on
# a live run with a "lock" that does not exclude.  `make stress` is the
# long run (16 x 200).

load helpers

STRESS="$BATS_TEST_DIRNAME/stress/stress.sh"
CHECK="$BATS_TEST_DIRNAME/stress/check.awk"
# The binary under test (make sanitize's, say), not the tree's.
export STRESS_REDLOCK_CLI="${STRESS_REDLOCK_CLI:-$REDLOCK_BUILD/redlock-cli}"

setup() {
	# stress.sh keeps its directory when a run fails: keep it here.
	export TMPDIR="$BATS_TEST_TMPDIR"
}

# check LOG-TEXT: run the checker on a hand-made history.
check() {
	printf '%s\n' "$1" >"$BATS_TEST_TMPDIR/log"
	run awk -f "$CHECK" "$BATS_TEST_TMPDIR/log"
}

# Two workers, three acquisitions, one of them SIGKILLed while holding
# (no `end`: its section ends at its worker's `exit` line), one stale
# delayed write rejected.  $1 replaces the last line (the leak check).
history() {
	cat <<EOF
config workers 2 cycles 2 ttl_ms 500 servers 1 faults 1
start 1 1 1000000 101
delay 1 1 400 1500000
end 1 1 2000000 handoff
exit 1 0 2100000
start 2 2 3000000 102
kill 2 hold 3500000
exit 2 137 3600000
start 3 1 4000000 103
accept 3 in-lock
end 3 1 5000000 ok
exit 1 0 5100000
reject 1 (last 3) late
pause 1 300 5200000
${1-checked 1}
EOF
}

@test "stress: 4 workers x 25 cycles under faults: no overlap, no stale write accepted, no leaked lock" {
	STRESS_WORKERS=4 STRESS_CYCLES=25 STRESS_KILL_MS=300 \
	    STRESS_PAUSE_MS=1500 STRESS_DELAY_PCT=10 STRESS_LONG_PCT=5 \
	    run bash "$STRESS"
	assert_success
	assert_line --regexp '^stress: [0-9]+ cycles \(100 tried\), 4 workers, 1 server, ttl 500ms, jobs: [0-9]+ pipelines [0-9]+ with a background process, faults: [0-9]+ kills \([0-9]+ of pipelines, [0-9]+ with a background process\) [0-9]+ pauses [0-9]+ delayed writes 0 replica kills, lost locks [0-9]+, overlaps 0, stale writes accepted 0, rejected [0-9]+ \([0-9]+ late, 0 in-lock\), fence order errors 0, locks leaked 0$'
}

@test "stress: pipelines and jobs that leave a process behind, SIGKILLed often: no overlap" {
	# Most jobs are pipelines or leave a process behind that writes
	# after the command exited; redlock-cli is killed every 150 ms or so.
	STRESS_WORKERS=3 STRESS_CYCLES=20 STRESS_KILL_MS=150 \
	    STRESS_PAUSE_MS=100000 STRESS_PIPE_PCT=45 STRESS_BG_PCT=45 \
	    run bash "$STRESS"
	assert_success
	assert_line --regexp '^stress: .*, jobs: [1-9][0-9]* pipelines [1-9][0-9]* with a background process, faults: [1-9][0-9]* kills .*, overlaps 0, stale writes accepted 0, rejected [0-9]+ \([0-9]+ late, 0 in-lock\), .*locks leaked 0$'
}

@test "stress: a quorum of 3 under faults: no overlap, no stale write accepted, no leaked lock" {
	STRESS_SERVERS=3 STRESS_WORKERS=3 STRESS_CYCLES=15 \
	    STRESS_KILL_MS=300 STRESS_PAUSE_MS=1500 run bash "$STRESS"
	assert_success
	assert_line --regexp '^stress: .* 3 servers, .*overlaps 0, stale writes accepted 0, .*locks leaked 0$'
}

@test "stress: a lock that does not exclude is caught: overlaps, exit 1" {
	# A stand-in for redlock-cli: hands out growing fences, takes no lock.
	cat >"$BATS_TEST_TMPDIR/no-lock" <<'EOF'
#!/bin/bash
while [ "$1" != -- ] && [ "$1" != -c ]; do shift; done
if [ "$1" = -c ]; then set -- sh -c "$2"; else shift; fi
exec 9>>"$TMPDIR/fence"
flock 9
n=$(( $(cat "$TMPDIR/fence.n" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$TMPDIR/fence.n"
flock -u 9
exec 9>&-
REDLOCK_FENCE=$n REDLOCK_TTL_MS=500 exec "$@"
EOF
	chmod +x "$BATS_TEST_TMPDIR/no-lock"
	STRESS_REDLOCK_CLI="$BATS_TEST_TMPDIR/no-lock" STRESS_FAULTS=0 \
	    STRESS_WORKERS=4 STRESS_CYCLES=10 STRESS_HOLD_MS=20 \
	    run bash "$STRESS"
	assert_failure 1
	assert_line --regexp '^stress: 40 cycles \(40 tried\), .*, overlaps [1-9][0-9]*, '
	assert_line --partial 'check: OVERLAP: fence '
}

@test "stress: a redlock-cli that never exits fails the run at its bound, saying where it is blocked" {
	# A stand-in that hangs.  Without the bound, the run (and CI) waited
	# for it for ever; timeout(1) is only this test's own backstop.
	printf '#!/bin/sh\nexec sleep 600\n' >"$BATS_TEST_TMPDIR/hang"
	chmod +x "$BATS_TEST_TMPDIR/hang"
	STRESS_REDLOCK_CLI="$BATS_TEST_TMPDIR/hang" STRESS_FAULTS=0 \
	    STRESS_WORKERS=2 STRESS_CYCLES=1 STRESS_CYCLE_LIMIT_S=2 \
	    run timeout 60 bash "$STRESS"
	assert_failure 2
	assert_output --regexp 'stress: worker [12] exited early; see '
	assert_output --regexp 'redlock-cli \(pid [0-9]+\) still runs after 2 s in cycle 1'
	assert_output --regexp 'stress-worker [12]:   pid [0-9]+ wchan [^ ]* syscall '
}

@test "check.awk: a clean history passes, counting what it saw" {
	check "$(history)"
	assert_success
	assert_line 'stress: 2 cycles (3 tried), 2 workers, 1 server, ttl 500ms, jobs: 0 pipelines 0 with a background process, faults: 1 kills (0 of pipelines, 0 with a background process) 1 pauses 1 delayed writes 0 replica kills, lost locks 0, overlaps 0, stale writes accepted 0, rejected 1 (1 late, 0 in-lock), fence order errors 0, locks leaked 0'
}

# history up to fence 3, then fence 3 as a job of worker 1 that leaves a
# background process behind: its child ends at 5 ms, the process it left
# writes and ends at 5.6 ms, before the worker's exit line at 5.7 ms; then
# worker 2's fence 4, starting at $1.
bg_history() {
	history | sed '/^start 3 1/,$d'
	cat <<EOF
start 3 1 4000000 103 bg
accept 3 in-lock
end 3 1 5000000 ok
proc 3 1 4900000 104 bg
accept 3 in-lock
procend 3 1 5600000 104 ok
exit 1 0 5700000
start 4 2 $1 105 plain
accept 4 in-lock
end 4 2 6000000 ok
exit 2 0 6100000
checked 1
EOF
}

@test "check.awk: a section lasts until its job's last process has ended, the one it left behind included" {
	check "$(bg_history 5650000)"
	assert_success
	assert_line --regexp '^stress: .*, jobs: 0 pipelines 1 with a background process, .*, overlaps 0, '
	# Fence 4 starts at 5.55 ms, while fence 3's background process
	# still runs: an overlap, though fence 3's child had ended.
	check "$(bg_history 5550000)"
	assert_failure 1
	assert_line --regexp '^stress: .*, overlaps 1, '
	assert_line --partial 'check: OVERLAP: fence 4 (worker 2, 5.550ms..6.000ms, closed by end) started 0.050ms before fence 3 (worker 1, 4.000ms..5.600ms, closed by end) ended'
}

@test "check.awk: a job process with no end line closes its section at the worker's exit; one that started after that exit never does" {
	# The process left behind was killed: no procend.
	check "$(bg_history 5800000 | sed '/^procend 3 1/d')"
	assert_success
	assert_line --regexp '^stress: .*, overlaps 0, '
	# It started after its worker's exit line: run let go of it.
	check "$(bg_history 5800000 | sed '/^procend 3 1/d; s/^proc 3 1 4900000/proc 3 1 5750000/')"
	assert_failure 1
	assert_line --regexp '^stress: .*, overlaps 1, '
	assert_line --partial 'closed by open'
}

@test "check.awk: a pipeline's sink may log before its child, or alone; faults are counted by kind" {
	check "$(history | sed '/^checked 1$/d'; cat <<EOF
proc 4 1 5990000 104 sink
start 4 1 6000000 105 pipe
kill 1 hold 6500000 pipe
exit 1 137 6600000
replica-kill 1 6700000
replica-restart 1 6800000
checked 1
EOF
)"
	assert_success
	assert_line 'stress: 2 cycles (4 tried), 2 workers, 1 server, ttl 500ms, jobs: 1 pipelines 0 with a background process, faults: 2 kills (1 of pipelines, 0 with a background process) 1 pauses 1 delayed writes 1 replica kills, lost locks 0, overlaps 0, stale writes accepted 0, rejected 1 (1 late, 0 in-lock), fence order errors 0, locks leaked 0'
	# A job stopped before its child logged at all: the sink's line opens
	# the section, and a holder that starts before the job's exit line
	# overlaps it.
	check "$(history | sed '/^checked 1$/d'; printf 'proc 9 1 5990000 104 sink\nexit 1 137 6600000\nchecked 1\n')"
	assert_success
	check "$(history | sed '/^checked 1$/d'; printf 'proc 9 1 5990000 104 sink\nstart 10 2 6500000 106\nend 10 2 6550000 0\nexit 1 137 6600000\nchecked 1\n')"
	assert_failure 1
	assert_line --regexp '^stress: .*, overlaps 1, '
}

@test "check.awk: overlapping critical sections fail" {
	# Fence 1's section now ends after fence 2's began.
	check "$(history | sed 's/^end 1 1 2000000/end 1 1 3200000/')"
	assert_failure 1
	assert_line --regexp '^stress: .*, overlaps 1, '
	assert_line --partial 'check: OVERLAP: fence 2 (worker 2, 3.000ms..3.600ms, closed by exit) started 0.200ms before fence 1 (worker 1, 1.000ms..3.200ms, closed by end) ended'
}

@test "check.awk: a SIGKILLed holder's section lasts until its worker's exit line" {
	# Fence 3 starts after fence 2's kill but before its worker's exit.
	check "$(history | sed 's/^start 3 1 4000000/start 3 1 3550000/')"
	assert_failure 1
	assert_line --regexp '^stress: .*, overlaps 1, '
	assert_line --partial 'closed by exit'
	# With no exit line at all it never ends.
	check "$(history | sed '/^exit 2 137/d')"
	assert_failure 1
	assert_line --regexp '^stress: .*, overlaps 1, '
}

@test "check.awk: a stale write accepted fails" {
	check "$(history | sed 's/^reject 1 (last 3) late/accept 1 late/')"
	assert_failure 1
	assert_line --regexp '^stress: .*, stale writes accepted 1, '
	assert_line --partial 'stale write accepted: fence 1 after 3'
}

@test "check.awk: an in-lock write rejected, or fences that do not grow, fail" {
	check "$(history | sed 's/^accept 3 in-lock/reject 3 (last 7) in-lock/')"
	assert_failure 1
	assert_line --regexp '^stress: .*, rejected 2 \(1 late, 1 in-lock\), '
	check "$(history | sed 's/^\(start\|end\|accept\) 3 /\1 0 /')"
	assert_failure 1
	assert_line --regexp '^stress: .*, fence order errors 1, '
}

@test "check.awk: a leaked lock, a missing leak check, a torn line fail" {
	check "$(history "$(printf 'leaked 1 stress 480\nchecked 1')")"
	assert_failure 1
	assert_line --regexp '^stress: .*, locks leaked 1$'
	check "$(history "note no leak check")"
	assert_failure 1
	assert_line --regexp '^stress: .*, locks leaked unchecked$'
	check "$(history "start 9 2 60000end 8 1 1 ok")"
	assert_failure 1
	assert_line --partial 'malformed'
}
