#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A bounded footprint (issue 17): once nobody holds or waits for a name,
# none of its keys is left 10 s after its last TTL ran out, and the fences
# of the same names taken again are still larger than before.

load helpers

setup_file() { redis_start fp; }
teardown_file() { redis_stop fp; }
setup() { redis_flush fp; }
teardown() { stop_bg_jobs; }

@test "30 released, 30 expired, 10 runs and 5 fair waiters that gave up leave DBSIZE 0 10 s after the last TTL, and fences go on rising" {
	skip_if_slow
	local i tok ttl=2s last fences="$BATS_TEST_TMPDIR/fences"
	for i in $(seq 1 30); do
		tok=$(redlock-cli acquire "rel-$i" -t "$ttl" --json)
		sed 's/.*"fence":\([0-9]*\).*/\1/' <<<"$tok" >>"$fences.rel"
		tok=$(sed 's/.*"token":"\([0-9a-f]*\)".*/\1/' <<<"$tok")
		redlock-cli release "rel-$i" --token "$tok"
	done
	for i in $(seq 1 30); do
		redlock-cli acquire "exp-$i" -t "$ttl" >/dev/null
	done
	run -0 redlock-cli acquire sem --limit 3 -t "$ttl"
	for i in $(seq 1 10); do
		redlock-cli run "run-$i" -t "$ttl" -- true
	done
	# 5 fair waiters give up on a held lock.
	run -0 redlock-cli acquire busy -t 4s
	for i in $(seq 1 5); do
		start_bg "w$i" acquire busy --fair -w 500ms
	done
	for i in "${BG_PIDS[@]}"; do
		wait_bg "$i"
		assert_equal "$BG_STATUS" 1
	done
	last=$(($(now_ms) + 4000))
	(($(rcli fp DBSIZE) > 0))
	# 10 s after the last TTL ran out: nothing left.
	while (($(now_ms) < last + 10000)); do
		sleep 0.5
	done
	run rcli fp KEYS '*'
	assert_output ''
	assert_equal "$(rcli fp DBSIZE)" 0
	# The same names again: larger fences than before.
	i=0
	while read -r prev; do
		i=$((i + 1))
		tok=$(redlock-cli acquire "rel-$i" -t "$ttl" --json)
		(($(sed 's/.*"fence":\([0-9]*\).*/\1/' <<<"$tok") > prev)) ||
		    fail "rel-$i: fence not above $prev: $tok"
	done <"$fences.rel"
}

@test "every key of a held lock has a TTL: lock, fence, meta, wake, fair queue" {
	local k
	run -0 redlock-cli acquire k -t 5s
	start_bg w acquire k --fair -w 3s
	wait_until zcard_is fp '{k}:leases' 1
	run -0 redlock-cli acquire s --limit 2 -t 5s
	run -0 redlock-cli acquire s --limit 2 -t 5s
	for k in $(rcli fp KEYS '*'); do
		(($(rcli fp PTTL "$k") > 0)) || fail "$k has no TTL"
	done
	(($(rcli fp PTTL '{k}:fence') <= 10000))
	(($(rcli fp PTTL '{k}:meta') <= 10000))
}

@test "a long TTL taken before short ones does not keep the fence counter: it expires with the last take's TTL" {
	local tok t
	tok=$(redlock-cli acquire k -t 60s)
	run -0 redlock-cli release k --token "$tok"
	run -0 redlock-cli run k -t 1s -- true
	t=$(rcli fp PTTL '{k}:fence')
	# The last take's 1 s and the 5 s after it, not the first one's 60 s.
	((t > 0 && t <= 6000)) || fail "{k}:fence PTTL $t"
}
