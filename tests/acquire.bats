#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# acquire KEY: token on stdout, the key layout, -t, -n, -w, -E, -q, --json,
# fencing, --token, --prefix, and keys with unusual bytes.

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
	redis_stop slots
}

setup() {
	redis_flush
}

# Calls of the lock scripts the server has run since the last RESETSTAT.
script_calls() {
	rcli main INFO commandstats | tr -d '\r' | awk -F'[=,:]' '
	    $1 == "cmdstat_evalsha" || $1 == "cmdstat_eval" { n += $3 }
	    END { print n + 0 }'
}

@test "acquire prints a 32-hex token and stores it as the key's value" {
	run --separate-stderr redlock-cli acquire k
	assert_success
	assert_output --regexp '^[0-9a-f]{32}$'
	[ -z "$stderr" ]
	[ "$(rcli main GET k)" = "$output" ]
}

@test "two acquisitions get different tokens" {
	run -0 redlock-cli acquire a
	local t1=$output
	run -0 redlock-cli acquire b
	[ "$t1" != "$output" ]
}

@test "acquire sets the lock's PTTL to the default TTL of 30s" {
	run -0 redlock-cli acquire k
	local t
	t=$(pttl k)
	((t > 28000 && t <= 30000))
}

@test "acquire -t 10s sets the PTTL to about 10 seconds" {
	run -0 redlock-cli acquire k -t 10s
	local t
	t=$(pttl k)
	((t > 9000 && t <= 10000))
}

@test "acquire accepts -t and --ttl in every spelling" {
	local spec lo hi t
	for spec in '-t 1500ms:1000:1500' '--ttl 2m:110000:120000' \
	    '--ttl=1.5:1000:1500' '-t3:2000:3000' '-t 1h:3500000:3600000'; do
		redis_flush
		lo=${spec#*:}
		hi=${lo#*:}
		lo=${lo%%:*}
		# shellcheck disable=SC2086
		run --separate-stderr redlock-cli acquire k ${spec%%:*}
		[ "$status" -eq 0 ] || fail "case '${spec%%:*}': exit $status: $stderr"
		t=$(pttl k)
		((t > lo && t <= hi)) ||
		    fail "case '${spec%%:*}': PTTL $t not in ($lo, $hi]"
	done
}

@test "acquire -n on a held lock exits 1 with the busy message and no stdout" {
	run -0 redlock-cli acquire k
	local held=$output
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 1
	assert_output ''
	assert_busy_line "k"
	[ "$(rcli main GET k)" = "$held" ]
}

@test "the busy line says when the holder's process no longer runs on this host, and only then" {
	# Taken by hand from a shell that has exited since: its pid is gone.
	sh -c 'redlock-cli acquire dead -t 1m >/dev/null' || fail "no lock"
	run --separate-stderr redlock-cli acquire dead -n
	assert_failure 1
	[[ $stderr =~ ^redlock-cli:\ lock\ \'dead\'\ is\ held\ by\ $(hostname)\ pid\ [0-9]+\ \(manual:\ .*,\ ttl\ [0-9.]+s,\ no\ such\ process\ on\ this\ host\ now\)$ ]] ||
	    fail "stderr: $stderr"
	# Taken from this test's own shell (not run's subshell), which runs.
	redlock-cli acquire alive -t 1m >/dev/null
	run --separate-stderr redlock-cli acquire alive -n
	assert_failure 1
	[[ $stderr != *"no such process"* ]] || fail "$stderr"
	assert_busy_line alive
}

@test "acquire -q -n on a held lock exits 1 silently" {
	run -0 redlock-cli acquire k
	run --separate-stderr redlock-cli -q acquire k -n
	assert_failure 1
	assert_output ''
	[ -z "$stderr" ]
	run --separate-stderr redlock-cli acquire k -n --quiet
	assert_failure 1
	[ -z "$stderr" ]
}

@test "acquire -E 7 exits 7 when the lock is busy" {
	run -0 redlock-cli acquire k
	run --separate-stderr redlock-cli acquire k -n -E 7
	assert_failure 7
	assert_output ''
	assert_busy_line "k"
	run --separate-stderr redlock-cli acquire k -n --conflict-exit-code 0
	assert_success
	assert_output ''
	assert_busy_line "k"
}

@test "acquire -w 300ms waits about 300ms, then exits 1" {
	skip_if_slow
	run -0 redlock-cli acquire k
	local start end
	start=$(now_ms)
	run --separate-stderr redlock-cli acquire k -w 300ms
	end=$(now_ms)
	assert_failure 1
	assert_output ''
	assert_busy_line k 300ms
	((end - start >= 300)) || fail "gave up after $((end - start))ms"
	((end - start < 1500)) || fail "gave up after $((end - start))ms"
}

@test "acquire -w 0 fails at once, like -n" {
	skip_if_slow
	run -0 redlock-cli acquire k
	local start end
	start=$(now_ms)
	run --separate-stderr redlock-cli acquire k -w 0
	end=$(now_ms)
	assert_failure 1
	assert_output ''
	assert_busy_line "k"
	((end - start < 500)) || fail "took $((end - start))ms"
}

@test "acquire -n on a free lock succeeds at once" {
	run --separate-stderr redlock-cli acquire k -n
	assert_success
	assert_output --regexp '^[0-9a-f]{32}$'
}

@test "acquire without -n or -w waits until the holder releases" {
	skip_if_slow
	run -0 redlock-cli acquire k
	local holder=$output pid start end
	rcli main CONFIG RESETSTAT >/dev/null
	redlock-cli acquire k >"$BATS_TEST_TMPDIR/tok" \
	    2>"$BATS_TEST_TMPDIR/err" 3>&- &
	pid=$!
	# It has tried at least twice: it is waiting, not failing.
	wait_until eval '[ "$(script_calls)" -ge 2 ]'
	kill -0 "$pid"
	start=$(now_ms)
	run -0 redlock-cli release k --token "$holder"
	wait_until eval '! kill -0 $pid 2>/dev/null' ||
	    { kill "$pid"; fail "the waiter did not get the lock"; }
	end=$(now_ms)
	wait "$pid"
	((end - start < 3000)) || fail "took $((end - start))ms after release"
	grep -Eqx '[0-9a-f]{32}' "$BATS_TEST_TMPDIR/tok"
	[ "$(rcli main GET k)" = "$(cat "$BATS_TEST_TMPDIR/tok")" ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}

@test "a waiter gets the lock when the holder's TTL expires" {
	skip_if_slow
	local start end
	start=$(now_ms)
	run -0 redlock-cli acquire k -t 600ms
	run --separate-stderr redlock-cli acquire k -w 5s
	end=$(now_ms)
	assert_success
	assert_output --regexp '^[0-9a-f]{32}$'
	[ "$(rcli main GET k)" = "$output" ]
	((end - start >= 500)) || fail "got it after $((end - start))ms"
	((end - start < 3000)) || fail "got it after $((end - start))ms"
}

@test "acquire --json prints key, token, ttl_ms, validity_ms and fence" {
	run --separate-stderr redlock-cli acquire k -t 5s --json
	assert_success
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp '^\{.*\}$'
	[ "$(json_field key)" = '"k"' ]
	local token validity
	token=$(json_field token)
	[[ $token =~ ^\"[0-9a-f]{32}\"$ ]]
	[ "$(rcli main GET k)" = "${token//\"/}" ]
	[ "$(json_field ttl_ms)" = 5000 ]
	validity=$(json_field validity_ms)
	((validity > 4000 && validity < 5000))
	# Fences start from the server's clock (ms), so that one that
	# restarts after its counter expired is above every earlier one.
	(($(json_field fence) > $(now_ms) - 60000))
	if have jq; then
		printf '%s\n' "$output" | jq -e '.key == "k" and
		    (.token | test("^[0-9a-f]{32}$")) and .ttl_ms == 5000 and
		    .validity_ms > 4000 and .fence > 1000000000000' >/dev/null
	fi
}

@test "acquire --json escapes the key as a JSON string" {
	need jq
	local key=$'q"uo\\te\nline'
	run --separate-stderr redlock-cli acquire "$key" --json
	assert_success
	[ "$(printf '%s\n' "$output" | jq -r .key)" = "$key" ]
}

@test "fences strictly increase across successive holders" {
	local n fence prev=0
	for n in 1 2 3 4 5; do
		run -0 redlock-cli acquire k --json
		fence=$(json_field fence)
		((fence > prev)) || fail "holder $n: fence $fence after $prev"
		prev=$fence
		token=$(json_field token)
		run -0 redlock-cli release k --token "${token//\"/}"
	done
}

@test "fences still increase when the previous lock expired" {
	run -0 redlock-cli acquire k -t 100ms --json
	local first
	first=$(json_field fence)
	wait_until eval '! key_exists main k'
	run -0 redlock-cli acquire k -t 100ms --json
	local second
	second=$(json_field fence)
	((second > first)) || fail "fence $second after $first"
	# And a waiter that got in by expiry, not by release.
	run -0 redlock-cli acquire k -w 5s --json
	local third
	third=$(json_field fence)
	((third > second)) || fail "fence $third after $second"
}

@test "acquire --token with the token that holds the lock refreshes its TTL" {
	run -0 redlock-cli acquire k -t 2s --json
	local token fence
	token=$(json_field token)
	token=${token//\"/}
	fence=$(json_field fence)
	run --separate-stderr redlock-cli acquire k --token "$token" -t 60s \
	    --json
	assert_success
	[ "$(json_field token)" = "\"$token\"" ]
	[ "$(json_field fence)" = "$fence" ]
	local t
	t=$(pttl k)
	((t > 50000 && t <= 60000)) || fail "PTTL $t"
	[ "$(rcli main HGET '{k}:meta' token)" = "$token" ]
	[ "$(rcli main GET k)" = "$token" ]
}

@test "acquire --token with another token does not take a held lock" {
	run -0 redlock-cli acquire k
	local held=$output
	run --separate-stderr redlock-cli acquire k --token mine -n
	assert_failure 1
	assert_output ''
	assert_busy_line "k"
	[ "$(rcli main GET k)" = "$held" ]
}

@test "acquire --token TOK on a free lock uses TOK as the value" {
	run --separate-stderr redlock-cli acquire k --token my-own-token
	assert_success
	assert_output my-own-token
	[ "$(rcli main GET k)" = my-own-token ]
}

@test "a lock set by another client (SET NX PX) blocks acquire" {
	rcli main SET k other PX 10000 >/dev/null
	run --separate-stderr redlock-cli acquire k -n
	assert_failure 1
	assert_output ''
	assert_stderr_line "redlock-cli: lock 'k' is held by another owner"
	[ "$(rcli main GET k)" = other ]
}

@test "another client's SET NX fails while we hold the lock" {
	run -0 redlock-cli acquire k
	[ -z "$(rcli main SET k other NX PX 10000)" ]
	[ "$(rcli main GET k)" = "$output" ]
}

@test "acquire creates {KEY}:fence and {KEY}:meta next to the lock" {
	run -0 redlock-cli acquire k -t 10s --json
	local token
	token=$(json_field token | tr -d '"')
	[ "$(rcli main TYPE k)" = string ]
	[ "$(rcli main GET '{k}:fence')" = "$(json_field fence)" ]
	[ "$(rcli main TYPE '{k}:meta')" = hash ]
	[ "$(rcli main HGET '{k}:meta' token)" = "$token" ]
	# Nothing else.
	[ "$(rcli main DBSIZE)" = 3 ]
	# A manual hold's metadata is its history entry if it expires (issue
	# 36), kept 7 days after the lock, as the fence counter is (issue 32:
	# fences never go back); a run's expires a few seconds after its lock
	# (issue 17: nothing of a name is left once nobody holds it).
	(($(pttl '{k}:meta') > 604800000 && $(pttl '{k}:meta') <= 604810000))
	(($(pttl '{k}:fence') > 604800000 && $(pttl '{k}:fence') <= 604810000))
}

@test "after a lock expires, its metadata is ignored by status and replaced whole by the next holder" {
	run -0 redlock-cli acquire k -t 200ms --json
	local first first_fence
	first=$(json_field token | tr -d '"')
	first_fence=$(json_field fence)
	wait_until key_gone main k
	key_exists main '{k}:meta'
	# Free, and no holder is made up from the stale hash.
	run --separate-stderr redlock-cli status k
	assert_failure 1
	refute_output --partial "${first:0:8}"
	# A foreign lock on the key is shown without the old holder's data.
	rcli main SET k foreign PX 5000 >/dev/null
	run --separate-stderr redlock-cli status k --json
	assert_success
	assert_output --partial '"token":"foreign"'
	refute_output --partial '"pid"'
	rcli main DEL k >/dev/null
	# The next holder's acquire writes every field: nothing of the first.
	run -0 redlock-cli acquire k --json
	[ "$(rcli main HGET '{k}:meta' token)" = "$(json_field token | tr -d '"')" ]
	(($(rcli main HGET '{k}:meta' fence) > first_fence))
	# token fence host pid command since ttl, listens, and the queue's
	# mode and rank: queue order at (queue-promises.bats)
	[ "$(rcli main HLEN '{k}:meta')" = 11 ]
	# A manual hold: it hears no cancel, and is marked as manual.
	[ "$(rcli main HGET '{k}:meta' listens)" = m ]
	run -0 redlock-cli release k --token "$(rcli main GET k)"
	start_bg r run k -t 30s -- sleep 30
	wait_until key_exists main k
	(($(pttl '{k}:meta') > 30000 && $(pttl '{k}:meta') <= 35000))
	[ "$(rcli main HGET '{k}:meta' listens)" = 0 ]
	kill "$BG_PID"
	wait_bg "$BG_PID"
}

@test "companion keys of a key with a hash tag use that tag" {
	run -0 redlock-cli acquire 'a{b}c'
	[ "$(rcli main GET 'a{b}c')" = "$output" ]
	key_exists main '{b}:a{b}c:fence'
	key_exists main '{b}:a{b}c:meta'
	[ "$(rcli main DBSIZE)" = 3 ]
}

@test "companion keys of a key with a stray brace get a generated tag" {
	local key names
	for key in 'x}y' '{x' 'a{}b'; do
		redis_flush
		run -0 redlock-cli acquire "$key"
		key_exists main "$key" || fail "'$key': no lock key"
		names=$(rcli main KEYS '*' | grep -vxF -- "$key" | sort)
		[ "$(printf '%s\n' "$names" | wc -l)" -eq 2 ] ||
		    fail "'$key': companions: $names"
		printf '%s\n' "$names" |
		    grep -Eq "^\{[a-z0-9]{1,3}\}:$(printf '%s' "$key" |
		    sed 's/[]{}[]/\\&/g'):fence\$" ||
		    fail "'$key': no fence key in: $names"
		printf '%s\n' "$names" |
		    grep -Eq "^\{[a-z0-9]{1,3}\}:$(printf '%s' "$key" |
		    sed 's/[]{}[]/\\&/g'):meta\$" ||
		    fail "'$key': no meta key in: $names"
	done
}

@test "every key of one lock is in the lock's Cluster hash slot" {
	# A cluster-enabled server computes CLUSTER KEYSLOT even without
	# slots assigned; a plain one refuses the command.
	redis_start_tcp slots --cluster-enabled yes \
	    --cluster-config-file "$BATS_FILE_TMPDIR/nodes-$$.conf" ||
	    skip "cannot start a cluster-enabled redis-server"
	REDLOCK_URL="unix://$(redis_sock main)"
	export REDLOCK_URL
	local key name slot bad=
	for key in k 'a{b}c' 'x}y' '{x' 'a{}b' 'sp ace' 'ü'; do
		redis_flush
		redlock-cli acquire "$key" >/dev/null || bad="$bad acquire '$key'"
		slot=$(rcli slots CLUSTER KEYSLOT "$key")
		while IFS= read -r name; do
			[ "$(rcli slots CLUSTER KEYSLOT "$name")" = "$slot" ] ||
			    bad="$bad '$name'"
		done < <(rcli main KEYS '*')
	done
	[ -z "$bad" ] || fail "not in the lock's slot:$bad"
}

@test "--prefix is prepended to the key, and to its companions" {
	run -0 redlock-cli --prefix app: acquire k
	[ "$(rcli main GET app:k)" = "$output" ]
	key_exists main '{app:k}:fence'
	key_exists main '{app:k}:meta'
	refute_key main k
	run -0 redlock-cli acquire k2 --prefix=app:
	key_exists main app:k2
}

@test "\$REDLOCK_PREFIX is prepended to the key, --prefix overrides it" {
	REDLOCK_PREFIX=env: run -0 redlock-cli acquire k
	[ "$(rcli main GET env:k)" = "$output" ]
	REDLOCK_PREFIX=env: run -0 redlock-cli --prefix opt: acquire k
	[ "$(rcli main GET opt:k)" = "$output" ]
	refute_key main env:opt:k
}

@test "keys with spaces, quotes, newlines and UTF-8 are used byte for byte" {
	local key
	for key in 'with space' "it's" 'dq"uote' $'new\nline' 'ünï €' \
	    '-dash' '*' 'tab	x'; do
		redis_flush
		run --separate-stderr redlock-cli acquire -- "$key"
		[ "$status" -eq 0 ] || fail "'$key': exit $status: $stderr"
		[ "$(rcli main GET "$key")" = "$output" ] ||
		    fail "'$key': not stored under its exact name"
		run --separate-stderr redlock-cli release --token "$output" \
		    -- "$key"
		[ "$status" -eq 0 ] || fail "'$key': release: $stderr"
	done
}

@test "the busy message for a key with a newline stays on one line" {
	local key=$'a\nb'
	run -0 redlock-cli acquire "$key"
	run --separate-stderr redlock-cli acquire "$key" -n
	assert_failure 1
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] ||
	    fail "stderr has several lines: $stderr"
	assert_busy_line "a?b"
}

@test "acquire -v says what it did on stderr, the token alone on stdout" {
	run --separate-stderr redlock-cli -v acquire k
	assert_success
	assert_output --regexp '^[0-9a-f]{32}$'
	printf '%s\n' "$stderr" |
	    grep -Eqx "redlock-cli: acquired lock 'k' in [0-9.]+m?s, fence [0-9]+"
}

@test "scripts go by the SHA-1 the server computes: after SCRIPT FLUSH only the first use of each is sent whole (EVAL)" {
	local tok i evals
	rcli main SCRIPT FLUSH >/dev/null
	rcli main CONFIG RESETSTAT >/dev/null
	for i in 1 2; do
		tok=$(redlock-cli acquire k -t 10s)
		redlock-cli extend k --token "$tok" -t 20s
		redlock-cli status k >/dev/null
		redlock-cli release k --token "$tok"
	done
	evals=$(rcli main INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_eval:calls=\([0-9]*\),.*/\1/p')
	# acquire, extend, status (its snapshot, then its waiters) and
	# release: five scripts, five EVALs; a SHA-1 that the server does not
	# know would make all ten EVALs.
	assert_equal "$evals" 5
}
