#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# A misbehaving server (issue 7), tests/fakes/bad-redis.c: wrong types,
# partial replies, huge lengths, error replies of every class, closing or
# stalling mid-reply.  Every case must give one clear line on stderr,
# nothing on stdout, the documented exit status (contract: 69 unavailable
# and timeouts, 76 protocol, 77 auth), never a crash (status >= 128), and
# return within its I/O timeouts: --io-timeout 300ms here, and a failed
# acquire makes two requests (the attempt, then the compare-and-delete
# that makes sure nothing of it is left), so the bound is 2 x 300 ms plus
# 500 ms for starting processes.

load ../helpers
load faults

IO_MS=300
BOUND_MS=1100
# Under valgrind (make valgrind) starting a process takes seconds: the
# bounds widen, the exit statuses and messages still hold.
if [ "${REDLOCK_TEST_VALGRIND:-0}" = 1 ]; then
	BOUND_MS=30000
fi

setup_file() {
	build_fake bad-redis
}

setup() {
	D=$BATS_TEST_TMPDIR
	BG_PIDS=()
	BAD_PID=
	# The fake answers AUTH like anything else: send none unless asked.
	unset REDLOCK_USER REDLOCK_PASSWORD REDISCLI_AUTH REDLOCK_URL
	SOCK="$D/bad.sock"
	# The URL as an ERE, for the messages that name it.
	S=$(printf '%s' "unix://$SOCK" | sed 's/[][\.*^$+?(){}|]/\\&/g')
	write_child
}

teardown() {
	kill_bg_runs
	bad_stop
}

# bad_start [bad-redis options...]: a fresh fake on $SOCK, logging the
# requests it gets to $D/bad.log.
bad_start() {
	bad_stop
	rm -f "$D/bad.pid" "$D/bad.log"
	"$BATS_FILE_TMPDIR/bad-redis" "$@" "$SOCK" "$D/bad.pid" "$D/bad.log" \
	    </dev/null >/dev/null 2>"$D/bad.err" 3>&- &
	BAD_PID=$!
	wait_until test -s "$D/bad.pid" ||
	    fail "bad-redis did not start: $(cat "$D/bad.err")"
}

bad_stop() {
	[ -n "$BAD_PID" ] || return 0
	stop_pid "$BAD_PID"
	BAD_PID=
}

# requests CMD: how many CMD requests the fake got.
requests() { grep -cx "$1" "$D/bad.log" || true; }

# limited CMD...: CMD with at most VM_LIMIT_KB of address space when that
# is set, so that an allocation the reply bounds missed fails (hiredis then
# reports "Out of memory") rather than passing unseen on a machine with
# memory to spare.  ASan reserves terabytes of address space for its shadow
# and valgrind its own, so an ASan build (make sanitize) gets ASan's cap on
# a single allocation instead, and valgrind (make valgrind) no cap.
limited() {
	if [ -z "${VM_LIMIT_KB:-}" ] || is_slow; then
		"$@"
	elif ldd "$REDLOCK_BUILD/redlock-cli" 2>/dev/null | grep -q libasan; then
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=$((VM_LIMIT_KB / 1024))" \
		    "$@"
	else
		ulimit -v "$VM_LIMIT_KB" && "$@"
	fi
}

# hiredis_is_1x: is redlock-cli built against hiredis 1.x (RESP3 types)
# rather than 0.14?  Asked of the binary itself, which is linked
# statically and may be built against another hiredis than pkg-config's:
# 0.14 has no "_" (null) type.
hiredis_is_1x() {
	if [ -z "${HIREDIS_1X:-}" ]; then
		bad_start -r $'_\r\n'
		run --separate-stderr redlock-cli -u "unix://$SOCK" \
		    --io-timeout "${IO_MS}ms" acquire k -n
		case $stderr in
		*'got nil') HIREDIS_1X=1 ;;
		*'got "_" as reply type byte') HIREDIS_1X=0 ;;
		*) fail "hiredis_is_1x: cannot tell from: $stderr" ;;
		esac
	fi
	[ "$HIREDIS_1X" = 1 ]
}

# expect CODE ERE [redlock-cli args...]: run redlock-cli against the fake
# and check the exit status, that stdout is empty, that stderr is exactly
# one line "redlock-cli: " + ERE, and the time bound.  CASE names the case
# in failure messages.  With HANG_S set, a case that could loop for ever
# is stopped after HANG_S seconds, and fails, rather than hold the suite up.
expect() {
	local code=$1 re=$2 t0 lines
	local -a guard=()
	shift 2
	[ -z "${HANG_S:-}" ] || guard=(timeout -k 1 "$HANG_S")
	t0=$(now_ms)
	run --separate-stderr limited "${guard[@]}" redlock-cli \
	    -u "unix://$SOCK" --io-timeout "${IO_MS}ms" "$@"
	ELAPSED=$(($(now_ms) - t0))
	[ -z "${HANG_S:-}" ] || { [ "$status" -ne 124 ] && [ "$status" -ne 137 ]; } ||
	    fail "${CASE-}: still running after ${HANG_S}s; stderr: $stderr"
	[ "$status" -lt 128 ] ||
	    fail "${CASE-}: crashed, status $status; stderr: $stderr"
	[[ $stderr != *"Out of memory"* ]] ||
	    fail "${CASE-}: hiredis ran out of memory: $stderr"
	[ "$status" -eq "$code" ] ||
	    fail "${CASE-}: exit $status, expected $code; stderr: $stderr"
	[ -z "$output" ] || fail "${CASE-}: stdout not empty: $output"
	lines=$(printf '%s\n' "$stderr" | wc -l)
	[ "$lines" -eq 1 ] ||
	    fail "${CASE-}: $lines lines on stderr, expected 1: $stderr"
	printf '%s\n' "$stderr" | grep -qE -- "^redlock-cli: $re\$" ||
	    fail "${CASE-}: stderr: $stderr
expected (ERE): redlock-cli: $re"
	[ "$ELAPSED" -lt "$BOUND_MS" ] ||
	    fail "${CASE-}: took ${ELAPSED}ms, bound ${BOUND_MS}ms"
}

# acquire_case NAME CODE ERE [bad-redis options...]: `acquire k -n`
# against a fake started with those options.
acquire_case() {
	CASE=$1
	local code=$2 re=$3
	shift 3
	bad_start "$@"
	expect "$code" "$re" acquire k -n
}

# --- wrong types --------------------------------------------------------

@test "wrong reply types to acquire: exit 76 at once, naming the type expected and the type that came" {
	local want="$S: unexpected reply to acquire: expected array of 2 integers, got"
	acquire_case integer 76 "$want integer" -r $':1\r\n'
	acquire_case status 76 "$want status" -r $'+OK\r\n'
	acquire_case bulk 76 "$want string" -r $'$5\r\nhello\r\n'
	acquire_case nil 76 "$want nil" -r $'$-1\r\n'
	acquire_case empty-array 76 "$want array" -r $'*0\r\n'
	acquire_case three-integers 76 "$want array" -r $'*3\r\n:1\r\n:1\r\n:1\r\n'
	acquire_case two-strings 76 "$want array" \
	    -r $'*2\r\n$1\r\n1\r\n$1\r\n1\r\n'
	acquire_case nested 76 "$want array" -r $'*2\r\n*1\r\n:1\r\n:1\r\n'
}

@test "wrong reply types to release, extend and status: exit 76, naming the type expected and the type that came" {
	CASE=release
	bad_start -r $'+OK\r\n'
	expect 76 "$S: unexpected reply to release: expected integer, got status" \
	    release k --token t
	CASE=extend
	bad_start -r $'$1\r\n1\r\n'
	expect 76 "$S: unexpected reply to extend: expected integer, got string" \
	    extend k --token t
	CASE=status
	bad_start -r $':1\r\n'
	expect 76 "$S: unexpected reply to status: expected array of holders, metadata, count, limit, waiters, mode and queue, got integer" \
	    status k
	CASE='status-holder'
	bad_start -r $'*8\r\n*1\r\n*2\r\n:1\r\n:1\r\n*0\r\n:1\r\n:0\r\n:0\r\n$9\r\nexclusive\r\n$3\r\nany\r\n*0\r\n'
	expect 76 "$S: unexpected reply to status: expected token and TTL for each holder, got array" \
	    status k
}

# scan_reply VAR CURSOR: VAR = a SCAN reply with CURSOR and no keys (not
# through $(...), which would cut the final \n).
scan_reply() { printf -v "$1" '*2\r\n$%d\r\n%s\r\n*0\r\n' "${#2}" "$2"; }

@test "list against a server whose SCAN cursor is not a number: exit 76 at once, one line naming it" {
	local c r HANG_S=30
	for c in abc -1 '' 1.5 ' 7' 12x 0x10 18446744073709551616 \
	    99999999999999999999999; do
		CASE="cursor '$c'"
		scan_reply r "$c"
		bad_start -r "$r"
		expect 76 "list: $S returned a bad SCAN cursor '$(printf '%s' "$c" |
		    sed 's/[][\.*^$+?(){}|]/\\&/g')'" list
	done
	CASE='cursor with an escape sequence'
	scan_reply r $'\e[2J'
	bad_start -r "$r"
	expect 76 "list: $S returned a bad SCAN cursor '\\?\\[2J'" list
}

@test "list against a server that returns the same SCAN cursor again: exit 76 at once instead of scanning for ever" {
	local r f HANG_S=30
	CASE='the same cursor every time'
	scan_reply r 123
	bad_start -r "$r"
	expect 76 "list: $S returned SCAN cursor '123' again: the scan would loop" \
	    list
	CASE='a first cursor, then another one for ever'
	scan_reply f 5
	scan_reply r 18446744073709551615
	bad_start -f 1 -F "$f" -r "$r"
	expect 76 "list: $S returned SCAN cursor '18446744073709551615' again: the scan would loop" \
	    list
	# A scan that ends (cursor 0) is not bad: nothing is listed.
	CASE='a cursor, then 0'
	scan_reply f 17
	scan_reply r 0
	bad_start -f 1 -F "$f" -r "$r"
	run --separate-stderr timeout 5 redlock-cli -u "unix://$SOCK" \
	    --io-timeout "${IO_MS}ms" list
	assert_success
	assert_output ''
	[ -z "$stderr" ] || fail "$stderr"
}

@test "not RESP, negative lengths, RESP3, nesting too deep: exit 76 at once" {
	local pe="$S: protocol error:"
	acquire_case not-resp 76 "$pe Protocol error, got \"h\" as reply type byte" \
	    -r $'hello\r\n'
	# An HTTP server's answer: the port is wrong, and the line says so.
	acquire_case http 76 "$pe Protocol error, got \"H\" as reply type byte \\(an HTTP server, not Redis or Valkey\\? check the port\\)" \
	    -r $'HTTP/1.1 400 Bad Request\r\n\r\n'
	acquire_case html 76 "$pe Protocol error, got \"<\" as reply type byte \\(an HTTP server, not Redis or Valkey\\? check the port\\)" \
	    -r $'<html>\r\n'
	if hiredis_is_1x; then
		acquire_case resp3-boolean 76 "$S: unexpected reply to acquire: expected array of 2 integers, got other" \
		    -r $'#t\r\n'
	else
		acquire_case resp3-boolean 76 "$pe Protocol error, got \"#\" as reply type byte" \
		    -r $'#t\r\n'
	fi
	acquire_case negative-bulk 76 "$pe Bulk string length out of range" \
	    -r $'$-5\r\n'
	acquire_case negative-multibulk 76 "$pe Multi-bulk length out of range" \
	    -r $'*-5\r\n'
	# hiredis 0.14's own limit; with 1.x, which has none, ours.
	local deep="$pe No support for nested multi bulk replies with depth > 7"
	! hiredis_is_1x || deep="$pe reply nested too deep \\(more than 8 levels\\)"
	acquire_case too-deep 76 "$deep" \
	    -r $'*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n'
	acquire_case deep-enough 76 "$S: unexpected reply to acquire: expected array of 2 integers, got array" \
	    -r $'*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n'
}

# --- replies built to make us allocate gigabytes -------------------------
# An array header hidden where a scanner of our own would lose track of
# where the values start: after a bare \n (hiredis ends a line only at
# \r\n) or inside a RESP3 type that only hiredis 1.x reads.  Each must be
# refused before hiredis allocates the array (300 million slots: 2.4 GB),
# in 200 MB of address space.

@test "a bare \\n in a line hiding an array of 300 million: exit 76 'reply too large' (hiredis 0.14), never 'Out of memory', in 200 MB" {
	local want="$S: protocol error: reply too large \\(an array of 300000000 elements\\)"
	# hiredis 1.x refuses the bare \n itself.
	! hiredis_is_1x || want="$S: protocol error: Bad simple string value"
	VM_LIMIT_KB=200000
	acquire_case bare-newline-status 76 "$want" \
	    -r $'*2\r\n+\n$12\r\n*300000000\r\n' -a stall
	acquire_case bare-newline-error 76 "$want" \
	    -r $'*2\r\n-ERR\n$12\r\n*300000000\r\n' -a stall
	acquire_case bare-newline-nested 76 "$want" \
	    -r $'*1\r\n*2\r\n+\n$12\r\n*300000000\r\n' -a stall
}

@test "a RESP3 verbatim string hiding an array, map, set or push of 300 million: exit 76 'reply too large' (hiredis 1.x), never 'Out of memory', in 200 MB" {
	local t reply what want head=$'*2\r\n=13\r\ntxt:ab\r\n$30\r\n\r\n'
	VM_LIMIT_KB=200000
	for t in array map set push; do
		case $t in
		array) reply="$head*300000000"$'\r\n' what="an array of 300000000 elements" ;;
		map) reply="$head%300000000"$'\r\n' what="a map of 300000000 pairs" ;;
		set) reply="$head~300000000"$'\r\n' what="a set of 300000000 elements" ;;
		push) reply="$head>300000000"$'\r\n' what="a push of 300000000 elements" ;;
		esac
		if hiredis_is_1x; then
			want="$S: protocol error: reply too large \\($what\\)"
		else
			# hiredis 0.14 knows no "=": it refuses the type.
			want="$S: protocol error: Protocol error, got \"=\" as reply type byte"
		fi
		acquire_case "verbatim-$t" 76 "$want" -r "$reply" -a stall
	done
}

@test "an array of 2 million, nested arrays of 25000, an array of 2000 arrays of 2000, a map of 1.5 million pairs (hiredis 1.x): exit 76 'reply too large' as soon as it is known, never 'Out of memory', in 200 MB" {
	local big="$S: protocol error: reply too large" ints
	VM_LIMIT_KB=200000
	# 2 million slots and their replies: 150 MB, refused at the header,
	# not a timeout waiting for the elements.
	acquire_case array-2e6 76 "$big \\(an array of 2000000 elements\\)" \
	    -r $'*2000000\r\n' -a stall
	no_speed_bound || [ "$ELAPSED" -lt "$IO_MS" ] ||
	    fail "array-2e6: took ${ELAPSED}ms"
	# Each of these arrays fits alone; three of them do not.
	acquire_case nested-25000 76 "$big \\(more than 4 MiB once parsed\\)" \
	    -r $'*25000\r\n*25000\r\n*25000\r\n' -a stall
	# Neither do 2000 arrays of 2000 integers (4 million replies, 300
	# MB, from 16 MB of input): refused a few dozen arrays in.
	printf -v ints ':1\r\n%.0s' $(seq 2000)
	{
		printf '*2000\r\n'
		for _ in $(seq 40); do
			printf '*2000\r\n%s' "$ints"
		done
	} >"$D/arrays.resp"
	acquire_case arrays-2000x2000 76 "$big \\(more than 4 MiB once parsed\\)" \
	    -R "$D/arrays.resp" -a stall
	if hiredis_is_1x; then
		acquire_case map-1.5e6 76 "$big \\(a map of 1500000 pairs\\)" \
		    -r $'%1500000\r\n' -a stall
	fi
}

# --- partial replies, stalls, closes -----------------------------------

@test "a partial reply then silence, a stall mid-reply, a silent server, a trickling server: exit 69 'no reply within' after the I/O timeouts" {
	local want="$S: no reply within ${IO_MS}ms"
	acquire_case partial-then-silence 69 "$want" -r $'*2\r\n:1\r\n' -a stall
	acquire_case stall-mid-integer 69 "$want" -r $'*2\r\n:1\r\n:' -a stall
	acquire_case stall-mid-bulk 69 "$want" -r $'*2\r\n$10\r\nabc' -a stall
	acquire_case silent 69 "$want" -r '' -a stall
	# A byte every 100 ms does not push the deadline back.
	acquire_case trickle 69 "$want" -r $'*2\r\n:1\r\n:1\r\n' -d 100
	# Each attempt waited its full I/O timeout.
	[ "$ELAPSED" -ge $((2 * IO_MS)) ] || fail "trickle: only ${ELAPSED}ms"
}

# The model checker's network run (seed 306099875) saw `acquire -n` on a
# slow link end 3.87 s after its start: an attempt whose reply was lost is
# taken back on a new connection, and that give-back had a connect and an
# I/O timeout of its own.  It has one I/O timeout in all: a probe against a
# server that does not answer ends within its attempt and one more I/O
# timeout.  slow-accept.py answers nothing and makes the second connect
# take about 1 s (its SYN dropped once, as on a congested link).
@test "a probe whose reply is lost takes its attempt back within one more I/O timeout, even when the new connection is slow to connect" {
	local t0 port
	python3 "$ROOT/tests/fakes/slow-accept.py" "$D/port" "$D/accepted" 600 \
	    </dev/null >/dev/null 2>"$D/slow.err" 3>&- &
	BAD_PID=$!
	wait_until test -s "$D/port" || fail "slow-accept did not start: $(cat "$D/slow.err")"
	port=$(cat "$D/port")
	t0=$(now_ms)
	run --separate-stderr redlock-cli -u "redis://127.0.0.1:$port" \
	    --connect-timeout 3s --io-timeout "${IO_MS}ms" acquire k -n
	ELAPSED=$(($(now_ms) - t0))
	assert_equal "$status" 69
	assert_stderr_line "redlock-cli: redis://127.0.0.1:$port: no reply within ${IO_MS}ms"
	# Without the bound: IO_MS, about 1 s of connect, IO_MS.
	no_speed_bound || [ "$ELAPSED" -lt $((2 * IO_MS + 400)) ] ||
	    fail "took ${ELAPSED}ms with --io-timeout ${IO_MS}ms"
}

@test "a partial reply then close, a close mid-reply, a close before replying, a hang-up on connect: exit 69 'connection closed' at once" {
	local closed="$S: (connection closed by the server|read failed: Connection reset by peer|write failed: (Broken pipe|Connection reset by peer))"
	acquire_case partial-then-close 69 "$closed" -r $'*2\r\n:1\r\n' -a close
	acquire_case close-mid-integer 69 "$closed" -r $'*2\r\n:1' -a close
	acquire_case close-mid-bulk 69 "$closed" -r $'$10\r\nabc' -a close
	acquire_case close-before-reply 69 "$closed" -r '' -a close
	acquire_case hang-up 69 "$closed" -H
	no_speed_bound || [ "$ELAPSED" -lt "$IO_MS" ] ||
	    fail "hang-up: took ${ELAPSED}ms"
}

# --- huge lengths -------------------------------------------------------

@test "a bulk or multi-bulk length no reply can have (over 2 MB read, 4 MB parsed): exit 76 'reply too large' at once, whether or not bytes follow" {
	local big="$S: protocol error: reply too large"
	acquire_case bulk-1e12 76 "$big \\(a string of 999999999999 bytes\\)" \
	    -r $'$999999999999\r\n' -a stall
	acquire_case bulk-1e9-streaming 76 "$big \\(a string of 999999999 bytes\\)" \
	    -r $'$999999999\r\n' -x 9000000 -a stall
	# A count over 2^31 (0.14) or 2^32 (1.x): hiredis refuses it itself.
	acquire_case multibulk-1e12 76 "$S: protocol error: Multi-bulk length out of range" \
	    -r $'*999999999999\r\n' -a stall
	acquire_case multibulk-3e6 76 "$big \\(an array of 3000000 elements\\)" \
	    -r $'*3000000\r\n' -a stall
	no_speed_bound || [ "$ELAPSED" -lt "$IO_MS" ] ||
	    fail "multibulk-3e6: took ${ELAPSED}ms"
	# Two bulk strings that fit alone: 2 MB read is the end.
	{
		printf '*2\r\n'
		for _ in 1 2; do
			printf '$1500000\r\n'
			head -c 1500000 /dev/zero | tr '\0' x
			printf '\r\n'
		done
	} >"$D/bulks.resp"
	acquire_case bulks-2x1.5mb 76 "$big \\(more than 2 MiB\\)" \
	    -R "$D/bulks.resp" -a stall
	# A length that no server sends: hiredis refuses it (or we would).
	acquire_case bulk-leading-zero 76 "$S: protocol error: [Bb]ad bulk string length" \
	    -r $'$05\r\nab' -a stall
}

@test "a plausible length that never completes (a 1.5 MB bulk, a 1000-element array), then silence: exit 69 after the I/O timeouts" {
	local want="$S: no reply within ${IO_MS}ms"
	acquire_case bulk-1.5mb 69 "$want" -r $'$1500000\r\n' -x 1000000 -a stall
	acquire_case multibulk-1000 69 "$want" -r $'*1000\r\n:1\r\n' -a stall
}

@test "a 7 MB bulk string where acquire expects a pair, more bytes streaming after it: exit 76 within bounds" {
	acquire_case bulk-7mb 76 "$S: protocol error: reply too large \\(a string of 7000000 bytes\\)" \
	    -r $'$7000000\r\n' -x 9000000 -a stall
}

@test "a multi-bulk count of 100 million, then silence: exit 69 or 76 within the I/O timeouts, no stall while freeing it" {
	local t0
	CASE=multibulk-1e8
	bad_start -r $'*100000000\r\n' -a stall
	t0=$(now_ms)
	run --separate-stderr redlock-cli -u "unix://$SOCK" \
	    --io-timeout "${IO_MS}ms" acquire k -n
	ELAPSED=$(($(now_ms) - t0))
	[ "$status" -lt 128 ] || fail "crashed, status $status; stderr: $stderr"
	[ "$status" -eq 69 ] || [ "$status" -eq 76 ] ||
	    fail "exit $status, expected 69 or 76; stderr: $stderr"
	assert_output ""
	printf '%s\n' "$stderr" | grep -qE -- "^redlock-cli: $S: (no reply within ${IO_MS}ms|protocol error: .*)\$" ||
	    fail "stderr: $stderr"
	[ "$ELAPSED" -lt "$BOUND_MS" ] ||
	    fail "took ${ELAPSED}ms with --io-timeout ${IO_MS}ms (bound ${BOUND_MS}ms)"
}

# --- error replies ------------------------------------------------------

@test "NOAUTH and WRONGPASS: exit 77 'authentication required'; NOPERM: exit 77 'permission denied'" {
	acquire_case noauth 77 "$S: authentication required: NOAUTH Authentication required\\. \\(give the password in the URL, redis://:PASSWORD@host, or in --password-file FILE or REDLOCK_PASSWORD\\)" \
	    -r $'-NOAUTH Authentication required.\r\n'
	acquire_case wrongpass 77 "$S: authentication required: WRONGPASS invalid username-password pair or user is disabled\\. \\(give the password in the URL, redis://:PASSWORD@host, or in --password-file FILE or REDLOCK_PASSWORD\\)" \
	    -r $'-WRONGPASS invalid username-password pair or user is disabled.\r\n'
	acquire_case noperm 77 "$S: permission denied: NOPERM this user has no permissions to run the 'evalsha' command" \
	    -r $'-NOPERM this user has no permissions to run the \'evalsha\' command\r\n'
}

@test "WRONGPASS in answer to AUTH: exit 77 'authentication failed', the password is shown as ***" {
	local url re
	bad_start -r $'-WRONGPASS invalid username-password pair or user is disabled.\r\n'
	url="unix://:s3cret-pw@$SOCK"
	re=$(printf '%s' "unix://:***@$SOCK" | sed 's/[][\.*^$+?(){}|]/\\&/g')
	run --separate-stderr redlock-cli -u "$url" --no-auth-warning \
	    --io-timeout "${IO_MS}ms" acquire k -n
	assert_equal "$status" 77
	assert_output ""
	printf '%s\n' "$stderr" | grep -qxE -- "redlock-cli: $re: authentication failed: WRONGPASS invalid username-password pair or user is disabled\\. \\(the password came from the URL\\)" ||
	    fail "stderr: $stderr"
	[[ $stderr != *s3cret-pw* ]] || fail "the password was printed"
	assert_equal "$(head -n 1 "$D/bad.log")" AUTH
}

@test "LOADING, BUSY, TRYAGAIN, MASTERDOWN: retried within the I/O timeout, then exit 69 with the server's text" {
	local e
	for e in LOADING BUSY TRYAGAIN MASTERDOWN; do
		acquire_case "$e" 69 "$S: $e not now" -r "-$e not now"$'\r\n'
		[ "$(requests EVALSHA)" -ge 3 ] ||
		    fail "$e: not retried: $(tr '\n' ' ' <"$D/bad.log")"
	done
}

@test "MOVED to a dead node: exit 69 'cannot connect to' that node, at once" {
	acquire_case moved 69 "cannot connect to redis://127\\.0\\.0\\.1:[0-9]+: Connection refused" \
	    -r $'-MOVED 866 127.0.0.1:@DEADPORT@\r\n'
}

@test "ASK to a dead node: exit 69 'cannot connect to' that node, at once" {
	acquire_case ask 69 "cannot connect to redis://127\\.0\\.0\\.1:[0-9]+: Connection refused" \
	    -r $'-ASK 866 127.0.0.1:@DEADPORT@\r\n'
}

@test "WRONGTYPE, OOM, ERR, READONLY, an unknown error, NOSCRIPT even to EVAL: exit 76 with the server's text" {
	acquire_case wrongtype 76 "$S: WRONGTYPE Operation against a key holding the wrong kind of value" \
	    -r $'-WRONGTYPE Operation against a key holding the wrong kind of value\r\n'
	acquire_case oom 76 "$S: OOM command not allowed when used memory > 'maxmemory'\\." \
	    -r $'-OOM command not allowed when used memory > \'maxmemory\'.\r\n'
	acquire_case err 76 "$S: ERR something went wrong" \
	    -r $'-ERR something went wrong\r\n'
	acquire_case readonly 76 "$S: READONLY You can't write against a read only replica\\." \
	    -r $'-READONLY You can\'t write against a read only replica.\r\n'
	acquire_case unknown 76 "$S: XYZZY plugh" -r $'-XYZZY plugh\r\n'
	acquire_case noscript 76 "$S: NOSCRIPT No matching script\\." \
	    -r $'-NOSCRIPT No matching script.\r\n'
	[ "$(requests EVAL)" -ge 1 ] || fail "no EVAL after NOSCRIPT"
}

@test "an error reply with control characters and 3000 bytes: exit 76, one line, control characters replaced, cut short" {
	local long
	long=$(printf 'y%.0s' $(seq 3000))
	acquire_case control 76 "$S: ERR a\\?\\[31mred\\?bell" \
	    -r $'-ERR a\x1b[31mred\x07bell\r\n'
	acquire_case long 76 "$S: ERR y+(\\.\\.\\.)?" -r "-ERR $long"$'\r\n'
	[ "${#stderr}" -lt 1024 ] || fail "${#stderr} bytes of stderr"
}

@test "an empty error reply: exit 76 with a message that says what came" {
	acquire_case empty-error 76 "$S: .*[^ :].*" -r $'-\r\n'
}

# --- run ------------------------------------------------------------------

@test "run against a server that answers garbage: exit 76, the command never starts" {
	CASE=run-garbage
	bad_start -r $'hello\r\n'
	expect 76 "$S: protocol error: Protocol error, got \"h\" as reply type byte" \
	    run k -- sh "$D/child.sh" 1
	[ ! -e "$D/started" ] || fail "the command started"
}

# run_lost [bad-redis options...]: a run whose acquire the fake grants
# (its first request), and whose renewals get what the options say; the
# command must get SIGTERM once, before the 1 s TTL ends, and run must exit
# 75 with the lost-lock line (and at most one more line: the release that
# could not be done).
run_lost() {
	local why=$1 t0 lines
	shift
	slow_skip
	bad_start -n 1 "$@"
	t0=$(now_ns)
	start_bg runner -u "unix://$SOCK" --io-timeout "${IO_MS}ms" \
	    run k -t 1s -- sh "$D/child.sh" 10
	wait_bg "$BG_PID"
	[ "$BG_STATUS" -lt 128 ] || fail "crashed, status $BG_STATUS"
	assert_equal "$BG_STATUS" 75
	assert_equal "$(child_got_count TERM)" 1
	assert_lt "$(($(child_got_at) - t0))" 1000000000 "ns to SIGTERM"
	bg_stderr runner
	assert_stderr_count "redlock-cli: lock 'k' lost: $why; last confirmed [0-9.]+(ms|s) ago; sending SIGTERM to the command" 1
	lines=$(printf '%s\n' "$stderr" | wc -l)
	[ "$lines" -le 2 ] || fail "stderr: $stderr"
	assert_stderr_count "redlock-cli: .*" "$lines"
}

@test "run whose renewals get garbage: the lock is lost, the command gets SIGTERM before the TTL ends, exit 75" {
	LOST_WHY="(renewal failed|no renewal succeeded in time): $S: protocol error: .*"
	run_lost "$LOST_WHY" -r $'hello\r\n'
}

@test "run whose renewals stall mid-reply: the lock is lost, SIGTERM before the TTL ends, exit 75" {
	run_lost "(renewal failed|no renewal succeeded in time): $S: no reply within [0-9.]+(ms|s)" \
	    -r $'*2\r\n:1' -a stall
}

@test "run whose renewals get LOADING: retried, then the lock is lost, SIGTERM before the TTL ends, exit 75" {
	run_lost "(renewal failed|no renewal succeeded in time): $S: LOADING not now" \
	    -r $'-LOADING not now\r\n'
}

@test "run whose renewal says another owner holds it: lost at once, exit 75, and no release is attempted" {
	run_lost "another owner holds it" -r $':-1\r\n'
	# The acquire, one renewal, and the run's end in the lock's history
	# (history_note, issue 36): no release of someone else's lock.
	assert_equal "$(requests EVALSHA)" 3
}
