#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# URLs, where the server is, and how we authenticate: bad URLs (64, the
# password redacted), unreachable servers (69), IPv6, database numbers,
# passwords from the URL, the environment or a file, and AUTH failures (77).

load helpers

PASSWORD=s3cret

setup_file() {
	redis_start main
	export MAIN_URL=$REDLOCK_URL
	# redis_start polls PING with redis-cli, which needs the password.
	REDISCLI_AUTH=$PASSWORD redis_start auth --requirepass "$PASSWORD"
	export AUTH_SOCK
	AUTH_SOCK=$(redis_sock auth)
	# IPv6 on loopback only when the kernel has ::1.
	if grep -qs '^0\{31\}1 ' /proc/net/if_inet6 &&
	    redis_start_tcp tcp --bind 127.0.0.1 ::1; then
		export HAVE_IPV6=1
	else
		redis_start_tcp tcp
		export HAVE_IPV6=0
	fi
	export TCP_PORT=$REDIS_PORT
	# A port nobody listens on: one a server of ours just gave back.
	redis_start_tcp dead
	export DEAD_PORT=$REDIS_PORT
	redis_stop dead
	# redis_start_tcp pointed REDLOCK_URL at the last one.
	export REDLOCK_URL=$MAIN_URL
}

teardown_file() {
	redis_stop main
	redis_stop auth
	redis_stop tcp
	redis_stop dead
}

setup() {
	# These tests are about where a password comes from; the ACL user
	# that make test-acl puts in the environment would answer for it.
	unset REDLOCK_USER REDLOCK_PASSWORD
	redis_flush
	redis_flush tcp
	REDISCLI_AUTH=$PASSWORD rcli auth FLUSHALL >/dev/null
}

arcli() { REDISCLI_AUTH=$PASSWORD rcli auth "$@"; }

WARNING='redlock-cli: warning: a password in -u on the command line may be seen by other users; use --password-file or REDISCLI_AUTH'

# URL, then the reason redlock-cli gives; a reason ending in '*' is a
# prefix (the wording after it may grow as schemes are added).
BAD_URLS=(
	''				'empty'
	'localhost'			'missing scheme*'
	'localhost:6380'		'missing scheme*'
	'http://x'			"unsupported scheme 'http' (redis://, rediss://, unix://, redis-sentinel:// or redis+cluster://)"
	'x y://h'			'unsupported scheme'
	'redis://'			'missing host'
	'redis://:6380'			'missing host'
	'redis://h:0'			'invalid port'
	'redis://h:65536'		'invalid port'
	'redis://h:abc'			'invalid port'
	'redis://h:'			'invalid port'
	'redis://h:-1'			'invalid port'
	'redis://h/x'			'invalid database number'
	'redis://h/-1'			'invalid database number'
	'redis://h:6380/2/3'		'invalid database number'
	'redis://[::1'			'unterminated IPv6 address'
	'redis://[]:6380'		'missing host'
	'redis://[::1]x'		'unexpected text after the host'
	'unix://'			'missing socket path'
	'unix://relative.sock'		'missing socket path'
	'unix:///p.sock?db=x'		'invalid database number'
	'unix:///p.sock?foo=1'		"unknown parameter 'foo' (only db is accepted)"
	'redis://h?x=1'			"unknown parameter 'x' (only ssl_cert_reqs is accepted)"
	'rediss://h:6380/0?ssl_cert_reqs=none&foo=bar'	"unknown parameter 'foo' (only ssl_cert_reqs is accepted)"
	'rediss://h?ssl_cert_reqs=optional'	"invalid ssl_cert_reqs 'optional' (none or required)"
	'rediss://h?ssl_cert_reqs'	"invalid ssl_cert_reqs '' (none or required)"
	'redis+cluster://a/3?ssl_cert_reqs=none'	'a cluster has no database numbers'
	'redis://u:p%zz@h'		'bad percent-encoding'
)

@test "bad URLs exit 64 with the reason" {
	local ci url reason failed=''
	for ((ci = 0; ci < ${#BAD_URLS[@]}; ci += 2)); do
		url=${BAD_URLS[ci]}
		reason=${BAD_URLS[ci + 1]}
		# The password in the last case is redacted.
		local shown=${url/:p%zz@/:***@}
		run --separate-stderr redlock-cli -u "$url" acquire k
		if [ "$status" -ne 64 ] || [ -n "$output" ]; then
			failed+=$'\n'"  '$url': exit $status, stdout '$output'"
		elif [[ $reason == *'*' ]]; then
			[[ $stderr == "redlock-cli: invalid URL '$shown': ${reason%\*}"* ]] ||
			    failed+=$'\n'"  '$url': '$stderr'"
		elif [ "$stderr" != "redlock-cli: invalid URL '$shown': $reason" ]; then
			failed+=$'\n'"  '$url': '$stderr' (expected: redlock-cli: invalid URL '$shown': $reason)"
		fi
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
	refute_key main k
}

# URL, then the guess after "did you mean " (empty: no guess)
NEAR_MISSES=(
	'redis:/host'			'redis://host'
	'redis:host:6380'		'redis://host:6380'
	'redis//host/2'			'redis://host/2'
	'rediss:/h:6380'		'rediss://h:6380'
	'redis-sentinel:/s1,s2/m'	'redis-sentinel://s1,s2/m'
	'redis+cluster:/a:7000'		'redis+cluster://a:7000'
	'unix:/run/redis.sock'		'unix:///run/redis.sock'
	'/run/redis.sock'		'unix:///run/redis.sock'
	'localhost'			'redis://localhost'
	'localhost:6380'		'redis://localhost:6380'
	'Redis://h'			'redis://h'
	'REDISS://h:6380'		'rediss://h:6380'
	'redis:/:pw@h'			'redis://:***@h'
	'redis//u:pw@h'			'redis://u:***@h'
	'unix:/:pw@/s.sock'		'unix://:***@/s.sock'
	'http://h'			''
	'redis:'			''
	'unix:relative.sock'		''
)

@test "a near miss says what it may have meant, in one line, password hidden" {
	local ci url guess failed=''
	for ((ci = 0; ci < ${#NEAR_MISSES[@]}; ci += 2)); do
		url=${NEAR_MISSES[ci]}
		guess=${NEAR_MISSES[ci + 1]}
		run --separate-stderr redlock-cli -u "$url" status k
		if [ "$status" -ne 64 ] || [ -n "$output" ]; then
			failed+=$'\n'"  '$url': exit $status, stdout '$output'"
		elif [ "$(printf '%s\n' "$stderr" | wc -l)" -ne 1 ]; then
			failed+=$'\n'"  '$url': not one line: '$stderr'"
		elif [[ $stderr == *pw* ]]; then
			failed+=$'\n'"  '$url': password shown: '$stderr'"
		elif [ -z "$guess" ]; then
			[[ $stderr != *'did you mean'* ]] ||
			    failed+=$'\n'"  '$url': a guess: '$stderr'"
		elif [[ $stderr != "redlock-cli: invalid URL '"*"': "*"; did you mean $guess?" ]]; then
			failed+=$'\n'"  '$url': '$stderr' (expected: ...; did you mean $guess?)"
		fi
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "the missing-scheme message names every scheme, rediss:// too" {
	run --separate-stderr redlock-cli -u 'redis:/host' status k
	assert_failure 64
	assert_stderr_line "redlock-cli: invalid URL 'redis:/host': missing scheme (redis://, rediss://, unix://, redis-sentinel:// or redis+cluster://); did you mean redis://host?"
}

@test "a Heroku-style rediss://:pw@host:port?ssl_cert_reqs=none URL parses" {
	local url
	# The server is not there: getting as far as connecting is the point.
	for url in "rediss://:pw@127.0.0.1:$DEAD_PORT?ssl_cert_reqs=none" \
	    "rediss://:pw@127.0.0.1:$DEAD_PORT?ssl_cert_reqs=CERT_NONE" \
	    "rediss://:pw@127.0.0.1:$DEAD_PORT/0?ssl_cert_reqs=required" \
	    "rediss://:pw@127.0.0.1:$DEAD_PORT?ssl_cert_reqs=CERT_REQUIRED"; do
		run --separate-stderr redlock-cli --no-auth-warning -u "$url" \
		    status k
		[ "$status" -eq 69 ] || fail "'$url': exit $status: $stderr"
		[[ $stderr == *"cannot connect to rediss://:***@127.0.0.1:$DEAD_PORT"* ]] ||
		    fail "'$url': $stderr"
		[[ $stderr != *pw* ]] || fail "'$url': password shown: $stderr"
	done
}

@test "a bad URL in \$REDLOCK_URL exits 64 too" {
	REDLOCK_URL='redis://h:99999' run --separate-stderr redlock-cli status k
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: invalid URL 'redis://h:99999': invalid port"
}

@test "a bad URL echoes the password as ***" {
	local url shown failed=''
	for url in 'redis://:secret@host:99999|redis://:***@host:99999' \
	    'redis://user:secret@h:0|redis://user:***@h:0' \
	    'redis://secret@h:abc|redis://***@h:abc' \
	    'redis://:se@cret@h:0|redis://:***@h:0' \
	    'unix://:secret@/p.sock?db=x|unix://:***@/p.sock?db=x' \
	    'http://:secret@host|http://:***@host'; do
		shown=${url#*|}
		url=${url%%|*}
		run --separate-stderr redlock-cli -u "${url}" status k
		[ "$status" -eq 64 ] || failed+=$'\n'"  '$url': exit $status"
		[[ $stderr == *secret* || $stderr == *cret* ]] &&
		    failed+=$'\n'"  '$url': password shown: $stderr"
		[[ $stderr == "redlock-cli: invalid URL '$shown': "* ]] ||
		    failed+=$'\n'"  '$url': '$stderr'"
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a password in a URL without '://' is not echoed" {
	local url failed=''
	for url in 'redis:/:secret@host:6380' ':secret@host:6380' \
	    'redis//user:secret@host'; do
		run --separate-stderr redlock-cli -u "$url" status k
		[ "$status" -eq 64 ] || failed+=$'\n'"  '$url': exit $status"
		[[ $stderr == *secret* ]] &&
		    failed+=$'\n'"  '$url': password shown: $stderr"
		[[ $stderr == "redlock-cli: invalid URL '"*"': missing scheme"* ]] ||
		    failed+=$'\n'"  '$url': '$stderr'"
	done
	[ -z "$failed" ] || fail "failing cases:$failed"
}

@test "a socket path that does not exist exits 69" {
	local sock="$BATS_TEST_TMPDIR/nobody-here.sock"
	run --separate-stderr redlock-cli -u "unix://$sock" acquire k
	assert_failure 69
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot connect to unix://$sock: No such file or directory"
}

@test "a socket file nobody listens on exits 69" {
	local sock="$BATS_TEST_TMPDIR/stale.sock"
	# A unix socket whose listener has gone: refused, not missing.
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$sock" 2>/dev/null ||
	    skip "cannot create a stale socket file"
	run --separate-stderr redlock-cli -u "unix://$sock" status k
	assert_failure 69
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot connect to unix://$sock: Connection refused"
}

@test "a TCP port nobody listens on exits 69 at once" {
	skip_if_slow
	local start=$SECONDS
	run --separate-stderr redlock-cli -u "redis://127.0.0.1:$DEAD_PORT" \
	    acquire k
	assert_failure 69
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot connect to redis://127.0.0.1:$DEAD_PORT: Connection refused"
	((SECONDS - start < 3))
	for cmd in "status k" "release k --token t" "extend k --token t"; do
		# shellcheck disable=SC2086
		run --separate-stderr redlock-cli \
		    -u "redis://127.0.0.1:$DEAD_PORT" $cmd
		[ "$status" -eq 69 ] || fail "$cmd: exit $status"
		assert_stderr_line \
		    "redlock-cli: cannot connect to redis://127.0.0.1:$DEAD_PORT: Connection refused"
	done
}

@test "an unreachable server's message hides the URL's password" {
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "redis://:hunter2@127.0.0.1:$DEAD_PORT" acquire k
	assert_failure 69
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot connect to redis://:***@127.0.0.1:$DEAD_PORT: Connection refused"
	[[ $stderr != *hunter2* ]]
}

@test "--connect-timeout bounds a connect to a silent address" {
	skip "no reliable blackholed address on loopback (a full listen backlog is not one)"
}

@test "a TCP URL reaches the server" {
	run --separate-stderr redlock-cli -u "redis://127.0.0.1:$TCP_PORT" acquire k
	assert_success
	[ "$(rcli tcp GET k)" = "$output" ]
	refute_key main k
}

@test "an IPv6 URL in brackets reaches the server" {
	[ "$HAVE_IPV6" = 1 ] || skip "no ::1 on this host"
	run --separate-stderr redlock-cli -u "redis://[::1]:$TCP_PORT" acquire k
	assert_success
	[ -z "$stderr" ]
	[ "$(rcli tcp GET k)" = "$output" ]
	run --separate-stderr redlock-cli -u "redis://[::1]:$TCP_PORT" status k
	assert_success
}

@test "an IPv6 URL is shown in brackets in messages" {
	[ "$HAVE_IPV6" = 1 ] || skip "no ::1 on this host"
	run --separate-stderr redlock-cli -u "redis://[::1]:$DEAD_PORT" status k
	assert_failure 69
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot connect to redis://[::1]:$DEAD_PORT: Connection refused"
}

@test "a database number in a TCP URL puts the lock in that database" {
	run --separate-stderr redlock-cli -u "redis://127.0.0.1:$TCP_PORT/3" \
	    acquire k
	assert_success
	[ "$(rcli tcp -n 3 GET k)" = "$output" ]
	[ "$(rcli tcp -n 3 EXISTS '{k}:fence')" = 1 ]
	[ "$(rcli tcp -n 0 EXISTS k)" = 0 ]
	run -0 redlock-cli -u "redis://127.0.0.1:$TCP_PORT/3" status k
	run -1 redlock-cli -u "redis://127.0.0.1:$TCP_PORT/4" status k
	run -1 redlock-cli -u "redis://127.0.0.1:$TCP_PORT" status k
}

@test "?db=N in a unix URL puts the lock in that database" {
	run --separate-stderr redlock-cli -u "$MAIN_URL?db=2" acquire k
	assert_success
	[ "$(rcli main -n 2 GET k)" = "$output" ]
	refute_key main k
}

@test "a database the server does not have exits with a clear message" {
	run --separate-stderr redlock-cli -u "$MAIN_URL?db=99" acquire k
	assert_failure 76
	assert_output ''
	assert_stderr_line "redlock-cli: $MAIN_URL?db=99: ERR DB index is out of range"
}

@test "\$REDIS_URL is used when \$REDLOCK_URL is unset" {
	unset REDLOCK_URL
	REDIS_URL=$MAIN_URL run --separate-stderr redlock-cli acquire k
	assert_success
	[ "$(rcli main GET k)" = "$output" ]
}

@test "\$REDLOCK_URL wins over \$REDIS_URL, and -u over both" {
	REDIS_URL="unix://$BATS_TEST_TMPDIR/none.sock" \
	    run --separate-stderr redlock-cli acquire k
	assert_success
	key_exists main k
	REDIS_URL="unix://$BATS_TEST_TMPDIR/none.sock" \
	    REDLOCK_URL="unix://$BATS_TEST_TMPDIR/none.sock" \
	    run --separate-stderr redlock-cli -u "$MAIN_URL" acquire k2
	assert_success
	key_exists main k2
}

@test "without a password an AUTH server answers NOAUTH: exit 77" {
	run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" status k
	assert_failure 77
	assert_output ''
	assert_stderr_line "redlock-cli: unix://$AUTH_SOCK: authentication required: NOAUTH Authentication required. (give the password in the URL, redis://:PASSWORD@host, or in --password-file FILE or REDLOCK_PASSWORD)"
	run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" extend k \
	    --token t
	assert_failure 77
	assert_stderr_line "redlock-cli: unix://$AUTH_SOCK: authentication required: NOAUTH Authentication required. (give the password in the URL, redis://:PASSWORD@host, or in --password-file FILE or REDLOCK_PASSWORD)"
}

@test "acquire and release without a password exit 77, not a protocol error" {
	# Redis refuses a long request from an unauthenticated client with
	# "ERR Protocol error: unauthenticated multibulk length" before it
	# would say NOAUTH; for the user it is the same missing password.
	local cmd
	for cmd in "acquire k" "release k --token t"; do
		# shellcheck disable=SC2086
		run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" $cmd
		[ "$status" -eq 77 ] || fail "$cmd: exit $status: $stderr"
		assert_output ''
		[[ $stderr == "redlock-cli: unix://$AUTH_SOCK: authentication"* ]] ||
		    fail "$cmd: $stderr"
		[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	done
	[ "$(arcli EXISTS k)" = 0 ]
}

@test "a wrong password exits 77 and is not shown" {
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "unix://:wrongpw@$AUTH_SOCK" acquire k
	assert_failure 77
	assert_output ''
	assert_stderr_line "redlock-cli: unix://:***@$AUTH_SOCK: authentication failed: WRONGPASS invalid username-password pair or user is disabled. (the password came from the URL)"
	[[ $stderr != *wrongpw* ]]
	REDISCLI_AUTH=wrongpw run --separate-stderr redlock-cli \
	    -u "unix://$AUTH_SOCK" status k
	assert_failure 77
	assert_stderr_line "redlock-cli: unix://$AUTH_SOCK: authentication failed: WRONGPASS invalid username-password pair or user is disabled. (the password came from REDISCLI_AUTH)"
	[[ $stderr != *wrongpw* ]]
}

@test "the password in the URL authenticates" {
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "unix://:$PASSWORD@$AUTH_SOCK" acquire k
	assert_success
	[ -z "$stderr" ]
	[ "$(arcli GET k)" = "$output" ]
}

@test "user and password in the URL authenticate (ACL AUTH user pass)" {
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "unix://default:$PASSWORD@$AUTH_SOCK" acquire k
	assert_success
	[ "$(arcli GET k)" = "$output" ]
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "unix://nobody:$PASSWORD@$AUTH_SOCK" status k
	assert_failure 77
	assert_stderr_line "redlock-cli: unix://nobody:***@$AUTH_SOCK: authentication failed: WRONGPASS invalid username-password pair or user is disabled. (the password came from the URL)"
}

@test "a percent-encoded password in the URL is decoded" {
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "unix://:s3cr%65t@$AUTH_SOCK" acquire k
	assert_success
}

@test "\$REDISCLI_AUTH authenticates" {
	REDISCLI_AUTH=$PASSWORD run --separate-stderr redlock-cli \
	    -u "unix://$AUTH_SOCK" acquire k
	assert_success
	[ -z "$stderr" ]
	[ "$(arcli GET k)" = "$output" ]
}

@test "\$REDLOCK_PASSWORD authenticates, and wins over \$REDISCLI_AUTH" {
	REDLOCK_PASSWORD=$PASSWORD run --separate-stderr redlock-cli \
	    -u "unix://$AUTH_SOCK" acquire k
	assert_success
	[ "$(arcli GET k)" = "$output" ]
	REDLOCK_PASSWORD=$PASSWORD REDISCLI_AUTH=wrongpw \
	    run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" status k
	assert_success
}

@test "a password from the environment draws no warning" {
	REDLOCK_URL="unix://:$PASSWORD@$AUTH_SOCK" \
	    run --separate-stderr redlock-cli acquire k
	assert_success
	[ -z "$stderr" ]
}

@test "--password-file with mode 600 authenticates" {
	local f="$BATS_TEST_TMPDIR/pw"
	printf '%s\n' "$PASSWORD" >"$f"
	chmod 600 "$f"
	run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" \
	    --password-file "$f" acquire k
	assert_success
	[ -z "$stderr" ]
	[ "$(arcli GET k)" = "$output" ]
	# Also after the command, and without a trailing newline.
	printf '%s' "$PASSWORD" >"$f"
	run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" status k \
	    --password-file="$f"
	assert_success
}

@test "--password-file readable by group or others is refused with 64" {
	local f="$BATS_TEST_TMPDIR/pw" mode
	printf '%s\n' "$PASSWORD" >"$f"
	for mode in 644 640 604 660; do
		chmod "$mode" "$f"
		run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" \
		    --password-file "$f" acquire k
		[ "$status" -eq 64 ] || fail "mode $mode: exit $status"
		assert_output ''
		assert_stderr_line "redlock-cli: password file '$f' is accessible by group or others (mode 0$mode): chmod 600 it"
	done
	[ "$(arcli EXISTS k)" = 0 ]
}

@test "a missing or empty --password-file exits 64" {
	local f="$BATS_TEST_TMPDIR/nope"
	run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" \
	    --password-file "$f" acquire k
	assert_failure 64
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: cannot open password file '$f': No such file or directory"
	: >"$f"
	chmod 600 "$f"
	run --separate-stderr redlock-cli -u "unix://$AUTH_SOCK" \
	    --password-file "$f" acquire k
	assert_failure 64
	assert_stderr_line "redlock-cli: password file '$f' is empty"
}

@test "a password in -u draws a one-line warning unless --no-auth-warning" {
	run --separate-stderr redlock-cli -u "unix://:$PASSWORD@$AUTH_SOCK" \
	    acquire k
	assert_success
	assert_output --regexp '^[0-9a-f]{32}$'
	[ "$stderr" = "$WARNING" ] || fail "stderr: $stderr"
	run --separate-stderr redlock-cli -u "unix://:$PASSWORD@$AUTH_SOCK" \
	    --no-auth-warning status k
	assert_success
	[ -z "$stderr" ]
	# Also when the failure is the lock being busy.
	run --separate-stderr redlock-cli -u "unix://:$PASSWORD@$AUTH_SOCK" \
	    acquire k -n
	assert_failure 1
	assert_stderr_line "$WARNING"
	assert_busy_line k
}

@test "a URL without a password draws no warning" {
	run --separate-stderr redlock-cli -u "$MAIN_URL" acquire k
	assert_success
	[ -z "$stderr" ]
}

@test "the password never appears on stderr, even with -v -v" {
	local out="$BATS_TEST_TMPDIR/all" f="$BATS_TEST_TMPDIR/pw" tok
	printf '%s\n' "$PASSWORD" >"$f"
	chmod 600 "$f"
	{
		tok=$(redlock-cli -v -v -u "unix://:$PASSWORD@$AUTH_SOCK" \
		    acquire k)
		echo "token $tok"
		redlock-cli -v -v -u "unix://:$PASSWORD@$AUTH_SOCK" status k
		redlock-cli -v -v -u "unix://:$PASSWORD@$AUTH_SOCK" \
		    extend k --token "$tok"
		REDISCLI_AUTH=$PASSWORD redlock-cli -v -v \
		    -u "unix://$AUTH_SOCK" status k
		REDLOCK_PASSWORD=$PASSWORD redlock-cli -v -v \
		    -u "unix://$AUTH_SOCK" status k --json
		redlock-cli -v -v --password-file "$f" \
		    -u "unix://$AUTH_SOCK" release k --token "$tok"
		redlock-cli -v -v -u "unix://default:$PASSWORD@$AUTH_SOCK" \
		    acquire k2 -n
		redlock-cli -v -v -u "redis://:$PASSWORD@127.0.0.1:$DEAD_PORT" \
		    status k
	} >"$out.stdout" 2>"$out" || true
	grep -q 'AUTH' "$out" || fail "no AUTH logged with -v -v: $(cat "$out")"
	grep -q 'EVAL' "$out" || fail "no command logged with -v -v: $(cat "$out")"
	if grep -n -- "$PASSWORD" "$out" "$out.stdout"; then
		fail "the password was printed"
	fi
	[ "$(arcli EXISTS k)" = 0 ] || fail "release did not run"
}
