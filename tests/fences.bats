#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Fences (issue 32, contract "Fences"): never 0; an exclusive holder's
# fence above every fence handed out before on the name, a shared
# holder's at least every earlier exclusive holder's; at any rate of
# takes, after the lock's other keys expired (the counter lives 7 days
# after the name's last use, then restarts above the server's clock in
# microseconds), and in quorum, also when the majority lacks the server
# whose clock is fastest (one server runs under faketime, an hour ahead).

load helpers

WEEK_MS=604800000

setup_file() {
	redis_start main
	export MAIN_URL=$REDLOCK_URL
}
teardown_file() { redis_stop main; redis_stop_each f1 f2 f3; }
setup() {
	export REDLOCK_URL=$MAIN_URL
	redis_flush main
}
teardown() { stop_bg_jobs; }

# fence_of ARGS...: the fence that `redlock-cli acquire ARGS --json` got.
fence_of() {
	local out
	out=$(redlock-cli acquire "$@" --json) || return 1
	sed -n 's/.*"fence":\([0-9]*\).*/\1/p' <<<"$out"
}

# server_us NAME: the server's clock in microseconds (TIME).
server_us() {
	local t
	t=$(rcli "$1" TIME | tr '\n' ' ')
	set -- $t
	echo $(($1 * 1000000 + $2))
}

@test "a reader on a new name gets a fence, not 0, and the next writer's is larger" {
	local r w
	r=$(fence_of k -s -t 2s)
	((r > 0)) || fail "reader's fence $r"
	run -0 redlock-cli run k2 -s -- sh -c 'echo "$REDLOCK_FENCE"'
	((output > 0)) || fail "run -s: REDLOCK_FENCE=$output"
	rcli main DEL k '{k}:readers' '{k}:rmeta' >/dev/null
	w=$(fence_of k -t 2s)
	((w > r)) || fail "writer's fence $w after the reader's $r"
}

@test "a reader after the writer's keys and the counter expired gets a fence not below the writer's" {
	local w r
	w=$(fence_of k -t 1s)
	# Everything of the name gone, the counter too (7 days later).
	rcli main FLUSHALL >/dev/null
	r=$(fence_of k -s -t 1s)
	((r >= w)) || fail "reader's fence $r below the writer's $w"
	((r > 0))
}

@test "a counter past 2^53 - 1, where a script's numbers are no longer exact: the take exits 76 naming it, takes nothing and runs nothing" {
	local top=9007199254740991 args
	rcli main SET '{k}:fence' $((top - 1)) >/dev/null
	# The last exact fence is given, exactly.
	run -0 redlock-cli run k -- sh -c 'echo "$REDLOCK_FENCE"'
	assert_output "$top"
	for args in "acquire k" "acquire k -s" "acquire k --limit 2" \
	    "run k -- touch $BATS_TEST_TMPDIR/ran" "run k -s -- touch $BATS_TEST_TMPDIR/ran"; do
		# A writer takes the counter plus one; a reader (-s) the
		# counter as it is.
		case $args in
		*" -s"*) rcli main SET '{k}:fence' $((top + 1)) >/dev/null ;;
		*) rcli main SET '{k}:fence' "$top" >/dev/null ;;
		esac
		# shellcheck disable=SC2086 # words
		run --separate-stderr redlock-cli $args
		assert_equal "$status" 76
		assert_output ''
		assert_equal "$stderr" "redlock-cli: lock 'k': its fence counter is at $((top + 1)), past 2^53 - 1, the last fence a script gives exactly: use another lock name"
		[ ! -e "$BATS_TEST_TMPDIR/ran" ] || fail "$args ran its command"
		[ "$(rcli main EXISTS k '{k}:readers' '{k}:meta')" = 0 ] ||
		    fail "$args took something"
	done
}

@test "a burst faster than one take a millisecond, then the other keys expire: the next fence is still larger" {
	skip_if_slow
	local f g
	f=$(fence_of k -t 1s)
	# What 100 million takes in a burst leave in the counter.
	f=$(rcli main INCRBY '{k}:fence' 100000000000)
	# The lock and its wake keys expire (1 s + 5 s linger); the manual
	# hold's metadata stays, its history entry (issue 36), until the take.
	sleep 6.5
	refute_key main k
	refute_key main '{k}:wake'
	g=$(fence_of k -t 1s)
	((g > f)) || fail "fence $g after $f"
}

@test "the fence counter lives 7 days after the last take, a reader's too" {
	local t
	run -0 redlock-cli run k -t 1h -- true
	t=$(rcli main PTTL '{k}:fence')
	((t > WEEK_MS - 60000 && t <= WEEK_MS + 3600000 + 1000)) ||
	    fail "{k}:fence PTTL $t"
	run -0 redlock-cli acquire s -s -t 2s
	t=$(rcli main PTTL '{s}:fence')
	((t > WEEK_MS)) || fail "{s}:fence PTTL $t after a reader"
}

@test "a counter that expired restarts above the server's clock in microseconds" {
	local before f
	f=$(fence_of k -t 1s)
	rcli main DEL '{k}:fence' >/dev/null
	run -0 redlock-cli release k --token "$(rcli main GET k)"
	before=$(server_us main)
	f=$(fence_of k -t 1s)
	((f >= before)) || fail "fence $f below the server's clock $before µs"
	before=$(server_us main)
	rcli main FLUSHALL >/dev/null
	f=$(fence_of k -s -t 1s)
	((f >= before)) || fail "reader's fence $f below $before µs"
}

# ahead_start NAME SECONDS: redis_start's server with its wall clock
# SECONDS ahead: under libfaketime's faketime where that works; Debian's
# libfaketime 0.9.10 deadlocks in a jemalloc-linked redis-server
# (libfaketime's issue 130; FAKETIME_IGNORE_SYMBOLS is its later fix),
# and then tests/fakes/clock-ahead.c, preloaded, moves the clock instead.
ahead_start() {
	local name=$1 s=$2 dir="$BATS_FILE_TMPDIR/redis-$1" so
	local args=(--port 0 --unixsocket "$dir/sock" --unixsocketperm 700
	    --save '' --appendonly no --daemonize yes --pidfile "$dir/pid"
	    --dir "$dir" --logfile "$dir/log")
	need faketime redis-server redis-cli cc
	mkdir -p "$dir"
	if ! FAKETIME_IGNORE_SYMBOLS=__ftime,timer_settime@GLIBC_2.2,timer_gettime@GLIBC_2.2 \
	    timeout -s KILL 3 faketime -f "+${s}s" redis-server "${args[@]}" \
	    </dev/null >/dev/null 2>&1 3>&- || ! redis_wait_ready "$dir/sock"
	then
		so="$BATS_FILE_TMPDIR/clock-ahead.so"
		cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -shared \
		    -fPIC -o "$so" "$ROOT/tests/fakes/clock-ahead.c"
		CLOCK_AHEAD_S=$s LD_PRELOAD=$so redis-server "${args[@]}" \
		    </dev/null 3>&- || return 1
		redis_wait_ready "$dir/sock" || { cat "$dir/log" >&2; return 1; }
	fi
	redis_acl_user "$dir/sock"
}

@test "quorum: once a server an hour ahead has given the highest fence, a majority without it never gives a lower one" {
	skip_if_slow
	local u f g r s
	redis_start f1
	redis_start f2
	ahead_start f3 3600
	s=$(server_us f3)
	(( s > $(server_us f1) + 3000000000 )) || fail "f3 is not an hour ahead"
	u="unix://$(redis_sock f1),unix://$(redis_sock f2),unix://$(redis_sock f3)"
	export REDLOCK_URL=$u
	# A name new everywhere: each counter starts from its own clock, the
	# hour-ahead one's is the highest.
	f=$(fence_of k -t 1s)
	((f >= s)) || fail "fence $f not from f3's clock $s"
	run -0 redlock-cli release k --token "$(rcli f1 GET k)"
	# f3 goes away; the lock's other keys expire (1 s + 5 s linger).
	redis_stop f3
	sleep 6.5
	g=$(fence_of k -t 1s)
	((g > f)) || fail "f1 and f2 gave $g after f3's $f"
	run -0 redlock-cli release k --token "$(rcli f1 GET k)"
	r=$(fence_of k -s -t 1s)
	((r >= g)) || fail "reader's fence $r below the writer's $g"
}
