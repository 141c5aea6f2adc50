#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Redis Cluster (issue 5): redis+cluster://seed1,seed2 and plain redis://
# to any node; MOVED is followed (also when the slot moves while run
# holds the lock), ASK is followed once behind ASKING (status and extend
# during a half-done migration), every key of one lock lives in its slot.
# Three real masters c1..c3 made by `redis-cli --cluster create`; the
# test keys a, b and c hash to slots owned by three different nodes
# (checked, not assumed), and each is used through every node, so that
# two of three requests start at the wrong node.

load helpers
load cluster

NODES="c1 c2 c3"
KEYS="a b c nightly"

setup_file() {
	export CD="$BATS_FILE_TMPDIR"
	cluster_create
}

teardown_file() {
	local n
	for n in $NODES; do
		node_stop "$n"
	done
}

setup() {
	D=$BATS_TEST_TMPDIR
	flush_all
}

teardown() {
	local n
	stop_bg_jobs
	# A test that left a slot half-migrated ends the migration (the
	# slot stays with its owner; the moved keys go with FLUSHALL).
	if [ -n "${STABLE_SLOT:-}" ]; then
		flush_all
		for n in $NODES; do
			ncli "$n" CLUSTER SETSLOT "$STABLE_SLOT" STABLE >/dev/null
		done
	fi
	# A test that moved a slot gives it back (empty) to its first owner.
	if [ -n "${MOVED_SLOT:-}" ]; then
		flush_all
		set -- $MOVED_SLOT
		move_slot "$1" "$3" "$2"
	fi
}

# --- servers ----------------------------------------------------------

# node_start, node_stop, node_port, ncli, cluster_ok: tests/cluster.bash.

# URLs of one node: plain and as a cluster seed.
url_of() { echo "redis://127.0.0.1:$(node_port "$1")"; }
curl_of() { echo "redis+cluster://127.0.0.1:$(node_port "$1")"; }

slot_of() { ncli c1 CLUSTER KEYSLOT "$1" | tr -d '\r'; }

# owner_of KEY: the name (c1..c3) of the node whose own slot ranges
# (its "myself" line of CLUSTER NODES) contain KEY's slot.
owner_of() {
	local slot n
	slot=$(slot_of "$1")
	for n in $NODES; do
		if ncli "$n" CLUSTER NODES | tr -d '\r' |
		    awk -v s="$slot" '$3 ~ /myself/ {
			for (i = 9; i <= NF; i++) {
				if ($i ~ /^\[/) continue
				if (split($i, r, "-") == 2) {
					if (s >= r[1] + 0 && s <= r[2] + 0) f = 1
				} else if (s == $i + 0)
					f = 1
			}
		    } END { exit !f }'; then
			echo "$n"
			return 0
		fi
	done
	return 1
}

# A node that does not own KEY (the next one after its owner).
non_owner_of() {
	case $(owner_of "$1") in
	c1) echo c2 ;;
	c2) echo c3 ;;
	c3) echo c1 ;;
	esac
}

# Every key of the cluster, as "node key" lines.
all_keys() {
	local n
	for n in $NODES; do
		ncli "$n" KEYS '*' | tr -d '\r' | sed "/^\$/d; s/^/$n /"
	done
}

# waiter_blocked_on NODE: a client is blocked (BZPOPMIN) on NODE right now.
waiter_blocked_on() {
	[ "$(ncli "$1" INFO clients | tr -d '\r' |
	    sed -n 's/^blocked_clients://p')" -ge 1 ]
}

flush_all() {
	local n
	for n in $NODES; do
		ncli "$n" FLUSHALL >/dev/null
	done
}

# --- tests ------------------------------------------------------------

@test "premise: the test keys a, b and c hash to slots owned by three different nodes" {
	oa=$(owner_of a)
	ob=$(owner_of b)
	oc=$(owner_of c)
	echo "a -> $oa, b -> $ob, c -> $oc"
	[ -n "$oa" ] && [ -n "$ob" ] && [ -n "$oc" ]
	[ "$(printf '%s\n' "$oa" "$ob" "$oc" | sort -u | wc -l)" -eq 3 ]
}

@test "acquire through every node sets the key on its slot's owner only, and release through another node deletes it" {
	for k in $KEYS; do
		flush_all
		owner=$(owner_of "$k")
		other=$(non_owner_of "$k")
		for n in $NODES; do
			for form in url_of curl_of; do
				u=$($form "$n")
				run --separate-stderr redlock-cli -u "$u" acquire "$k" -t 10s
				assert_success
				[ -z "$stderr" ]
				[[ "$output" =~ ^[0-9a-f]{32}$ ]]
				token=$output
				[ "$(ncli "$owner" GET "$k")" = "$token" ]
				pttl=$(ncli "$owner" PTTL "$k")
				[ "$pttl" -gt 9000 ] && [ "$pttl" -le 10000 ]
				# Held: a second acquire, through yet another node, is
				# refused.
				run --separate-stderr redlock-cli -u "$(url_of "$other")" acquire "$k" -n
				assert_failure 1
				assert_output ''
				assert_busy_line "$k"
				# Release through the next node in the ring.
				case $n in c1) r=c2 ;; c2) r=c3 ;; c3) r=c1 ;; esac
				run --separate-stderr redlock-cli -u "$($form "$r")" release "$k" --token "$token"
				assert_success
				assert_output ''
				[ -z "$stderr" ]
				[ "$(ncli "$owner" EXISTS "$k")" = 0 ]
			done
		done
		# Nothing of this lock ever landed on another node.
		[ -z "$(all_keys | awk -v o="$owner" '$1 != o')" ]
	done
}

@test "run through every node holds the key on the owner while the command runs and releases it after" {
	for k in a b c; do
		owner=$(owner_of "$k")
		oport=$(node_port "$owner")
		for n in $NODES; do
			rm -f "$D/seen" "$D/token"
			run --separate-stderr redlock-cli -u "$(curl_of "$n")" run "$k" -t 10s -- \
			    sh -c 'redis-cli -p "$1" GET "$2" >"$3"; echo "$REDLOCK_TOKEN" >"$4"; exit 7' \
			    sh "$oport" "$k" "$D/seen" "$D/token"
			# run exits with the command's status.
			assert_failure 7
			assert_output ''
			[ -z "$stderr" ]
			[[ "$(cat "$D/token")" =~ ^[0-9a-f]{32}$ ]]
			[ "$(cat "$D/seen")" = "$(cat "$D/token")" ]
			[ "$(ncli "$owner" EXISTS "$k")" = 0 ]
		done
	done
}

@test "run renews through a wrong first node: the key outlives its TTL on the owner while the command runs" {
	skip_if_slow
	for k in a b c; do
		owner=$(owner_of "$k")
		n=$(non_owner_of "$k")
		run --separate-stderr redlock-cli -u "$(url_of "$n")" run "$k" -t 600ms -- \
		    sh -c 'sleep 1.5; redis-cli -p "$1" GET "$2" >"$3"; echo "$REDLOCK_TOKEN" >"$4"' \
		    sh "$(node_port "$owner")" "$k" "$D/seen" "$D/token"
		assert_success
		[ -z "$stderr" ]
		[ "$(cat "$D/seen")" = "$(cat "$D/token")" ]
		[ "$(ncli "$owner" EXISTS "$k")" = 0 ]
	done
}

@test "fence and metadata keys live on the lock's node, in the lock's slot" {
	for k in a b c nightly; do
		flush_all
		owner=$(owner_of "$k")
		slot=$(slot_of "$k")
		token=$(redlock-cli -u "$(url_of "$(non_owner_of "$k")")" acquire "$k" -t 10s)
		for companion in "{$k}:fence" "{$k}:meta"; do
			[ "$(ncli "$owner" EXISTS "$companion")" = 1 ]
			[ "$(slot_of "$companion")" = "$slot" ]
		done
		# Every key this lock created is on the owner, in its slot.
		while read -r node key; do
			[ "$node" = "$owner" ]
			[ "$(slot_of "$key")" = "$slot" ]
		done < <(all_keys)
		redlock-cli -u "$(curl_of c1)" release "$k" --token "$token"
	done
}

# keys_in_slot_on NODE SLOT: every key of the cluster is on NODE, in SLOT.
keys_in_slot_on() {
	local node key
	while read -r node key; do
		[ "$node" = "$1" ] || { echo "$key is on $node, not $1"; return 1; }
		[ "$(slot_of "$key")" = "$2" ] ||
		    { echo "$key is not in slot $2"; return 1; }
	done < <(all_keys)
}

@test "semaphore (--limit) and fair-queue (--fair) keys of a lock live on its node, in its slot" {
	for k in a b c; do
		flush_all
		owner=$(owner_of "$k")
		slot=$(slot_of "$k")
		n=$(non_owner_of "$k")
		t1=$(redlock-cli -u "$(url_of "$n")" acquire "$k" --limit 2 -t 10s)
		t2=$(redlock-cli -u "$(curl_of c1)" acquire "$k" --limit 2 -t 10s)
		[ "$(ncli "$owner" ZCARD "$k")" = 2 ]
		keys_in_slot_on "$owner" "$slot"
		redlock-cli -u "$(url_of c2)" release "$k" --limit 2 --token "$t1"
		redlock-cli -u "$(url_of c3)" release "$k" --limit 2 --token "$t2"

		flush_all
		m=$(redlock-cli -u "$(url_of "$owner")" acquire "$k" -t 10s)
		start_bg fair -u "$(url_of "$n")" acquire "$k" --fair -w 10s
		waiter=$BG_PID
		wait_until waiter_blocked_on "$owner"
		[ "$(ncli "$owner" EXISTS "{$k}:queue")" = 1 ]
		keys_in_slot_on "$owner" "$slot"
		redlock-cli -u "$(url_of "$n")" release "$k" --token "$m"
		wait "$waiter"
		[ "$(ncli "$owner" GET "$k")" = "$(cat "$D/fair.out")" ]
		keys_in_slot_on "$owner" "$slot"
	done
}

@test "a key with a hash tag (job{x}) locks in the tag's slot through every node" {
	k='job{x}'
	owner=$(owner_of x)
	slot=$(slot_of x)
	[ "$(slot_of "$k")" = "$slot" ]
	for n in $NODES; do
		run --separate-stderr redlock-cli -u "$(curl_of "$n")" acquire "$k" -t 10s
		assert_success
		[ -z "$stderr" ]
		token=$output
		[ "$(ncli "$owner" GET "$k")" = "$token" ]
		# Its companions (fence, meta) are there too, in the same slot.
		[ "$(all_keys | wc -l)" -ge 3 ]
		while read -r node key; do
			[ "$node" = "$owner" ]
			[ "$(slot_of "$key")" = "$slot" ]
		done < <(all_keys)
		run --separate-stderr redlock-cli -u "$(url_of "$n")" status "$k"
		assert_success
		assert_line "key: $k"
		assert_line "token: ${token:0:8}..."
		run --separate-stderr redlock-cli -u "$(url_of "$n")" release "$k" --token "$token"
		assert_success
		[ "$(ncli "$owner" EXISTS "$k")" = 0 ]
	done
	# Two locks with the same tag are still two locks.
	t1=$(redlock-cli -u "$(url_of c1)" acquire 'job{x}' -t 10s)
	t2=$(redlock-cli -u "$(url_of c2)" acquire 'other{x}' -n -t 10s)
	[ "$(ncli "$owner" GET 'job{x}')" = "$t1" ]
	[ "$(ncli "$owner" GET 'other{x}')" = "$t2" ]
}

@test "redis+cluster:// with a dead first seed uses the next seed" {
	dead=$(free_port)
	url="redis+cluster://127.0.0.1:$dead,127.0.0.1:$(node_port c2),127.0.0.1:$(node_port c3)"
	for k in a b c; do
		owner=$(owner_of "$k")
		run --separate-stderr redlock-cli -u "$url" acquire "$k" -t 10s
		assert_success
		[ -z "$stderr" ]
		token=$output
		[ "$(ncli "$owner" GET "$k")" = "$token" ]
		run --separate-stderr redlock-cli -u "$url" status "$k"
		assert_success
		run --separate-stderr redlock-cli -u "$url" release "$k" --token "$token"
		assert_success
		[ "$(ncli "$owner" EXISTS "$k")" = 0 ]
	done
}

@test "redis+cluster:// with no live seed: exit 69, one message, nothing on stdout" {
	d1=$(free_port)
	d2=$(free_port)
	url="redis+cluster://127.0.0.1:$d1,127.0.0.1:$d2"
	run --separate-stderr redlock-cli -u "$url" acquire a -n
	assert_failure 69
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	assert_stderr_line "redlock-cli: cannot connect to $url: Connection refused"
}

@test "status through any node shows the holder, and free (exit 1) after release" {
	need jq
	for k in a b c; do
		token=$(redlock-cli -u "$(url_of "$(owner_of "$k")")" acquire "$k" -t 60s)
		for n in $NODES; do
			for form in url_of curl_of; do
				run --separate-stderr redlock-cli -u "$($form "$n")" status "$k"
				assert_success
				[ -z "$stderr" ]
				assert_line "key: $k"
				assert_line "token: ${token:0:8}..."
				assert_line --regexp '^fence: [0-9]+$'
				run --separate-stderr redlock-cli -u "$($form "$n")" status "$k" --json
				assert_success
				[ "$(jq -r .key <<<"$output")" = "$k" ]
			done
		done
		redlock-cli -u "$(url_of c1)" release "$k" --token "$token"
		for n in $NODES; do
			run --separate-stderr redlock-cli -u "$(url_of "$n")" status "$k"
			assert_failure 1
			assert_line -n 0 free
			assert_line -n 1 --partial 'last: released, '
		done
	done
}

@test "a waiter (run -w 10s) through another node than the key's owner starts within 300 ms of the release" {
	skip_if_slow
	for k in a b c; do
		owner=$(owner_of "$k")
		n=$(non_owner_of "$k")
		token=$(redlock-cli -u "$(url_of "$owner")" acquire "$k" -t 20s)
		start_bg "$k" -u "$(curl_of "$n")" run "$k" -w 10s -- \
		    sh -c 'date +%s%3N >"$1"' sh "$D/$k.started"
		waiter=$BG_PID
		# The waiter blocks on the owner (not the node it was given).
		wait_until waiter_blocked_on "$owner"
		[ ! -e "$D/$k.started" ]
		released=$(now_ms)
		redlock-cli -u "$(url_of "$n")" release "$k" --token "$token"
		wait "$waiter"
		started=$(cat "$D/$k.started")
		echo "$k: started $((started - released)) ms after the release"
		[ $((started - released)) -lt 300 ]
	done
}

@test "a waiter through a wrong node that times out exits 1 with the busy message" {
	skip_if_slow
	k=b
	owner=$(owner_of "$k")
	token=$(redlock-cli -u "$(url_of "$owner")" acquire "$k" -t 20s)
	start=$(now_ms)
	run --separate-stderr redlock-cli -u "$(url_of "$(non_owner_of "$k")")" run "$k" -w 500ms -- touch "$D/ran"
	elapsed=$(( $(now_ms) - start ))
	assert_failure 1
	assert_output ''
	assert_busy_line "$k" "500ms"
	[ ! -e "$D/ran" ]
	[ "$elapsed" -ge 450 ] && [ "$elapsed" -lt 2000 ]
	[ "$(ncli "$owner" GET "$k")" = "$token" ]
}

# move_slot SLOT FROM TO: the usual resharding steps (IMPORTING,
# MIGRATING, MIGRATE of the slot's keys, SETSLOT NODE everywhere, the new
# owner first), then wait until every node names TO as the owner.
move_slot() {
	local slot=$1 from=$2 to=$3 from_id to_id keys n
	from_id=$(ncli "$from" CLUSTER MYID | tr -d '\r')
	to_id=$(ncli "$to" CLUSTER MYID | tr -d '\r')
	ncli "$to" CLUSTER SETSLOT "$slot" IMPORTING "$from_id" >/dev/null
	ncli "$from" CLUSTER SETSLOT "$slot" MIGRATING "$to_id" >/dev/null
	keys=$(ncli "$from" CLUSTER GETKEYSINSLOT "$slot" 100 | tr -d '\r')
	if [ -n "$keys" ]; then
		# shellcheck disable=SC2086
		ncli "$from" MIGRATE 127.0.0.1 "$(node_port "$to")" "" 0 5000 \
		    KEYS $keys >/dev/null
	fi
	ncli "$to" CLUSTER SETSLOT "$slot" NODE "$to_id" >/dev/null
	ncli "$from" CLUSTER SETSLOT "$slot" NODE "$to_id" >/dev/null
	for n in $NODES; do
		ncli "$n" CLUSTER SETSLOT "$slot" NODE "$to_id" >/dev/null
	done
	WAIT_TRIES=200 wait_until all_see_owner "$slot" "$(node_port "$to")" || {
		for n in $NODES; do ncli "$n" CLUSTER NODES >&2; done
		return 1
	}
}

# Every node's CLUSTER SLOTS gives PORT for SLOT.
all_see_owner() {
	local n
	for n in $NODES; do
		[ "$(ncli "$n" CLUSTER SLOTS | tr -d '\r' | awk -v s="$1" '
		    # ranges: start, end, then the master ip, port, id
		    /^[0-9]+$/ { v[++i] = $0 }
		    END {
			for (j = 1; j + 2 <= i; j++)
				if (v[j] + 0 <= s && s <= v[j + 1] + 0 &&
				    v[j + 2] > 16383) { print v[j + 2]; exit }
		    }')" = "$2" ] || return 1
	done
}

@test "resharding the lock's slot to another node while run holds it: renewals follow MOVED and the lock survives" {
	skip_if_slow
	k=a
	owner=$(owner_of "$k")
	slot=$(slot_of "$k")
	case $owner in c1) target=c2 ;; c2) target=c3 ;; c3) target=c1 ;; esac
	MOVED_SLOT="$slot $owner $target"
	start_bg run -u "$(curl_of c1)" run "$k" -t 1s -- \
	    sh -c 'echo "$REDLOCK_TOKEN" >"$1.token"; sleep 3; echo done >"$1.end"' \
	    sh "$D/child"
	holder=$BG_PID
	wait_until test -s "$D/child.token"
	token=$(cat "$D/child.token")
	[ "$(ncli "$owner" GET "$k")" = "$token" ]

	move_slot "$slot" "$owner" "$target"
	moved=$(now_ms)
	[ "$(owner_of "$k")" = "$target" ]
	# More than a TTL later, the key is still held (renewed) on the new
	# owner while the command runs.
	wait_until eval '[ $(( $(now_ms) - moved )) -gt 1300 ]'
	[ ! -e "$D/child.end" ]
	[ "$(ncli "$target" GET "$k")" = "$token" ]
	pttl=$(ncli "$target" PTTL "$k")
	[ "$pttl" -gt 0 ] && [ "$pttl" -le 1000 ]

	wait "$holder" && rc=0 || rc=$?
	cat "$D/run.err"
	[ "$rc" -eq 0 ]
	[ -e "$D/child.end" ]
	[ ! -s "$D/run.err" ]
	[ "$(ncli "$target" EXISTS "$k")" = 0 ]
}

# half_migrate KEY TARGET: start moving KEY's slot from its owner to
# TARGET and move the lock's keys (KEY, its fence and meta) there, so
# that the owner answers ASK for them; the slot is not handed over.
half_migrate() {
	local k=$1 target=$2 owner slot
	owner=$(owner_of "$k")
	slot=$(slot_of "$k")
	STABLE_SLOT=$slot
	ncli "$target" CLUSTER SETSLOT "$slot" IMPORTING \
	    "$(ncli "$owner" CLUSTER MYID | tr -d '\r')" >/dev/null
	ncli "$owner" CLUSTER SETSLOT "$slot" MIGRATING \
	    "$(ncli "$target" CLUSTER MYID | tr -d '\r')" >/dev/null
	[ "$(ncli "$owner" MIGRATE 127.0.0.1 "$(node_port "$target")" "" 0 5000 \
	    KEYS "$k" "{$k}:fence" "{$k}:meta" | tr -d '\r')" = OK ]
	[ "$(ncli "$owner" CLUSTER COUNTKEYSINSLOT "$slot")" = 0 ]
	[ "$(ncli "$target" CLUSTER COUNTKEYSINSLOT "$slot")" = 3 ]
}

# asking_cli NODE CMD...: one command on NODE behind ASKING.
asking_cli() {
	local node=$1
	shift
	printf 'ASKING\n%s\n' "$*" | ncli "$node" | tail -n 1 | tr -d '\r'
}

@test "ASK during a slot migration: status and extend through the migrating node follow ASK to the importing node" {
	k=a
	owner=$(owner_of "$k")
	target=$(non_owner_of "$k")
	# The importing node has run our scripts before (its script cache
	# is warm): a lock of its own, status, extend, release.
	for own_key in a b c; do
		[ "$(owner_of "$own_key")" = "$target" ] && break
	done
	t=$(redlock-cli -u "$(url_of "$target")" acquire "$own_key" -t 10s)
	redlock-cli -u "$(url_of "$target")" status "$own_key" >/dev/null
	redlock-cli -u "$(url_of "$target")" extend "$own_key" --token "$t"
	redlock-cli -u "$(url_of "$target")" release "$own_key" --token "$t"

	token=$(redlock-cli -u "$(url_of "$owner")" acquire "$k" -t 20s)
	half_migrate "$k" "$target"
	run --separate-stderr redlock-cli -u "$(url_of "$owner")" status "$k"
	assert_success
	[ -z "$stderr" ]
	assert_line "token: ${token:0:8}..."
	run --separate-stderr redlock-cli -u "$(url_of "$owner")" extend "$k" --token "$token" -t 60s
	assert_success
	[ -z "$stderr" ]
	pttl=$(asking_cli "$target" PTTL "$k")
	[ "$pttl" -gt 50000 ] && [ "$pttl" -le 60000 ]
}

@test "ASK to an importing node whose script cache is empty (SCRIPT FLUSH): status and extend still work" {
	k=a
	owner=$(owner_of "$k")
	target=$(non_owner_of "$k")
	token=$(redlock-cli -u "$(url_of "$owner")" acquire "$k" -t 20s)
	half_migrate "$k" "$target"
	ncli "$target" SCRIPT FLUSH >/dev/null
	run --separate-stderr redlock-cli -u "$(url_of "$owner")" status "$k"
	echo "status: exit $status, stderr: $stderr"
	assert_success
	[ -z "$stderr" ]
	assert_line "token: ${token:0:8}..."
	ncli "$target" SCRIPT FLUSH >/dev/null
	run --separate-stderr redlock-cli -u "$(url_of "$owner")" extend "$k" --token "$token" -t 60s
	echo "extend: exit $status, stderr: $stderr"
	assert_success
	[ -z "$stderr" ]
	pttl=$(asking_cli "$target" PTTL "$k")
	[ "$pttl" -gt 50000 ] && [ "$pttl" -le 60000 ]
}

@test "list during a slot migration: the lock whose keys moved to the importing node is listed with the others, exit 0" {
	k=a
	owner=$(owner_of "$k")
	target=$(non_owner_of "$k")
	for other in b c; do
		[ "$(owner_of "$other")" != "$owner" ] && break
	done
	redlock-cli -u "$(url_of "$owner")" acquire "$k" -t 30s >/dev/null
	redlock-cli -u "$(curl_of "$owner")" acquire "$other" -t 30s >/dev/null
	half_migrate "$k" "$target"
	# The importing node's SCAN finds the moved keys; a call naming the
	# lock's waiters' keys too (which do not exist) is refused there with
	# TRYAGAIN while the slot migrates.
	for form in curl_of url_of; do
		run --separate-stderr redlock-cli -u "$($form "$owner")" list
		echo "$form: exit $status, stderr: $stderr"
		assert_success
		[ -z "$stderr" ]
		assert_line -n 0 --regexp "^$k exclusive .* waiting 0$"
		assert_line -n 1 --regexp "^$other exclusive .* waiting 0$"
		assert_equal "${#lines[@]}" 2
	done
}

@test "history in a Cluster: the entry is on the lock's node in its slot, and history and status read it through any node" {
	flush_all
	for k in a b c; do
		owner=$(owner_of "$k")
		n=$(non_owner_of "$k")
		run -3 redlock-cli -u "$(url_of "$n")" run "$k" -- sh -c 'exit 3'
		[ "$(ncli "$owner" XLEN "{$k}:history")" = 1 ] ||
		    fail "no history of $k on its owner $owner"
		[ "$(slot_of "{$k}:history")" = "$(slot_of "$k")" ]
		run -0 redlock-cli -u "$(curl_of "$n")" history "$k"
		assert_line -n 1 --regexp " failed +3 .* sh -c exit 3$"
		run -1 redlock-cli -u "$(url_of "$n")" status "$k"
		assert_line -n 1 --partial 'last: failed, exit 3, '
	done
}
