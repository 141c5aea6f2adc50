#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Mutual exclusion under contention, observed from outside: a mkdir/rmdir
# probe that fails if two holders are ever inside at once.

load helpers

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
}

# worker N DIR: take the lock, go through the probe, give it back,
# recording what happened under DIR.
worker() {
	local n=$1 dir=$2 tok
	if ! tok=$(redlock-cli acquire k -w 30s 2>>"$dir/stderr"); then
		echo "$n" >>"$dir/acquire-failed"
		return
	fi
	echo "$n" >>"$dir/got"
	if mkdir "$dir/inside" 2>/dev/null; then
		sleep 0.01
		rmdir "$dir/inside"
	else
		echo "$n" >>"$dir/overlaps"
	fi
	redlock-cli release k --token "$tok" 2>>"$dir/stderr" ||
	    echo "$n" >>"$dir/release-failed"
}

count() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

@test "50 processes taking turns with acquire -w and release never overlap" {
	skip_if_slow
	local dir="$BATS_TEST_TMPDIR/probe" n start=$SECONDS
	local -a pids=()
	mkdir -p "$dir"
	for n in $(seq 1 50); do
		worker "$n" "$dir" 3>&- &
		pids+=($!)
	done
	for n in "${pids[@]}"; do
		wait "$n"
	done
	local took=$((SECONDS - start))
	[ "$(count "$dir/overlaps")" -eq 0 ] ||
	    fail "overlaps by: $(tr '\n' ' ' <"$dir/overlaps")"
	[ "$(count "$dir/acquire-failed")" -eq 0 ] ||
	    fail "acquire failed for: $(tr '\n' ' ' <"$dir/acquire-failed"): $(cat "$dir/stderr")"
	[ "$(count "$dir/release-failed")" -eq 0 ] ||
	    fail "release failed for: $(tr '\n' ' ' <"$dir/release-failed"): $(cat "$dir/stderr")"
	# Every process got the lock, exactly once.
	[ "$(count "$dir/got")" -eq 50 ] || fail "$(count "$dir/got") got it"
	[ "$(sort -n "$dir/got" | uniq | wc -l)" -eq 50 ]
	[ ! -s "$dir/stderr" ] || fail "stderr: $(cat "$dir/stderr")"
	((took < 60)) || fail "took ${took}s"
	# Nothing is left behind but the fence counter (and, perhaps, a
	# wake-up list of the waiting mechanism).
	refute_key main k
	refute_key main '{k}:meta'
	# (which expires a few seconds after the last TTL: issue 17).
	(($(rcli main GET '{k}:fence') > 0))
}

@test "of 50 simultaneous acquire -n on a free lock exactly one wins" {
	local dir="$BATS_TEST_TMPDIR/race" n
	local -a pids=()
	mkdir -p "$dir"
	for n in $(seq 1 50); do
		(
			if redlock-cli acquire k -n -q >"$dir/tok.$n" \
			    2>"$dir/err.$n"; then
				echo "$n" >>"$dir/won"
			else
				echo "$n $?" >>"$dir/lost"
			fi
		) 3>&- &
		pids+=($!)
	done
	for n in "${pids[@]}"; do
		wait "$n"
	done
	[ "$(count "$dir/won")" -eq 1 ] || fail "winners: $(cat "$dir/won")"
	[ "$(count "$dir/lost")" -eq 49 ]
	# Every loser exited 1 (busy), silently (-q).
	[ "$(awk '$2 != 1' "$dir/lost" | wc -l)" -eq 0 ] ||
	    fail "other exit codes: $(awk '$2 != 1' "$dir/lost")"
	[ -z "$(cat "$dir"/err.*)" ] || fail "stderr: $(cat "$dir"/err.*)"
	local winner
	winner=$(cat "$dir/won")
	[ "$(rcli main GET k)" = "$(cat "$dir/tok.$winner")" ]
}
