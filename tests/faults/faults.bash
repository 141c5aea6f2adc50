# SPDX-License-Identifier: MIT
# Loaded by every tests/faults/*.bats file, after ../helpers:
#
#	load ../helpers
#	load faults
#
# helpers.bash puts the repository (ROOT) first on PATH; a version of it
# that looks only in $BATS_TEST_DIRNAME/.. finds tests/ from here.  Then,
# and only then, put the real root first: otherwise PATH may start with
# helpers' own wrapper (make valgrind), which must stay in front.
if [ ! -x "${ROOT:-}/redlock-cli" ]; then
	ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
	export ROOT
	PATH="$ROOT:$PATH"
	export PATH
fi

FAKES="$ROOT/tests/fakes"

# build_fake NAME: compile tests/fakes/NAME.c into $BATS_FILE_TMPDIR/NAME,
# with the project's warning flags (setup_file).
build_fake() {
	cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 \
	    -o "$BATS_FILE_TMPDIR/$1" "$FAKES/$1.c"
}

# is_slow: redlock-cli runs under valgrind (make valgrind), where timing
# bounds mean nothing; slow_skip skips a test that is all timing.
is_slow() { [ "${REDLOCK_TEST_VALGRIND:-0}" = 1 ]; }
# A bound on how fast we answer: not under valgrind, nor under ASan (make
# sanitize), which the plain run of the suite leaves to hold it.
no_speed_bound() { is_slow || [ "${REDLOCK_TEST_SANITIZE:-0}" = 1 ]; }
slow_skip() {
	if is_slow; then
		skip "timing bound; not meaningful under valgrind"
	fi
}

now_ns() { date +%s%N; }
# now_ms and proc_gone come from ../helpers.bash.

# stop_pid PID: SIGTERM (and SIGCONT, in case it was stopped), a bounded
# wait, then SIGKILL; reaped if it is our child.
stop_pid() {
	local pid=$1
	[ -n "$pid" ] || return 0
	kill -CONT "$pid" 2>/dev/null || true
	kill -TERM "$pid" 2>/dev/null || true
	WAIT_TRIES=100 wait_until proc_gone "$pid" ||
	    kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# --- background redlock-cli runs ----------------------------------------

# start_bg NAME ARGS...: redlock-cli ARGS in the background, fd 3 closed,
# stdout and stderr in $D/NAME.{out,err}; pid in BG_PID, added to BG_PIDS
# (teardown kills what is left).
start_bg() {
	local name=$1
	shift
	redlock-cli "$@" </dev/null >"$D/$name.out" 2>"$D/$name.err" 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# wait_bg PID: its exit status in BG_STATUS.  Bounded: after about 20 s
# it is killed (and the test fails on the status).
# shellcheck disable=SC2034 # BG_STATUS is for the caller
wait_bg() {
	BG_STATUS=0
	WAIT_TRIES=400 wait_until proc_gone "$1" || kill -KILL "$1" 2>/dev/null
	wait "$1" || BG_STATUS=$?
}

# bg_stderr NAME: $D/NAME.err into $stderr.
bg_stderr() { stderr=$(cat "$D/$1.err"); }

# assert_stderr_match ERE: some line of $stderr matches the whole ERE.
assert_stderr_match() {
	printf '%s\n' "$stderr" | grep -qE -- "^$1\$" ||
	    printf 'no stderr line matches: %s\nstderr:\n%s\n' "$1" \
	    "$stderr" | fail
}

# assert_stderr_count ERE N: exactly N lines of $stderr match ERE.
assert_stderr_count() {
	local n
	n=$(printf '%s\n' "$stderr" | grep -cE -- "^$1\$" || true)
	[ "$n" -eq "$2" ] ||
	    printf 'expected %s stderr lines matching: %s, got %s\nstderr:\n%s\n' \
	    "$2" "$1" "$n" "$stderr" | fail
}

# at_least N CMD...: CMD prints a number, and it is at least N (a
# predicate for wait_until).
at_least() {
	local n=$1
	shift
	[ "$("$@")" -ge "$n" ]
}

# key_present NAME KEY, key_absent NAME KEY: on server NAME.
key_present() { [ "$(rcli "$1" EXISTS "$2")" = 1 ]; }
key_absent() { [ "$(rcli "$1" EXISTS "$2")" = 0 ]; }

# assert_expires_by NAME KEY EPOCH_MS: KEY on server NAME expires no
# later than EPOCH_MS, by PEXPIRETIME (the server's absolute expiry, on
# this host's clock: no polling delay in the measure).  A key that is
# already gone passes; one without an expiry fails.
assert_expires_by() {
	local at
	at=$(rcli "$1" PEXPIRETIME "$2")
	[ "$at" != -2 ] || return 0
	[ "$at" -gt 0 ] || fail "$2 on $1 has no expiry (PEXPIRETIME $at)"
	[ "$at" -le "$3" ] ||
	    fail "$2 on $1 expires at $at, $((at - $3)) ms later than $3"
}

# assert_lt A B WHAT: A < B, numerically.
assert_lt() {
	[ "$1" -lt "$2" ] || fail "$3: expected $1 < $2"
}

# --- the command under test ---------------------------------------------

# $D/child.sh SECONDS|go: the command that run supervises.  Its own
# stderr (a shell's "Terminated", say) goes to $D/child.err, so that
# $D/NAME.err holds only what redlock-cli said.  Writes
# "PID TOKEN FENCE EPOCH_NS" to $D/started when it starts; appends
# "SIG EPOCH_NS" to $D/got for each SIGTERM/SIGUSR1 it gets (and exits
# 143 on SIGTERM); writes $D/finished and exits 0 after SECONDS, or, with
# "go", once $D/go exists.  Gives up after 30 s (exit 99).
write_child() {
	cat >"$D/child.sh" <<EOF
exec 2>>"$D/child.err"
trap 'echo "TERM \$(date +%s%N)" >>"$D/got"; exit 143' TERM
trap 'echo "USR1 \$(date +%s%N)" >>"$D/got"' USR1
echo "\$\$ \$REDLOCK_TOKEN \$REDLOCK_FENCE \$(date +%s%N)" >"$D/started.tmp" &&
    mv "$D/started.tmp" "$D/started"
if [ "\$1" = go ]; then
	end=\$((\$(date +%s%N) + 30000000000))
	while [ ! -e "$D/go" ]; do
		[ "\$(date +%s%N)" -lt "\$end" ] || exit 99
		sleep 0.02
	done
else
	end=\$((\$(date +%s%N) + \$(echo "\$1" | awk '{ printf "%d", \$1 * 1000000000 }')))
	while [ "\$(date +%s%N)" -lt "\$end" ]; do sleep 0.05; done
fi
echo "done \$(date +%s%N)" >"$D/finished"
exit 0
EOF
}

child_started() { [ -s "$D/started" ]; }
child_pid() { cut -d' ' -f1 "$D/started"; }
child_token() { cut -d' ' -f2 "$D/started"; }
child_started_at() { cut -d' ' -f4 "$D/started"; }
child_got() { [ -s "$D/got" ]; }
# child_got_count SIG: how many times the child got SIG.
child_got_count() { grep -c "^$1 " "$D/got" 2>/dev/null || true; }
# child_got_at: when (epoch ns) the child got its first signal.
child_got_at() { head -n 1 "$D/got" | cut -d' ' -f2; }

# --- servers --------------------------------------------------------------

# redis_restart NAME [args...]: stop NAME and start it again on the same
# unix socket with args (give the same ones it was started with).  The old
# process gets SIGTERM by its pid, and the new one starts as soon as the
# old one stopped serving (it removed its socket and pid file): redis-server
# lingers for about a second after "ready to exit", and waiting for that
# (as redis_stop does) would turn a restart into a long outage.  The old
# pid is noted in $BATS_FILE_TMPDIR/old-redis-pids for reap_old_redis.
redis_restart() {
	local name=$1 dir old
	shift
	dir="$BATS_FILE_TMPDIR/redis-$name"
	old=$(redis_pid "$name")
	[ -n "$old" ] || fail "redis-server $name is not running"
	echo "$old" >>"$BATS_FILE_TMPDIR/old-redis-pids"
	kill -CONT "$old" 2>/dev/null || true
	kill -TERM "$old"
	wait_until redis_down "$dir" ||
	    fail "redis-server $name (pid $old) did not stop serving"
	redis_start "$name" "$@" || fail "redis-server $name did not restart"
	[ "$(redis_pid "$name")" != "$old" ] ||
	    fail "$name: same pid after restart"
}

# redis_down DIR: the server of DIR removed its pid file and socket.
redis_down() { [ ! -e "$1/pid" ] && [ ! -S "$1/sock" ]; }

# reap_old_redis: wait (bounded) for the servers redis_restart stopped,
# SIGKILL any that is still there (teardown_file).
reap_old_redis() {
	local pid
	[ -e "$BATS_FILE_TMPDIR/old-redis-pids" ] || return 0
	while read -r pid; do
		WAIT_TRIES=100 wait_until proc_gone "$pid" ||
		    kill -KILL "$pid" 2>/dev/null || true
	done <"$BATS_FILE_TMPDIR/old-redis-pids"
	rm -f "$BATS_FILE_TMPDIR/old-redis-pids"
}

# script_calls NAME: scripts (EVAL and EVALSHA) that server NAME ran since
# it started: renewals reaching a restarted server show up here.
script_calls() {
	rcli "$1" INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_eval\(sha\)\{0,1\}:calls=\([0-9]*\).*/\2/p' |
	    awk '{ n += $1 } END { print n + 0 }'
}

# keys_of NAME: every key on server NAME, sorted, on one line.
# keys_of NAME: NAME's keys, sorted, on one line; a lock's history (a
# record of the runs that ended, kept 7 days: issue 36) left out.
keys_of() {
	rcli "$1" --raw KEYS '*' | grep -v '}:history$' | sort | tr '\n' ' ' |
	    sed 's/ $//'
}

# assert_no_lock NAME KEY: KEY is not on NAME.  (The fence counter and
# the wake key stay for good, by design; so does the metadata hash of a
# lock that expired rather than being released, until the next holder
# overwrites it: with KEY gone, nothing reads it.)
assert_no_lock() {
	local n
	n=$(rcli "$1" EXISTS "$2")
	[ "$n" = 0 ] || fail "lock '$2' left on $1: keys $(keys_of "$1")"
}

# assert_released NAME KEY: a release (the compare-and-delete) ran on NAME:
# neither KEY nor its metadata hash is there.
assert_released() {
	local n
	n=$(rcli "$1" EXISTS "$2" "{$2}:meta")
	[ "$n" = 0 ] || fail "lock '$2' not released on $1: keys $(keys_of "$1")"
}

# --- the proxy (tests/fakes/proxy.c) -------------------------------------

# proxy_start NAME TARGET_PORT: a proxy in pass mode on a free port in
# front of 127.0.0.1:TARGET_PORT.  proxy_port NAME gives its port.
proxy_start() {
	local name=$1 target=$2 dir="$BATS_FILE_TMPDIR/proxy-$1"
	mkdir -p "$dir"
	rm -f "$dir/pid" "$dir/ctl" "$dir/ctl.ack" "$dir/seq"
	"$BATS_FILE_TMPDIR/proxy" 0 "$target" "$dir/pid" "$dir/ctl" \
	    </dev/null >/dev/null 2>"$dir/log" 3>&- &
	echo "$!" >"$dir/bgpid"
	wait_until test -s "$dir/pid" ||
	    fail "proxy $name did not start: $(cat "$dir/log")"
	echo 0 >"$dir/seq"
}

proxy_dir() { echo "$BATS_FILE_TMPDIR/proxy-$1"; }

# proxy_stat NAME FIELD: a field of the proxy's ack line (seq, mode, port,
# accepted, open, up, down, unread).
proxy_stat() {
	sed -n "s/.* $2=\([^ ]*\).*/\1/p; s/^$2=\([^ ]*\).*/\1/p" \
	    "$(proxy_dir "$1")/ctl.ack"
}
proxy_port() { proxy_stat "$1" port; }
proxy_url() { echo "redis://127.0.0.1:$(proxy_port "$1")"; }

# proxy_mode NAME MODE [ARG]: switch modes and wait until the proxy says
# it did.
proxy_mode() {
	local name=$1 dir seq
	shift
	dir=$(proxy_dir "$name")
	seq=$(($(cat "$dir/seq") + 1))
	echo "$seq" >"$dir/seq"
	echo "$seq $*" >"$dir/ctl.tmp"
	mv "$dir/ctl.tmp" "$dir/ctl"
	wait_until grep -q "^seq=$seq mode=$1 " "$dir/ctl.ack" ||
	    fail "proxy $name did not switch to '$*': $(cat "$dir/ctl.ack")"
}

# proxy_has_unread NAME: a client sent bytes that the proxy has not read
# yet (a request held by freeze, say).
proxy_has_unread() { [ "$(proxy_stat "$1" unread)" -gt 0 ]; }

proxy_stop() {
	local dir
	dir=$(proxy_dir "$1")
	[ -s "$dir/bgpid" ] || return 0
	stop_pid "$(cat "$dir/bgpid")"
	rm -f "$dir/bgpid"
}

# kill_bg_runs: kill the test's background runs and the command they
# started (the first half of every teardown here).
kill_bg_runs() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [ -s "$D/started" ]; then
		kill -KILL "$(child_pid)" 2>/dev/null || true
	fi
}

# proxy_run_teardown: kill_bg_runs, then stop the proxy p (teardown of
# network.bats and sigkill.bats).
proxy_run_teardown() {
	kill_bg_runs
	proxy_stop p
}

# wait_run_ok: the background run (start_bg runner) exits 0, its command
# ran to its end and got no signal; its stderr is then in $stderr.
wait_run_ok() {
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/finished" ] || fail "the command did not run to its end"
	[ ! -s "$D/got" ] || fail "the command was signalled: $(cat "$D/got")"
	bg_stderr runner
}
