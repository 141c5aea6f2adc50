#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Semaphores (--limit N): N holders at once, slots reclaimed at expiry,
# status of every holder, extend and release of one slot, and a limit
# that disagrees with the stored one refused.
load helpers
load contention

# --- semaphores ---------------------------------------------------------

@test "--limit 3: three holders get in, a fourth -n exits 1, a release lets a waiting fourth in" {
	skip_if_slow
	local toks=() i t_release elapsed
	for i in 1 2 3; do
		run --separate-stderr redlock-cli acquire k --limit 3 -t 30s
		assert_success
		[ -z "$stderr" ]
		assert_regex "$output" '^[0-9a-f]{32}$'
		toks+=("$output")
	done
	assert_equal "$(rcli main ZCARD k)" 3
	run --separate-stderr redlock-cli acquire k --limit 3 -n
	assert_failure 1
	assert_output ''
	assert_stderr_line "redlock-cli: lock 'k' has no free slot (limit 3)"
	assert_equal "$(rcli main ZCARD k)" 3
	start_bg fourth acquire k --limit 3 -t 30s -w 10s
	wait_until blocked_at_least 1
	t_release=$(now_ms)
	run --separate-stderr redlock-cli release k --limit 3 --token "${toks[0]}"
	assert_success
	wait_bg "$BG_PID"
	elapsed=$(( $(now_ms) - t_release ))
	assert_equal "$BG_STATUS" 0
	[ ! -s "$D/fourth.err" ]
	assert_regex "$(cat "$D/fourth.out")" '^[0-9a-f]{32}$'
	[ "$(rcli main ZSCORE k "$(cat "$D/fourth.out")")" != '' ]
	[ "$(rcli main ZSCORE k "${toks[0]}")" = '' ]
	assert_equal "$(rcli main ZCARD k)" 3
	echo "fourth got in ${elapsed} ms after the release"
	[ "$elapsed" -lt 1000 ]
}

@test "--limit 3 -w gives up with the slot message" {
	local i
	for i in 1 2 3; do
		run --separate-stderr redlock-cli acquire k --limit 3 -t 30s
		assert_success
	done
	run --separate-stderr redlock-cli acquire k --limit 3 -w 200ms
	assert_failure 1
	assert_output ''
	assert_stderr_line "redlock-cli: lock 'k' still has no free slot (limit 3) after 200ms"
}

@test "run --limit 2 with 6 jobs never has more than 2 running at once" {
	local i pids=() bad=0
	write_counter_job
	for i in $(seq 1 6); do
		start_bg "j$i" run k --limit 2 -w 60s -- "$D/job" "$D"
		pids+=("$BG_PID")
	done
	for i in "${pids[@]}"; do
		wait_bg "$i"
		[ "$BG_STATUS" = 0 ] || bad=$((bad + 1))
	done
	cat "$D"/j*.err
	assert_equal "$bad" 0
	assert_equal "$(cat "$D"/j*.err)" ''
	assert_equal "$(wc -l <"$D/ran")" 6
	# Six 0.3 s jobs started together: two at once, never three.
	assert_equal "$(cat "$D/max")" 2
	assert_equal "$(cat "$D/cur")" 0
	key_gone main k
}

@test "status --limit 3 lists every holder, as text and as JSON" {
	need jq
	local a b
	run --separate-stderr redlock-cli acquire k --limit 3 -t 30s
	assert_success
	a=$output
	run --separate-stderr redlock-cli acquire k --limit 3 -t 30s
	assert_success
	b=$output
	run --separate-stderr redlock-cli status k --limit 3
	assert_success
	[ -z "$stderr" ]
	assert_line "key: k"
	assert_line "limit: 3"
	assert_line "holders: 2"
	assert_line "token: ${a:0:8}..."
	assert_line "token: ${b:0:8}..."
	run --separate-stderr redlock-cli status k --limit 3 --json
	assert_success
	[ -z "$stderr" ]
	assert_equal "$(jq -r .key <<<"$output")" k
	assert_equal "$(jq -r .held <<<"$output")" true
	assert_equal "$(jq -r .limit <<<"$output")" 3
	assert_equal "$(jq -r '.holders | length' <<<"$output")" 2
	assert_equal "$(jq -r '.holders[].token' <<<"$output" | sort)" \
	    "$(printf '%s\n' "${a:0:8}..." "${b:0:8}..." | sort)"
	jq -e '.holders | all(.ttl_ms > 25000 and .ttl_ms <= 30000)' \
	    <<<"$output" >/dev/null
}

@test "status --limit 3 of a free semaphore prints free and exits 1" {
	need jq
	run --separate-stderr redlock-cli status k --limit 3
	assert_failure 1
	assert_output free
	run --separate-stderr redlock-cli status k --limit 3 --json
	assert_failure 1
	assert_equal "$(jq -c '[.held, .holders]' <<<"$output")" '[false,[]]'
}

@test "extend and release work on one slot of a semaphore" {
	local tok other left
	run --separate-stderr redlock-cli acquire k --limit 2 -t 2s
	assert_success
	tok=$output
	run --separate-stderr redlock-cli acquire k --limit 2 -t 30s
	assert_success
	other=$output
	run --separate-stderr redlock-cli extend k --limit 2 --token "$tok" -t 60s
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	left=$(( $(rcli main ZSCORE k "$tok") - $(server_ms) ))
	[ "$left" -gt 55000 ]
	[ "$left" -le 60000 ]
	# The semaphore key lives as long as its last holder.
	[ "$(rcli main PTTL k)" -gt 55000 ]
	run --separate-stderr redlock-cli release k --limit 2 --token "$tok"
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	assert_equal "$(rcli main ZSCORE k "$tok")" ''
	[ "$(rcli main ZSCORE k "$other")" != '' ]
	run --separate-stderr redlock-cli release k --limit 2 --token "$tok"
	assert_failure 3
	assert_output ''
	assert_stderr_line "redlock-cli: cannot release lock 'k': it is not held (expired or never taken)"
	run --separate-stderr redlock-cli extend k --limit 2 --token "$tok" -t 5s
	assert_failure 3
	assert_output ''
	assert_stderr_line "redlock-cli: cannot extend lock 'k': it is not held (expired or never taken)"
	[ "$(rcli main ZSCORE k "$other")" != '' ]
}

@test "an expired semaphore holder's slot is reclaimed" {
	skip_if_slow
	local until
	run --separate-stderr redlock-cli acquire k --limit 1 -t 1s
	assert_success
	run --separate-stderr redlock-cli acquire k --limit 1 -n
	assert_failure 1
	assert_stderr_line "redlock-cli: lock 'k' has no free slot (limit 1)"
	# (Empty when a slow machine let the whole TTL pass already.)
	until=$(rcli main ZRANGE k 0 0 WITHSCORES | sed -n 2p)
	[ -z "$until" ] || wait_until server_time_past "$until"
	run --separate-stderr redlock-cli acquire k --limit 1 -n
	assert_success
	[ -z "$stderr" ]
}

@test "an expired holder's slot is reclaimed while other holders keep the key alive" {
	skip_if_slow
	local short long until fresh
	run --separate-stderr redlock-cli acquire k --limit 2 -t 300ms
	assert_success
	short=$output
	run --separate-stderr redlock-cli acquire k --limit 2 -t 30s
	assert_success
	long=$output
	run --separate-stderr redlock-cli acquire k --limit 2 -n
	assert_failure 1
	assert_stderr_line "redlock-cli: lock 'k' has no free slot (limit 2)"
	until=$(rcli main ZSCORE k "$short")
	wait_until server_time_past "$until"
	run --separate-stderr redlock-cli acquire k --limit 2 -n -t 30s
	assert_success
	fresh=$output
	assert_equal "$(rcli main ZCARD k)" 2
	assert_equal "$(rcli main ZSCORE k "$short")" ''
	[ "$(rcli main ZSCORE k "$long")" != '' ]
	[ "$(rcli main ZSCORE k "$fresh")" != '' ]
	# The expired holder's metadata went with it.
	assert_equal "$(rcli main HEXISTS '{k}:meta' "$short:fence")" 0
}

# --- type clashes -------------------------------------------------------

@test "a mutex used with --limit exits 64 and the lock is unchanged" {
	local tok
	run --separate-stderr redlock-cli acquire k -t 300s
	assert_success
	tok=$output
	local msg="redlock-cli: lock 'k' is a mutex: it cannot be used with --limit"
	run --separate-stderr redlock-cli acquire k --limit 2 -n
	assert_failure 64
	assert_output ''
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli acquire k --limit 2 -w 5s
	assert_failure 64
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli run k --limit 2 -n -- touch "$D/ran"
	assert_failure 64
	assert_stderr_line "$msg"
	[ ! -e "$D/ran" ]
	run --separate-stderr redlock-cli release k --limit 2 --token "$tok"
	assert_failure 64
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli extend k --limit 2 --token "$tok"
	assert_failure 64
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli status k --limit 2
	assert_failure 64
	assert_output ''
	assert_stderr_line "$msg"
	assert_equal "$(rcli main TYPE k)" string
	assert_equal "$(rcli main GET k)" "$tok"
	[ "$(rcli main PTTL k)" -gt 250000 ]
}

@test "a semaphore taken, released or extended without --limit exits 64 and the semaphore is unchanged" {
	local tok
	run --separate-stderr redlock-cli acquire k --limit 2 -t 30s
	assert_success
	tok=$output
	local msg="redlock-cli: lock 'k' is a semaphore: use --limit"
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 64
	assert_output ''
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli acquire k -w 5s
	assert_failure 64
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli run k -- touch "$D/ran"
	assert_failure 64
	assert_stderr_line "$msg"
	[ ! -e "$D/ran" ]
	run --separate-stderr redlock-cli release k --token "$tok"
	assert_failure 64
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli extend k --token "$tok"
	assert_failure 64
	assert_stderr_line "$msg"
	# status needs no --limit: the limit is stored with the semaphore
	# (status.bats).
	run -0 redlock-cli status k
	assert_line "limit: 2"
	assert_equal "$(rcli main TYPE k)" zset
	assert_equal "$(rcli main ZRANGE k 0 -1)" "$tok"
}

@test "a key holding a hash exits 76 for a mutex and a semaphore, and is unchanged" {
	local msg="redlock-cli: key 'k' holds a hash, not a lock"
	rcli main HSET k f v >/dev/null
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 76
	assert_output ''
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli acquire k --limit 2 -n
	assert_failure 76
	assert_output ''
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli acquire k -w 5s
	assert_failure 76
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli run k -n -- touch "$D/ran"
	assert_failure 76
	assert_stderr_line "$msg"
	[ ! -e "$D/ran" ]
	run --separate-stderr redlock-cli release k --token t
	assert_failure 76
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli extend k --token t
	assert_failure 76
	assert_stderr_line "$msg"
	run --separate-stderr redlock-cli status k
	assert_failure 76
	assert_output ''
	assert_stderr_line "$msg"
	assert_equal "$(rcli main TYPE k)" hash
	assert_equal "$(rcli main HGETALL k)" "$(printf 'f\nv')"
}

@test "acquire and run --limit 3 on a held 2-slot semaphore exit 64 with one line naming its limit, and take nothing" {
	local msg="redlock-cli: lock 'k' is a semaphore of 2 slots: --limit 3 does not match it"
	run -0 redlock-cli acquire k --limit 2 -t 30s
	run --separate-stderr redlock-cli acquire k --limit 3 -n
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" "$msg"
	run --separate-stderr redlock-cli acquire k --limit 3 -w 5s
	assert_failure 64
	assert_equal "$stderr" "$msg"
	run --separate-stderr redlock-cli run k --limit 3 -- touch "$D/ran"
	assert_failure 64
	assert_equal "$stderr" "$msg"
	[ ! -e "$D/ran" ]
	assert_equal "$(rcli main ZCARD k)" 1
	# The limit it is held with still takes the second slot.
	run -0 redlock-cli acquire k --limit 2 -n
	assert_equal "$(rcli main ZCARD k)" 2
}
