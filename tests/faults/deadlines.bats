#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Safety: every step that can block while a lock is held or being taken
# ends by the lock's validity minus the safety margin (a quarter of the
# TTL), so the lost-lock signal reaches the command before the TTL ends,
# whatever the step: a WAIT for a replica that died, a reconnect whose
# name lookup never answers, a sentinel that stopped answering, a slow
# acquire.  Real servers, a real replica and sentinel; the hung resolver
# is a UDP socket that reads and never answers, in a mount namespace of
# the test's own.

load ../helpers
load faults

setup_file() {
	redis_start_tcp dl --repl-diskless-sync-delay 0 || return 1
	echo "$REDIS_PORT" >"$BATS_FILE_TMPDIR/dl.port"
}

teardown_file() {
	redis_stop dlreplica 2>/dev/null || true
	redis_stop dl
	reap_old_redis
}

setup() {
	slow_skip
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	PORT=$(cat "$BATS_FILE_TMPDIR/dl.port")
	export REDLOCK_URL="redis://127.0.0.1:$PORT"
	redis_acl_user "$(redis_sock dl)"
	redis_flush dl
}

teardown() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		stop_pid "$pid"
	done
	[ -z "${RESOLVER_PID:-}" ] || stop_pid "$RESOLVER_PID"
}

# ticker NAME: a job that appends the time (epoch ns) to $D/NAME.log every
# 0.1 s, and writes the time of a SIGTERM to $D/NAME.term, for ever.
ticker() {
	cat >"$D/$1.sh" <<EOF
trap 'date +%s%N >"$D/$1.term"; exit 143' TERM
while :; do date +%s%N >>"$D/$1.log"; sleep 0.1; done
EOF
	echo "$D/$1.sh"
}

# replica_ready: a replica of the server, started if none is running;
# REDLOCK_URL stays on the master.
replica_ready() {
	local pid
	pid=$(redis_pid dlreplica) || true
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
		redis_start_replica dlreplica "$PORT" || fail "no replica"
	fi
	export REDLOCK_URL="redis://127.0.0.1:$PORT"
	wait_until replica_link_up dlreplica || fail "replica not linked"
}

first_tick() { head -n 1 "$D/$1.log"; }
last_tick() { tail -n 1 "$D/$1.log"; }
ticked() { [ -s "$D/$1.log" ]; }

@test "a replica killed mid-run under --wait-replicas: the job gets SIGTERM before its TTL ends, and the next holder starts after its last output" {
	local a b t0 term last bstart
	replica_ready
	a=$(ticker a)
	start_bg runA run wk -t 3s --wait-replicas 1 --wait-timeout 5s \
	    -- sh "$a"
	A=$BG_PID
	wait_until ticked a || fail "job A never started: $(cat "$D/runA.err")"
	kill -KILL "$(redis_pid dlreplica)"
	rm -f "$BATS_FILE_TMPDIR/redis-dlreplica/pid"
	b="date +%s%N >$D/b.start"
	start_bg runB run wk -t 3s -w 20s -c "$b"
	B=$BG_PID
	wait_bg "$A"
	assert_equal "$BG_STATUS" 75
	wait_bg "$B"
	assert_equal "$BG_STATUS" 0
	[ -s "$D/a.term" ] || fail "job A never got SIGTERM: $(cat "$D/runA.err")"
	t0=$(first_tick a)
	term=$(cat "$D/a.term")
	last=$(last_tick a)
	bstart=$(cat "$D/b.start")
	# A's own first tick comes after its acquire: the real TTL started
	# earlier, so this bound is if anything too strict.
	assert_lt $(((term - t0) / 1000000)) 3000 "SIGTERM to job A, ms after it started"
	assert_lt "$last" "$bstart" "job A's last output against job B's start"
}

@test "a --wait-timeout longer than the TTL allows is capped, and -v says so" {
	replica_ready
	run --separate-stderr redlock-cli -v acquire wc -t 1s \
	    --wait-replicas 1 --wait-timeout 5s
	assert_success
	[[ $stderr == *"redlock-cli: --wait-timeout 5s capped to "*": lock 'wc' must still be valid when WAIT ends"* ]] ||
	    fail "no cap line: $stderr"
}

@test "an acquire slowed past the lock's validity (LOADING retries) never starts the command" {
	# The fake server answers LOADING to an AUTH too (make test-acl).
	unset REDLOCK_USER REDLOCK_PASSWORD
	build_fake bad-redis
	local sock="$D/bad.sock"
	# The first 6 requests of the connection answer LOADING (the retries
	# back off 20, 40, 80, 160, 160 ms), then every attempt wins.
	"$BATS_FILE_TMPDIR/bad-redis" -f 6 -F $'-LOADING Redis is loading the dataset in memory\r\n' \
	    -r $'*2\r\n:1\r\n:1\r\n' "$sock" "$D/bad.pid" "$D/bad.log" \
	    </dev/null >/dev/null 2>&1 3>&- &
	BG_PIDS+=("$!")
	wait_until test -s "$D/bad.pid"
	run --separate-stderr redlock-cli -u "unix://$sock" --io-timeout 2s \
	    run slow -t 100ms -n -- touch "$D/ran"
	assert_failure 69
	[ ! -e "$D/ran" ] || fail "the command ran on a lock with no validity left"
	# The retries stop at the validity minus the margin (72 ms in).
	assert_stderr_line "redlock-cli: unix://$sock: LOADING Redis is loading the dataset in memory"
}

# in_dns_namespace HOSTS RESOLV CMD...: CMD in a mount namespace of its own
# where /etc/hosts and /etc/resolv.conf are the given files (root only).
in_dns_namespace() {
	local hosts=$1 resolv=$2
	shift 2
	unshare -m sh -c 'mount --bind "$1" /etc/hosts &&
	    mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"' \
	    sh "$hosts" "$resolv" "$@"
}

# silent_resolver: a name server on 127.53.53.53:53 that reads every
# query and never answers (its pid in RESOLVER_PID).
silent_resolver() {
	socat -u UDP-RECV:53,bind=127.53.53.53 /dev/null \
	    </dev/null >/dev/null 2>&1 3>&- &
	RESOLVER_PID=$!
	wait_until eval 'ss -lunH | grep -q 127.53.53.53:53' ||
	    fail "the silent resolver did not start"
}

@test "a name lookup that never answers during a renewal's reconnect: the job gets SIGTERM before its TTL ends" {
	[ "$(id -u)" = 0 ] || skip "needs root for a mount namespace"
	unshare -m true 2>/dev/null || skip "no mount namespaces here"
	command -v socat >/dev/null || skip "socat is not installed"
	local a t0 term
	redis_start_tcp dlname || fail "no server"
	local port=$REDIS_PORT
	printf '127.0.0.1 localhost\n127.0.0.1 redis.test\n' >"$D/hosts"
	printf 'nameserver 127.53.53.53\noptions timeout:5 attempts:2\n' >"$D/resolv"
	silent_resolver
	a=$(ticker a)
	in_dns_namespace "$D/hosts" "$D/resolv" redlock-cli \
	    -u "redis://redis.test:$port" run rk -t 3s -- sh "$a" \
	    </dev/null >"$D/runA.out" 2>"$D/runA.err" 3>&- &
	A=$!
	BG_PIDS+=("$A")
	wait_until ticked a || fail "job A never started: $(cat "$D/runA.err")"
	# From now on the name is only in DNS, which never answers; and the
	# server goes, so the renewal must reconnect.
	printf '127.0.0.1 localhost\n' >"$D/hosts"
	redis_stop dlname
	wait_bg "$A"
	assert_equal "$BG_STATUS" 75
	[ -s "$D/a.term" ] || fail "job A never got SIGTERM: $(cat "$D/runA.err")"
	t0=$(first_tick a)
	term=$(cat "$D/a.term")
	assert_lt $(((term - t0) / 1000000)) 3000 "SIGTERM to job A, ms after it started"
	grep -q "the name lookup did not answer within" "$D/runA.err" ||
	    fail "no lookup timeout said: $(cat "$D/runA.err")"
}

@test "a TLS handshake that never completes ends by the validity's margin, not the connect timeout" {
	command -v socat >/dev/null || skip "socat is not installed"
	local port start
	port=$(free_port) || fail "no free port"
	# Takes the connection and the ClientHello, never answers.
	socat -u "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr" /dev/null \
	    </dev/null >/dev/null 2>&1 3>&- &
	RESOLVER_PID=$!
	wait_until eval "ss -ltnH | grep -q '127.0.0.1:$port '" ||
	    fail "the listener did not start"
	start=$(now_ms)
	run --separate-stderr redlock-cli -u "rediss://127.0.0.1:$port" \
	    --connect-timeout 5s acquire tk -t 400ms -n
	assert_failure 69
	# 400 - 6 (drift) - 100 (margin) = 294 ms, not the 5 s.
	assert_lt $(($(now_ms) - start)) 2000 "ms the acquire took"
	assert_stderr_match "redlock-cli: cannot connect to rediss://127\\.0\\.0\\.1:$port: no answer to the TLS handshake within 29[0-4]ms \\(not a TLS port\\? try redis://\\)"
}
