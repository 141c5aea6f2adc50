#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Queues keep their promises when their features meet (issue 31): a probe
# never changes anyone's outcome, only a newer rank supersedes or cancels,
# equal orders go by arrival, ranks come from the server's clock, a late
# cancel keeps the command's exit status, every waiter is visible, and
# each line names the order that caused it.  Each test here failed on
# c023662.  Real servers: main, and q1..q3 for a quorum with one stopped.

load helpers

setup_file() { redis_start_each q1 q2 q3 main; }
teardown_file() { redis_stop_each main q1 q2 q3; }

setup() {
	redis_ready_each main q1 q2 q3
	export REDLOCK_URL="unix://$(redis_sock main)"
	D=$BATS_TEST_TMPDIR
	HOST=$(hostname)
	BG_PIDS=()
}

teardown() {
	touch "$D/stop"
	stop_bg_jobs
}

url_of() { echo "unix://$(redis_sock "$1")"; }
quorum_one_down() {
	export REDLOCK_URL="$(url_of q1),$(url_of q2),$(url_of q3)"
	redis_stop q3
}
queue_len_is() { [ "$(rcli main ZCARD '{k}:queue')" = "$1" ]; }
queue_len_on() { [ "$(rcli "$1" ZCARD '{k}:queue')" = "$2" ]; }
# A job that runs until $D/stop exists.
until_stop() { hold_until_cmd "$D/stop"; }

# --- a probe changes nobody's outcome ------------------------------------

@test "a probe (acquire -n --queue latest) supersedes no queued waiter, leaves nothing in the queue, and exits 1" {
	start_bg holder run k --queue latest -- sh -c "$(until_stop)"
	wait_until key_exists main k
	start_bg waiter run k --queue latest -- touch "$D/waiter-ran"
	local waiter=$BG_PID
	wait_until queue_len_is 1
	run --separate-stderr redlock-cli acquire k -n --queue latest
	assert_failure 1
	run --separate-stderr redlock-cli acquire k -w 0 --queue latest
	assert_failure 1
	queue_len_is 1
	sleep 0.5
	proc_alive "$waiter"
	touch "$D/stop"
	wait_bg "$waiter"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/waiter-ran" ]
}

@test "a probe with --cancel-running is a usage error (64) and the running holder goes on" {
	start_bg holder run k --queue latest -- sh -c "$(until_stop); touch $D/holder-done"
	local holder=$BG_PID
	wait_until key_exists main k
	run --separate-stderr redlock-cli run k -n --queue latest --cancel-running -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: --cancel-running needs a waiter: it cannot be used with -n"
	run --separate-stderr redlock-cli run k -w 0 --queue latest --cancel-running -- true
	assert_failure 64
	sleep 0.5
	proc_alive "$holder"
	touch "$D/stop"
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/holder-done" ]
}

# A fifo queue's head SIGKILLed while it waited stays first until its
# lease runs out (3 s, renewed every second), and the live waiters behind
# it wait for that with the lock free.  (Live waiters alone leave no such
# window: the release wakes the head, whose attempt is already queued on
# the server behind its BZPOPMIN.)  Meanwhile a probe of any kind (-s or
# not, -n or -w 0) exits 1 with a busy line, takes nothing, and leaves the
# queue as it was; then the waiters take the lock in their order.
#   probe_behind_dead_head HEAD_ARGS: the dead head's mode (-s, or -x)
probe_behind_dead_head() {
	run -0 redlock-cli acquire k -t 30s
	local tok=$output dead x s p
	start_bg dead run k "$1" --queue fifo -- touch "$D/dead-ran"
	dead=$BG_PID
	wait_until queue_len_is 1
	start_bg x run k --queue fifo -- sh -c "echo x >>$D/order"
	x=$BG_PID
	wait_until queue_len_is 2
	start_bg s run k -s --queue fifo -- sh -c "echo s >>$D/order"
	s=$BG_PID
	wait_until queue_len_is 3
	kill -KILL "$dead"
	wait_bg "$dead"
	run -0 redlock-cli release k --token "$tok"
	for p in "-s -n" "-s -w 0" "-n" "-w 0"; do
		# shellcheck disable=SC2086 # $p is two words
		run --separate-stderr redlock-cli acquire k $p --queue fifo -t 2s
		[ "$status" = 1 ] ||
		    fail "acquire k $p --queue fifo exited $status ($output) ahead of the waiters behind a dead head"
		[[ $stderr == "redlock-cli: lock 'k' "* ]] || fail "acquire k $p: stderr: $stderr"
		refute_key main k
		queue_len_is 3 || fail "acquire k $p: the queue is $(rcli main ZCARD '{k}:queue') long, not 3"
	done
	wait_bg "$x"
	assert_equal "$BG_STATUS" 0
	wait_bg "$s"
	assert_equal "$BG_STATUS" 0
	assert_equal "$(cat "$D/order")" "$(printf 'x\ns')"
	[ ! -e "$D/dead-ran" ]
}

@test "a shared probe of a fifo queue whose shared head was SIGKILLed does not take the free lock ahead of the waiters behind it" {
	probe_behind_dead_head -s
}

@test "a shared probe of a fifo queue whose exclusive head was SIGKILLed does not take the free lock ahead of the waiters behind it" {
	probe_behind_dead_head -x
}

# --- only a newer rank supersedes or cancels -------------------------------

@test "an older order with --cancel-running never cancels a newer holder: it is superseded at once, naming the holder's order" {
	start_bg holder run k --queue latest --order 10 -- sh -c "$(until_stop); touch $D/ten-done"
	local holder=$BG_PID t0
	wait_until key_exists main k
	t0=$(now_ms)
	run --separate-stderr redlock-cli run k --queue latest --order 5 --cancel-running=100ms -- touch "$D/five-ran"
	assert_failure 80
	assert_equal "$stderr" "redlock-cli: lock 'k': superseded by order 10 on $HOST (pid $holder)"
	[ $(($(now_ms) - t0)) -lt 1000 ]
	run --separate-stderr redlock-cli run k --queue latest --order 5 --skip-outdated --cancel-running=100ms -- touch "$D/five-ran"
	assert_failure 80
	sleep 0.5
	proc_alive "$holder"
	touch "$D/stop"
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/ten-done" ] && [ ! -e "$D/five-ran" ]
}

@test "a newer order cancels an older running holder, and the holder's line names that order" {
	start_bg holder run k --queue latest --order 10 -- sh -c "$(until_stop)"
	local holder=$BG_PID
	wait_until key_exists main k
	start_bg newer run k --queue latest --order 11 --cancel-running=2s -- touch "$D/newer-ran"
	local newer=$BG_PID
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 82
	grep -qx "redlock-cli: lock 'k': cancelled by order 11 on $HOST (pid $newer)" "$D/holder.err" ||
	    fail "holder's stderr: $(cat "$D/holder.err")"
	wait_bg "$newer"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/newer-ran" ]
}

@test "--cancel-running does not interrupt a manual acquire: the waiter waits for it, and -v says so" {
	run -0 redlock-cli acquire k -t 30s
	local tok=$output
	run --separate-stderr redlock-cli -v run k --queue latest --order 3 --cancel-running=100ms -w 1s -- touch "$D/ran"
	assert_failure 1
	[ ! -e "$D/ran" ]
	[[ $stderr == *"waiting for lock 'k', held by "*", which --cancel-running does not stop (not an older run of --queue latest)"* ]] ||
	    fail "stderr: $stderr"
	assert_equal "$(rcli main GET k)" "$tok"
}

@test "equal orders: the later arrival is the newer one, on every try" {
	local i first second
	for i in 1 2 3; do
		redis_flush main
		rm -f "$D"/*-ran
		run -0 redlock-cli acquire k -t 30s
		local tok=$output
		start_bg first run k --queue latest --order 7 -- touch "$D/first-ran"
		first=$BG_PID
		wait_until queue_len_is 1
		start_bg second run k --queue latest --order 7 -- touch "$D/second-ran"
		second=$BG_PID
		wait_bg "$first"
		assert_equal "$BG_STATUS" 80
		grep -qx "redlock-cli: lock 'k': superseded by order 7 on $HOST (pid $second)" "$D/first.err" ||
		    fail "try $i: $(cat "$D/first.err")"
		run -0 redlock-cli release k --token "$tok"
		wait_bg "$second"
		assert_equal "$BG_STATUS" 0
		[ -e "$D/second-ran" ] && [ ! -e "$D/first-ran" ]
	done
}

@test "equal orders in fifo: the later arrival queues behind the first, on every try" {
	local i
	for i in 1 2 3; do
		redis_flush main
		rm -f "$D/order"
		run -0 redlock-cli acquire k -t 30s
		local tok=$output
		start_bg a run k --queue fifo --order 7 -- sh -c "echo a >>$D/order"
		local a=$BG_PID
		wait_until queue_len_is 1
		start_bg b run k --queue fifo --order 7 -- sh -c "echo b >>$D/order"
		local b=$BG_PID
		wait_until queue_len_is 2
		run -0 redlock-cli release k --token "$tok"
		wait_bg "$a"
		wait_bg "$b"
		assert_equal "$(cat "$D/order")" "$(printf 'a\nb')"
	done
}

@test "equal orders in fifo, a writer then a reader while readers hold: the reader waits behind the writer, on every try" {
	local i
	# Each try draws new tokens: the tie must be broken by arrival, never
	# by how the tokens happen to sort.
	for i in 1 2 3 4 5 6; do
		redis_flush main
		rm -f "$D/order"
		run -0 redlock-cli acquire k -s -t 30s
		local tok=$output
		start_bg w run k --queue fifo --order 7 -- sh -c "echo w >>$D/order"
		local w=$BG_PID
		wait_until queue_len_is 1
		start_bg r run k -s --queue fifo --order 7 -- sh -c "echo r >>$D/order"
		local r=$BG_PID
		wait_until eval '[ -e "$D/order" ] || queue_len_is 2'
		[ ! -e "$D/order" ] || fail "try $i: $(cat "$D/order") ran while a reader held and the writer waited"
		run -0 redlock-cli release k --token "$tok"
		wait_bg "$w"
		wait_bg "$r"
		assert_equal "$(cat "$D/order")" "$(printf 'w\nr')"
	done
}

@test "fifo ranks waiters by the server's clock: a client whose clock is an hour behind keeps its place" {
	need faketime
	build_is_static && skip "libfaketime cannot reach a static executable"
	# An ASan build refuses a preload ahead of its runtime.
	faketime -f -1h redlock-cli --version >/dev/null 2>&1 ||
	    skip "this build does not run under faketime"
	run -0 redlock-cli acquire k -t 30s
	local tok=$output
	start_bg first run k --queue fifo -- sh -c "echo first >>$D/order"
	wait_until queue_len_is 1
	# The second arrives later, but its clock says an hour earlier.
	faketime -f -1h redlock-cli run k --queue fifo -- sh -c "echo second >>$D/order" \
	    </dev/null >"$D/second.out" 2>"$D/second.err" 3>&- &
	local second=$!
	BG_PIDS+=("$second")
	wait_until queue_len_is 2
	run -0 redlock-cli release k --token "$tok"
	wait "$second"
	assert_equal "$(cat "$D/order")" "$(printf 'first\nsecond')"
}

# --- exit status and skip-outdated ----------------------------------------

@test "a cancel that comes after the command exited keeps its exit status" {
	start_bg holder run k --queue latest --order 1 -- sh -c "(exec >/dev/null 2>&1; $(until_stop)) & exit 3"
	local holder=$BG_PID
	wait_until key_exists main k
	sleep 0.3	# the command itself has exited; its child holds on
	start_bg newer run k --queue latest --order 2 --cancel-running=5s -- true
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 3
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
}

@test "a cancel after a command that exited 0 still writes the --skip-outdated record" {
	start_bg holder run k --queue latest --order 4 --skip-outdated -- sh -c "(exec >/dev/null 2>&1; $(until_stop)) & exit 0"
	local holder=$BG_PID
	wait_until key_exists main k
	sleep 0.3
	start_bg newer run k --queue latest --order 5 --cancel-running=5s -- true
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 0
	wait_bg "$BG_PID"
	assert_equal "$(rcli main HGET '{k}:done' order)" 5
	# 4 ran to its end with exit 0 before 5: a 3 is outdated by them.
	run --separate-stderr redlock-cli run k --order 3 --skip-outdated -- true
	assert_failure 81
}

@test "--skip-outdated: a retry of the same order runs; only a greater order that ran makes it outdated" {
	run -0 redlock-cli run k --order 10 --skip-outdated -- true
	run --separate-stderr redlock-cli run k --order 10 --skip-outdated -- touch "$D/retry"
	assert_success
	[ -e "$D/retry" ]
	run --separate-stderr redlock-cli run k --order 9 --skip-outdated -- touch "$D/nine"
	assert_failure 81
	[[ $stderr == "redlock-cli: lock 'k': outdated: order 10 already ran ($HOST, "* ]]
	[ ! -e "$D/nine" ]
}

# --- every waiter is visible ----------------------------------------------

@test "status and list show every waiter of the default queue: host, pid, order, mode, since" {
	run -0 redlock-cli acquire k -t 30s
	local tok=$output a b c
	start_bg a run k -- true
	a=$BG_PID
	start_bg b run k --order 12 -- true
	b=$BG_PID
	start_bg c run k -s -- true
	c=$BG_PID
	wait_until waiting_is 3
	run -0 --separate-stderr redlock-cli status k
	assert_line 'waiting: 3'
	assert_line --regexp "^waiter: $HOST pid $a, exclusive, since [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"
	assert_line --regexp "^waiter: $HOST pid $b, order 12, exclusive, since "
	assert_line --regexp "^waiter: $HOST pid $c, shared, since "
	run -0 --separate-stderr redlock-cli status k --json
	[[ $output == *'"waiting":3,"waiters":[{'* ]]
	[[ $output == *"{\"host\":\"$HOST\",\"pid\":$b,\"order\":12,\"mode\":\"exclusive\",\"since\":\""* ]]
	[[ $output == *"{\"host\":\"$HOST\",\"pid\":$c,\"order\":null,\"mode\":\"shared\",\"since\":\""* ]]
	run -0 --separate-stderr redlock-cli list --json
	[[ $output == *"\"pid\":$a,\"order\":null,\"mode\":\"exclusive\""* ]]
	run -0 redlock-cli release k --token "$tok"
	wait_until waiting_is 0
}

@test "a waiter that gives up (-w) is no longer shown" {
	run -0 redlock-cli acquire k -t 30s
	run --separate-stderr redlock-cli acquire k -w 300ms
	assert_failure 1
	waiting_is 0
}

# --- quorum: 3 servers, one stopped ----------------------------------------

@test "quorum, one server down: a probe supersedes no queued waiter" {
	quorum_one_down
	start_bg holder run k --queue latest -- sh -c "$(until_stop)"
	wait_until key_exists q1 k
	start_bg waiter run k --queue latest -- touch "$D/waiter-ran"
	local waiter=$BG_PID
	wait_until queue_len_on q1 1
	wait_until queue_len_on q2 1
	run --separate-stderr redlock-cli acquire k -n --queue latest
	assert_failure 1
	queue_len_on q1 1 && queue_len_on q2 1
	touch "$D/stop"
	wait_bg "$waiter"
	assert_equal "$BG_STATUS" 0
}

@test "quorum, one server down: an older order never cancels a newer holder" {
	quorum_one_down
	start_bg holder run k --queue latest --order 10 -- sh -c "$(until_stop); touch $D/ten-done"
	local holder=$BG_PID
	wait_until key_exists q1 k
	wait_until key_exists q2 k
	run --separate-stderr redlock-cli run k --queue latest --order 5 --cancel-running=100ms -- true
	assert_failure 80
	[[ $stderr == "redlock-cli: lock 'k': superseded by order 10 on $HOST (pid $holder)" ]] || fail "$stderr"
	touch "$D/stop"
	wait_bg "$holder"
	assert_equal "$BG_STATUS" 0
}

@test "quorum, one server down: of equal orders the later arrival wins, on every try" {
	local i tok first second
	quorum_one_down
	for i in 1 2 3; do
		redis_flush q1
		redis_flush q2
		rm -f "$D"/*-ran
		run -0 redlock-cli acquire k -t 30s
		tok=$output
		start_bg first run k --queue latest --order 7 -- touch "$D/first-ran"
		first=$BG_PID
		wait_until queue_len_on q1 1
		wait_until queue_len_on q2 1
		start_bg second run k --queue latest --order 7 -- touch "$D/second-ran"
		second=$BG_PID
		wait_bg "$first"
		assert_equal "$BG_STATUS" 80
		run -0 redlock-cli release k --token "$tok"
		wait_bg "$second"
		assert_equal "$BG_STATUS" 0
		[ -e "$D/second-ran" ] && [ ! -e "$D/first-ran" ]
	done
}

# waiting_is N: status --json's "waiting" is N.
waiting_is() {
	[ "$(redlock-cli status k --json | sed -n 's/.*"waiting":\([0-9]*\).*/\1/p')" = "$1" ]
}

# --- scripts touch only the keys they are given ----------------------------

# A user whose ACL allows every key of lock k but the per-waiter ones
# ({k}:wake:TOKEN, {k}:cancel:TOKEN): Redis checks a script's declared keys
# before it runs, and each command's keys as it runs.
acl_no_waiter_keys() {
	local k keys=()
	for k in '' :fence :meta :queue :queue:who :leases :wake :readers \
	    :rmeta :writers :rwait :history :done; do
		keys+=("~{k}$k")
	done
	keys+=('~k')
	# shellcheck disable=SC2086
	rcli main ACL SETUSER nopoke on '>np-pw' resetkeys "${keys[@]}" \
	    resetchannels -@all +evalsha +eval +bzpopmin +select +role \
	    +get +set +del +pexpire +pttl +incr +incrby +type +time +hset \
	    +hget +hgetall +hdel +hmget +hsetnx +zadd +zscore +zrem +zrange \
	    +zrangebyscore +zremrangebyscore +zcard +zcount +xadd +exists \
	    >/dev/null
}

@test "a newer waiter whose note to the older one is lost still supersedes it: the older finds it at its next try, and never jumps back in" {
	acl_no_waiter_keys
	run -0 redlock-cli acquire k -t 30s
	local tok=$output older newer
	start_bg older run k --queue latest -w 20 -- touch "$D/older-ran"
	older=$BG_PID
	wait_until queue_len_is 1
	# Its note to the older waiter's own key is refused (NOPERM): the
	# newer one cannot wake it.  Before, its take script wrote that key
	# itself, undeclared, and failed.
	REDLOCK_USER=nopoke REDLOCK_PASSWORD=np-pw \
	    start_bg newer run k --queue latest -w 20 -- touch "$D/newer-ran"
	newer=$BG_PID
	wait_bg "$older"
	assert_equal "$BG_STATUS" 80
	grep -q "superseded by .* (pid $newer)" "$D/older.err" ||
	    fail "$(cat "$D/older.err")"
	# The older waiter learnt it at its next try, not from the note.
	rcli main ACL LOG | grep -q 'wake:' || fail "no poke was refused"
	proc_alive "$newer"
	queue_len_is 1
	run -0 redlock-cli release k --token "$tok"
	wait_bg "$newer"
	assert_equal "$BG_STATUS" 0
	[ -e "$D/newer-ran" ] && [ ! -e "$D/older-ran" ]
}

@test "a superseded waiter's note in the waiters' hash goes once expired: the next supersede prunes it" {
	run -0 redlock-cli acquire k -t 30s
	local tok=$output a b c
	start_bg a run k --queue latest -w 20 -- true
	a=$BG_PID
	wait_until queue_len_is 1
	start_bg b run k --queue latest -w 20 -- true
	b=$BG_PID
	wait_bg "$a"
	assert_equal "$BG_STATUS" 80
	[ "$(rcli main HKEYS '{k}:queue:who' | grep -c '^x:')" = 1 ]
	# Past the note's 5 s, a newer waiter supersedes b: a's note goes,
	# b's comes.
	sleep 5.2
	start_bg c run k --queue latest -w 20 -- true
	c=$BG_PID
	wait_bg "$b"
	assert_equal "$BG_STATUS" 80
	[ "$(rcli main HKEYS '{k}:queue:who' | grep -c '^x:')" = 1 ] ||
	    fail "$(rcli main HGETALL '{k}:queue:who')"
	run -0 redlock-cli release k --token "$tok"
	wait_bg "$c"
	assert_equal "$BG_STATUS" 0
}
