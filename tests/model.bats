#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The model checker (tests/model/, issue 33): its model reports each
# hand-written broken history under the right promise; every defect it or
# a person found is replayed from tests/model/regressions/ and the promise
# it broke holds now; and 30 s of random schedules with a fixed seed break
# no promise.  `make model` is the long run, `make model-ci` CI's leg.

load helpers

MODEL="$BATS_TEST_DIRNAME/model"
# The binary under test (make sanitize's, say), not necessarily the tree's.
BIN="$REDLOCK_BUILD/redlock-cli"

setup_file() {
	need python3 redis-server
}

setup() {
	# The model's bounds are times; memcheck makes every process slow.
	skip_if_slow
	export TMPDIR="$BATS_TEST_TMPDIR"
}

# replay NAME: run tests/model/regressions/NAME.json against the build.  A
# regression marked "open" is a defect not fixed yet: its replay must
# still break the promise (so the reproducer stays good), and this test
# fails once it is fixed, to have the mark taken away.
replay() {
	local f="$MODEL/regressions/$1.json" check
	check=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["check"], r.get("open", False))' "$f")
	run "$MODEL/check" --binary "$BIN" --replay "$f" --no-footprint --save "$BATS_TEST_TMPDIR"
	if [ "${check#* }" = True ]; then
		assert_failure 1
		assert_output --partial "VIOLATION ${check% *} "
	else
		assert_success
		assert_output --partial "0 distinct violations"
	fi
}

@test "the model reports each hand-written broken history under the promise it breaks, and an allowed one not at all" {
	run -0 python3 "$MODEL/selftest.py"
	assert_output --partial "0 of "
}

@test "regression: a probe does not supersede the queued latest waiter" {
	replay probe-supersedes-waiter
}

@test "regression: run -n --cancel-running is a usage error and cancels nobody" {
	replay probe-cancels-holder
}

@test "regression: a lower order's --cancel-running does not cancel a higher holder" {
	replay lower-order-cancels
}

@test "regression: a cancel after the command exited keeps the command's exit status" {
	replay late-cancel-status
}

@test "regression: a shared holder on a new name gets a fence above 0" {
	replay reader-fence-zero
}

@test "regression: a retry of the same order is not outdated" {
	replay same-order-outdated
}

@test "regression: an outdated run found after its wait says which order ran, never an empty line" {
	replay outdated-after-wait-message
}

@test "regression: release --force removes a quorum semaphore's slots without --limit" {
	replay quorum-force-semaphore
}

@test "regression: a command that ended while its guardian was stopped keeps its exit status when the guardian is killed" {
	replay guardian-stopped-exit
}

@test "regression: a waiting run whose guardian is stopped at the take renews the lock and runs the command once it is continued" {
	replay guardian-stopped-at-take
}

@test "regression: a shared probe of a fifo queue whose head was SIGKILLed does not take the free lock ahead of the waiters behind it" {
	replay fifo-shared-probe-behind-dead-head
}

@test "regression: a force heard together with the command's earlier end, redlock-cli stopped meanwhile, keeps the command's status" {
	replay force-while-stopped-after-end
}

@test "regression: a run forced, then its guardian killed before the command got the TERM, exits 75 as forced" {
	replay force-then-guardian-killed
}

@test "regression: a run killed after its command exited 0 may have written its record: a lower order's --skip-outdated exit 81 is allowed" {
	replay killed-after-record
}

@test "regression: runs forced between their take and their command's start, by a force begun as they began, exit 75" {
	replay force-at-start
}

@test "regression: a fifo reader of the same order as a writer queued before it waits behind that writer" {
	replay fifo-reader-tie-behind-writer
}

@test "30 s of random schedules (seed 20261205, kill and force nemeses) break no promise" {
	# CI's model leg runs the checker longer, on two seeds (.ci/run).
	[ -z "${REDLOCK_TEST_MODEL_LEG:-}" ] ||
	    skip "the model leg runs the checker (REDLOCK_TEST_MODEL_LEG)"
	run "$MODEL/check" --binary "$BIN" --seconds 30 --seed 20261205 --nemesis kill,force \
	    --shrink-budget 60 --save "$BATS_TEST_TMPDIR"
	assert_success
	assert_output --partial "0 distinct violations"
}
