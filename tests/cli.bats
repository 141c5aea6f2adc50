#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Dispatch, help, version, and option parsing shared by every command.

load helpers

setup_file() {
	redis_start main
	export MAIN_URL=$REDLOCK_URL
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
}

# The usage line of a command, as help prints it: its first lines, up to
# the blank one, wrapped to 80 columns, joined again.
usage_of() {
	redlock-cli help "$1" | sed '/^$/,$d' | tr -s ' \n' ' ' | sed 's/ $//'
}

@test "--help prints the usage on stdout and exits 0" {
	local opt
	for opt in --help -h; do
		run --separate-stderr redlock-cli "$opt"
		[ "$status" -eq 0 ] || fail "$opt: exit $status"
		[ -z "$stderr" ] || fail "$opt: stderr: $stderr"
		assert_line -n 0 \
		    'usage: redlock-cli [global options] command KEY [options]'
		local verb
		for verb in acquire extend release run status help; do
			assert_line --regexp "^  $verb "
		done
	done
}

@test "--help works without a reachable server" {
	REDLOCK_URL=unix:///nonexistent.sock run -0 redlock-cli --help
}

@test "--version and -V print the name, version, hiredis and TLS library on stdout" {
	run --separate-stderr redlock-cli --version
	assert_success
	assert_output --regexp '^redlock-cli [0-9]+\.[0-9]+\.[0-9]+ \(hiredis [0-9]+\.[0-9]+\.[0-9]+, TLS: (libssl\.so[.0-9]* loadable|no libssl loadable|OpenSSL [0-9]+\.[0-9]+\.[0-9]+[a-z]* linked)\)$'
	[ -z "$stderr" ]
	# make test HIREDIS=1 says which hiredis it built against.
	if [ -n "${REDLOCK_TEST_HIREDIS:-}" ]; then
		assert_output --partial "(hiredis $REDLOCK_TEST_HIREDIS,"
	fi
	local version=$output
	run --separate-stderr redlock-cli -V
	assert_success
	assert_output "$version"
}

@test "help with no command prints the general usage" {
	run --separate-stderr redlock-cli help
	assert_success
	assert_line -n 0 \
	    'usage: redlock-cli [global options] command KEY [options]'
}

@test "help run prints the run usage on stdout" {
	run --separate-stderr redlock-cli help run
	assert_success
	[ -z "$stderr" ]
	local usage
	usage=$(usage_of run)
	[[ $usage == "usage: redlock-cli run KEY [-t TTL] "*" (-- CMD [ARG...] | -c 'SHELL COMMAND')" ]] ||
	    fail "not the run usage: $usage"
	assert_line --partial '[--renew DUR]'
	assert_line --partial '[--lost-signal SIG]'
}

@test "help COMMAND and COMMAND --help print the same text" {
	local verb
	for verb in acquire release extend run status; do
		run -0 redlock-cli help "$verb"
		local a=$output
		run -0 redlock-cli "$verb" --help
		[ "$output" = "$a" ] || fail "$verb --help differs from help $verb"
		run -0 redlock-cli "$verb" -h
		[ "$output" = "$a" ] || fail "$verb -h differs from help $verb"
	done
	run -0 usage_of acquire
	assert_line -n 0 --regexp '^usage: redlock-cli acquire KEY \[-t TTL\] \[-n \| -w WAIT\] \[-E CODE\] .*\[--json\]$'
}

@test "help with an unknown command exits 64" {
	run --separate-stderr redlock-cli help frob
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: unknown command 'frob'"
}

@test "help with two arguments exits 64" {
	run --separate-stderr redlock-cli help run extra
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: help: unexpected argument 'extra'"
}

@test "an unknown command exits 64 with one line" {
	run --separate-stderr redlock-cli frob k
	assert_failure 64
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: unknown command 'frob' (see 'redlock-cli --help')"
}

@test "commands are matched exactly, never by prefix: the nearest is only suggested" {
	run --separate-stderr redlock-cli acq k
	assert_failure 64
	assert_stderr_line \
	    "redlock-cli: unknown command 'acq': did you mean 'acquire'? (see 'redlock-cli --help')"
	run --separate-stderr redlock-cli stauts k
	assert_failure 64
	assert_stderr_line \
	    "redlock-cli: unknown command 'stauts': did you mean 'status'? (see 'redlock-cli --help')"
	run --separate-stderr redlock-cli ACQUIRE k
	assert_failure 64
	refute_key main k
}

@test "no command exits 64" {
	run --separate-stderr redlock-cli
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: missing command (see 'redlock-cli --help')"
	run --separate-stderr redlock-cli -q
	assert_failure 64
	assert_stderr_line "redlock-cli: missing command (see 'redlock-cli --help')"
}

@test "a global option works before the command" {
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli -u "$MAIN_URL" acquire k
	assert_success
	[ "$(rcli main GET k)" = "$output" ]
}

@test "a global option works after the command and after KEY" {
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli acquire k -u "$MAIN_URL"
	assert_success
	[ "$(rcli main GET k)" = "$output" ]
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli acquire --url "$MAIN_URL" k2
	assert_success
	key_exists main k2
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli status k --url="$MAIN_URL"
	assert_success
}

@test "global long options work after the command" {
	run -0 redlock-cli acquire k --prefix p: --quiet
	key_exists main p:k
	run --separate-stderr redlock-cli acquire k -n --prefix p: --quiet
	assert_failure 1
	[ -z "$stderr" ]
}

@test "command options work before and after KEY" {
	run -0 redlock-cli acquire -t 5s k --json
	assert_output --regexp '^\{"key":"k",.*"ttl_ms":5000,'
	redis_flush
	run -0 redlock-cli acquire k -t 5s --json
	assert_output --regexp '^\{"key":"k",.*"ttl_ms":5000,'
	redis_flush
	run -0 redlock-cli acquire --json -t5s k
	assert_output --regexp '^\{"key":"k",.*"ttl_ms":5000,'
	run -1 redlock-cli acquire -n k -q
}

@test "-- ends the options, so a key may start with a dash" {
	run -0 redlock-cli acquire -t 5s -- -k
	[ "$(rcli main GET -k)" = "$output" ]
	run --separate-stderr redlock-cli status -- -k
	assert_success
	assert_line -n 0 'key: -k'
}

@test "an unknown option exits 64 naming it" {
	run --separate-stderr redlock-cli acquire k --bogus
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: acquire: unknown option '--bogus' (see 'redlock-cli help acquire')"
	run --separate-stderr redlock-cli acquire k -Z
	assert_failure 64
	assert_stderr_line "redlock-cli: acquire: unknown option '-Z' (see 'redlock-cli help acquire')"
	run --separate-stderr redlock-cli acquire k -nZ
	assert_failure 64
	assert_stderr_line "redlock-cli: acquire: unknown option '-Z' (see 'redlock-cli help acquire')"
	run --separate-stderr redlock-cli --bogus acquire k
	assert_failure 64
	assert_stderr_line "redlock-cli: unknown option '--bogus' (see 'redlock-cli --help')"
	refute_key main k
}

@test "an option of another command is unknown here" {
	run --separate-stderr redlock-cli status k --token x
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: status: unknown option '--token' (see 'redlock-cli help status')"
	run --separate-stderr redlock-cli release k -t 5s --token x
	assert_failure 64
	assert_stderr_line "redlock-cli: release: unknown option '-t' (see 'redlock-cli help release')"
}

@test "a missing option argument exits 64 naming the short option" {
	run --separate-stderr redlock-cli acquire k -t
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: acquire: option '-t' requires an argument"
	run --separate-stderr redlock-cli -u
	assert_failure 64
	assert_stderr_line "redlock-cli: option '-u' requires an argument"
}

@test "a missing option argument exits 64 naming the long option as typed" {
	run --separate-stderr redlock-cli acquire k --token
	assert_failure 64
	assert_output ''
	assert_stderr_line \
	    "redlock-cli: acquire: option '--token' requires an argument"
	run --separate-stderr redlock-cli acquire k --ttl
	assert_failure 64
	assert_stderr_line \
	    "redlock-cli: acquire: option '--ttl' requires an argument"
	run --separate-stderr redlock-cli --prefix
	assert_failure 64
	assert_stderr_line "redlock-cli: option '--prefix' requires an argument"
}

@test "an argument given to a flag exits 64 naming the option" {
	run --separate-stderr redlock-cli acquire k --json=yes
	assert_failure 64
	assert_output ''
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	# The wording is getopt's business; naming the option is ours.
	[[ $stderr == "redlock-cli: acquire: "*"'--json"* ]] ||
	    fail "the message does not name '--json': $stderr"
	refute_key main k
}

@test "a missing KEY exits 64 with one short line that says where the usage is" {
	run --separate-stderr redlock-cli acquire
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" "redlock-cli: acquire: missing KEY (see 'redlock-cli help acquire')"
	run --separate-stderr redlock-cli status -q
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: status: missing KEY (see 'redlock-cli help status')"
	run --separate-stderr redlock-cli run -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: missing KEY (see 'redlock-cli help run')"
}

@test "a mistyped option gets the nearest spelling, the command's own first; -name is --name" {
	run --separate-stderr redlock-cli run k --tll 5s -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: unknown option '--tll': did you mean '--ttl'? (see 'redlock-cli help run')"
	run --separate-stderr redlock-cli --tll 5s run k -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: unknown option '--tll': did you mean '--ttl'? (see 'redlock-cli --help')"
	run --separate-stderr redlock-cli status k -json
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: status: unknown option '-json': did you mean '--json'? (see 'redlock-cli help status')"
	run --separate-stderr redlock-cli status k --jsno
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: status: unknown option '--jsno': did you mean '--json'? (see 'redlock-cli help status')"
	refute_key main k
}

@test "flock's habits: 'redlock-cli NAME -- CMD' says what to type, and a value after --cancel-running goes after '='" {
	run --separate-stderr redlock-cli nightly -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: unknown command 'nightly': to run a command under lock 'nightly', type 'redlock-cli run nightly -- CMD' (see 'redlock-cli --help')"
	run --separate-stderr redlock-cli run k --cancel-running 5s -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: unexpected argument '5s' (an argument of --cancel-running goes after '=': --cancel-running=5s)"
	refute_key main k
}

@test "-u without its URL does not swallow '--'" {
	run --separate-stderr redlock-cli run k -u -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: option '-u' requires an argument"
	run --separate-stderr redlock-cli run k --url=-- -- true
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: run: option '--url' requires an argument"
}

@test "flock's spellings: -o and --close, -e, --nb and --nonblocking, --timeout" {
	local t
	run -0 redlock-cli run k -o -e --nb -- sh -c 'echo ran'
	assert_output ran
	run -0 redlock-cli run k --close --nonblocking -- true
	refute_key main k
	t=$(redlock-cli acquire k)
	run -1 redlock-cli run k --nb -- echo ran-anyway
	refute_output --partial ran-anyway
	run -1 redlock-cli acquire k --nonblocking -e
	run -1 redlock-cli run k -e --timeout 0.2 -- echo ran-anyway
	refute_output --partial ran-anyway
	run -0 redlock-cli release k --token "$t"
	run --separate-stderr redlock-cli status k -o
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: status: unknown option '-o' (see 'redlock-cli help status')"
}

@test "an empty KEY exits 64" {
	run --separate-stderr redlock-cli acquire ''
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: acquire: KEY is empty"
}

@test "an extra argument exits 64 naming it" {
	run --separate-stderr redlock-cli acquire k extra
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: acquire: unexpected argument 'extra'"
	run --separate-stderr redlock-cli release k other --token x
	assert_failure 64
	assert_stderr_line "redlock-cli: release: unexpected argument 'other'"
	refute_key main k
}

@test "-n together with -w exits 64" {
	run --separate-stderr redlock-cli acquire k -n -w 1s
	assert_failure 64
	assert_output ''
	assert_stderr_line "redlock-cli: acquire: -n and -w cannot be used together"
	run --separate-stderr redlock-cli acquire k -w 0 -n
	assert_failure 64
	assert_stderr_line "redlock-cli: acquire: -n and -w cannot be used together"
	refute_key main k
}

@test "a bad -E value exits 64" {
	local v
	for v in 256 -1 x 1.5 ''; do
		run --separate-stderr redlock-cli acquire k -n -E "$v"
		[ "$status" -eq 64 ] || fail "-E '$v': exit $status"
		assert_stderr_line \
		    "redlock-cli: invalid --conflict-exit-code '$v': not a number from 0 to 255"
	done
}

@test "usage errors do not contact the server" {
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli acquire k --bogus
	assert_failure 64
	assert_stderr_line "redlock-cli: acquire: unknown option '--bogus' (see 'redlock-cli help acquire')"
}

# --- standard descriptors closed by the caller ---------------------------

# Error replies Redis has sent since CONFIG RESETSTAT, other than
# NOSCRIPT (a script's first use): bytes of ours read as a command show
# up here as "ERR unknown command".
errors_since_reset() {
	rcli main INFO errorstats | tr -d '\r' | grep '^errorstat_' |
	    grep -v '^errorstat_NOSCRIPT:' || true
}

@test "with standard output closed, acquire gives the lock back and exits 69, and Redis gets nothing of ours" {
	rcli main CONFIG RESETSTAT >/dev/null
	run --separate-stderr bash -c 'redlock-cli acquire k >&-'
	assert_equal "$status" 69
	assert_equal "$stderr" \
	    'redlock-cli: cannot write to standard output: Bad file descriptor'
	key_gone main k
	assert_equal "$(errors_since_reset)" ''
}

@test "with standard error closed, a message goes nowhere, not into the Redis connection" {
	[ "${REDLOCK_TEST_VALGRIND:-0}" != 1 ] ||
	    skip "valgrind reports on standard error, and exits 127 without it"
	run --separate-stderr redlock-cli acquire k -t 30s
	assert_success
	rcli main CONFIG RESETSTAT >/dev/null
	run bash -c 'redlock-cli acquire k -n 2>&-'
	assert_equal "$status" 1
	assert_equal "$(errors_since_reset)" ''
	# And run's command gets standard error closed, as run was given it.
	redis_flush
	run bash -c 'redlock-cli run k -- sh -c "[ -e /proc/self/fd/2 ] && echo open || echo closed" 2>&-'
	assert_success
	assert_output closed
	assert_equal "$(errors_since_reset)" ''
}
