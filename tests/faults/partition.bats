#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Real partitions (issue 39): client and server hosts as network
# namespaces (tests/net/net.py), three real redis-servers, and faults made
# with nftables inside a client host's namespace: a SYN dropped rather than
# refused, one direction cut, established connections that hang with no
# RST.  Clients run with `ip netns exec`.  Skips with one line where
# namespaces cannot be made (not root, no nftables, a sandbox).

load ../helpers

NET="$ROOT/tests/net/net.py"
TTL=3

setup_file() {
	skip_if_slow
	need python3 redis-server nft ip
	local why
	why=$(python3 "$NET" can) || skip "network namespaces: $why"
	export NETDIR="$BATS_FILE_TMPDIR/net"
	# Owned by this file's bats process: a network whose owner is gone
	# (the run SIGKILLed) is swept by the next `up`.
	python3 "$NET" up "$NETDIR" --servers 3 --owner "$$" >"$BATS_FILE_TMPDIR/servers" || return 1
	URLS="$(awk '{ printf "-u %s ", $1 }' "$BATS_FILE_TMPDIR/servers")"
	URL1="$(awk 'NR == 1 { print $1 }' "$BATS_FILE_TMPDIR/servers")"
	export URLS URL1 OWNER=$$
}

teardown_file() {
	[ -z "${NETDIR:-}" ] || python3 "$NET" down "$NETDIR"
}

teardown() {
	# Every fault healed, whatever the test did.
	local f
	for f in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["faults"]))' \
	    "$NETDIR/net.json" 2>/dev/null); do
		python3 "$NET" heal "$NETDIR" "$f"
	done
}

# on HOST redlock-cli ARGS...: redlock-cli on client host HOST (c1, c2).
on() {
	local host=$1
	shift
	ip netns exec "rlnet-$OWNER-$host" "$REDLOCK_BUILD/redlock-cli" "$@"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# A command that logs its start and its SIGTERM (with times in ms), then
# sleeps: the lock's holder.
holder_cmd() {
	echo "echo start \$((\$(date +%s%N) / 1000000)) >>$1; trap 'echo term \$((\$(date +%s%N) / 1000000)) >>$1; exit 143' TERM; sleep $2 & wait"
}

wait_for_line() {
	local _
	for _ in $(seq 1 100); do
		grep -q "^$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

@test "a run cut off from the majority stops its command before the TTL ends, exits 75, and the other host then takes the lock" {
	local log="$BATS_TEST_TMPDIR/cs" cut t_cut t_term
	# shellcheck disable=SC2086
	on c1 $URLS run part1 -t "${TTL}s" -- sh -c "$(holder_cmd "$log" 20)" \
	    >"$BATS_TEST_TMPDIR/out" 2>&1 &
	local pid=$!
	wait_for_line "$log" start
	cut=$(python3 "$NET" cut "$NETDIR" c1 1,2)
	t_cut=$(now_ms)
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 75
	t_term=$(awk '$1 == "term" { print $2 }' "$log")
	[ -n "$t_term" ] || fail "the command got no SIGTERM: $(cat "$BATS_TEST_TMPDIR/out")"
	echo "SIGTERM $((t_term - t_cut)) ms after the cut" >&3
	[ $((t_term - t_cut)) -lt $((TTL * 1000)) ] ||
	    fail "SIGTERM $((t_term - t_cut)) ms after the cut, TTL ${TTL}s"
	# The other host reaches the majority, and gets the lock once its
	# TTL has passed (the cut host still holds one server).
	# shellcheck disable=SC2086
	run -0 on c2 $URLS run part1 -w 6 -t 2s -- echo taken
	assert_output taken
	python3 "$NET" heal "$NETDIR" "$cut"
}

@test "a -w waiter that has seen the lock busy rides out a short partition and runs" {
	local log="$BATS_TEST_TMPDIR/cs" cut
	# shellcheck disable=SC2086
	on c2 $URLS run part2 -t "${TTL}s" -- sh -c "$(holder_cmd "$log" 3)" &
	local holder=$!
	wait_for_line "$log" start
	# shellcheck disable=SC2086
	on c1 $URLS run part2 -w 10 -t "${TTL}s" -- echo ran >"$BATS_TEST_TMPDIR/out" 2>&1 &
	local waiter=$!
	sleep 0.5
	cut=$(python3 "$NET" cut "$NETDIR" c1 1,2,3)
	sleep 1.5
	python3 "$NET" heal "$NETDIR" "$cut"
	local rc=0
	wait "$waiter" || rc=$?
	assert_equal "$rc" 0
	run cat "$BATS_TEST_TMPDIR/out"
	assert_output ran
	wait "$holder"
}

@test "a one-way cut (replies dropped) is seen within the I/O timeout and the command is stopped before the TTL ends" {
	local log="$BATS_TEST_TMPDIR/cs" cut t_cut t_term
	on c1 -u "$URL1" -v run part3 -t "${TTL}s" --io-timeout 1s -- sh -c "$(holder_cmd "$log" 20)" \
	    >"$BATS_TEST_TMPDIR/out" 2>&1 &
	local pid=$!
	wait_for_line "$log" start
	cut=$(python3 "$NET" cut "$NETDIR" c1 1 oneway)
	t_cut=$(now_ms)
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 75
	run cat "$BATS_TEST_TMPDIR/out"
	assert_output --partial "no reply within 1s"
	assert_output --partial "lost"
	t_term=$(awk '$1 == "term" { print $2 }' "$log")
	[ -n "$t_term" ] && [ $((t_term - t_cut)) -lt $((TTL * 1000)) ] ||
	    fail "SIGTERM ${t_term:-never}, cut at $t_cut, TTL ${TTL}s"
	python3 "$NET" heal "$NETDIR" "$cut"
}

@test "a connection that hangs (no RST) is given up after the I/O timeout, and the run reconnects and keeps its lock" {
	local log="$BATS_TEST_TMPDIR/cs" n
	# shellcheck disable=SC2086
	on c1 $URLS -v run part4 -t "${TTL}s" -- sh -c "$(holder_cmd "$log" 4)" \
	    >"$BATS_TEST_TMPDIR/out" 2>&1 &
	local pid=$!
	wait_for_line "$log" start
	read -r _ n < <(python3 "$NET" hang "$NETDIR" c1 1,2,3)
	[ "$n" -ge 3 ] || fail "only $n established connections to blackhole"
	local rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 0
	run cat "$BATS_TEST_TMPDIR/out"
	assert_output --partial "no reply within 1s"
	assert_output --partial "exit 0"
	refute_output --partial "lost"
	run grep -c '^term' "$log"
	assert_output 0
}

@test "with one of three servers cut off, the quorum still takes, holds and releases the lock" {
	local cut
	cut=$(python3 "$NET" cut "$NETDIR" c1 3)
	# shellcheck disable=SC2086
	run -0 on c1 $URLS run part5 -t 2s -- sh -c 'sleep 2.5; echo "fence $REDLOCK_FENCE"'
	assert_output --regexp '^fence [0-9]+$'
	# shellcheck disable=SC2086
	run -0 on c2 $URLS acquire part5 -n --json
	python3 "$NET" heal "$NETDIR" "$cut"
}
