#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# TLS: rediss:// and --tls against real redis-server TLS ports, with a
# throwaway CA, server and client certificates made here by openssl.

load helpers

# tls_server NAME [redis-server args]: TLS on a free port, TCP off, a
# plain unix socket for the tests' own checks; NAME_PORT in DIR/port.
tls_server() {
	local name=$1 dir="$BATS_FILE_TMPDIR/redis-$1" port _
	shift
	mkdir -p "$dir"
	for _ in 1 2 3 4 5; do
		port=$(free_port) || return 1
		redis-server --port 0 --tls-port "$port" --bind 127.0.0.1 \
		    --tls-cert-file "$CERTS/server.crt" \
		    --tls-key-file "$CERTS/server.key" \
		    --tls-ca-cert-file "$CERTS/ca.crt" \
		    --tls-auth-clients no \
		    --unixsocket "$dir/sock" --unixsocketperm 700 \
		    --save '' --appendonly no --daemonize yes \
		    --pidfile "$dir/pid" --dir "$dir" --logfile "$dir/log" \
		    "$@" </dev/null 3>&- || continue
		if redis_wait_ready "$dir/sock"; then
			redis_acl_user "$dir/sock"
			echo "$port" >"$dir/port"
			return 0
		fi
		redis_stop "$name"
	done
	return 1
}

tls_port() { cat "$BATS_FILE_TMPDIR/redis-$1/port"; }

# make_certs DIR: a CA, a server cert for localhost and 127.0.0.1, a
# client cert, and a second CA that signed none of them.
make_certs() {
	local d=$1
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=test CA" \
	    -keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
	    -subj "/CN=other CA" -keyout "$d/other.key" \
	    -out "$d/other.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
	    -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$d/san"
	openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" \
	    -CAkey "$d/ca.key" -CAcreateserial -days 2 -extfile "$d/san" \
	    -out "$d/server.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=client" \
	    -keyout "$d/client.key" -out "$d/client.csr" 2>/dev/null
	openssl x509 -req -in "$d/client.csr" -CA "$d/ca.crt" \
	    -CAkey "$d/ca.key" -CAcreateserial -days 2 \
	    -out "$d/client.crt" 2>/dev/null
	[ -s "$d/server.crt" ] && [ -s "$d/client.crt" ]
}

setup_file() {
	need redis-server redis-cli ss openssl
	export CERTS="$BATS_FILE_TMPDIR/certs"
	make_certs "$CERTS"
	tls_server main
	tls_server mtls --tls-auth-clients yes
	tls_server q1
	tls_server q2
	tls_server q3
	tls_server auth --requirepass 'tls-s3cret-pw'
}

teardown_file() {
	stop_bg_jobs
	for n in main mtls q1 q2 q3 auth old plain; do
		redis_stop "$n"
	done
}

setup() {
	for n in main mtls q1 q2 q3; do
		redis_flush "$n"
	done
	MAIN="rediss://127.0.0.1:$(tls_port main)"
}

@test "rediss:// with --cacert connects, verifies and takes the lock" {
	run --separate-stderr redlock-cli -u "$MAIN" --cacert "$CERTS/ca.crt" \
	    acquire k
	assert_success
	[ -z "$stderr" ]
	assert_equal "$(rcli main GET k)" "$output"
}

@test "the host name is verified: rediss://localhost works against a cert for localhost" {
	run --separate-stderr redlock-cli \
	    -u "rediss://localhost:$(tls_port main)" --cacert "$CERTS/ca.crt" \
	    acquire k -t 5s
	assert_success
	key_exists main k
}

@test "a certificate from an unknown CA is refused with the reason, exit 69" {
	run --separate-stderr redlock-cli -u "$MAIN" \
	    --cacert "$CERTS/other.crt" acquire k
	assert_failure 69
	[ -z "$output" ]
	assert_stderr_line "redlock-cli: cannot connect to $MAIN: certificate verification failed: self-signed certificate in certificate chain"
	refute_key main k
}

@test "without --cacert, the system's trust store is used, and SSL_CERT_FILE names another" {
	run --separate-stderr redlock-cli -u "$MAIN" acquire k
	assert_failure 69
	assert_stderr_line "redlock-cli: cannot connect to $MAIN: certificate verification failed: self-signed certificate in certificate chain"
	SSL_CERT_FILE="$CERTS/ca.crt" run -0 redlock-cli -u "$MAIN" acquire k
	assert_output --regexp '^[0-9a-f]{32}$'
	SSL_CERT_FILE="$CERTS/other.crt" run -69 redlock-cli -u "$MAIN" \
	    acquire k2
}

@test "a name that the certificate does not cover is refused (hostname mismatch), exit 69" {
	run --separate-stderr redlock-cli -u "$MAIN" --cacert "$CERTS/ca.crt" \
	    --sni wrong.example acquire k
	assert_failure 69
	assert_stderr_line "redlock-cli: cannot connect to $MAIN: certificate verification failed: hostname mismatch"
	refute_key main k
}

@test "--insecure skips verification and says so on every run" {
	run --separate-stderr redlock-cli -u "$MAIN" --insecure acquire k
	assert_success
	assert_stderr_line "redlock-cli: warning: --insecure: the server's certificate is not verified"
	key_exists main k
}

@test "?ssl_cert_reqs=none acts as --insecure, with its warning; =required verifies" {
	# A Heroku or Render URL: a password, no user, no CA to give.
	unset REDLOCK_USER REDLOCK_PASSWORD
	local url="rediss://:tls-s3cret-pw@127.0.0.1:$(tls_port auth)"
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "$url?ssl_cert_reqs=none" acquire k
	assert_success
	[ "$stderr" = "redlock-cli: warning: --insecure: the server's certificate is not verified" ] ||
	    fail "stderr: $stderr"
	run --separate-stderr redlock-cli --no-auth-warning \
	    -u "$url?ssl_cert_reqs=required" acquire k2
	assert_failure 69
	assert_stderr_line "redlock-cli: cannot connect to rediss://:***@127.0.0.1:$(tls_port auth): certificate verification failed: self-signed certificate in certificate chain"
	[[ $stderr != *tls-s3cret-pw* ]] || fail "the password was printed"
}

@test "a server that requires client certificates accepts --cert/--key" {
	run --separate-stderr redlock-cli \
	    -u "rediss://127.0.0.1:$(tls_port mtls)" --cacert "$CERTS/ca.crt" \
	    --cert "$CERTS/client.crt" --key "$CERTS/client.key" acquire k
	assert_success
	key_exists mtls k
}

@test "a server that requires client certificates refuses a client without one, exit 69" {
	run --separate-stderr redlock-cli \
	    -u "rediss://127.0.0.1:$(tls_port mtls)" --cacert "$CERTS/ca.crt" \
	    acquire k
	assert_failure 69
	[ -z "$output" ]
	[[ "$stderr" == *"certificate required"* ]] ||
	    fail "the reason is not named: $stderr"
	refute_key mtls k
}

@test "--cert without --key is a usage error" {
	run --separate-stderr redlock-cli -u "$MAIN" --cacert "$CERTS/ca.crt" \
	    --cert "$CERTS/client.crt" acquire k
	assert_failure 64
	assert_stderr_line "redlock-cli: --cert and --key go together"
}

@test "a --cacert that cannot be read is a usage error" {
	run --separate-stderr redlock-cli -u "$MAIN" \
	    --cacert "$BATS_TEST_TMPDIR/nope.crt" acquire k
	assert_failure 64
	[[ "$stderr" == "redlock-cli: cannot load --cacert: "* ]] ||
	    fail "unexpected: $stderr"
}

@test "run renews a 1s lock over TLS through a 2.5s command and releases it" {
	skip_if_slow
	run --separate-stderr redlock-cli -u "$MAIN" --cacert "$CERTS/ca.crt" \
	    run k -t 1s -- sh -c 'sleep 2.5; echo done'
	assert_success
	assert_output "done"
	refute_key main k
}

@test "a quorum of three TLS servers: the same token on all three" {
	local urls=() n
	for n in q1 q2 q3; do
		urls+=(-u "rediss://127.0.0.1:$(tls_port "$n")")
	done
	run --separate-stderr redlock-cli "${urls[@]}" --cacert "$CERTS/ca.crt" \
	    acquire k
	assert_success
	for n in q1 q2 q3; do
		assert_equal "$(rcli "$n" GET k)" "$output"
	done
}

@test "--tls turns on TLS for a redis:// URL" {
	run --separate-stderr redlock-cli --tls --cacert "$CERTS/ca.crt" \
	    -u "redis://127.0.0.1:$(tls_port main)" acquire k
	assert_success
	key_exists main k
}

@test "a redis:// URL to a TLS port: exit 69, one line that suggests rediss://" {
	local url="redis://127.0.0.1:$(tls_port main)" cmd
	for cmd in "acquire k" "release k --token t" "status k"; do
		# shellcheck disable=SC2086
		run --separate-stderr redlock-cli -u "$url" $cmd
		assert_failure 69
		assert_output ''
		assert_equal "$stderr" "redlock-cli: $url: connection closed by the server (is it a TLS port? try rediss://)"
	done
	refute_key main k
}

@test "a rediss:// URL to a plain port: exit 69 after the connect timeout, not twice it, one line that suggests redis://" {
	local url err
	redis_start_tcp plain
	url="rediss://127.0.0.1:$REDIS_PORT"
	unset REDLOCK_URL
	run --separate-stderr redlock-cli -v -v -u "$url" --connect-timeout 300ms acquire k
	assert_failure 69
	assert_output ''
	err=$(grep -v ': > ' <<<"$stderr")
	assert_equal "$err" "redlock-cli: cannot connect to $url: no answer to the TLS handshake within 300ms (not a TLS port? try redis://)"
	# Nothing of the attempt went out, so nothing is given back: one
	# request shown, where a give-back would show a second (and wait
	# for its handshake as long again).
	# (make test-acl: the ACL user's AUTH is shown before it.)
	[ "$(grep ': > ' <<<"$stderr" | grep -vc ': > AUTH ')" = 1 ] ||
	    fail "$stderr"
	redis_stop plain
}

@test "a plain redis:// run does not load libssl; a rediss:// run does" {
	local plain_maps tls_maps
	need readelf
	! build_is_static ||
	    skip "a static build has OpenSSL linked in: nothing to load"
	redlock-cli -u "unix://$(redis_sock main)" \
	    run plain -- sh -c 'cat /proc/$PPID/maps' \
	    >"$BATS_TEST_TMPDIR/plain" 3>&- ||
	    fail "plain run failed"
	plain_maps=$(grep -c 'libssl' "$BATS_TEST_TMPDIR/plain" || true)
	redlock-cli -u "$MAIN" --cacert "$CERTS/ca.crt" \
	    run tls -- sh -c 'cat /proc/$PPID/maps' \
	    >"$BATS_TEST_TMPDIR/tls" 3>&- || fail "TLS run failed"
	tls_maps=$(grep -c 'libssl' "$BATS_TEST_TMPDIR/tls" || true)
	[ "$plain_maps" -eq 0 ] || fail "libssl mapped in a plain run"
	[ "$tls_maps" -gt 0 ] || fail "libssl not mapped in a TLS run"
}

@test "a static build maps no shared object, also over TLS, and --version names the OpenSSL linked in" {
	need readelf
	build_is_static || skip "this build uses the shared C library"
	redlock-cli -u "$MAIN" --cacert "$CERTS/ca.crt" \
	    run tls -- sh -c 'cat /proc/$PPID/maps' \
	    >"$BATS_TEST_TMPDIR/tls" 3>&- || fail "TLS run failed"
	grep -q 'redlock-cli' "$BATS_TEST_TMPDIR/tls" ||
	    fail "not redlock-cli's maps: $(head -n 3 "$BATS_TEST_TMPDIR/tls")"
	run grep '\.so' "$BATS_TEST_TMPDIR/tls"
	assert_failure
	assert_output ''
	run -0 redlock-cli --version
	assert_output --regexp ', TLS: OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]* linked\)$'
}

@test "openssl.cnf is read by a build with the shared C library only" {
	local conf="$BATS_TEST_TMPDIR/openssl.cnf"
	need readelf
	# Every TLS connection of OpenSSL's limited to TLS 1.0, which the
	# server does not speak (its tls-protocols: 1.2 and 1.3).
	printf '%s\n' 'openssl_conf = init' '[init]' 'ssl_conf = ssl' '[ssl]' \
	    'system_default = sys' '[sys]' 'MaxProtocol = TLSv1' >"$conf"
	if build_is_static; then
		OPENSSL_CONF=$conf run -0 redlock-cli -u "$MAIN" \
		    --cacert "$CERTS/ca.crt" acquire k
	else
		OPENSSL_CONF=$conf run -69 redlock-cli -u "$MAIN" \
		    --cacert "$CERTS/ca.crt" acquire k
		refute_key main k
	fi
}

@test "the static build refuses a TLS 1.1-only server for its own floor (TLS 1.2); a shared one follows openssl.cnf" {
	local conf="$BATS_TEST_TMPDIR/openssl.cnf" url
	need readelf
	# A server that speaks TLS 1.1 only, its own security level lowered
	# so that its OpenSSL offers it at all.
	tls_server old --tls-protocols TLSv1.1 --tls-ciphers 'DEFAULT:@SECLEVEL=0' ||
	    fail "no TLS 1.1 server"
	url="rediss://127.0.0.1:$(tls_port old)"
	# A site whose policy allows TLS 1.0 and every security level.
	printf '%s\n' 'openssl_conf = init' '[init]' 'ssl_conf = ssl' '[ssl]' \
	    'system_default = sys' '[sys]' 'MinProtocol = TLSv1' \
	    'CipherString = DEFAULT@SECLEVEL=0' >"$conf"
	if build_is_static; then
		# Refused for the protocol version, whatever openssl.cnf says.
		OPENSSL_CONF=$conf run -69 redlock-cli -u "$url" \
		    --cacert "$CERTS/ca.crt" acquire k
		assert_output --regexp 'TLS handshake failed: .*(unsupported protocol|protocol version|no protocols available)'
	else
		# The system's policy (Debian's: TLS 1.2 at security level 2)
		# refuses it; the site's lowered one lets it through.
		run -69 redlock-cli -u "$url" --cacert "$CERTS/ca.crt" acquire k
		assert_output --partial 'TLS handshake failed'
		OPENSSL_CONF=$conf run -0 redlock-cli -u "$url" \
		    --cacert "$CERTS/ca.crt" acquire k
	fi
}

@test "the password never appears in any output over TLS, even with -v -v" {
	# This server's default user has a password; no ACL user here.
	unset REDLOCK_USER REDLOCK_PASSWORD
	local url="rediss://:tls-s3cret-pw@127.0.0.1:$(tls_port auth)"
	run --separate-stderr redlock-cli -v -v --no-auth-warning -u "$url" \
	    --cacert "$CERTS/ca.crt" run k -t 1s -- true
	assert_success
	[[ "$output$stderr" != *tls-s3cret-pw* ]] ||
	    fail "the password was printed"
	[[ "$stderr" == *"AUTH ***"* ]] || fail "no redacted AUTH line: $stderr"
	run --separate-stderr redlock-cli -v -v -u "$url" \
	    --cacert "$CERTS/other.crt" acquire k
	assert_failure 69
	[[ "$output$stderr" != *tls-s3cret-pw* ]] ||
	    fail "the password was printed in a failure"
}
