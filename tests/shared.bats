#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Shared (reader) locks, issue 16: -s/--shared beside -x/--exclusive (the
# default).  Real servers: "main" on a unix socket, q1..q3 for the quorum
# test, and a three-node Cluster started by its own test.  The pitfalls
# of other read/write locks are tests named after them: zombie reader,
# readers taking turns, writer starved, lost waiter granted.

load helpers
load cluster

setup_file() {
	local s
	for s in q1 q2 q3; do
		redis_start "$s"
	done
	redis_start main
}

teardown_file() {
	local s
	for s in main q1 q2 q3; do
		redis_stop "$s"
	done
}

setup() {
	redis_flush
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	NODE_DIRS=()
}

teardown() {
	local d
	stop_bg_jobs
	for d in "${NODE_DIRS[@]}"; do
		pidfile_stop "$d"
	done
}

# stamp FILE: a sh command line that writes the time (ms) into FILE.
stamp() { printf 'date +%%s%%3N >%q' "$1"; }

# zcard NAME KEY: members of a sorted set on server NAME.
zcard() { rcli "$1" ZCARD "$2"; }
waiting_readers() { [ "$(zcard main '{k}:rwait')" -ge "$1" ]; }
waiting_writers() { [ "$(zcard main '{k}:writers')" -ge "$1" ]; }
readers() { [ "$(zcard main '{k}:readers')" = "$1" ]; }
# N readers whose lease has not run out by the server's clock now: an
# expired one stays in the set until a script prunes it.
live_readers() {
	local now
	now=$(rcli main TIME | tr -d '\r' |
	    { read -r s; read -r us; echo $(( s * 1000 + us / 1000 )); })
	[ "$(rcli main ZCOUNT '{k}:readers' "($now" +inf)" = "$1" ]
}
queued() { [ "$(rcli main ZCARD '{k}:queue')" -ge "$1" ]; }

# token_of OUTPUT: the token of acquire --json's output.
token_of() {
	printf '%s\n' "$1" | sed -n 's/.*"token":"\([0-9a-f]*\)".*/\1/p'
}

@test "two shared runs overlap in time" {
	start_bg s1 run k -s -- sh -c "$(stamp "$D/s1.start"); sleep 0.6; $(stamp "$D/s1.end")"
	start_bg s2 run k -s -- sh -c "$(stamp "$D/s2.start"); sleep 0.6; $(stamp "$D/s2.end")"
	wait_bg "${BG_PIDS[0]}"
	[ "$BG_STATUS" = 0 ]
	wait_bg "${BG_PIDS[1]}"
	[ "$BG_STATUS" = 0 ]
	# Each started before the other ended.
	[ "$(cat "$D/s2.start")" -lt "$(cat "$D/s1.end")" ]
	[ "$(cat "$D/s1.start")" -lt "$(cat "$D/s2.end")" ]
}

@test "an exclusive hold excludes a shared one, and a shared hold an exclusive one (-n exits 1)" {
	x=$(redlock-cli acquire k -x)
	run --separate-stderr redlock-cli acquire k -s -n
	assert_failure 1
	[ -z "$output" ]
	assert_busy_line k
	run -0 redlock-cli release k --token "$x"
	s=$(redlock-cli acquire k -s)
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 1
	[ -z "$output" ]
	assert_busy_line k
	run --separate-stderr redlock-cli run k -x -n -- true
	assert_failure 1
	# -n leaves no intent behind: another reader still gets in.
	run -0 redlock-cli run k -s -n -- true
	run -0 redlock-cli release k --token "$s"
	run -0 redlock-cli acquire k -n
}

@test "--shared with --limit is a usage error" {
	run --separate-stderr redlock-cli acquire k -s --limit 3
	assert_failure 64
	[ -z "$output" ]
	[ "$stderr" = "redlock-cli: acquire: --shared and --limit cannot be used together" ]
	run --separate-stderr redlock-cli run k --limit 2 --shared -- true
	assert_failure 64
	[ "$stderr" = "redlock-cli: run: --shared and --limit cannot be used together" ]
}

@test "--shared with --queue latest (or --cancel-running) is a usage error" {
	run --separate-stderr redlock-cli acquire k -s --queue latest
	assert_failure 64
	[ -z "$output" ]
	[ "$stderr" = "redlock-cli: acquire: --shared and --queue latest cannot be used together" ]
	run --separate-stderr redlock-cli run k --queue latest --cancel-running -s -- true
	assert_failure 64
	[ "$stderr" = "redlock-cli: run: --shared and --queue latest cannot be used together" ]
	refute_key main k
}

@test "release and extend find the mode from the token, without -s" {
	run -0 redlock-cli acquire k -s -t 5s --json
	t=$(token_of "$output")
	run -0 redlock-cli extend k --token "$t" -t 40s
	run -0 redlock-cli status k --json
	ttl=$(json_field ttl_ms)
	((ttl > 35000 && ttl <= 40000)) || fail "ttl_ms $ttl"
	# The marker's TTL follows the last reader's.
	p=$(pttl k)
	((p > 35000 && p <= 40000)) || fail "PTTL $p"
	run -0 redlock-cli release k --token "$t"
	refute_key main k
	run --separate-stderr redlock-cli release k --token "$t"
	assert_failure 3
}

@test "a foreign SET NX fails while readers hold" {
	a=$(redlock-cli acquire k -s -t 20s)
	b=$(redlock-cli acquire k -s -t 10s)
	[ -z "$(rcli main SET k foreign NX PX 10000)" ]
	[ "$(rcli main GET k)" != foreign ]
	p=$(pttl k)
	((p > 18000 && p <= 20000)) || fail "PTTL $p: not the last reader's"
	run -0 redlock-cli release k --token "$a"
	[ -z "$(rcli main SET k foreign NX PX 10000)" ]
	run -0 redlock-cli release k --token "$b"
	[ "$(rcli main SET k foreign NX PX 10000)" = OK ]
	# ... and the foreign lock excludes readers.
	run -1 redlock-cli acquire k -s -n
}

# A release leaves the marker's TTL alone unless it was the latest
# reader's (rd_drop): then it follows the next latest one.
@test "the marker's TTL follows the latest reader through every release, and goes with the last one" {
	a=$(redlock-cli acquire k -s -t 10s)
	b=$(redlock-cli acquire k -s -t 20s)
	c=$(redlock-cli acquire k -s -t 5s)
	p=$(pttl k)
	((p > 18000 && p <= 20000)) || fail "PTTL $p: not b's"
	run -0 redlock-cli release k --token "$c"
	p=$(pttl k)
	((p > 18000 && p <= 20000)) || fail "PTTL $p after c's release: not b's"
	run -0 redlock-cli release k --token "$b"
	for key in k '{k}:readers' '{k}:rmeta'; do
		p=$(pttl "$key")
		((p > 8000 && p <= 10000)) || fail "$key: PTTL $p after b's release: not a's"
	done
	run -0 redlock-cli release k --token "$a"
	refute_key main k
	refute_key main '{k}:readers'
	refute_key main '{k}:rmeta'
}

@test "writer starved: a waiting exclusive request stops new readers and runs before a reader that came after it" {
	s1=$(redlock-cli acquire k -s -t 20s)
	start_bg x run k -w 20s -- sh -c "$(stamp "$D/x.start"); sleep 0.3; $(stamp "$D/x.end")"
	x=$BG_PID
	wait_until waiting_writers 1
	run --separate-stderr redlock-cli acquire k -s -n
	assert_failure 1
	[[ $stderr == "redlock-cli: lock 'k' is wanted by "*" pid $x (waiting since "*"), a waiting writer: no new reader gets in" ]] ||
	    fail "stderr: $stderr"
	start_bg s2 run k -s -w 20s -- sh -c "$(stamp "$D/s2.start")"
	s2=$BG_PID
	wait_until waiting_readers 1
	[ ! -e "$D/x.start" ]
	run -0 redlock-cli release k --token "$s1"
	wait_bg "$x"
	[ "$BG_STATUS" = 0 ]
	wait_bg "$s2"
	[ "$BG_STATUS" = 0 ]
	[ "$(cat "$D/s2.start")" -ge "$(cat "$D/x.end")" ]
	# Nothing of the wait is left.
	refute_key main '{k}:writers'
	refute_key main '{k}:rwait'
}

@test "readers taking turns: three readers waiting behind a writer start together once it ends" {
	skip_if_slow
	x=$(redlock-cli acquire k -t 30s)
	for i in 1 2 3; do
		start_bg "r$i" run k -s -w 20s -- sh -c "$(stamp "$D/r$i.start"); sleep 1; $(stamp "$D/r$i.end")"
	done
	wait_until waiting_readers 3
	released=$(now_ms)
	run -0 redlock-cli release k --token "$x"
	for pid in "${BG_PIDS[@]}"; do
		wait_bg "$pid"
		[ "$BG_STATUS" = 0 ]
	done
	first=$(cat "$D"/r?.start | sort -n | head -1)
	last=$(cat "$D"/r?.start | sort -n | tail -1)
	echo "started $((first - released))..$((last - released)) ms after the release"
	[ $((last - first)) -lt 300 ]
	[ $((last - released)) -lt 500 ]
	# Together, not in turn: each started before any ended.
	[ "$last" -lt "$(cat "$D"/r?.end | sort -n | head -1)" ]
}

@test "zombie reader: a SIGKILLed reader's share ends at its TTL, while another reader's own renewals keep its share" {
	start_bg zombie run k -s -t 2s -- sleep 30
	zombie=$BG_PID
	start_bg live run k -s -t 2s -- sh -c "$(hold_until_cmd "$D/go")"
	wait_until readers 2
	kill -KILL "$zombie"
	killed=$(now_ms)
	# Its lease, not the next prune (the live reader's renewal, up to a
	# third of the TTL later).
	WAIT_TRIES=80 wait_until live_readers 1
	gone=$(now_ms)
	echo "the zombie's share ended $((gone - killed)) ms after SIGKILL"
	[ $((gone - killed)) -le 2500 ]
	# Long after the zombie's TTL, the live reader still holds its own
	# share (renewed by its run alone), and a writer stays out.
	sleep 2.5
	run -0 redlock-cli status k --json
	[ "$(json_field mode)" = '"shared"' ]
	[ "$(grep -o '"token"' <<<"$output" | wc -l)" = 1 ]
	run -1 redlock-cli acquire k -n
	touch "$D/go"
	wait_bg "${BG_PIDS[1]}"
	[ "$BG_STATUS" = 0 ]
	run -0 redlock-cli acquire k -n
}

@test "fence order exclusive -> shared -> exclusive, and REDLOCK_FENCE in both modes" {
	run -0 redlock-cli acquire k --json
	f1=$(json_field fence)
	run -0 redlock-cli release k --token "$(token_of "$output")"
	run -0 redlock-cli acquire k -s --json
	f2=$(json_field fence)
	t2=$(token_of "$output")
	run -0 redlock-cli run k -s -- sh -c 'echo "$REDLOCK_FENCE"'
	[ "$output" = "$f2" ]
	run -0 redlock-cli release k --token "$t2"
	run -0 redlock-cli run k -x -- sh -c 'echo "$REDLOCK_FENCE"'
	f3=$output
	echo "fences: $f1 $f2 $f3"
	[ "$f2" -ge "$f1" ]
	[ "$f3" -gt "$f2" ]
}

@test "status --json in shared mode shows the mode and every holder" {
	redlock-cli acquire k -s -t 20s >/dev/null
	start_bg r run k -s -t 20s -- sleep 30
	wait_until readers 2
	run --separate-stderr redlock-cli status k --json
	assert_success
	[ -z "$stderr" ]
	[ "$(json_field mode)" = '"shared"' ]
	[ "$(json_field held)" = true ]
	if have jq; then
		printf '%s\n' "$output" | jq -e '.mode == "shared" and
		    (.holders | length) == 2 and
		    all(.holders[]; (.ttl_ms | type) == "number" and
		        (.pid | type) == "number" and .host != null and
		        .command != null and .since != null)' >/dev/null
		printf '%s\n' "$output" | jq -e '[.holders[].command] |
		    any(. == "sleep 30")' >/dev/null
	fi
	run -0 redlock-cli status k
	assert_line -n 1 'mode: shared'
	assert_line -n 2 'holders: 2'
	assert_line 'command: sleep 30'
	redis_flush
	redlock-cli acquire k >/dev/null
	run -0 redlock-cli status k --json
	[ "$(json_field mode)" = '"exclusive"' ]
}

@test "lost waiter granted: a waiter that gave up or was killed is never granted the lock, and its intent ends with its lease" {
	x=$(redlock-cli acquire k -t 20s)
	run -1 redlock-cli acquire k -s -w 300ms
	run -1 redlock-cli acquire k -x -w 300ms
	# Gave up: it left at once, nothing of it is queued.
	refute_key main '{k}:rwait'
	refute_key main '{k}:writers'
	run -0 redlock-cli release k --token "$x"
	run -1 redlock-cli status k
	# A killed writer's intent holds new readers up for its lease only.
	s=$(redlock-cli acquire k -s -t 20s)
	start_bg x run k -w 30s -- true
	wait_until waiting_writers 1
	kill -KILL "$BG_PID"
	run -1 redlock-cli acquire k -s -n
	WAIT_TRIES=130 wait_until redlock-cli -q acquire k -s -n -t 20s
	run -0 redlock-cli status k --json
	[ "$(grep -o '"token"' <<<"$output" | wc -l)" = 2 ]
	run -0 redlock-cli release k --token "$s"
}

@test "--queue fifo (--fair): strict arrival order, consecutive readers admitted together" {
	skip_if_slow
	x=$(redlock-cli acquire k -t 30s)
	start_bg s1 run k -s --queue fifo -w 20s -- sh -c "$(stamp "$D/s1.start"); sleep 0.5; $(stamp "$D/s1.end")"
	wait_until queued 1
	start_bg s2 run k -s --fair -w 20s -- sh -c "$(stamp "$D/s2.start"); sleep 0.5; $(stamp "$D/s2.end")"
	wait_until queued 2
	start_bg x2 run k --fair -w 20s -- sh -c "$(stamp "$D/x2.start"); sleep 0.3; $(stamp "$D/x2.end")"
	wait_until queued 3
	start_bg s3 run k -s --fair -w 20s -- sh -c "$(stamp "$D/s3.start")"
	wait_until queued 4
	run -0 redlock-cli release k --token "$x"
	for pid in "${BG_PIDS[@]}"; do
		wait_bg "$pid"
		[ "$BG_STATUS" = 0 ]
	done
	s1=$(cat "$D/s1.start") s2=$(cat "$D/s2.start")
	echo "s1 $s1 s2 $s2 x2 $(cat "$D/x2.start") s3 $(cat "$D/s3.start")"
	[ $((s1 > s2 ? s1 - s2 : s2 - s1)) -lt 300 ]
	[ "$(cat "$D/x2.start")" -ge "$(cat "$D/s1.end")" ]
	[ "$(cat "$D/x2.start")" -ge "$(cat "$D/s2.end")" ]
	[ "$(cat "$D/s3.start")" -ge "$(cat "$D/x2.end")" ]
}

@test "quorum of 3 with one server stopped: readers share, a writer is excluded, fences still order" {
	local s
	for s in q1 q2 q3; do
		rcli "$s" FLUSHALL >/dev/null
	done
	U=(-u "unix://$(redis_sock q1)" -u "unix://$(redis_sock q2)" -u "unix://$(redis_sock q3)")
	redis_stop q3
	run -0 redlock-cli "${U[@]}" acquire k -s --json
	a=$(token_of "$output")
	run -0 redlock-cli "${U[@]}" run k -s -n -- true
	run -1 redlock-cli "${U[@]}" acquire k -n
	run -0 redlock-cli "${U[@]}" status k --json
	# The lock's own mode, the first "mode" (each waiter has one too).
	[[ $output == '{"key":"k","held":true,"mode":"shared",'* ]] ||
	    fail "$output"
	run -0 redlock-cli "${U[@]}" release k --token "$a"
	run -0 redlock-cli "${U[@]}" acquire k --json
	[ "$(json_field fence)" -ge 1 ]
	redis_start q3
}

# --- Cluster (tests/cluster.bash) ---------------------------------------

# cluster_keys: every key on the nodes of $NODES.
cluster_keys() {
	local n
	for n in $NODES; do
		ncli "$n" KEYS '*' | tr -d '\r' | sed '/^$/d'
	done
}
cluster_has() { cluster_keys | grep -qxF "$1"; }

@test "Cluster: every key of a shared lock, readers' and waiters' included, lives in the lock's slot" {
	local n
	CD=$D NODES="n1 n2 n3"
	for n in $NODES; do
		NODE_DIRS+=("$CD/node-$n")
	done
	cluster_create
	U=(-u "redis+cluster://127.0.0.1:$(node_port n1)")
	slot=$(ncli n1 CLUSTER KEYSLOT k | tr -d '\r')
	run -0 redlock-cli "${U[@]}" acquire k -s -t 20s
	a=$output
	run -0 redlock-cli "${U[@]}" acquire k -s -t 20s
	start_bg x "${U[@]}" run k -w 20s -- true
	wait_until cluster_has '{k}:writers'
	start_bg r "${U[@]}" run k -s -w 20s -- true
	wait_until cluster_has '{k}:rwait'
	cluster_keys >"$D/keys"
	cat "$D/keys"
	for key in k '{k}:readers' '{k}:rmeta' '{k}:writers' '{k}:rwait'; do
		grep -qxF "$key" "$D/keys"
	done
	while read -r key; do
		[ "$(ncli n1 CLUSTER KEYSLOT "$key" | tr -d '\r')" = "$slot" ]
	done <"$D/keys"
	run -0 redlock-cli "${U[@]}" status k --json
	# The lock's own mode, the first "mode" (each waiter has one too).
	[[ $output == '{"key":"k","held":true,"mode":"shared",'* ]] ||
	    fail "$output"
	run -0 redlock-cli "${U[@]}" release k --token "$a"
}

@test "a reader refused with -n because a writer waits is told that writer's host and pid, not a holder's lease" {
	local s1
	s1=$(redlock-cli acquire k -s -t 20s)
	start_bg x run k -w 20s -- true
	x=$BG_PID
	wait_until waiting_writers 1
	run --separate-stderr redlock-cli acquire k -s -n
	assert_failure 1
	assert_output ''
	[[ $stderr =~ ^redlock-cli:\ lock\ \'k\'\ is\ wanted\ by\ [^\ ]+\ pid\ $x\ \(waiting\ since\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z\),\ a\ waiting\ writer:\ no\ new\ reader\ gets\ in$ ]] ||
	    fail "stderr: $stderr"
	run --separate-stderr redlock-cli acquire k -s -w 300ms
	assert_failure 1
	[[ $stderr =~ ^redlock-cli:\ lock\ \'k\'\ is\ still\ wanted\ by\ [^\ ]+\ pid\ $x\ .*,\ a\ waiting\ writer,\ after\ 300ms$ ]] ||
	    fail "stderr: $stderr"
	run -0 redlock-cli release k --token "$s1"
	wait_bg "$x"
	assert_equal "$BG_STATUS" 0
}

# admit_calls N: N readers (--queue fifo) queued behind a writer; the
# server calls (INFO commandstats, every command, those of scripts too)
# from the writer's release until every reader has run and released, in
# $BATS_TEST_TMPDIR/calls.N.
admit_calls() {
	local n=$1 x i pid pids=()
	# Hundreds of clients at once on a small CI machine: every command
	# gets seconds, not the default 1s, for its replies.
	local slow=(--connect-timeout 10s --io-timeout 10s)
	redis_flush main
	x=$(redlock-cli acquire k -t 60s "${slow[@]}")
	for i in $(seq 1 "$n"); do
		redlock-cli run k -s --queue fifo -w 120s -t 30s "${slow[@]}" -- true \
		    </dev/null >/dev/null 2>&1 3>&- &
		pids+=("$!")
		BG_PIDS+=("$!")
	done
	WAIT_TRIES=600 wait_until queued "$n" ||
	    fail "$(zcard main '{k}:queue') of $n readers queued"
	rcli main CONFIG RESETSTAT >/dev/null
	redlock-cli release k --token "$x" "${slow[@]}"
	for pid in "${pids[@]}"; do
		wait "$pid" || fail "a reader exited $?"
	done
	rcli main INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_[^:]*:calls=\([0-9]*\),.*/\1/p' |
	    awk '{ n += $1 } END { print n }' >"$BATS_TEST_TMPDIR/calls.$n"
}

@test "admitting queued readers costs server work linear in their number: 600 cost at most 5 times what 150 do" {
	skip_if_slow
	local c150 c600
	admit_calls 150
	admit_calls 600
	c150=$(cat "$BATS_TEST_TMPDIR/calls.150")
	c600=$(cat "$BATS_TEST_TMPDIR/calls.600")
	echo "150 readers: $c150 calls, 600 readers: $c600 calls"
	((c600 <= 5 * c150)) || fail "600 readers cost $c600 calls, 150 cost $c150"
}

@test "--queue fifo: a reader that finds the lock free or held by readers only, with nobody queued, gets in at its first attempt" {
	local s t
	t=$(now_ms)
	run -0 redlock-cli run k -s --queue fifo -w 5s -- true
	s=$(redlock-cli acquire k -s -t 10s)
	run -0 redlock-cli run k -s --queue fifo -w 5s -- true
	(($(now_ms) - t < 1000)) || fail "took $(($(now_ms) - t)) ms"
	run -0 redlock-cli release k --token "$s"
}

@test "--queue fifo: a writer that queues with a lower --order than readers already let in still goes before a later reader" {
	local r0 r1
	r0=$(redlock-cli acquire k -s -t 20s)
	r1=$(redlock-cli acquire k -s --queue fifo --order 10 -w 2s -t 20s)
	start_bg w acquire k --queue fifo --order 5 -w 20s -t 5s
	wait_until queued 1
	# Order 7: after the writer's 5, whatever order 10 was let in before.
	run --separate-stderr redlock-cli acquire k -s --queue fifo --order 7 -w 500ms
	assert_failure 1
	run -0 redlock-cli release k --token "$r0"
	run -0 redlock-cli release k --token "$r1"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
}
