#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Redis Sentinel (issue 5): redis-sentinel://h1:p1,h2:p2,h3:p3/mymaster.
# Real servers: a master m1 and a replica m2 (TCP, high ports) watched by
# three sentinels s1..s3 (quorum 2).  The failover test swaps the roles of
# m1 and m2, so no test assumes which of them is the master: setup() asks
# the sentinels and waits until the topology is settled again.

load helpers

setup_file() {
	local s
	export SD="$BATS_FILE_TMPDIR"
	redis_start_tcp m1 || return 1
	export M1_PORT=$REDIS_PORT
	redis_start_replica m2 "$M1_PORT" || return 1
	export M2_PORT=$REDIS_PORT
	unset REDLOCK_URL REDIS_PORT
	for s in s1 s2 s3; do
		sentinel_start "$s" "$M1_PORT" || return 1
	done
	export S1_PORT S2_PORT S3_PORT
	S1_PORT=$(cat "$SD/sent-s1/port")
	S2_PORT=$(cat "$SD/sent-s2/port")
	S3_PORT=$(cat "$SD/sent-s3/port")
	export SURL="redis-sentinel://127.0.0.1:$S1_PORT,127.0.0.1:$S2_PORT,127.0.0.1:$S3_PORT/mymaster"
	# Every sentinel knows the replica and the two other sentinels.
	WAIT_TRIES=600 wait_until sentinels_know_everyone || {
		for s in s1 s2 s3; do tail -n 20 "$SD/sent-$s/log" >&2; done
		return 1
	}
}

# Sentinels first (thawed, then stopped by their own pid), then the
# two servers.
teardown_file() {
	local s
	for s in s1 s2 s3; do
		pidfile_stop "$SD/sent-$s"
	done
	redis_stop m1
	redis_stop m2
}

setup() {
	D=$BATS_TEST_TMPDIR
	# The master may have moved (failover test): wait until the three
	# sentinels agree, the master says so itself and the other server
	# replicates from it.  Sentinel converts a demoted master about 8 s
	# after the switch, hence the long bound.
	WAIT_TRIES=600 wait_until topology_settled || {
		echo "sentinel topology did not settle" >&2
		return 1
	}
	mcli FLUSHALL >/dev/null
	WAIT_TRIES=100 wait_until replica_has_no_keys
}

# Thaw a frozen sentinel, start a stopped one again from its own
# (rewritten) config, and end this test's background processes.
teardown() {
	local pid s
	for s in s1 s2 s3; do
		pid=$(cat "$SD/sent-$s/pid" 2>/dev/null) || true
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			kill -CONT "$pid" 2>/dev/null || true
			continue
		fi
		rm -f "$SD/sent-$s/pid"
		redis-sentinel "$SD/sent-$s/conf" </dev/null >/dev/null 2>&1 3>&-
		wait_until port_is_ours "$SD/sent-$s" "$(sentinel_port "$s")"
	done
	stop_bg_jobs
	redis_stop stall
	if [ -n "${SENTINEL_REMOVE:-}" ]; then
		scli s2 SENTINEL REMOVE "$SENTINEL_REMOVE" >/dev/null || true
	fi
	if [ -n "${SENTINEL_ACL_USER:-}" ]; then
		scli s1 ACL DELUSER "$SENTINEL_ACL_USER" >/dev/null || true
	fi
}

# --- servers ----------------------------------------------------------

# sentinel_start NAME MASTER_PORT: a sentinel from its own (rewritable)
# config file in $SD/sent-NAME, on a free port.
sentinel_start() {
	mkdir -p "$SD/sent-$1"
	daemon_on_free_port "$SD/sent-$1" sentinel_launch "$SD/sent-$1" "$2"
}

# sentinel_launch DIR MASTER_PORT PORT: one try of sentinel_start.
sentinel_launch() {
	cat >"$1/conf" <<-EOF
	port $3
	bind 127.0.0.1
	daemonize yes
	pidfile $1/pid
	logfile $1/log
	dir $1
	sentinel monitor mymaster 127.0.0.1 $2 2
	sentinel down-after-milliseconds mymaster 1000
	sentinel failover-timeout mymaster 5000
	EOF
	redis-sentinel "$1/conf"
}

sentinel_pid() { cat "$SD/sent-$1/pid"; }
sentinel_port() { cat "$SD/sent-$1/port"; }
scli() { pcli "$(sentinel_port "$1")" "${@:2}"; }

# sentinel_field NAME FIELD: a field of SENTINEL MASTER mymaster.
sentinel_field() {
	scli "$1" SENTINEL MASTER mymaster 2>/dev/null | tr -d '\r' |
	    paste - - | awk -F'\t' -v f="$2" '$1 == f { print $2 }'
}

sentinels_know_everyone() {
	local s
	for s in s1 s2 s3; do
		[ "$(sentinel_field "$s" num-slaves)" = 1 ] || return 1
		[ "$(sentinel_field "$s" num-other-sentinels)" = 2 ] ||
		    return 1
	done
}

# The port sentinel NAME gives for mymaster.
master_port_of() {
	scli "$1" SENTINEL get-master-addr-by-name mymaster 2>/dev/null |
	    tr -d '\r' | sed -n 2p
}

# Current master port (the first sentinel that answers) and the other
# server's port.
master_port() {
	local s p
	for s in s1 s2 s3; do
		p=$(master_port_of "$s")
		[ -z "$p" ] || { echo "$p"; return 0; }
	done
	return 1
}
other_port() {
	if [ "$(master_port)" = "$M1_PORT" ]; then
		echo "$M2_PORT"
	else
		echo "$M1_PORT"
	fi
}

mcli() { pcli "$(master_port)" "$@"; }

role_of() { pcli "$1" ROLE 2>/dev/null | head -n 1 | tr -d '\r'; }

topology_settled() {
	local m o
	m=$(master_port_of s1)
	[ -n "$m" ] || return 1
	[ "$(master_port_of s2)" = "$m" ] || return 1
	[ "$(master_port_of s3)" = "$m" ] || return 1
	[ "$m" = "$M1_PORT" ] || [ "$m" = "$M2_PORT" ] || return 1
	o=$(other_port)
	[ "$(role_of "$m")" = master ] || return 1
	[ "$(role_of "$o")" = slave ] || return 1
	pcli "$o" INFO replication | tr -d '\r' |
	    grep -qx "master_port:$m" || return 1
	pcli "$o" INFO replication | tr -d '\r' |
	    grep -qx 'master_link_status:up' || return 1
	sentinels_know_everyone
}

replica_has_no_keys() { [ "$(pcli "$(other_port)" DBSIZE)" = 0 ]; }

# A TCP port nobody listens on (for a dead sentinel).
dead_port() { free_port; }

# --- acquire, release, run, status --------------------------------------

@test "acquire through the sentinel URL sets the key on the current master and release deletes it" {
	run --separate-stderr redlock-cli -u "$SURL" acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	[[ "$output" =~ ^[0-9a-f]{32}$ ]]
	token=$output
	m=$(master_port)
	[ "$(pcli "$m" GET k)" = "$token" ]
	pttl=$(pcli "$m" PTTL k)
	[ "$pttl" -gt 9000 ] && [ "$pttl" -le 10000 ]
	[ "$(pcli "$m" EXISTS '{k}:meta')" = 1 ]
	[ "$(pcli "$m" EXISTS '{k}:fence')" = 1 ]
	# A second acquire through the sentinels sees the same lock.
	run --separate-stderr redlock-cli -u "$SURL" acquire k -n
	assert_failure 1
	assert_output ''
	assert_busy_line k

	run --separate-stderr redlock-cli -u "$SURL" release k --token "$token"
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	[ "$(pcli "$m" EXISTS k)" = 0 ]
	[ "$(pcli "$m" EXISTS '{k}:meta')" = 0 ]
}

@test "run through the sentinel URL holds the key on the master while the command runs, then releases it" {
	m=$(master_port)
	run --separate-stderr redlock-cli -u "$SURL" run k -t 10s -- \
	    sh -c 'redis-cli -p "$1" GET k >"$2"; echo "$REDLOCK_TOKEN" >"$3"' \
	    sh "$m" "$D/seen" "$D/token"
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	[[ "$(cat "$D/token")" =~ ^[0-9a-f]{32}$ ]]
	[ "$(cat "$D/seen")" = "$(cat "$D/token")" ]
	[ "$(pcli "$m" EXISTS k)" = 0 ]
}

@test "status through the sentinel URL shows the holder, then free (exit 1) after release" {
	need jq
	token=$(redlock-cli -u "$SURL" acquire k -t 10s)
	run --separate-stderr redlock-cli -u "$SURL" status k
	assert_success
	[ -z "$stderr" ]
	assert_line 'key: k'
	assert_line "token: ${token:0:8}..."
	assert_line --regexp '^ttl: [0-9.]+m?s$'
	assert_line --regexp '^fence: [0-9]+$'

	run --separate-stderr redlock-cli -u "$SURL" status k --json
	assert_success
	[ "$(jq -r .key <<<"$output")" = k ]

	redlock-cli -u "$SURL" release k --token "$token"
	run --separate-stderr redlock-cli -u "$SURL" status k
	assert_failure 1
	assert_line -n 0 free
	assert_line -n 1 --partial 'last: released, '
}

@test "a dead sentinel listed first is skipped: acquire and release work through the next one" {
	skip_if_slow
	dead=$(dead_port)
	url="redis-sentinel://127.0.0.1:$dead,127.0.0.1:$S2_PORT,127.0.0.1:$S3_PORT/mymaster"
	start=$(now_ms)
	run --separate-stderr redlock-cli -u "$url" acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	token=$output
	[ "$(mcli GET k)" = "$token" ]
	[ $(( $(now_ms) - start )) -lt 2000 ]
	run --separate-stderr redlock-cli -u "$url" release k --token "$token"
	assert_success
	[ "$(mcli EXISTS k)" = 0 ]
}

@test "a stopped first sentinel is skipped: acquire through the sentinel URL still works" {
	pid=$(sentinel_pid s1)
	kill "$pid"
	wait_until proc_gone "$pid"
	rm -f "$SD/sent-s1/pid"
	run --separate-stderr redlock-cli -u "$SURL" acquire k -t 10s
	assert_success
	[ -z "$stderr" ]
	[ "$(mcli GET k)" = "$output" ]
}

@test "an unresponsive first sentinel (accepts, never answers) is skipped within the timeouts: acquire still works" {
	skip_if_slow
	# A SIGSTOPped redis-server stands in for a hung sentinel (freezing
	# a real one would put it in TILT mode for 30 s).
	redis_start_tcp stall
	unset REDLOCK_URL
	stall_port=$REDIS_PORT
	kill -STOP "$(redis_pid stall)"
	url="redis-sentinel://127.0.0.1:$stall_port,127.0.0.1:$S2_PORT,127.0.0.1:$S3_PORT/mymaster"
	start=$(now_ms)
	run --separate-stderr redlock-cli -u "$url" acquire k -t 10s
	elapsed=$(( $(now_ms) - start ))
	echo "stderr: $stderr; ${elapsed} ms"
	assert_success
	[ -z "$stderr" ]
	[ "$(mcli GET k)" = "$output" ]
	# One I/O timeout (1 s) for the hung sentinel, then the next one.
	[ "$elapsed" -lt 3500 ]
}

@test "an unknown master name: exit 69, 'cannot find the master', nothing on stdout, no command run" {
	url="redis-sentinel://127.0.0.1:$S1_PORT,127.0.0.1:$S2_PORT,127.0.0.1:$S3_PORT/nosuch"
	run --separate-stderr redlock-cli -u "$url" acquire k -n
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: $url: cannot find the master: sentinel 127.0.0.1:$S3_PORT does not know master 'nosuch'"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]

	run --separate-stderr redlock-cli -u "$url" run k -- touch "$D/ran"
	assert_failure 69
	assert_output ''
	[[ "$stderr" == *"cannot find the master"* ]]
	[ ! -e "$D/ran" ]
	[ "$(mcli EXISTS k)" = 0 ]
}

@test "the sentinels get AUTH as --user or REDLOCK_USER, and REDLOCK_SENTINEL_USER overrides both" {
	local url="redis-sentinel://127.0.0.1:$S1_PORT/mymaster" token
	SENTINEL_ACL_USER=sentbot
	[ "$(scli s1 ACL SETUSER sentbot on '>sent-pw' '+@all' | tr -d '\r')" = OK ]
	unset REDLOCK_USER REDLOCK_PASSWORD REDLOCK_SENTINEL_USER
	export REDLOCK_SENTINEL_PASSWORD=sent-pw
	run --separate-stderr redlock-cli --user sentbot -u "$url" acquire k
	assert_success
	[ -z "$stderr" ]
	token=$output
	[ "$(mcli GET k)" = "$token" ]
	REDLOCK_USER=sentbot run --separate-stderr redlock-cli -u "$url" \
	    release k --token "$token"
	assert_success
	[ "$(mcli EXISTS k)" = 0 ]
	REDLOCK_SENTINEL_USER=sentbot run --separate-stderr redlock-cli \
	    --user someone-else -u "$url" acquire k
	assert_success
	[ "$(mcli GET k)" = "$output" ]
	# A wrong password for that user is the sentinel's answer.
	REDLOCK_SENTINEL_PASSWORD=wrong run --separate-stderr redlock-cli \
	    --user sentbot -u "$url" acquire k2
	assert_failure 69
	assert_equal "$stderr" "redlock-cli: $url: cannot find the master: sentinel 127.0.0.1:$S1_PORT: authentication failed: WRONGPASS invalid username-password pair or user is disabled. (the password came from REDLOCK_SENTINEL_PASSWORD)"
}

@test "REDLOCK_SENTINEL_PASSWORD to sentinels that have none: exit 69, saying to drop it" {
	local url="redis-sentinel://127.0.0.1:$S1_PORT/mymaster"
	unset REDLOCK_USER REDLOCK_PASSWORD REDLOCK_SENTINEL_USER
	REDLOCK_SENTINEL_PASSWORD=pw run --separate-stderr redlock-cli \
	    -u "$url" acquire k
	assert_failure 69
	assert_output ''
	assert_equal "$stderr" "redlock-cli: $url: cannot find the master: sentinel 127.0.0.1:$S1_PORT: the server has no password set; drop REDLOCK_SENTINEL_PASSWORD"
}

@test "a sentinel that names a replica as the master is refused: exit 69, nothing written on the replica" {
	# s2 also watches the replica under another name, so it answers
	# get-master-addr-by-name with a server whose ROLE is slave.
	rep=$(other_port)
	scli s2 SENTINEL MONITOR notmaster 127.0.0.1 "$rep" 2 >/dev/null
	SENTINEL_REMOVE=notmaster
	url="redis-sentinel://127.0.0.1:$S2_PORT/notmaster"
	run --separate-stderr redlock-cli -u "$url" acquire k -n
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: $url: 127.0.0.1:$rep is no longer the master"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[ "$(mcli EXISTS k)" = 0 ]
	[ "$(pcli "$rep" EXISTS k)" = 0 ]
}

@test "no sentinel reachable: exit 69 with 'cannot find the master' naming the last sentinel's error" {
	d1=$(dead_port)
	d2=$(dead_port)
	url="redis-sentinel://127.0.0.1:$d1,127.0.0.1:$d2/mymaster"
	run --separate-stderr redlock-cli -u "$url" acquire k -n
	assert_failure 69
	assert_output ''
	assert_stderr_line "redlock-cli: $url: cannot find the master: cannot connect to sentinel 127.0.0.1:$d2: Connection refused"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
}

# --- failover ---------------------------------------------------------

# The first holder's command: start/end markers with timestamps (ms), a
# "term" marker if it is signalled; about 6 s long.
write_child() {
	cat >"$D/child.sh" <<-'EOF'
	mark=$1
	trap 'echo "term $(date +%s%3N)" >>"$mark"; kill $sl 2>/dev/null; exit 143' TERM INT HUP
	echo "start $(date +%s%3N)" >>"$mark"
	sleep 6 & sl=$!
	wait $sl
	echo "end $(date +%s%3N)" >>"$mark"
	EOF
}

marker_has() { grep -q "^$2 " "$1" 2>/dev/null; }
marker_ts() { sed -n "s/^$2 //p" "$1" | head -n 1; }

@test "SENTINEL FAILOVER during run: renewals continue on the new master (exit 0) or the child is stopped (exit 75), never two holders at once" {
	write_child
	old=$(master_port)
	new=$(other_port)
	start_bg first run fk -u "$SURL" -t 2s -- sh "$D/child.sh" "$D/first.mark"
	first=$BG_PID
	wait_until marker_has "$D/first.mark" start
	wait_until eval '[ "$(pcli '"$old"' EXISTS fk)" = 1 ]'
	token=$(pcli "$old" GET fk)
	[[ "$token" =~ ^[0-9a-f]{32}$ ]]
	# The replica has the key before the switch.
	wait_until eval '[ "$(pcli '"$new"' GET fk)" = "'"$token"'" ]'

	# Force the failover (retried while a sentinel answers NOGOODSLAVE
	# for a replica it has not refreshed yet).
	# Ask a sentinel that is not in TILT mode (it would not act).
	fs=
	for s in s3 s2 s1; do
		if scli "$s" INFO sentinel | tr -d '\r' | grep -qx 'sentinel_tilt:0'; then
			fs=$s
			break
		fi
	done
	[ -n "$fs" ]
	failover_ok() { [ "$(scli "$fs" SENTINEL FAILOVER mymaster | tr -d '\r')" = OK ]; }
	wait_until failover_ok
	failover_ms=$(now_ms)

	# While the first run lives: a second holder tries every ~0.3 s
	# through the sentinels; record when the sentinels name the new
	# master and whether the lock key is there (with the first token)
	# while the first child still runs.
	n=0
	switched_ms=
	: >"$D/obs"
	deadline=$(( $(now_ms) + 20000 ))
	while kill -0 "$first" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do
		n=$((n + 1))
		redlock-cli -q -u "$SURL" run fk -n -- \
		    sh -c 'echo "ran $(date +%s%3N)" >>"$1"' sh "$D/second.mark" \
		    </dev/null >>"$D/second.out" 2>>"$D/second.err" 3>&- &
		BG_PIDS+=("$!")
		if [ -z "$switched_ms" ] && [ "$(master_port_of "$fs")" = "$new" ]; then
			switched_ms=$(now_ms)
		fi
		if [ -n "$switched_ms" ] &&
		    ! marker_has "$D/first.mark" end &&
		    ! marker_has "$D/first.mark" term; then
			echo "$(now_ms) $(pcli "$new" GET fk)" >>"$D/obs"
		fi
		sleep 0.3
	done
	wait "$first" && rc=0 || rc=$?
	first_exit_ms=$(now_ms)
	for pid in "${BG_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done

	echo "first run: exit $rc; stderr:"; cat "$D/first.err"
	echo "first markers:"; cat "$D/first.mark"
	echo "second holders ran at:"; cat "$D/second.mark" 2>/dev/null || true
	echo "failover at $failover_ms, sentinels switched at $switched_ms; $n second holders started"
	echo "new master view while the child ran:"; cat "$D/obs"

	# The failover did happen while the first holder ran.
	[ -n "$switched_ms" ]
	# Some second holders did try while the first one held the lock.
	[ "$n" -ge 2 ]
	start_ms=$(marker_ts "$D/first.mark" start)
	if marker_has "$D/first.mark" end; then
		stop_ms=$(marker_ts "$D/first.mark" end)
	elif marker_has "$D/first.mark" term; then
		stop_ms=$(marker_ts "$D/first.mark" term)
	else
		stop_ms=$first_exit_ms
	fi

	# Never both: no second holder ran its command while the first
	# child was running.
	if [ -s "$D/second.mark" ]; then
		while read -r _ ts; do
			if [ "$ts" -ge "$start_ms" ] && [ "$ts" -le "$stop_ms" ]; then
				echo "a second holder ran at $ts while the first child ran ($start_ms..$stop_ms)"
				false
			fi
		done <"$D/second.mark"
	fi

	case $rc in
	0)
		# The child finished, and the lock was renewed on the new master:
		# the key (first token) was still there more than a TTL (2 s)
		# after the sentinels named the new master.
		marker_has "$D/first.mark" end
		awk -v t="$token" -v after=$((switched_ms + 2200)) \
		    '$1 > after && $2 == t { ok = 1 } END { exit !ok }' "$D/obs"
		;;
	75)
		# The child was stopped before its end, with the lost-lock
		# message.
		if marker_has "$D/first.mark" end; then
			fail "the child ran to its end although run exited 75"
		fi
		grep -qE "^redlock-cli: lock 'fk' lost: " "$D/first.err"
		;;
	*)
		echo "unexpected exit status $rc"
		false
		;;
	esac
}

# --- sentinels that stop answering while a lock is held -----------------

# freeze_sentinels: SIGSTOP all three (teardown thaws them).
freeze_sentinels() {
	local s
	for s in s1 s2 s3; do
		kill -STOP "$(sentinel_pid "$s")"
	done
}

# ticks_for SECONDS: a job that appends the time to $D/ticks every 0.1 s
# for SECONDS, and the time of a SIGTERM to $D/term.
ticks_for() {
	cat >"$D/job.sh" <<EOF2
trap 'date +%s%N >"$D/term"; exit 143' TERM
end=\$((\$(date +%s) + $1))
while [ "\$(date +%s)" -lt "\$end" ]; do date +%s%N >>"$D/ticks"; sleep 0.1; done
EOF2
	echo "$D/job.sh"
}

# run_ticking SECONDS: run k -t 3s of ticks_for SECONDS in the background
# through the sentinel URL, once its first tick is written.
run_ticking() {
	local job
	job=$(ticks_for "$1")
	redlock-cli -u "$SURL" run k -t 3s -- sh "$job" \
	    </dev/null >"$D/run.out" 2>"$D/run.err" 3>&- &
	BG_PIDS+=("$!")
	wait_until test -s "$D/ticks" || fail "the job never started"
}

@test "sentinels that stop answering during a run: renewals go on over the kept connection, and the job ends 0" {
	skip_if_slow
	run_ticking 4
	freeze_sentinels
	wait "${BG_PIDS[0]}" || fail "run exited $?: $(cat "$D/run.err")"
	[ ! -e "$D/term" ] || fail "the job was stopped: $(cat "$D/run.err")"
}

@test "sentinels that stop answering while the master connection is lost: the job gets SIGTERM before its TTL ends" {
	skip_if_slow
	local t0 term m rc=0
	m=$(master_port)
	run_ticking 20
	freeze_sentinels
	pcli "$m" CLIENT KILL TYPE normal >/dev/null
	wait "${BG_PIDS[0]}" || rc=$?
	assert_equal "$rc" 75
	[ -s "$D/term" ] || fail "the job never got SIGTERM: $(cat "$D/run.err")"
	t0=$(head -n 1 "$D/ticks")
	term=$(cat "$D/term")
	(((term - t0) / 1000000 < 3000)) ||
	    fail "SIGTERM $(((term - t0) / 1000000)) ms after the job started"
}
