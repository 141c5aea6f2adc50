#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# list [PATTERN] (issue 17): every held lock under the prefix, one line
# each sorted by KEY, or a JSON array of status --json objects; on one
# server, on a quorum of three with one down, and on every master of a
# Cluster of three.

load helpers
load cluster

NODES="c1 c2 c3"

setup_file() {
	local s
	export CD="$BATS_FILE_TMPDIR"
	for s in q1 q2 q3 main; do
		redis_start "$s"
	done
	cluster_create
}

teardown_file() {
	local s n
	for n in $NODES; do
		node_stop "$n"
	done
	for s in q1 q2 q3 main; do
		redis_stop "$s"
	done
}

setup() {
	local s
	for s in q1 q2 q3 main; do
		[ -S "$(redis_sock "$s")" ] || redis_start "$s"
		rcli "$s" FLUSHALL >/dev/null
	done
	export REDLOCK_URL="unix://$(redis_sock main)"
}

teardown() { stop_bg_jobs; }

qurl() { echo "unix://$(redis_sock "$1")"; }

@test "list prints one line per held lock of each mode, sorted by key, and exits 0" {
	run -0 redlock-cli acquire zeta -t 20s
	run -0 redlock-cli acquire alpha -t 20s
	run -0 redlock-cli acquire pool --limit 3
	run -0 redlock-cli acquire pool --limit 3
	start_bg job run mid -- sleep 30
	wait_until key_exists main mid
	run --separate-stderr redlock-cli list
	assert_success
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 4 ]
	assert_line -n 0 --regexp "^alpha exclusive [^ ]+ pid [0-9]+ \(manual: .*, since [0-9T:Z-]+, held [0-9.]+m?s, ttl [0-9.]+s\) waiting 0$"
	assert_line -n 1 --regexp "^mid exclusive [^ ]+ pid $BG_PID \(sleep 30, since .*, ttl .*\) waiting 0$"
	assert_line -n 2 --regexp '^pool semaphore 2/3 [^ ]+ pid [0-9]+ \(.*\), [^ ]+ pid [0-9]+ \(.*\) waiting 0$'
	assert_line -n 3 --regexp '^zeta exclusive '
}

@test "list shows fair waiters, and a free name, a companion key or another program's key is not a lock" {
	run -0 redlock-cli acquire k -t 20s
	start_bg waiter acquire k --fair -w 20s
	wait_until zcard_is main '{k}:leases' 1
	local tok
	tok=$(redlock-cli acquire gone)
	run -0 redlock-cli release gone --token "$tok"
	rcli main SET plain value >/dev/null
	rcli main HSET other f v >/dev/null
	run -0 redlock-cli list
	[ "${#lines[@]}" -eq 1 ]
	assert_line -n 0 --regexp '^k exclusive .* waiting 1$'
}

@test "list PATTERN matches KEY as a glob, and --prefix is honoured" {
	run -0 redlock-cli acquire deploy-a
	run -0 redlock-cli acquire deploy-b
	run -0 redlock-cli acquire nightly
	run -0 redlock-cli --prefix 'app*:' acquire deploy-c
	run -0 redlock-cli list 'deploy-*'
	[ "${#lines[@]}" -eq 2 ]
	assert_line -n 0 --regexp '^deploy-a exclusive '
	assert_line -n 1 --regexp '^deploy-b exclusive '
	# Under a prefix KEY is shown without it, and nothing else is seen;
	# the prefix's own '*' is no glob.
	run -0 redlock-cli --prefix 'app*:' list
	[ "${#lines[@]}" -eq 1 ]
	assert_line -n 0 --regexp '^deploy-c exclusive '
	run -0 redlock-cli --prefix 'ap*:' list
	[ "${#lines[@]}" -eq 0 ]
	# Without a prefix the prefixed lock is a lock like any other.
	run -0 redlock-cli list 'app*'
	assert_line -n 0 --regexp '^app\*:deploy-c exclusive '
}

@test "list --json prints one JSON array of status --json objects" {
	run -0 redlock-cli acquire a -t 20s
	run -0 redlock-cli acquire s --limit 2
	run --separate-stderr redlock-cli list --json
	assert_success
	printf '%s\n' "$output" | python3 -m json.tool >/dev/null
	[ "${#lines[@]}" -eq 1 ]
	python3 - "$output" <<'PY'
import json, sys
v = json.loads(sys.argv[1])
assert isinstance(v, list) and len(v) == 2, v
a, s = v
assert a["key"] == "a" and a["held"] and a["mode"] == "exclusive", a
assert a["waiting"] == 0 and a["fence"] > 0 and a["token"].endswith("..."), a
assert s["key"] == "s" and s["mode"] == "semaphore" and s["limit"] == 2, s
assert len(s["holders"]) == 1 and "pid" in s["holders"][0], s
PY
	# The same object as status --json, but for the TTL left.
	run -0 redlock-cli status a --json
	local st=$output
	run -0 redlock-cli list a --json
	[ "$(sed 's/"ttl_ms":[0-9]*//g' <<<"${output:1:-1}")" = "$(sed 's/"ttl_ms":[0-9]*//g' <<<"$st")" ]
}

@test "list with nothing held prints nothing and exits 0, also with --json" {
	run --separate-stderr redlock-cli list
	assert_success
	assert_output ''
	[ -z "$stderr" ]
	run -0 redlock-cli list --json
	assert_output '[]'
}

@test "list is read only and uses SCAN, never KEYS" {
	run -0 redlock-cli acquire a
	rcli main CONFIG RESETSTAT >/dev/null
	local before
	before=$(rcli main DBSIZE)
	run -0 redlock-cli list
	[ "$(rcli main DBSIZE)" = "$before" ]
	run -0 rcli main INFO commandstats
	assert_output --partial 'cmdstat_scan:'
	refute_output --partial 'cmdstat_keys:'
	refute_output --regexp 'cmdstat_(set|del|hset|pexpire|zadd):'
}

@test "list on a quorum of three with one server down still lists every lock, and marks where servers disagree" {
	local u=(-u "$(qurl q1)" -u "$(qurl q2)" -u "$(qurl q3)")
	run -0 redlock-cli "${u[@]}" acquire a -t 20s
	run -0 redlock-cli "${u[@]}" acquire b -t 20s
	# c is held on q1 alone: no majority, not a lock.
	run -0 redlock-cli -u "$(qurl q1)" acquire c -t 20s
	redis_stop q3
	run --separate-stderr redlock-cli "${u[@]}" list
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	assert_line -n 0 --regexp '^a exclusive .* waiting 0$'
	assert_line -n 1 --regexp '^b exclusive .* waiting 0$'
	# Back, but empty: held on a majority and not on q3, marked.
	redis_start q3
	run -0 redlock-cli "${u[@]}" list
	[ "${#lines[@]}" -eq 2 ]
	assert_line -n 1 --regexp '^b exclusive .* \(servers disagree\)$'
	run -0 redlock-cli "${u[@]}" list --json
	printf '%s\n' "$output" | python3 -m json.tool >/dev/null
	# Two of three down: no majority, 69.
	redis_stop q2
	redis_stop q3
	run --separate-stderr redlock-cli "${u[@]}" list
	assert_failure 69
}

@test "list on a Cluster of three masters lists the locks of every master" {
	local seed="redis+cluster://127.0.0.1:$(node_port c1)" k n owners=
	for n in $NODES; do
		ncli "$n" FLUSHALL >/dev/null
	done
	for k in a b c nightly; do
		run -0 redlock-cli -u "$seed" acquire "$k" -t 20s
	done
	# The keys live on more than one master (checked, not assumed).
	for n in $NODES; do
		[ "$(ncli "$n" DBSIZE)" -gt 0 ] && owners+=x
	done
	[ "${#owners}" -ge 2 ]
	for u in "$seed" "redis://127.0.0.1:$(node_port c2)"; do
		run --separate-stderr redlock-cli -u "$u" list
		assert_success
		[ "${#lines[@]}" -eq 4 ]
		assert_line -n 0 --regexp '^a exclusive '
		assert_line -n 1 --regexp '^b exclusive '
		assert_line -n 2 --regexp '^c exclusive '
		assert_line -n 3 --regexp '^nightly exclusive '
	done
}

@test "list --all also shows the names nobody holds that have a history, each with its last run; list alone does not" {
	run -0 redlock-cli run done-ok -- true
	run -4 redlock-cli run done-bad -- sh -c 'exit 4'
	run -0 redlock-cli acquire held -t 30s
	run -0 redlock-cli list
	assert_equal "${#lines[@]}" 1
	assert_line -n 0 --partial 'held exclusive '
	run -0 redlock-cli list --all
	assert_equal "${#lines[@]}" 3
	assert_line -n 0 --regexp "^done-bad free, last: failed, exit 4, $(hostname), ended [0-9T:Z-]+, held [0-9.]+m?s$"
	assert_line -n 1 --regexp "^done-ok free, last: ok, exit 0, "
	assert_line -n 2 --partial 'held exclusive '
	# The pattern and the prefix apply as to held locks.
	run -0 redlock-cli list --all 'done-o*'
	assert_output --partial 'done-ok free'
	assert_equal "${#lines[@]}" 1
	run -0 redlock-cli --prefix app: run p -- true
	run -0 redlock-cli --prefix app: list --all
	assert_output --regexp '^p free, last: ok, '
	run -0 redlock-cli list --all --json
	run -0 python3 -c '
import json, sys
v = {e["key"]: e for e in json.load(sys.stdin)}
assert v["done-bad"]["held"] is False and v["done-bad"]["last"]["exit"] == 4, v
assert v["held"]["held"] is True and "last" not in v["held"], v
# Without --prefix, every name is under the empty one: app:p too.
assert v["app:p"]["last"]["outcome"] == "ok" and "p" not in v, v' <<<"$output"
}
