#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Durations: 250ms, 30s, 5m, 1h, 1d, 1.5s, sums as systemd writes them
# (1h30m, 2min, 1h 30m), a bare number of seconds.  Bad ones are usage
# errors (64) naming the option and the value; up to 365 days work.

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
}

# Bad values and the reason every duration option gives for them.
UNITS='unknown unit (us, ms, s, m, h, d or w)'
BAD_CASES=(
	''			'empty'
	'-1'			'negative'
	'-0'			'negative'
	'1h -5m'		'negative'
	'abc'			'not a number'
	'1.5x'			"$UNITS"
	'1e3'			"$UNITS"
	'0x10'			"$UNITS"
	'inf'			'not a number'
	'nan'			'not a number'
	' 5'			'not a number'
	'+5'			'not a number'
	'1h x'			'not a number'
	'5 s'			'a number without a unit in a sum'
	'1h30'			'a number without a unit in a sum'
	'1h '			'trailing blank'
	'5S'			"$UNITS"
	'1y'			"$UNITS"
	'1.5.5'			"$UNITS"
	'ms'			'not a number'
	'99999999999999h'	'too large'
	'11575d'		'too large'
	'99999999999999999999999999'	'too large'
	'0.0001'		'below 1ms'
	'0.5ms'			'below 1ms'
)

# check_bad OPTION-NAME CMD...: run CMD with each bad value appended as
# the option's argument (the word VALUE in CMD is replaced), expect 64 and
# the exact message; report every case that failed.
check_bad() {
	local name=$1 ci value reason failed='' word
	shift
	local -a cmd
	for ((ci = 0; ci < ${#BAD_CASES[@]}; ci += 2)); do
		value=${BAD_CASES[ci]}
		reason=${BAD_CASES[ci + 1]}
		cmd=()
		for word in "$@"; do
			[ "$word" = VALUE ] && word=$value
			cmd+=("$word")
		done
		run --separate-stderr "${cmd[@]}"
		if [ "$status" -ne 64 ] || [ -n "$output" ] ||
		    [ "$stderr" != "redlock-cli: invalid $name '$value': $reason" ]; then
			failed+=$'\n'"  '$value': exit $status, stdout '$output', stderr '$stderr' (expected: redlock-cli: invalid $name '$value': $reason)"
		fi
	done
	[ -z "$failed" ] || fail "$name: failing cases:$failed"
}

@test "bad --ttl values exit 64 with the reason" {
	check_bad --ttl redlock-cli acquire k -t VALUE
	refute_key main k
}

@test "bad --ttl values are refused in --ttl=VALUE form too" {
	run --separate-stderr redlock-cli acquire k --ttl=1.5x
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: invalid --ttl '1.5x': $UNITS"
}

@test "a TTL under 10ms, zero included, exits 64 naming the minimum" {
	local v
	for v in 0 0s 0ms 0.0 0h 1ms 5ms 9ms 0.009; do
		run --separate-stderr redlock-cli acquire k -t "$v"
		[ "$status" -eq 64 ] || fail "-t '$v': exit $status"
		assert_output ''
		assert_stderr_line "redlock-cli: invalid --ttl '$v': below the minimum of 10ms"
	done
	refute_key main k
}

@test "run -t 5ms and extend -t 5ms exit 64 too, and nothing runs" {
	run --separate-stderr redlock-cli run k -t 5ms -- touch "$BATS_TEST_TMPDIR/ran"
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --ttl '5ms': below the minimum of 10ms"
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
	run --separate-stderr redlock-cli extend k --token t -t 5ms
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --ttl '5ms': below the minimum of 10ms"
}

@test "a TTL of 10ms is taken at once" {
	local i
	# 10 ms leaves a few ms of validity: on a loaded machine one try may
	# come back too late (69, by design), so one of five must succeed.
	for i in 1 2 3 4 5; do
		run --separate-stderr timeout 2 redlock-cli acquire k -t 10ms -n
		[ "$status" -eq 0 ] && return
		[ "$status" -eq 69 ] || fail "exit $status: $stderr"
		sleep 0.05
	done
	fail "five tries, none taken in time: $stderr"
}

@test "bad --ttl values are refused by extend and run too" {
	check_bad --ttl redlock-cli extend k --token t -t VALUE
	check_bad --ttl redlock-cli run k -t VALUE -- true
}

@test "bad --wait values exit 64 with the reason" {
	check_bad --wait redlock-cli acquire k -w VALUE
	check_bad --wait redlock-cli acquire k --wait VALUE
	check_bad --wait redlock-cli run k -w VALUE -- true
	refute_key main k
}

@test "bad --renew, --kill-after, --jitter and --min-hold values exit 64" {
	check_bad --renew redlock-cli run k --renew VALUE -- true
	check_bad --kill-after redlock-cli run k --kill-after VALUE -- true
	check_bad --jitter redlock-cli run k --jitter VALUE -- true
	check_bad --min-hold redlock-cli run k --min-hold VALUE -- true
	refute_key main k
}

@test "bad --connect-timeout and --io-timeout values exit 64" {
	check_bad --connect-timeout redlock-cli --connect-timeout VALUE status k
	check_bad --io-timeout redlock-cli --io-timeout VALUE status k
	check_bad --io-timeout redlock-cli status k --io-timeout VALUE
}

@test "zero is below 1ms for --renew, --kill-after and the timeouts" {
	run --separate-stderr redlock-cli run k --renew 0 -- true
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --renew '0': below 1ms"
	run --separate-stderr redlock-cli run k --kill-after 0 -- true
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --kill-after '0': below 1ms"
	run --separate-stderr redlock-cli --connect-timeout 0 status k
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --connect-timeout '0': below 1ms"
	run --separate-stderr redlock-cli --io-timeout 0 status k
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid --io-timeout '0': below 1ms"
	refute_key main k
}

@test "zero is accepted for --wait, --jitter and --min-hold" {
	run --separate-stderr redlock-cli acquire k -w 0
	assert_success
	run --separate-stderr redlock-cli run k2 --jitter 0 --min-hold 0 -- true
	assert_success
	[ -z "$stderr" ]
}

@test "good durations set the TTL they say" {
	# value, PTTL lower bound (exclusive), upper bound (inclusive); the
	# lower bounds leave room for a loaded machine, and still tell the
	# units apart.
	local -a cases=(
		250ms	0	250
		1.5s	1000	1500
		2m	110000	120000
		1h	3590000	3600000
		3	2500	3000
		0.5	250	500
		1.25	1000	1250
		90s	85000	90000
		90	85000	90000
		1h30m	5390000	5400000
		'1h 30m'	5390000	5400000
		2min	110000	120000
		1d	86390000	86400000
		1.5h	5390000	5400000
		'1h 1m 1s'	3650000	3661000
		1w	604790000	604800000
		365d	31535990000	31536000000
	)
	local ci v lo hi t failed=''
	for ((ci = 0; ci < ${#cases[@]}; ci += 3)); do
		v=${cases[ci]}
		lo=${cases[ci + 1]}
		hi=${cases[ci + 2]}
		redis_flush
		run --separate-stderr redlock-cli acquire k -t "$v"
		if [ "$status" -ne 0 ]; then
			failed+=$'\n'"  '$v': exit $status: $stderr"
			continue
		fi
		t=$(rcli main PTTL k)
		((t > lo && t <= hi)) ||
		    failed+=$'\n'"  '$v': PTTL $t not in ($lo, $hi]"
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}


@test "good durations are accepted by every duration option" {
	local v failed=''
	for v in 250ms 1.5s 2m 1h 3 0.5 1h30m '1m 30s' 2min; do
		redis_flush
		run --separate-stderr redlock-cli --connect-timeout "$v" \
		    --io-timeout "$v" acquire k -w "$v" -t 2h
		[ "$status" -eq 0 ] || failed+=$'\n'"  acquire '$v': $stderr"
		run --separate-stderr redlock-cli run k2 -t 2h --renew "$v" \
		    --kill-after "$v" --jitter 1ms --min-hold "$v" -- true
		[ "$status" -eq 0 ] || failed+=$'\n'"  run '$v': $stderr"
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "extend -t 1.5m sets the PTTL to 90 seconds" {
	run -0 redlock-cli acquire k -t 10s
	run -0 redlock-cli extend k --token "$output" -t 1.5m
	local t
	t=$(rcli main PTTL k)
	((t > 89000 && t <= 90000)) || fail "PTTL $t"
}

@test "--renew not shorter than the TTL exits 64" {
	run --separate-stderr redlock-cli run k -t 1s --renew 2s -- true
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: run: --renew must be shorter than the TTL"
	run --separate-stderr redlock-cli run k -t 1s --renew 1s -- true
	assert_failure 64
	assert_stderr_line "redlock-cli: run: --renew must be shorter than the TTL"
	refute_key main k
}

@test "the -w duration is echoed in the busy message" {
	run -0 redlock-cli acquire k
	local v
	for v in 100ms:100ms 0.2:200ms 0.25s:250ms; do
		run --separate-stderr redlock-cli acquire k -w "${v%%:*}"
		[ "$status" -eq 1 ] || fail "-w ${v%%:*}: exit $status"
		assert_busy_line k "${v#*:}"
	done
}

@test "sums and systemd's spellings of the units are accepted by every duration option" {
	local v failed=''
	for v in 1h30m '1h 30m' 2min 1d 1.5s 90 '1m 30s' 1week 2hours 1hr \
	    30sec 250msec 250000usec; do
		redis_flush
		run --separate-stderr redlock-cli --io-timeout "$v" acquire k \
		    -w "$v" -t "$v"
		[ "$status" -eq 0 ] || failed+=$'\n'"  acquire '$v': $stderr"
		run --separate-stderr redlock-cli run k2 -t 2w --renew "$v" \
		    --kill-after "$v" --min-hold "$v" -- true
		[ "$status" -eq 0 ] || failed+=$'\n'"  run '$v': $stderr"
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a 365-day TTL works for acquire, status, extend, run and release" {
	local tok t
	run -0 --separate-stderr redlock-cli acquire k -t 365d --json
	tok=$(json_field token)
	tok=${tok//\"/}
	assert_equal "$(json_field ttl_ms)" 31536000000
	t=$(rcli main PTTL k)
	((t > 31535990000 && t <= 31536000000)) || fail "PTTL $t"
	run -0 --separate-stderr redlock-cli status k --json
	t=$(json_field ttl_ms)
	((t > 31535990000 && t <= 31536000000)) || fail "status ttl_ms $t"
	run -0 --separate-stderr redlock-cli extend k --token "$tok" -t 365d
	run -0 --separate-stderr redlock-cli release k --token "$tok"
	refute_key main k
	# A run's child sees the TTL, and the run ends with its command.
	run -0 --separate-stderr timeout 20 redlock-cli --connect-timeout 365d \
	    --io-timeout 365d --wait-timeout 365d run k -t 365d --renew 100d \
	    --kill-after 365d -w 365d -- \
	    sh -c 'echo "$REDLOCK_TTL_MS"'
	assert_output 31536000000
	refute_key main k
	# --min-hold of 365 days keeps it that long.
	run -0 --separate-stderr timeout 20 redlock-cli run k -t 1s \
	    --min-hold 365d -- true
	t=$(rcli main PTTL k)
	((t > 31535990000 && t <= 31536000000)) || fail "--min-hold PTTL $t"
}

@test "a 100-day run renews on its schedule: no wait in it overflows poll's milliseconds" {
	# Its renewal is 33 days away, past poll()'s 24.8 days of int
	# milliseconds.  Under libfaketime a million times faster, 33 days
	# pass in 2.9 s; the command, without libfaketime, runs 5 real
	# seconds (58 days), so a renewal must come, and the lock be kept.
	need faketime
	build_is_static && skip "libfaketime cannot reach a static executable"
	faketime -f '+0 x1000000' redlock-cli --version >/dev/null 2>&1 ||
	    skip "this build does not run under faketime"
	skip_if_slow
	run --separate-stderr timeout 30 faketime -f '+0 x1000000' \
	    redlock-cli -v -v --connect-timeout 10d --io-timeout 10d \
	    run k -t 2400h -- env -u LD_PRELOAD -u FAKETIME sleep 5
	assert_success
	printf '%s\n' "$stderr" | grep -qx "redlock-cli: renewed lock 'k'" ||
	    fail "no renewal in 58 days of a 100-day lock: $stderr"
	printf '%s\n' "$stderr" | grep -q "lost" && fail "$stderr"
	refute_key main k
}
