#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Help (issue 18): `help COMMAND` and `COMMAND --help` for every command,
# generated from the command and option tables, wrapped to 80 columns;
# `help` alone; one-line usage errors that point at `help COMMAND`; an
# option of a command given before the command; the variable named in a
# bad URL list.  No server: none of this may need one.

load helpers

# waiting_options: the lines of the options that acquire and run share.
waiting_options() {
	cat <<'EOF'
  -t, --ttl TTL           the lock expires TTL after it is taken or extended
                          (default: 30s)
  -n, --nonblock          fail at once if the lock is busy
  -w, --wait WAIT         give up after WAIT; -w 0 is -n
                          (default: wait until it is free)
  -E, --conflict-exit-code CODE
                          exit status when the lock is busy, 0 to 255
                          (default: 1)
EOF
}

# help_end EXAMPLE: how the help of every command ends.
help_end() {
	cat <<'EOF'
  -h, --help              print the help and exit
and the global options, before or after the command: see 'redlock-cli help'

example:
EOF
	printf '  %s\n' "$1"
}

# expected_help VERB: the exact text of `redlock-cli help VERB`.
# shellcheck disable=SC2016 # the examples are printed, not expanded
expected_help() {
	case $1 in
	acquire)
		cat <<'EOF'
usage: redlock-cli acquire KEY [-t TTL] [-n | -w WAIT] [-E CODE] [--token TOK]
                           [-s | -x] [--limit N] [--fair] [--queue MODE]
                           [--order N] [--cancel-running[=GRACE]]
                           [--record-command HOW] [--json]

take the lock and print its token; wait for it unless -n or -w

options:
EOF
		waiting_options
		cat <<'EOF'
      --token TOK         the lock's token (default: a new random one)
      --json              print JSON
  -s, --shared            a shared hold: any number at once, none with -x
  -x, --exclusive         an exclusive hold (the default): no other holder
      --limit N           KEY is a semaphore of N slots, not a lock
      --fair              the same as --queue fifo
      --queue MODE        how waiters queue: any, fifo (by arrival) or latest
                          (default: any)
      --order N           rank waiters by N, not by arrival (e.g. a pipeline id)
      --cancel-running[=GRACE]
                          stop an older running holder, SIGKILL after GRACE
                          (default: 10s)
      --record-command HOW
                          full (secrets masked), name or none: what status shows
                          of the command line (default: full)
EOF
		help_end 'TOKEN=$(redlock-cli acquire deploy -t 10m -w 30s)' ;;
	release)
		cat <<'EOF'
usage: redlock-cli release KEY [--token TOK | --force] [--limit N]

release the lock held by TOK; exit 3 if TOK does not hold it

options:
      --token TOK         the lock's token (default: $REDLOCK_TOKEN)
      --force             remove whoever holds KEY (an operator's release)
      --limit N           KEY is a semaphore of N slots, not a lock
EOF
		help_end 'redlock-cli release deploy --token "$TOKEN"' ;;
	extend)
		cat <<'EOF'
usage: redlock-cli extend KEY [--token TOK] [-t TTL] [--limit N]

give the lock held by TOK a new TTL; exit 3 if TOK does not hold it

options:
      --token TOK         the lock's token (default: $REDLOCK_TOKEN)
  -t, --ttl TTL           the lock expires TTL after it is taken or extended
                          (default: 30s)
      --limit N           KEY is a semaphore of N slots, not a lock
EOF
		help_end 'redlock-cli extend deploy --token "$TOKEN" -t 10m' ;;
	run)
		cat <<'EOF'
usage: redlock-cli run KEY [-t TTL] [-n | -w WAIT] [-E CODE] [-s | -x]
                       [--limit N] [--fair] [--renew DUR] [--queue MODE]
                       [--order N] [--skip-outdated] [--cancel-running[=GRACE]]
                       [--lost-signal SIG] [--kill-after DUR]
                       [--lost-exit-code N] [--superseded-exit-code N]
                       [--outdated-exit-code N] [--cancelled-exit-code N]
                       [--release-on-exit] [--jitter DUR] [--min-hold DUR]
                       [--record-command HOW] [--metrics-file PATH]
                       (-- CMD [ARG...] | -c 'SHELL COMMAND')

hold the lock while CMD runs, renewing it; exit with CMD's status

options:
EOF
		waiting_options
		cat <<'EOF'
      --renew DUR         renew the lock every DUR (default: a third of the TTL)
      --lost-signal SIG   the signal CMD gets when the lock is lost
                          (default: TERM)
      --kill-after DUR    SIGKILL DUR after --lost-signal
                          (default: when the lock expires)
      --lost-exit-code N  exit status when the lock was lost (default: 75)
      --jitter DUR        first sleep a random time up to DUR (default: 0)
      --min-hold DUR      hold the lock DUR at least, even if CMD ends sooner
                          (default: 0)
  -c, --command STRING    run /bin/sh -c STRING instead of -- CMD
  -s, --shared            a shared hold: any number at once, none with -x
  -x, --exclusive         an exclusive hold (the default): no other holder
      --limit N           KEY is a semaphore of N slots, not a lock
      --fair              the same as --queue fifo
      --release-on-exit   release when CMD exits, not when all it started have
      --queue MODE        how waiters queue: any, fifo (by arrival) or latest
                          (default: any)
      --order N           rank waiters by N, not by arrival (e.g. a pipeline id)
      --skip-outdated     exit 81 if an order > N already ran (needs --order)
      --cancel-running[=GRACE]
                          stop an older running holder, SIGKILL after GRACE
                          (default: 10s)
      --superseded-exit-code N
                          exit status when a newer waiter came first
                          (default: 80)
      --outdated-exit-code N
                          exit status when a newer order already ran
                          (default: 81)
      --cancelled-exit-code N
                          exit status when a newer run cancelled CMD
                          (default: 82)
      --record-command HOW
                          full (secrets masked), name or none: what status shows
                          of the command line (default: full)
      --metrics-file PATH
                          at the end, write Prometheus metrics of the runs to
                          PATH (default: $REDLOCK_METRICS_FILE)
EOF
		help_end 'redlock-cli run nightly-backup -t 5m -n -- /usr/local/bin/backup' ;;
	status)
		cat <<'EOF'
usage: redlock-cli status KEY [--limit N] [--json]

show who holds the lock; exit 0 if it is held, 1 if it is free

options:
      --json              print JSON
      --limit N           KEY is a semaphore of N slots, not a lock
EOF
		help_end 'redlock-cli status deploy --json' ;;
	help)
		cat <<'EOF'
usage: redlock-cli help [COMMAND]

print the help of COMMAND, or list the commands

options:
EOF
		help_end 'redlock-cli help run' ;;
	*)
		return 1 ;;
	esac
}

# expected_list: the exact text of `redlock-cli help`.
expected_list() {
	cat <<'EOF'
usage: redlock-cli [global options] command KEY [options]

commands:
  acquire  take the lock and print its token; wait for it unless -n or -w
  extend   give the lock held by TOK a new TTL; exit 3 if TOK does not hold it
  history  show how the lock's last runs ended; exit 1 if none did
  list     show every held lock whose KEY matches PATTERN (a glob, default *)
  release  release the lock held by TOK; exit 3 if TOK does not hold it
  run      hold the lock while CMD runs, renewing it; exit with CMD's status
  status   show who holds the lock; exit 0 if it is held, 1 if it is free
  help     print the help of COMMAND, or list the commands

global options (before or after the command):
  -u, --url URL           a Redis server; repeat it for a Redlock quorum
                          (default: $REDLOCK_URL, else $REDIS_URL, else
                          redis://127.0.0.1:6379)
      --user NAME         the ACL user for URLs that name none
                          (default: $REDLOCK_USER)
      --password-file FILE
                          read the password from FILE (mode 0600)
                          (default: $REDLOCK_PASSWORD, else $REDISCLI_AUTH)
      --no-auth-warning   no warning for a password given in -u
      --connect-timeout DUR
                          give up connecting to a server after DUR (default: 1s)
      --io-timeout DUR    give up on a reply after DUR (default: 1s)
      --wait-replicas N   WAIT for N replicas after acquire and renewals
      --wait-timeout DUR  how long WAIT may take (default: 1s)
      --history-size N    keep each lock's last N runs (0: none) (default: 1000)
      --tls               TLS to every server, as rediss:// does
      --cacert FILE       trust the CAs in FILE (default: the system's)
      --cacertdir DIR     trust the CAs in DIR (openssl rehash)
      --cert FILE         the client certificate, with --key
      --key FILE          the private key of --cert
      --sni NAME          the TLS server name to send and verify
                          (default: the URL's host)
      --insecure          do not verify the servers' certificates
      --prefix STR        prepended to every key
                          (default: $REDLOCK_PREFIX, else none)
  -q, --quiet             no message when the lock is busy
  -v, --verbose           say what is done; twice: each Redis command too
      --syslog            log to syslog too
  -h, --help              print the help and exit
  -V, --version           print the version and exit

URL: redis://[[user]:pass@]host[:port][/db], rediss://..., unix:///path[?db=N],
     redis+cluster://h1:p1,h2:p2, redis-sentinel://h1:p1,h2:p2/master
DUR: 250ms, 30s, 5m, 1h, 1d, 1.5s, 1h30m, 1h 30m; a bare number is seconds

see 'redlock-cli help COMMAND' for the options of a command, and redlock-cli(1)
for the exit status and the environment
EOF
}

VERBS="acquire release extend run status help"

@test "help COMMAND prints its synopsis, options with their defaults and an example" {
	local verb
	for verb in $VERBS; do
		run --separate-stderr redlock-cli help "$verb"
		[ "$status" -eq 0 ] || fail "help $verb: exit $status"
		[ -z "$stderr" ] || fail "help $verb: stderr: $stderr"
		assert_equal "$output" "$(expected_help "$verb")"
	done
}

@test "COMMAND --help and COMMAND -h print what help COMMAND prints" {
	local verb opt
	for verb in $VERBS; do
		for opt in --help -h; do
			run --separate-stderr redlock-cli "$verb" "$opt"
			[ "$status" -eq 0 ] || fail "$verb $opt: exit $status"
			[ -z "$stderr" ] || fail "$verb $opt: stderr: $stderr"
			assert_equal "$output" "$(expected_help "$verb")"
		done
	done
	# After KEY and other options too, as any option may stand.
	run -0 redlock-cli run k -t 5s --help
	assert_equal "$output" "$(expected_help run)"
}

@test "help lists the commands, one line each, and the global options" {
	local opt
	run --separate-stderr redlock-cli help
	assert_success
	[ -z "$stderr" ]
	assert_equal "$output" "$(expected_list)"
	for opt in --help -h; do
		run -0 redlock-cli "$opt"
		assert_equal "$output" "$(expected_list)"
	done
}

@test "no line of any help is longer than 80 columns" {
	local verb long
	for verb in '' $VERBS; do
		# shellcheck disable=SC2086 # '' is help alone
		long=$(redlock-cli help $verb | awk 'length > 80')
		[ -z "$long" ] || fail "help $verb: lines over 80 columns:"$'\n'"$long"
	done
}

@test "a command's help lists every option the completion offers it" {
	local verb opt missing=""
	for verb in acquire release extend run status; do
		for opt in $(
		    # shellcheck source=../completions/redlock-cli.bash
		    source "$ROOT/completions/redlock-cli.bash"
		    _redlock_cli_verb_opts "$verb"); do
			# flock(1)'s spellings (--timeout for --wait, -e,
			# --nb, --nonblocking, -o, --close) are the man page's.
			case $opt in
			--timeout | -e | --nb | --nonblocking | -o | --close)
				continue ;;
			esac
			# An optional argument reads --opt[=ARG].
			redlock-cli help "$verb" | grep -qE -- "(^| )$opt( |,|\[|\$)" ||
			    missing+=" $verb:$opt"
		done
	done
	assert_equal "missing:$missing" "missing:"
}

@test "help with an unknown command exits 64 with one line" {
	run --separate-stderr redlock-cli help nosuch
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" "redlock-cli: unknown command 'nosuch'"
}

@test "help needs no server, nor a valid URL list" {
	REDLOCK_URL=' ' run -0 redlock-cli help run
	assert_equal "$output" "$(expected_help run)"
	REDLOCK_URL=' ' run -0 redlock-cli run --help
	assert_equal "$output" "$(expected_help run)"
	REDLOCK_URL=unix:///nonexistent.sock run -0 redlock-cli help
}

@test "run without a command exits 64 with one line pointing at help run" {
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli run k
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" \
	    "redlock-cli: run: no command given (see 'redlock-cli help run')"
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli run k -t 5s --
	assert_failure 64
	assert_equal "$stderr" \
	    "redlock-cli: run: no command given (see 'redlock-cli help run')"
}

# misplaced WORDS... EXPECTED: exit 64, nothing on stdout, one line.
misplaced() {
	local expected=${*: -1}
	REDLOCK_URL=unix:///nonexistent.sock \
	    run --separate-stderr redlock-cli "${@:1:$#-1}"
	[ "$status" -eq 64 ] || fail "${*:1:$#-1}: exit $status"
	[ -z "$output" ] || fail "${*:1:$#-1}: stdout: $output"
	assert_equal "$stderr" "redlock-cli: $expected"
}

@test "an option of a command given before the command says where it goes" {
	misplaced -t 5s run KEY -- true \
	    "-t is an option of 'run': put it after 'run KEY'"
	misplaced -q -t5s run KEY -- true \
	    "-t is an option of 'run': put it after 'run KEY'"
	misplaced -qt 5s run KEY -- true \
	    "-t is an option of 'run': put it after 'run KEY'"
	misplaced --ttl 5s acquire KEY \
	    "--ttl is an option of 'acquire': put it after 'acquire KEY'"
	misplaced --ttl=5s acquire KEY \
	    "--ttl is an option of 'acquire': put it after 'acquire KEY'"
	misplaced -n -u redis://h acquire KEY \
	    "-n is an option of 'acquire': put it after 'acquire KEY'"
	misplaced --json status KEY \
	    "--json is an option of 'status': put it after 'status KEY'"
	misplaced -c true run KEY \
	    "-c is an option of 'run': put it after 'run KEY'"
}

@test "an option of another command before the command is unknown to it" {
	misplaced --token x status KEY "status: unknown option '--token' (see 'redlock-cli help status')"
	# The option's argument is not taken for the command.
	misplaced --token run status KEY "status: unknown option '--token' (see 'redlock-cli help status')"
	misplaced -t 5s release KEY "release: unknown option '-t' (see 'redlock-cli help release')"
}

@test "an option of a command with no command at all says so" {
	misplaced -t 5s \
	    "-t is an option of a command: put it after the command and its KEY"
	misplaced --renew 1s -- run \
	    "--renew is an option of a command: put it after the command and its KEY"
}

@test "an unknown option before the command is still unknown" {
	misplaced --bogus run KEY -- true "unknown option '--bogus' (see 'redlock-cli --help')"
	misplaced -Z run KEY -- true "unknown option '-Z' (see 'redlock-cli --help')"
}

@test "a URL list in the environment that lists no URL names the variable" {
	run --separate-stderr env REDLOCK_URL=' ' redlock-cli status k
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" \
	    "redlock-cli: REDLOCK_URL: invalid URL list in the environment"
	run --separate-stderr env -u REDLOCK_URL REDIS_URL=', ' \
	    redlock-cli status k
	assert_failure 64
	assert_equal "$stderr" \
	    "redlock-cli: REDIS_URL: invalid URL list in the environment"
}
