#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A lock's run history (issue 36): every end of a run or of a manual hold
# is one entry, made by the real path that ends it (a command's exit, a
# kill, a frozen server, a force, a newer run, a release, an expiry), and
# `history KEY` shows them newest first; `status` of a free lock shows
# the last one.

load helpers

setup_file() { redis_start main; }
teardown_file() { redis_stop main; }
setup() { redis_flush; }
teardown() {
	local pid
	pid=$(redis_pid main) || true
	[ -z "$pid" ] || kill -CONT "$pid" 2>/dev/null || true
	stop_bg_jobs
}

ISO='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'

# entry N FIELD: FIELD of the N-th entry (0: newest) of `history k --json`.
entry() {
	python3 -c '
import json, sys
v = json.load(sys.stdin)[int(sys.argv[1])][sys.argv[2]]
print("null" if v is None else v)' "$1" "$2" <<<"$output"
}

# outcomes: the outcomes of `history k --json`, newest first, one line.
outcomes() {
	python3 -c '
import json, sys
print(" ".join(e["outcome"] for e in json.load(sys.stdin)))' <<<"$output"
}

@test "history before anything ended: exit 1, 'no history' on stderr, nothing on stdout" {
	run --separate-stderr redlock-cli history k
	assert_failure 1
	assert_output ''
	assert_equal "$stderr" "redlock-cli: lock 'k': no history (nothing has ended under it in the last 7 days, or --history-size 0)"
	run --separate-stderr redlock-cli history k --json
	assert_failure 1
	assert_output '[]'
}

@test "runs that exit 0, exit 4 and are killed: ok, failed and signal, with their exit status, host, pid, command and durations" {
	run -0 redlock-cli run k -- sleep 0.3
	run -4 redlock-cli run k -- sh -c 'exit 4'
	run -137 redlock-cli run k -- sh -c 'kill -9 $$'
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" "signal failed ok"
	assert_equal "$(entry 0 exit)" 137
	assert_equal "$(entry 1 exit)" 4
	assert_equal "$(entry 2 exit)" 0
	assert_equal "$(entry 2 host)" "$(hostname)"
	assert_equal "$(entry 2 command)" "sleep 0.3"
	assert_equal "$(entry 1 command)" "sh -c exit 4"
	[[ $(entry 2 pid) =~ ^[0-9]+$ ]]
	(($(entry 2 held_ms) >= 300 && $(entry 2 held_ms) < 5000))
	(($(entry 2 waited_ms) >= 0 && $(entry 2 waited_ms) < 2000))
	(($(entry 2 fence) > 0 && $(entry 1 fence) > $(entry 2 fence)))
	[[ $(entry 2 started) =~ ^$ISO$ && $(entry 2 ended) =~ ^$ISO$ ]]
	assert_equal "$(entry 2 order)" null
	# Every key of the contract, and no other.
	run -0 python3 -c '
import json, sys
keys = {"outcome", "exit", "host", "pid", "order", "command", "queued",
        "started", "ended", "waited_ms", "held_ms", "fence"}
for e in json.load(sys.stdin):
    assert set(e) == keys, sorted(e)' <<<"$output"
}

@test "the text table: a header, one aligned line per entry newest first, within 80 columns for a short command" {
	run -0 redlock-cli run k -- true
	run -3 redlock-cli run k -- sh -c 'exit 3'
	run --separate-stderr redlock-cli history k
	assert_success
	assert_line -n 0 --regexp "^ENDED +OUTCOME +EXIT +HELD +WAITED +HOST +PID +COMMAND$"
	assert_line -n 1 --regexp "^$ISO failed +3 [0-9.]+m?s +[0-9.]+m?s +$(hostname) +[0-9]+  sh -c exit 3$"
	assert_line -n 2 --regexp "^$ISO ok +0 .* true$"
	assert_equal "${#lines[@]}" 3
	# Room for a command of 8 columns within 80.
	((${#lines[0]} <= 80 - 1 && ${#lines[2]} + 4 <= 80))
	# -n: the newest only.
	run -0 redlock-cli history k -n 1
	assert_equal "${#lines[@]}" 2
	assert_line -n 1 --partial failed
	run -0 redlock-cli history k --count 1 --json
	assert_equal "$(outcomes)" failed
}

@test "a frozen server makes the run lose its lock: the entry says lost, with run's exit 75, once the server is back" {
	local pid
	start_bg job --io-timeout 200ms run k -t 1s -- sleep 30
	pid=$BG_PID
	wait_until key_exists main k
	kill -STOP "$(redis_pid main)"
	wait_bg "$pid"
	assert_equal "$BG_STATUS" 75
	# The entry went when the run ended, into the frozen server's socket:
	# it is written as the server wakes (and is lost if it never does).
	kill -CONT "$(redis_pid main)"
	wait_until eval '[ "$(rcli main XLEN "{k}:history")" = 1 ]'
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" lost
	assert_equal "$(entry 0 exit)" 75
	assert_equal "$(entry 0 command)" "sleep 30"
}

@test "release --force: the run and the manual hold it removes are each one 'forced' entry" {
	start_bg job run k -- sleep 30
	wait_until key_exists main k
	run -0 redlock-cli release k --force
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 75
	run -0 redlock-cli acquire m
	run -0 redlock-cli release m --force
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" forced
	assert_equal "$(entry 0 command)" "sleep 30"
	assert_equal "$(entry 0 pid)" "$BG_PID"
	run -0 redlock-cli history m --json
	assert_equal "$(outcomes)" forced
}

@test "--queue latest: the running one is cancelled, the waiter behind it superseded, the newest runs: each in the history" {
	start_bg old run k --queue latest --cancel-running -- sleep 30
	local old=$BG_PID
	wait_until key_exists main k
	start_bg mid run k --queue latest -- true
	local mid=$BG_PID
	wait_until eval '[ "$(blocked_on main)" -ge 1 ]'
	run -0 redlock-cli run k --queue latest --cancel-running=1s -- true
	wait_bg "$mid"
	assert_equal "$BG_STATUS" 80
	wait_bg "$old"
	assert_equal "$BG_STATUS" 82
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" "ok cancelled superseded"
	assert_equal "$(entry 1 exit)" 82
	assert_equal "$(entry 2 exit)" 80
	assert_equal "$(entry 2 started)" null
	assert_equal "$(entry 2 held_ms)" null
	(($(entry 2 waited_ms) >= 0))
}

@test "--skip-outdated: a lower order than one that ran is 'outdated', with its order and exit 81" {
	run -0 redlock-cli run k --order 7 --skip-outdated -- true
	run -81 redlock-cli run k --order 5 --skip-outdated -- true
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" "outdated ok"
	assert_equal "$(entry 0 order)" 5
	assert_equal "$(entry 0 exit)" 81
	assert_equal "$(entry 1 order)" 7
}

@test "a manual hold: 'released' at its release, with the acquiring script's pid and held time" {
	local token
	# Not in $(...): its caller is this shell, not a subshell.
	redlock-cli acquire k >"$BATS_TEST_TMPDIR/token"
	token=$(cat "$BATS_TEST_TMPDIR/token")
	sleep 0.2
	run -0 redlock-cli release k --token "$token"
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" released
	assert_equal "$(entry 0 exit)" null
	assert_equal "$(entry 0 pid)" "$BASHPID"
	(($(entry 0 held_ms) >= 200))
}

@test "a manual hold left to expire: 'expired', written by the next holder, ended when its TTL ran out" {
	run -0 redlock-cli acquire k -t 300ms
	sleep 1
	run -1 redlock-cli history k --json
	assert_output '[]'
	run -0 redlock-cli run k -- true
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" "ok expired"
	(($(entry 1 held_ms) >= 290 && $(entry 1 held_ms) < 600))
	# Written once: the take after this one finds nothing more to say.
	run -0 redlock-cli run k -- true
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" "ok ok expired"
}

@test "a manual hold released after it expired: 'expired', not 'released', and not again at the next take" {
	local token
	token=$(redlock-cli acquire k -t 200ms)
	sleep 0.5
	run -3 redlock-cli release k --token "$token"
	run -0 redlock-cli run k -- true
	run -0 redlock-cli history k --json
	assert_equal "$(outcomes)" "ok expired"
}

@test "status of a free lock prints the last entry; --json has it as 'last'" {
	run -5 redlock-cli run k -- sh -c 'exit 5'
	run -1 redlock-cli status k
	assert_line -n 0 free
	assert_line -n 1 --regexp "^last: failed, exit 5, $(hostname), ended $ISO, held [0-9.]+m?s$"
	run -1 redlock-cli status k --json
	assert_output --regexp '"last":\{"outcome":"failed","exit":5,'
	# A name with no history: free, and nothing more.
	run -1 redlock-cli status other
	assert_output free
}

@test "--history-size N keeps the last N; 0 writes none; the history expires 7 days after its last entry" {
	local i
	for i in 1 2 3 4; do
		run -0 redlock-cli --history-size 3 run k -- sh -c "exit 0 # $i"
	done
	run -0 redlock-cli history k --json
	assert_equal "$(rcli main XLEN '{k}:history')" 3
	assert_equal "$(entry 0 command)" "sh -c exit 0 # 4"
	assert_equal "$(entry 2 command)" "sh -c exit 0 # 2"
	local ttl
	ttl=$(pttl '{k}:history')
	((ttl > 604790000 && ttl <= 604800000))
	run -0 redlock-cli --history-size 0 run n -- true
	refute_key main '{n}:history'
	run -64 redlock-cli --history-size 1001 run n -- true
	run -64 redlock-cli history k -n 0
}

@test "the default history keeps 1000 entries, the newest" {
	skip_if_slow "1002 holds, one process each"
	local i token
	for i in $(seq 1 1002); do
		token=$(redlock-cli acquire k) &&
		    redlock-cli release k --token "$token" || fail "hold $i"
	done
	assert_equal "$(rcli main XLEN '{k}:history')" 1000
	run -0 redlock-cli history k -n 1000 --json
	run -0 python3 -c 'import json, sys; print(len(json.load(sys.stdin)))' \
	    <<<"$output"
	assert_output 1000
}
