#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A bounded footprint (issue 17): once nobody holds or waits for a name,
# none of its keys but the fence counter and its records is left 10 s
# after its last TTL ran out or its last release, and the fences of the
# same names taken again are still larger than before.  The counter lives
# 7 days after the name's last take (issue 32: fences never go back;
# tests/fences.bats); so do the records (issue 36): the history, and the
# metadata of a manual hold that expired, which is its history entry until
# the next take writes it (tests/history.bats).

load helpers

setup_file() { redis_start fp; }
teardown_file() { redis_stop fp; }
setup() { redis_flush fp; }
teardown() { stop_bg_jobs; }

# only_fences NAME: every key left on NAME is a fence counter or a record
# (a history; an expired manual hold's metadata), each kept 7 days.
only_fences() {
	local k left
	left=$(rcli "$1" KEYS '*' |
	    grep -v -e '}:fence$' -e '}:history$' \
	    -e '^{exp-[0-9]*}:meta$' -e '^{busy}:meta$' ||
	    true)
	[ -z "$left" ] || fail "keys left besides the fences and records: $left"
	for k in $(rcli "$1" KEYS '*'); do
		(($(rcli "$1" PTTL "$k") > 604700000)) ||
		    fail "$k does not live 7 days: $(rcli "$1" PTTL "$k")"
	done
}

@test "30 released, 30 expired, 10 runs and 5 fair waiters that gave up leave only fence counters 10 s after the last TTL, and fences go on rising" {
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
	only_fences fp
	# One counter per name: rel, exp, sem, run, busy; a history per
	# name that ran or was released; each expired manual hold's
	# metadata (exp, busy).
	assert_equal "$(rcli fp DBSIZE)" $((72 + 30 + 10 + 30 + 1))
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
	(($(rcli fp PTTL '{k}:fence') <= 604800000 + 10000))
	# A manual hold's metadata is its history entry if it expires.
	(($(rcli fp PTTL '{k}:meta') <= 604800000 + 10000))
}

@test "a long TTL taken before short ones does not keep the fence counter: it expires 7 days after the last take's TTL" {
	local tok t
	tok=$(redlock-cli acquire k -t 60s)
	run -0 redlock-cli release k --token "$tok"
	run -0 redlock-cli run k -t 1s -- true
	t=$(rcli fp PTTL '{k}:fence')
	# The last take's 1 s and 7 days after it, not the first one's 60 s.
	((t > 604800000 - 5000 && t <= 604801000)) || fail "{k}:fence PTTL $t"
}

@test "10 s after the last release of an hour-long exclusive, shared and semaphore hold, only the fence counters are left" {
	skip_if_slow
	local tok t k
	run -0 redlock-cli run x -t 1h -- true
	tok=$(redlock-cli acquire a -t 1h)
	run -0 redlock-cli release a --token "$tok"
	run -0 redlock-cli run r -s -t 1h -- true
	tok=$(redlock-cli acquire r2 -s -t 1h)
	run -0 redlock-cli run r2 -s -t 1h -- true
	run -0 redlock-cli release r2 --token "$tok"
	run -0 redlock-cli run s --limit 2 -t 1h -- true
	tok=$(redlock-cli acquire s2 --limit 2 -t 1h)
	run -0 redlock-cli run s2 --limit 2 -t 1h -- true
	run -0 redlock-cli release s2 --limit 2 --token "$tok"
	sleep 10
	only_fences fp
	for k in x a r r2 s s2; do
		t=$(rcli fp PTTL "{$k}:fence")
		((t > 604800000 && t <= 604800000 + 3600000)) ||
		    fail "{$k}:fence PTTL $t"
	done
}
