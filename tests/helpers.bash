# SPDX-License-Identifier: MIT
# Loaded by every .bats file: assertions, the built binary first on PATH,
# and throwaway redis-server processes that the tests start and stop
# themselves (unix sockets or high ports, never 6379, stopped by PID).

bats_require_minimum_version 1.5.0
# bats-support and bats-assert from BATS_LIB_PATH, then from where Debian's
# packages put them.
BATS_LIB_PATH="${BATS_LIB_PATH:+$BATS_LIB_PATH:}/usr/lib/bats"
bats_load_library bats-support
bats_load_library bats-assert

# ROOT is the source tree; REDLOCK_BUILD holds the redlock-cli and
# tests/unit/test-units under test: REDLOCK_TEST_BUILD (make sanitize,
# make test HIREDIS=1 build elsewhere), else the tree itself.
ROOT="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
[ -f "$ROOT/tests/helpers.bash" ] || ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
export ROOT
REDLOCK_BUILD=${REDLOCK_TEST_BUILD:-$ROOT}
export REDLOCK_BUILD
PATH="$REDLOCK_BUILD:$PATH"

# need CMD...: skip the test (or file, from setup_file) with one line when
# a command it needs is missing, as make check wants; after make deps
# (REDLOCK_TEST_MISSING=fail: make test) a missing one is make deps' bug,
# and the test fails instead.
need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null && continue
		if [ "${REDLOCK_TEST_MISSING:-skip}" = fail ]; then
			fail "$c is not installed, though make deps ran"
		fi
		skip "$c is not installed"
	done
}

# have CMD: CMD is installed; when it is not, false (make check), or the
# test fails after make deps (as need does).
have() {
	command -v "$1" >/dev/null && return 0
	[ "${REDLOCK_TEST_MISSING:-skip}" != fail ] ||
	    fail "$1 is not installed, though make deps ran"
	return 1
}

# Another server than the redis-server on PATH (make test-servers):
# REDLOCK_TEST_SERVER_BIN, REDLOCK_TEST_SENTINEL_BIN, REDLOCK_TEST_CLI_BIN
# are put first on PATH under the names the tests call (redis-server,
# redis-sentinel, redis-cli), so every start, Sentinel and Cluster
# included, runs that server in its own mode.
if [ -n "${REDLOCK_TEST_SERVER_BIN:-}" ]; then
	_sb="$BATS_RUN_TMPDIR/server-bin"
	if [ ! -d "$_sb" ]; then
		mkdir -p "$_sb"
		# Absolute, so that a relative path given by hand still works.
		ln -s "$(realpath "$REDLOCK_TEST_SERVER_BIN")" "$_sb/redis-server"
		ln -s "$(realpath "${REDLOCK_TEST_SENTINEL_BIN:-$REDLOCK_TEST_SERVER_BIN}")" \
		    "$_sb/redis-sentinel"
		ln -s "$(realpath "${REDLOCK_TEST_CLI_BIN:-$(dirname "$REDLOCK_TEST_SERVER_BIN")/redis-cli}")" \
		    "$_sb/redis-cli"
	fi
	PATH="$_sb:$PATH"
	unset _sb
fi
# build_is_static: the redlock-cli under test is a static executable
# (make's STATIC=1): it has no program interpreter.  2 if readelf cannot
# tell (a test needs readelf first).
build_is_static() {
	local h
	h=$(LC_ALL=C readelf -l "$REDLOCK_BUILD/redlock-cli") || return 2
	[[ $h != *'program interpreter'* ]]
}

# make valgrind: the same suite, every redlock-cli under memcheck; a
# memory error or a definite leak makes it exit 99.  Not a static one:
# memcheck sees nothing of its heap, and would report nothing.
if [ "${REDLOCK_TEST_VALGRIND:-0}" = 1 ]; then
	if build_is_static; then
		echo "helpers.bash: $REDLOCK_BUILD/redlock-cli is static:" \
		    "memcheck cannot see its heap (make valgrind builds" \
		    "with the default STATIC=0)" >&2
		exit 1
	fi
	mkdir -p "$BATS_RUN_TMPDIR/vg"
	cat >"$BATS_RUN_TMPDIR/vg/redlock-cli" <<EOF
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full \\
    --errors-for-leak-kinds=definite --show-leak-kinds=definite \\
    "$REDLOCK_BUILD/redlock-cli" "\$@"
EOF
	chmod +x "$BATS_RUN_TMPDIR/vg/redlock-cli"
	PATH="$BATS_RUN_TMPDIR/vg:$PATH"
fi
export PATH

# skip_if_slow: timing bounds do not hold under valgrind.
skip_if_slow() {
	if [ "${REDLOCK_TEST_VALGRIND:-0}" = 1 ]; then
		skip "timing bound; not meaningful under valgrind"
	fi
	# make sanitize: ASan makes every start and reply slower; the plain
	# run of the suite holds these bounds.
	if [ "${REDLOCK_TEST_SANITIZE:-0}" = 1 ]; then
		skip "timing bound; not meaningful under ASan"
	fi
}
# Tests must not see the developer's settings.  Only once per file: bats
# loads this again for every test, and setup_file's REDLOCK_URL must stay.
if [ -z "${REDLOCK_HELPERS_LOADED:-}" ]; then
	unset REDLOCK_URL REDIS_URL REDLOCK_TOKEN REDLOCK_PREFIX \
	    REDISCLI_AUTH REDLOCK_PASSWORD REDLOCK_USER \
	    REDLOCK_SENTINEL_PASSWORD
	# A make the tests run is a make of its own, not one more level of
	# the make that runs them: make check in a package build passes
	# STATIC=0, WERROR=0, PREFIX, ZSHCOMPDIR ... down, through MAKEFLAGS
	# and as exported variables.
	unset MAKEFLAGS MFLAGS MAKELEVEL STATIC WERROR BUILDDIR HIREDIS \
	    PREFIX DESTDIR BINDIR MANDIR BASHCOMPDIR ZSHCOMPDIR FISHCOMPDIR
	export REDLOCK_HELPERS_LOADED=1
fi

# The least a lock user needs (see "ACCESS CONTROL" in the man page): the
# script commands, BZPOPMIN to wait, WAIT, ROLE and ASKING, SELECT, and the
# commands the scripts call, on every key (or ~PREFIX* ~{PREFIX*).
REDLOCK_ACL_RULES="on >lock-pw resetkeys ~* resetchannels -@all +evalsha +eval +bzpopmin +wait +select +role +asking +get +set +del +pexpire +pttl +incr +type +time +hset +hget +hgetall +hdel +zadd +zscore +zrem +zrange +zrangebyscore +zremrangebyscore +zcard +zcount +hmget +hsetnx +incrby +xadd +xrevrange +exists +scan +cluster|nodes"

# With REDLOCK_TEST_ACL=1 (make test-acl) every server gets that user and
# redlock-cli runs as it; the tests' own redis-cli stays the default user.
redis_acl_user() {
	[ "${REDLOCK_TEST_ACL:-0}" = 1 ] || return 0
	# shellcheck disable=SC2086
	redis-cli -s "$1" ACL SETUSER locker $REDLOCK_ACL_RULES >/dev/null
	export REDLOCK_USER=locker REDLOCK_PASSWORD=lock-pw
}

# redis_start NAME [redis-server args...]: a server on a unix socket with
# TCP off, persistence off; exports REDLOCK_URL and NAME_SOCK.
redis_start() {
	local name=$1
	shift
	need redis-server redis-cli
	local dir="$BATS_FILE_TMPDIR/redis-$name"
	mkdir -p "$dir"
	redis-server --port 0 --unixsocket "$dir/sock" --unixsocketperm 700 \
	    --save '' --appendonly no --daemonize yes \
	    --pidfile "$dir/pid" --dir "$dir" --logfile "$dir/log" \
	    "$@" </dev/null 3>&- || return 1
	redis_wait_ready "$dir/sock" || { cat "$dir/log" >&2; return 1; }
	redis_acl_user "$dir/sock"
	export REDLOCK_URL="unix://$dir/sock"
}

# redis_start_tcp NAME [args...]: the same on a free TCP port in a high
# range; exports REDLOCK_URL=redis://127.0.0.1:PORT and REDIS_PORT.
redis_start_tcp() {
	local name=$1 port
	shift
	need redis-server redis-cli
	local dir="$BATS_FILE_TMPDIR/redis-$name"
	mkdir -p "$dir"
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		port=$(( 20000 + (RANDOM % 30000) ))
		redis-server --port "$port" --bind 127.0.0.1 \
		    --unixsocket "$dir/sock" --unixsocketperm 700 \
		    --save '' --appendonly no --daemonize yes \
		    --pidfile "$dir/pid" --dir "$dir" --logfile "$dir/log" \
		    "$@" </dev/null 3>&- || continue
		if redis_wait_ready "$dir/sock"; then
			redis_acl_user "$dir/sock"
			export REDIS_PORT=$port
			export REDLOCK_URL="redis://127.0.0.1:$port"
			return 0
		fi
		redis_stop "$name" 2>/dev/null
	done
	return 1
}

# Bounded poll for PING on a socket: about 5 s in 50 ms steps.
redis_wait_ready() {
	local _
	for _ in $(seq 1 100); do
		# A server with requirepass is up when it asks for AUTH.
		case "$(redis-cli -s "$1" PING 2>&1)" in
		PONG|*NOAUTH*) return 0 ;;
		esac
		sleep 0.05
	done
	return 1
}

redis_sock() { echo "$BATS_FILE_TMPDIR/redis-$1/sock"; }
redis_pid() { cat "$BATS_FILE_TMPDIR/redis-$1/pid" 2>/dev/null; }

# proc_alive PID: running, and not a zombie waiting for a slow init.
proc_alive() {
	kill -0 "$1" 2>/dev/null || return 1
	! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# proc_gone PID: exited (a zombie that init has not reaped yet counts).
proc_gone() { ! proc_alive "$1"; }

# pidfile_stop DIR: stop the daemon in DIR/pid (TERM, KILL after 5 s), wait.
pidfile_stop() {
	local dir=$1 pid _
	pid=$(cat "$dir/pid" 2>/dev/null) || return 0
	kill -CONT "$pid" 2>/dev/null
	kill "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		proc_alive "$pid" || { rm -f "$dir/pid"; return 0; }
		sleep 0.05
	done
	kill -9 "$pid" 2>/dev/null
	rm -f "$dir/pid"
}

# redis_stop NAME: kill the PID from our own pidfile and wait for it.
redis_stop() { pidfile_stop "$BATS_FILE_TMPDIR/redis-$1"; }
# The same for each NAME given.
redis_start_each() { local s; for s in "$@"; do redis_start "$s"; done; }
redis_stop_each() { local s; for s in "$@"; do redis_stop "$s"; done; }
# Each NAME's server running (a test may have stopped it) and empty.
redis_ready_each() {
	local s
	for s in "$@"; do
		[ -e "$BATS_FILE_TMPDIR/redis-$s/pid" ] || redis_start "$s"
		redis_flush "$s"
	done
}

# rcli NAME ARGS...: redis-cli against one of our servers.
rcli() {
	local name=$1
	shift
	redis-cli -s "$(redis_sock "$name")" "$@"
}

redis_flush() { rcli "${1:-main}" FLUSHALL >/dev/null; }

# wait_until CMD...: retry CMD for up to about 5 s (WAIT_TRIES * 50 ms).
wait_until() {
	local _
	for _ in $(seq 1 "${WAIT_TRIES:-100}"); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# key_exists NAME KEY
key_exists() { [ "$(rcli "$1" EXISTS "$2")" = 1 ]; }
# zcard_is SERVER KEY N: the sorted set KEY has N members (read each try).
zcard_is() { [ "$(rcli "$1" ZCARD "$2")" = "$3" ]; }

# assert_stderr_line TEXT: $stderr (from run --separate-stderr) has
# exactly this line (bats-assert 2.1 in Debian has no assert_stderr).
# shellcheck disable=SC2154 # $stderr is set by bats' run
assert_stderr_line() {
	if ! printf '%s\n' "$stderr" | grep -qxF -- "$1"; then
		printf 'expected stderr line: %s\nactual stderr:\n%s\n' \
		    "$1" "$stderr" | fail
	fi
}

# assert_busy_line KEY [WAITED]: $stderr has the busy message of lock KEY
# that names its redlock-cli holder: "is held by HOST pid P (COMMAND,
# since HH:MM:SS, 25s left)", or with WAITED "is still held by ... after
# WAITED".
assert_busy_line() {
	local key re
	key=$(printf '%s' "$1" | sed 's/[][\\.*^$?+(){}|/]/\\&/g')
	re="^redlock-cli: lock '$key' is held by [^ ]+ pid [0-9]+ \(.*\)\$"
	if [[ $# -gt 1 ]]; then
		re="^redlock-cli: lock '$key' is still held by [^ ]+ pid [0-9]+"
		re+=" \(.*\) after $2\$"
	fi
	if ! printf '%s\n' "$stderr" | grep -qE -- "$re"; then
		printf 'expected a busy line naming the holder of %s\n%s\n%s\n' \
		    "$1" "actual stderr:" "$stderr" | fail
	fi
}

# --- shared by several test files --------------------------------------

# now_ms: the wall clock in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# refute_key NAME KEY: fail unless KEY is absent (a bare "! cmd" would not).
refute_key() {
	if key_exists "$1" "$2"; then
		fail "key '$2' exists on $1"
	fi
}

# key_gone NAME KEY: KEY is absent on NAME (a predicate, for wait_until).
key_gone() { ! key_exists "$1" "$2"; }

# pttl KEY: the PTTL of KEY on the main server.
pttl() { rcli main PTTL "$1"; }

# json_field NAME: NAME's value in the one-line JSON $output, without jq.
# shellcheck disable=SC2154 # $output is set by bats' run
json_field() {
	printf '%s\n' "$output" |
	    sed -n 's/.*"'"$1"'":\("[^"]*"\|-\{0,1\}[0-9][0-9]*\|true\|false\).*/\1/p'
}

# blocked_on NAME: how many clients are blocked (BZPOPMIN) on NAME now.
blocked_on() {
	rcli "$1" INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p'
}

# hold_until_cmd FILE: a sh command line that runs until FILE exists.
hold_until_cmd() {
	printf 'while [ ! -e %q ]; do sleep 0.05; done' "$1"
}

# start_bg NAME ARGS...: redlock-cli in the background; BG_PID, NAME.{out,err}.
start_bg() {
	local name=$1
	shift
	# fd 3 closed for bats; SIGINT and SIGQUIT back from bash's SIG_IGN.
	env --default-signal=INT,QUIT redlock-cli "$@" </dev/null \
	    >"$BATS_TEST_TMPDIR/$name.out" 2>"$BATS_TEST_TMPDIR/$name.err" 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# wait_bg PID: wait for it; its exit status in BG_STATUS.
# shellcheck disable=SC2034 # BG_STATUS is for the caller
wait_bg() {
	BG_STATUS=0
	wait "$1" || BG_STATUS=$?
}

# stop_bg_jobs [SIG]: for teardown: SIG (TERM) to each of BG_PIDS, reaped.
stop_bg_jobs() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill -s "${1:-TERM}" "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# redis_start_replica NAME MASTER_PORT [args...]: a TCP replica, once linked.
redis_start_replica() {
	local name=$1 master=$2
	shift 2
	redis_start_tcp "$name" --replicaof 127.0.0.1 "$master" "$@" ||
	    return 1
	wait_until replica_link_up "$name" || {
		cat "$BATS_FILE_TMPDIR/redis-$name/log" >&2
		return 1
	}
}

# replica_link_up NAME: NAME's link to its master is up.
replica_link_up() {
	rcli "$1" INFO replication | tr -d '\r' |
	    grep -qx 'master_link_status:up'
}

# pcli PORT ARGS...: redis-cli against 127.0.0.1:PORT.
pcli() {
	local port=$1
	shift
	redis-cli -p "$port" "$@"
}

# free_port: a free port in 20000-39999, and port+10000 (cluster bus) too.
free_port() {
	local p _
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		if ! ss -ltnH "( sport = :$p or sport = :$((p + 10000)) )" |
		    grep -q .; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# port_is_ours DIR PORT: the server answering on PORT is the one in DIR/pid.
port_is_ours() {
	local pid
	pid=$(cat "$1/pid" 2>/dev/null) || return 1
	redis-cli -p "$2" INFO server 2>/dev/null | tr -d '\r' |
	    grep -qx "process_id:$pid"
}

# daemon_on_free_port DIR CMD...: CMD... PORT until port_is_ours; DIR/port.
daemon_on_free_port() {
	local dir=$1 port pid _
	shift
	need ss
	for _ in 1 2 3 4 5; do
		port=$(free_port) || return 1
		rm -f "$dir/pid"
		"$@" "$port" </dev/null >/dev/null 2>&1 3>&- || continue
		if wait_until port_is_ours "$dir" "$port"; then
			echo "$port" >"$dir/port"
			return 0
		fi
		pid=$(cat "$dir/pid" 2>/dev/null) && kill "$pid" 2>/dev/null
	done
	return 1
}
