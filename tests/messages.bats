#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Connection messages (issue 18): a password a server does not want, and
# what -v -v shows of our token and password.  (A redis:// URL to a TLS
# port: tls.bats; the sentinels' user: sentinel.bats.)

load helpers

TOKEN=0123456789abcdefghij

setup_file() {
	redis_start_tcp open || return 1
	export OPEN_PORT=$REDIS_PORT
	redis_start_tcp locked --requirepass 'msg-s3cret-pw' || return 1
	export LOCKED_PORT=$REDIS_PORT
	unset REDLOCK_URL REDIS_PORT
}

teardown_file() {
	redis_stop open
	redis_stop locked
}

setup() {
	unset REDLOCK_USER REDLOCK_PASSWORD REDISCLI_AUTH
	redis_flush open
	BG_PIDS=()
}

teardown() {
	stop_bg_jobs
}

@test "a password in the URL to a server that has none: exit 77, one line saying to drop it" {
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "redis://:pw@127.0.0.1:$OPEN_PORT" acquire k
	assert_failure 77
	assert_output ''
	assert_equal "$stderr" "redlock-cli: redis://:***@127.0.0.1:$OPEN_PORT: the server has no password set; drop it from the URL"
	[ "$(rcli open EXISTS k)" = 0 ]
}

@test "a password from REDLOCK_PASSWORD or --password-file to a server that has none: exit 77, naming where it came from" {
	local want="redlock-cli: redis://127.0.0.1:$OPEN_PORT: the server has no password set; drop"
	REDLOCK_PASSWORD=pw run --separate-stderr redlock-cli \
	    -u "redis://127.0.0.1:$OPEN_PORT" acquire k
	assert_failure 77
	assert_output ''
	assert_equal "$stderr" "$want REDLOCK_PASSWORD"
	# An inherited REDISCLI_AUTH is named too: the user may not know it.
	REDISCLI_AUTH=pw run --separate-stderr redlock-cli \
	    -u "redis://127.0.0.1:$OPEN_PORT" acquire k
	assert_failure 77
	assert_equal "$stderr" "$want REDISCLI_AUTH"
	printf 'pw\n' >"$BATS_TEST_TMPDIR/pw"
	chmod 600 "$BATS_TEST_TMPDIR/pw"
	run --separate-stderr redlock-cli --password-file "$BATS_TEST_TMPDIR/pw" \
	    -u "redis://127.0.0.1:$OPEN_PORT" release k --token t
	assert_failure 77
	assert_equal "$stderr" "$want --password-file"
}

# The -v -v lines of our commands: "> COMMAND ...".
commands() { printf '%s\n' "$stderr" | grep ': > ' || true; }

@test "-v -v shows the token of acquire, extend and release as its first 8 characters and '...', never whole" {
	local u="redis://127.0.0.1:$OPEN_PORT" sha='[0-9a-f]{40}'
	run --separate-stderr redlock-cli -v -v -u "$u" acquire k --token "$TOKEN"
	assert_success
	assert_output "$TOKEN"
	commands | grep -qE "^redlock-cli: $u: > EVALSHA $sha 12 k \\{k\\}:fence \\{k\\}:meta \\{k\\}:queue \\{k\\}:leases \\{k\\}:wake \\{k\\}:readers \\{k\\}:rmeta \\{k\\}:writers \\{k\\}:rwait \\{k\\}:history \\{k\\}:queue:who 01234567\\.\\.\\. 30000 "
	run --separate-stderr redlock-cli -v -v -u "$u" extend k --token "$TOKEN"
	assert_success
	commands | grep -qE "^redlock-cli: $u: > EVALSHA $sha 3 k \\{k\\}:fence \\{k\\}:meta 01234567\\.\\.\\. 0 0 30000\$"
	local all=$stderr
	run --separate-stderr redlock-cli -v -v -u "$u" release k --token "$TOKEN"
	assert_success
	commands | grep -qE "^redlock-cli: $u: > EVALSHA $sha 12 k \\{k\\}:fence \\{k\\}:meta \\{k\\}:queue \\{k\\}:leases \\{k\\}:wake \\{k\\}:readers \\{k\\}:rmeta \\{k\\}:writers \\{k\\}:rwait \\{k\\}:history \\{k\\}:queue:who 01234567\\.\\.\\. 0 "
	[[ $all$stderr != *"$TOKEN"* ]]
	[[ $all$stderr != *89abcdef* ]]
}

@test "-v -v after NOSCRIPT: the EVAL line shortens the token too" {
	local u="redis://127.0.0.1:$OPEN_PORT"
	rcli open SCRIPT FLUSH >/dev/null
	run --separate-stderr redlock-cli -v -v -u "$u" acquire k --token "$TOKEN"
	assert_success
	commands | grep -qE "^redlock-cli: $u: > EVAL .* 12 k .* 01234567\\.\\.\\. 30000 "
	[[ $stderr != *89abcdef* ]]
}

@test "-v -v of status shows every argument (it takes no token) and AUTH shows the password as ***" {
	local u="redis://127.0.0.1:$LOCKED_PORT"
	REDLOCK_PASSWORD=msg-s3cret-pw run --separate-stderr redlock-cli -v -v \
	    -u "$u" status k
	assert_failure 1
	assert_output free
	assert_stderr_line "redlock-cli: $u: > AUTH ***"
	commands | grep -qE "^redlock-cli: $u: > EVALSHA [0-9a-f]{40} 3 k \\{k\\}:fence \\{k\\}:meta 0 1000\$"
	commands | grep -qE "^redlock-cli: $u: > EVALSHA [0-9a-f]{40} 1 \\{k\\}:leases 1000\$"
	[[ $stderr != *msg-s3cret-pw* ]]
}

# --- the holder, named (issue 18) ---------------------------------------

@test "a busy lock names its holder: host, pid, command, since (UTC), how long held, and its TTL" {
	local u="redis://127.0.0.1:$OPEN_PORT" since
	start_bg holder -u "$u" run k -t 30s -- sleep 30
	wait_until key_exists open k
	since=$(date -u -d "@$(($(rcli open HGET '{k}:meta' since) / 1000))" +%Y-%m-%dT%H:%M:%SZ)
	run --separate-stderr redlock-cli -u "$u" acquire k -n
	assert_failure 1
	assert_output ''
	[[ $stderr =~ ^"redlock-cli: lock 'k' is held by $(hostname) pid "([0-9]+)" (sleep 30, since $since, held "[0-9]+(ms|\.[0-9]s)", ttl "(2[0-9]|30)(\.[0-9])?"s)"$ ]] ||
	    fail "stderr: $stderr"
	assert_equal "${BASH_REMATCH[1]}" "$(rcli open HGET '{k}:meta' pid)"
	stop_bg_jobs
}

@test "a lock set by another client is held by 'another owner'" {
	rcli open SET k foreign PX 30000 >/dev/null
	run --separate-stderr redlock-cli -u "redis://127.0.0.1:$OPEN_PORT" \
	    acquire k -w 100ms
	assert_failure 1
	assert_equal "$stderr" \
	    "redlock-cli: lock 'k' is still held by another owner after 100ms"
}

@test "-v: a waiter says who holds the lock once, and again when the holder changes" {
	local u="redis://127.0.0.1:$OPEN_PORT"
	run -0 redlock-cli -u "$u" acquire k -t 30s
	start_bg waiter -v -u "$u" acquire k -w 2s
	sleep 0.6
	# Another holder takes over (as after an expiry), and a release's
	# wake-up makes the waiter look again.
	rcli open SET k other-token XX KEEPTTL >/dev/null
	rcli open HSET '{k}:meta' token other-token host web2 pid 4242 \
	    command 'second holder' >/dev/null
	rcli open ZADD '{k}:wake' 0 go >/dev/null
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 1
	run grep -c "^redlock-cli: waiting for lock 'k', held by " "$BATS_TEST_TMPDIR/waiter.err"
	assert_output 2
	run grep "^redlock-cli: waiting for lock 'k', held by " "$BATS_TEST_TMPDIR/waiter.err"
	[[ ${lines[0]} == *" held by $(hostname) pid "* ]] || fail "${lines[0]}"
	[[ ${lines[1]} == "redlock-cli: waiting for lock 'k', held by web2 pid 4242 (second holder, since "*"Z, held "*", ttl "*")" ]] ||
	    fail "${lines[1]}"
}

@test "-v -v of a fair waiter shows its own wake key with the token cut" {
	local u="redis://127.0.0.1:$OPEN_PORT"
	run -0 redlock-cli -u "$u" acquire k -t 30s
	run --separate-stderr redlock-cli -v -v -u "$u" acquire k --fair \
	    --token "$TOKEN" -w 300ms
	assert_failure 1
	printf '%s\n' "$stderr" | grep -qF "> BZPOPMIN {k}:wake:01234567... " ||
	    fail "no BZPOPMIN line with the token cut: $stderr"
	[[ $stderr != *"$TOKEN"* ]] || fail "the whole token is shown: $stderr"
}

@test "-v -v of a release that wakes the queue's head shows the head's wake key shortened, never its token" {
	local u="redis://127.0.0.1:$OPEN_PORT" holder
	run -0 redlock-cli -u "$u" acquire k -t 30s
	holder=$output
	start_bg waiter -u "$u" acquire k --queue fifo --token "$TOKEN" -w 10s
	wait_until zcard_is open '{k}:queue' 1
	run --separate-stderr redlock-cli -v -v -u "$u" release k --token "$holder"
	assert_success
	# The release's script names the head; the client writes its wake key.
	printf '%s\n' "$stderr" | grep -q "> EVAL for i = 1, #KEYS do.* 1 {k}:wake\.\.\. 0 go$" ||
	    fail "no poke of the head's wake key, shortened: $stderr"
	[[ $stderr != *"$TOKEN"* ]] || fail "the head's token is shown: $stderr"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
}
