#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# status KEY [--json]: who holds the lock; exit 0 when held, 1 when free.

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

@test "status of a free lock prints 'free' and exits 1" {
	run --separate-stderr redlock-cli status k
	assert_failure 1
	assert_output free
	[ -z "$stderr" ]
}

@test "status --json of a free lock prints held:false and exits 1" {
	run --separate-stderr redlock-cli status k --json
	assert_failure 1
	assert_output '{"key":"k","held":false,"mode":"exclusive","queue":"any","waiting":0,"waiters":[]}'
	[ -z "$stderr" ]
}

@test "status of a held lock prints the holder line by line and exits 0" {
	run -0 redlock-cli acquire k -t 20s --json
	local token fence
	token=$(json_field token)
	token=${token//\"/}
	fence=$(json_field fence)
	run --separate-stderr redlock-cli status k
	assert_success
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 9 ] || fail "expected 9 lines: $output"
	assert_line -n 0 'key: k'
	assert_line -n 1 "token: ${token:0:8}..."
	# Text is for people: the TTL as a span (ttl_ms is --json's).
	assert_line -n 2 --regexp '^ttl: (1[89]|20)(\.[0-9])?s$'
	assert_line -n 3 "fence: $fence"
	assert_line -n 4 "host: $(hostname)"
	assert_line -n 5 --regexp '^pid: [1-9][0-9]*$'
	# A manual lock's holder is acquire's caller: here, bats.
	assert_line -n 6 --regexp '^command: manual: .+'
	assert_line -n 7 --regexp \
	    '^since: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'
	assert_line -n 8 --regexp '^held: [0-9]+(ms|\.[0-9]s)$'
}

@test "status shows when the lock was taken, in UTC, within seconds of now" {
	run -0 redlock-cli acquire k
	run -0 redlock-cli status k
	local since now taken
	since=$(printf '%s\n' "$output" | sed -n 's/^since: //p')
	taken=$(date -u -d "$since" +%s)
	now=$(date -u +%s)
	((now - taken >= 0 && now - taken < 10)) ||
	    fail "since $since is $((now - taken))s from now"
}

@test "status --json of a held lock has every field" {
	run -0 redlock-cli acquire k -t 20s --json
	local token fence
	token=$(json_field token)
	token=${token//\"/}
	fence=$(json_field fence)
	run --separate-stderr redlock-cli status k --json
	assert_success
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(json_field key)" = '"k"' ]
	[ "$(json_field held)" = true ]
	[ "$(json_field token)" = "\"${token:0:8}...\"" ]
	local ttl
	ttl=$(json_field ttl_ms)
	((ttl > 18000 && ttl <= 20000)) || fail "ttl_ms $ttl"
	[ "$(json_field fence)" = "$fence" ]
	[ "$(json_field host)" = "\"$(hostname)\"" ]
	[[ $(json_field pid) =~ ^[1-9][0-9]*$ ]]
	[[ $(json_field command) =~ ^\"manual:\ .+\"$ ]]
	[[ $(json_field since) =~ ^\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\"$ ]]
	if have jq; then
		printf '%s\n' "$output" | jq -e '.held == true and
		    .key == "k" and (.ttl_ms | type) == "number" and
		    (.pid | type) == "number"' >/dev/null
	fi
}

@test "status never prints the holder's full token" {
	run -0 redlock-cli acquire k
	local token=$output
	run --separate-stderr redlock-cli -v -v status k
	assert_success
	[[ $output != *"$token"* ]] || fail "token on stdout: $output"
	[[ $stderr != *"$token"* ]] || fail "token on stderr: $stderr"
	run --separate-stderr redlock-cli -v -v status k --json
	assert_success
	[[ $output != *"$token"* ]] || fail "token on stdout: $output"
	[[ $stderr != *"$token"* ]] || fail "token on stderr: $stderr"
}

@test "status of a lock set by another client shows no fence or host" {
	rcli main SET k foreign-client-token-0123456789 PX 10000 >/dev/null
	run --separate-stderr redlock-cli status k
	assert_success
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 3 ] || fail "expected 3 lines: $output"
	assert_line -n 0 'key: k'
	assert_line -n 1 'token: foreign-...'
	assert_line -n 2 --regexp '^ttl: [0-9.]+m?s$'
	refute_output --partial foreign-client-token
	run --separate-stderr redlock-cli status k --json
	assert_success
	# Issue 16: the mode and a "holders" array, in every mode.
	assert_output --regexp \
	    '^\{"key":"k","held":true,"mode":"exclusive","queue":"any","waiting":0,"waiters":\[\],"token":"foreign-\.\.\.","ttl_ms":[0-9]+,"holders":\[\{"token":"foreign-\.\.\.","ttl_ms":[0-9]+\}\]\}$'
}

@test "status does not show an earlier holder's metadata for a foreign lock" {
	run -0 redlock-cli acquire k -t 20s
	# Another client replaces the value, keeping our (now stale) metadata.
	rcli main SET k someone-else-entirely KEEPTTL >/dev/null
	key_exists main '{k}:meta'
	run --separate-stderr redlock-cli status k
	assert_success
	[ "${#lines[@]}" -eq 3 ] || fail "expected 3 lines: $output"
	refute_output --partial 'fence:'
	refute_output --partial 'host:'
	refute_output --partial 'command:'
}

@test "status of a foreign lock without a TTL reports ttl none, and ttl_ms -1 in JSON" {
	rcli main SET k x >/dev/null
	run --separate-stderr redlock-cli status k
	assert_success
	assert_line -n 1 'token: x'
	assert_line -n 2 'ttl: none'
	run -0 redlock-cli status k --json
	[[ $output == *'"ttl_ms":-1'* ]] || fail "$output"
}

@test "status reports free again once the lock is released" {
	run -0 redlock-cli acquire k
	run -0 redlock-cli status k
	run -0 redlock-cli release k --token "$(rcli main GET k)"
	run -1 redlock-cli status k
	assert_line -n 0 free
	# and how its last hold ended (tests/history.bats)
	assert_line -n 1 --partial 'last: released, '
	assert_equal "${#lines[@]}" 2
}

@test "status reports free once the lock expired" {
	run -0 redlock-cli acquire k -t 100ms
	wait_until eval '! key_exists main k'
	run -1 redlock-cli status k
	assert_output free
}

@test "status honours --prefix" {
	run -0 redlock-cli acquire k --prefix p:
	run -1 redlock-cli status k
	run -0 redlock-cli status k --prefix p:
	assert_line -n 0 'key: k'
}

@test "status shows a key's control characters as '?'" {
	run -0 redlock-cli acquire $'a\nb'
	run --separate-stderr redlock-cli status $'a\nb'
	assert_success
	assert_line -n 0 'key: a?b'
	[ "${#lines[@]}" -eq 9 ]
	run --separate-stderr redlock-cli status $'a\nb' --json
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial '"key":"a\nb"'
}

@test "status does not change the lock" {
	run -0 redlock-cli acquire k -t 20s
	local before after
	before=$(rcli main PTTL k)
	run -0 redlock-cli status k
	after=$(rcli main PTTL k)
	((after <= before))
	[ "$(rcli main DBSIZE)" = 3 ]
}

# sem_fill N: N holders of the semaphore k, as acquire --limit leaves them
# (a slot in k, five fields each in {k}:meta), all at once.
sem_fill() {
	rcli main EVAL "
	    for i = 1, tonumber(ARGV[1]) do
	      local t = string.format('%032x', i)
	      redis.call('ZADD', KEYS[1], 99999999999999, t)
	      redis.call('HSET', KEYS[2], t .. ':host', 'host-' .. i,
	        t .. ':pid', 1000 + i, t .. ':command', 'manual',
	        t .. ':since', 1796000000000, t .. ':fence', i)
	    end
	    return 1" 2 k '{k}:meta' "$1" >/dev/null
}

@test "status --limit lists 1000 holders of 20000 and counts the rest; --json says how many are not listed" {
	sem_fill 20000
	run --separate-stderr redlock-cli status k --limit 1000000
	assert_success
	[ -z "$stderr" ]
	assert_line "holders: 20000"
	assert_equal "$(grep -c '^token: ' <<<"$output")" 1000
	assert_line "(19000 more holders not listed)"
	# Each listed holder comes with its own metadata.
	assert_equal "$(grep -c '^command: manual' <<<"$output")" 1000
	run --separate-stderr redlock-cli status k --limit 1000000 --json
	assert_success
	assert_equal "$(jq '.holders | length' <<<"$output")" 1000
	assert_equal "$(jq '.holders_unlisted' <<<"$output")" 19000
	assert_equal "$(jq '[.holders[] | select(.host | startswith("host-"))] | length' <<<"$output")" 1000
}

@test "status --limit of 900 holders lists them all, with no unlisted line" {
	sem_fill 900
	run --separate-stderr redlock-cli status k --limit 1000000
	assert_success
	assert_line "holders: 900"
	assert_equal "$(grep -c '^token: ' <<<"$output")" 900
	refute_output --partial "not listed"
}

@test "status of a semaphore needs no --limit: it shows the stored limit; a --limit that disagrees exits 64 with one line" {
	run -0 redlock-cli acquire s --limit 2 -t 30s
	run --separate-stderr redlock-cli status s
	assert_success
	assert_line "limit: 2"
	assert_line "holders: 1"
	run --separate-stderr redlock-cli status s --json
	assert_success
	[[ $output == *'"mode":"semaphore"'* && $output == *'"limit":2'* ]] ||
	    fail "$output"
	run --separate-stderr redlock-cli status s --limit 3
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" "redlock-cli: lock 's' is a semaphore of 2 slots: --limit 3 does not match it"
	run -0 redlock-cli status s --limit 2
}

@test "status of a free name that is held under a prefix hints at --prefix, on stderr; the answer stays free" {
	run -0 redlock-cli --prefix app: acquire dep
	run --separate-stderr redlock-cli status dep
	assert_failure 1
	assert_output free
	assert_equal "$stderr" "redlock-cli: lock 'dep' is free, but 'app:dep' is held: did you mean --prefix 'app:'?"
	# -q, a name held nowhere, or a prefix given: nothing said.
	run --separate-stderr redlock-cli -q status dep
	assert_equal "$stderr" ''
	run --separate-stderr redlock-cli status other
	assert_equal "$stderr" ''
	run --separate-stderr redlock-cli --prefix web: status dep
	assert_failure 1
	assert_equal "$stderr" ''
}
