#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# --wait-replicas N [--wait-timeout DUR] (issue 5): WAIT after acquire and
# after every renewal; fewer acknowledgements than N means not acquired
# (released again) or, during run, a failed renewal.  A real master on TCP
# (redis_start_tcp) and a real replica of it (redis_start_replica).

load helpers

setup_file() {
	# No 5 s diskless-sync delay: a restarted replica syncs at once.
	redis_start_tcp master --repl-diskless-sync-delay 0
	echo "$REDIS_PORT" >"$BATS_FILE_TMPDIR/master.port"
	replica_start
}

teardown_file() {
	redis_stop replica
	redis_stop master
}

setup() {
	replica_up
	rcli master FLUSHALL >/dev/null
	wait_until replica_empty
	D=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg_jobs
}

# replica_start: the replica of the master (its port in the file
# redis-replica/port), done once the master counts it as online;
# REDLOCK_URL stays on the master.
replica_start() {
	local master
	master=$(cat "$BATS_FILE_TMPDIR/master.port")
	redis_start_replica replica "$master" || return 1
	echo "$REDIS_PORT" >"$BATS_FILE_TMPDIR/redis-replica/port"
	export REDLOCK_URL="redis://127.0.0.1:$master"
	wait_until master_has_online_replica
}

# replica_up: start the replica again if a test stopped it.
replica_up() {
	local pid
	pid=$(redis_pid replica) || true
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		return 0
	fi
	rm -f "$BATS_FILE_TMPDIR/redis-replica/port"
	replica_start
}

replica_port() { cat "$BATS_FILE_TMPDIR/redis-replica/port"; }

master_has_online_replica() {
	rcli master INFO replication | tr -d '\r' |
	    grep -q '^slave0:.*state=online'
}

master_has_no_replica() {
	rcli master INFO replication | tr -d '\r' |
	    grep -qx 'connected_slaves:0'
}

replica_empty() { [ "$(rcli replica DBSIZE)" = 0 ]; }
# No lock key and no metadata of KEY left on the replica (the fence
# counter stays, by design).
replica_clear_of() { [ "$(rcli replica EXISTS "$1" "{$1}:meta")" = 0 ]; }

# GET on the replica, over its TCP port as the issue describes.
replica_get() { pcli "$(replica_port)" GET "$1"; }

@test "the replica is a live replica of the master (fixture check)" {
	[ "$(pcli "$(replica_port)" ROLE | head -1)" = slave ]
	rcli master SET probe 1 >/dev/null
	wait_until eval '[ "$(replica_get probe)" = 1 ]'
}

@test "--wait-replicas 1: acquire succeeds and the replica already has the key with the token" {
	run --separate-stderr redlock-cli --wait-replicas 1 acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	token=$output
	[[ "$token" =~ ^[0-9a-f]{32}$ ]]
	# WAIT returned: no polling needed, the replica has it now.
	[ "$(replica_get k)" = "$token" ]
	[ "$(rcli master GET k)" = "$token" ]
}

@test "--wait-replicas 1 --wait-timeout 300ms with the replica stopped: acquire exits 69 and leaves no key on the master" {
	skip_if_slow
	redis_stop replica
	t0=$(now_ms)
	run --separate-stderr redlock-cli --wait-replicas 1 --wait-timeout 300ms \
	    acquire k -t 10s
	elapsed=$(( $(now_ms) - t0 ))
	echo "exit $status after ${elapsed} ms"
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: lock 'k': only 0 of 1 replicas acknowledged it within 300ms"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	key_gone master k
	key_gone master '{k}:meta'
	# It waited for the acknowledgements, and not much longer.
	[ "$elapsed" -ge 300 ] && [ "$elapsed" -lt 2000 ]
}

@test "--wait-replicas 1 with the replica stopped: run exits 69 without running the command" {
	redis_stop replica
	run --separate-stderr redlock-cli --wait-replicas 1 --wait-timeout 300ms \
	    run k -- touch "$D/ran"
	assert_failure 69
	assert_stderr_line "redlock-cli: lock 'k': only 0 of 1 replicas acknowledged it within 300ms"
	[ ! -e "$D/ran" ]
	key_gone master k
}

@test "--wait-replicas 2 with one replica: acquire exits 69 saying 1 of 2 acknowledged, no key left" {
	run --separate-stderr redlock-cli --wait-replicas 2 --wait-timeout 300ms \
	    acquire k
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: lock 'k': only 1 of 2 replicas acknowledged it within 300ms"
	key_gone master k
	key_gone master '{k}:meta'
	wait_until replica_clear_of k
}

@test "--wait-replicas 1: extend with the replica stopped exits 69 with the acknowledgement message" {
	token=$(redlock-cli --wait-replicas 1 acquire k -t 10s)
	redis_stop replica
	run --separate-stderr redlock-cli --wait-replicas 1 --wait-timeout 300ms \
	    extend k --token "$token" -t 20s
	assert_failure 69
	assert_stderr_line "redlock-cli: lock 'k': only 0 of 1 replicas acknowledged it within 300ms"
}

@test "run --wait-replicas 1 works while the replica is up: renews, exits 0, and the replica saw the lock" {
	skip_if_slow
	run --separate-stderr redlock-cli --wait-replicas 1 --wait-timeout 500ms \
	    run k -t 1s -- sh -c \
	    'redis-cli -p "$1" GET k; sleep 1.5; redis-cli -p "$1" PTTL k' \
	    sh "$(replica_port)"
	echo "$output / $stderr"
	assert_success
	[ -z "$stderr" ]
	# The replica had our token when the command started, and still
	# had the lock (renewed) after 1.5 s of a 1 s TTL.
	[[ "${lines[0]}" =~ ^[0-9a-f]{32}$ ]]
	[ "${lines[1]}" -gt 0 ]
	key_gone master k
	key_gone master '{k}:meta'
	wait_until replica_clear_of k
}

@test "run --wait-replicas 1: the replica stopping during the run fails the renewals, the child gets SIGTERM and run exits 75" {
	skip_if_slow
	start_bg holder --wait-replicas 1 --wait-timeout 200ms run k -t 1s -- \
	    sh -c 'trap "echo TERM >\"\$1/marker\"; exit 0" TERM
	           touch "$1/started"; sleep 5 & wait; touch "$1/finished"' \
	    sh "$D"
	holder=$BG_PID
	wait_until test -e "$D/started"
	redis_stop replica
	t0=$(now_ms)
	wait_bg "$holder"
	elapsed=$(( $(now_ms) - t0 ))
	echo "run ended ${elapsed} ms after the replica stopped; stderr:"
	cat "$D/holder.err"
	[ "$BG_STATUS" -eq 75 ]
	[ "$(cat "$D/marker")" = TERM ]
	[ ! -e "$D/finished" ]
	grep -qE "^redlock-cli: lock 'k' lost: .+" "$D/holder.err"
	[ "$elapsed" -lt 2000 ]
}
