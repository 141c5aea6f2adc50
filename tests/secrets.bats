#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Secrets (issue 32): no password reaches the server or any output.  The
# command a run records, and a manual acquire's caller's command line, are
# recorded masked (URL passwords, the values of --password-like options and
# of NAME=value words whose NAME has PASS, SECRET, TOKEN or KEY in it);
# --record-command full|name|none says how much is recorded at all.
#
# The server asks for a password, so the one in acquire's -u URL is the one
# that is really used.  Every secret of the tests has "S3cret" in it: none
# of the server's keys, none of the commands it was sent (its SLOWLOG, which
# logs every command here), and no output may hold that word.

load helpers
load syslog

PW=S3cretPW5
MASKED='hold-job --password=*** DB_PASSWORD=*** postgres://u:***@h/db --api-key ***'

setup_file() {
	redis_start_tcp main --requirepass "$PW" \
	    --slowlog-log-slower-than 0 --slowlog-max-len 100000
	# redlock-cli finds the password here, not on a command line; as the
	# default user, also under make test-acl, whose user has another.
	export REDLOCK_URL="redis://:$PW@127.0.0.1:$REDIS_PORT"
	unset REDLOCK_USER REDLOCK_PASSWORD
	mkdir -p "$BATS_FILE_TMPDIR/bin"
	# A job that holds the lock until $HOLD_FLAG exists; its arguments
	# are there only to be recorded.
	cat >"$BATS_FILE_TMPDIR/bin/hold-job" <<'EOF'
#!/bin/sh
while [ ! -e "$HOLD_FLAG" ]; do sleep 0.05; done
EOF
	chmod +x "$BATS_FILE_TMPDIR/bin/hold-job"
}

teardown_file() {
	redis_stop main
}

setup() {
	PATH="$BATS_FILE_TMPDIR/bin:$PATH"
	export HOLD_FLAG="$BATS_TEST_TMPDIR/go"
	scli FLUSHALL >/dev/null
	scli SLOWLOG RESET >/dev/null
}

teardown() {
	: >"$HOLD_FLAG"
	stop_bg_jobs
}

# scli ARGS...: redis-cli, with the password, against the test's server.
scli() {
	REDISCLI_AUTH=$PW redis-cli -s "$(redis_sock main)" "$@"
}

held() { [ "$(scli EXISTS "$1")" = 1 ]; }

# all_keys: every key on the server, by SCAN to the end of its cursor.
all_keys() {
	local cursor=0 reply
	while :; do
		reply=$(scli SCAN "$cursor" COUNT 1000) || return 1
		cursor=${reply%%$'\n'*}
		[[ $reply == *$'\n'* ]] && printf '%s\n' "${reply#*$'\n'}"
		[ "$cursor" = 0 ] && return 0
	done
}

# dump_server: every key on the server, its type and all it holds, read
# with the command of its type; a type that cannot be read is a failure.
dump_server() {
	local key type
	all_keys | while IFS= read -r key; do
		type=$(scli TYPE "$key")
		printf '== %s (%s)\n' "$key" "$type"
		case $type in
		string) scli GET "$key" ;;
		hash) scli HGETALL "$key" ;;
		zset) scli ZRANGE "$key" 0 -1 WITHSCORES ;;
		list) scli LRANGE "$key" 0 -1 ;;
		set) scli SMEMBERS "$key" ;;
		stream) scli XRANGE "$key" - + ;;
		*) echo "UNREADABLE TYPE $type" ;;
		esac
	done
}

# refute_secret WHAT: stdin holds no secret (nor a piece of one that
# starts the same).
refute_secret() {
	local text
	text=$(cat)
	if [[ $text == *S3cret* ]]; then
		printf '%s holds a secret:\n%s\n' "$1" "$text" | fail
	fi
	if [[ $text == *UNREADABLE* ]]; then
		printf '%s has a key of a type the test cannot read:\n%s\n' \
		    "$1" "$text" | fail
	fi
}

# refute_server_secret: neither the keys nor any command sent holds one.
refute_server_secret() {
	dump_server | refute_secret "the server's keys"
	scli SLOWLOG GET -1 | refute_secret "a command sent to the server"
}

@test "a run's command is recorded masked: no secret on the server or in any output, while held and after" {
	start_bg job -v -v run k -t 30s -- hold-job --password=S3cretPW1 \
	    DB_PASSWORD=S3cretPW2 postgres://u:S3cretPW3@h/db \
	    --api-key S3cretPW4
	wait_until held k
	refute_server_secret
	dump_server | grep -qF -- "$MASKED" ||
	    fail "the masked command is not on the server: $(dump_server)"

	run --separate-stderr redlock-cli status k
	assert_success
	refute_secret status <<<"$output$stderr"
	assert_line "command: $MASKED"

	run --separate-stderr redlock-cli status k --json
	assert_success
	refute_secret "status --json" <<<"$output$stderr"
	assert_output --partial "\"command\":\"$MASKED\""

	run --separate-stderr redlock-cli list
	assert_success
	refute_secret list <<<"$output$stderr"
	assert_output --partial "($MASKED, since"

	run --separate-stderr redlock-cli list --json
	assert_success
	refute_secret "list --json" <<<"$output$stderr"
	assert_output --partial "\"command\":\"$MASKED\""

	# The busy line names the holder and its command.
	run --separate-stderr redlock-cli -v -v acquire k -n
	assert_failure 1
	refute_secret "a busy acquire -v -v" <<<"$output$stderr"
	assert_output ''
	[[ $stderr == *"($MASKED, since"* ]] || fail "stderr: $stderr"

	: >"$HOLD_FLAG"
	wait_bg "$BG_PID"
	assert_equal "$BG_STATUS" 0
	refute_secret "run -v -v's stderr" <"$BATS_TEST_TMPDIR/job.err"
	refute_secret "run -v -v's stdout" <"$BATS_TEST_TMPDIR/job.out"
	refute_server_secret
	# The history keeps the masked command (issue 36), and only it.
	run --separate-stderr redlock-cli history k --json
	assert_success
	refute_secret "history --json" <<<"$output$stderr"
	assert_output --partial "\"command\":\"$MASKED\""
}

@test "run -c records the shell command masked, word by word" {
	start_bg job run k -c 'DB_PASSWORD=S3cretPW2 hold-job --token S3cretPW4 x'
	wait_until held k
	refute_server_secret
	run -0 redlock-cli status k
	refute_secret status <<<"$output"
	assert_line 'command: /bin/sh -c DB_PASSWORD=*** hold-job --token *** x'
}

@test "a manual acquire records its caller's command line with the URL password masked" {
	# The caller (bash) has the URL, password and all, in its argv.
	run --separate-stderr bash -c "redlock-cli -u redis://:$PW@127.0.0.1:$REDIS_PORT acquire m -t 30s; exit \$?"
	assert_success
	refute_secret "acquire's output" <<<"$output$stderr"
	refute_server_secret

	run --separate-stderr redlock-cli status m
	assert_success
	refute_secret status <<<"$output$stderr"
	assert_line --regexp "^command: manual: bash -c redlock-cli -u redis://:\*\*\*@127\.0\.0\.1:$REDIS_PORT acquire m -t 30s; exit \\\$\?$"

	run --separate-stderr redlock-cli status m --json
	assert_success
	refute_secret "status --json" <<<"$output$stderr"
	assert_output --partial '"command":"manual: bash -c redlock-cli -u redis://:***@127.0.0.1:'

	run --separate-stderr redlock-cli list
	assert_success
	refute_secret list <<<"$output$stderr"
	assert_output --partial '(manual: bash -c redlock-cli -u redis://:***@'

	run --separate-stderr redlock-cli list --json
	assert_success
	refute_secret "list --json" <<<"$output$stderr"
	assert_output --partial '"command":"manual: bash -c redlock-cli -u redis://:***@'

	run --separate-stderr redlock-cli -v acquire m -n
	assert_failure 1
	refute_secret "a busy acquire -v" <<<"$output$stderr"
	[[ $stderr == *'(manual: bash -c redlock-cli -u redis://:***@'* ]] ||
	    fail "stderr: $stderr"

	run --separate-stderr redlock-cli -v release m --force
	assert_success
	refute_secret "release --force" <<<"$output$stderr"
	[[ $stderr == *"lock 'm': forced release of "* ]] || fail "stderr: $stderr"
	refute_server_secret
}

@test "--record-command name records the program name only" {
	start_bg job run k --record-command name -- hold-job \
	    --password=S3cretPW1 plain-argument
	wait_until held k
	refute_server_secret
	run -0 redlock-cli status k
	assert_line 'command: hold-job'
	run -0 redlock-cli status k --json
	assert_output --partial '"command":"hold-job"'
	dump_server | refute_secret "the server's keys"
	run bash -c 'redlock-cli acquire m --record-command name; exit $?'
	assert_success
	run -0 redlock-cli status m
	assert_line 'command: manual: bash'
}

@test "--record-command none records no command at all" {
	start_bg job run k --record-command none -- hold-job \
	    --password=S3cretPW1 plain-argument
	wait_until held k
	run -0 redlock-cli status k
	refute_line --partial 'command'
	run -0 redlock-cli status k --json
	refute_output --partial '"command"'
	run -0 redlock-cli list
	refute_output --partial 'hold-job'
	dump_server | grep -q hold-job &&
	    fail "the command is on the server: $(dump_server)"
	run -0 redlock-cli acquire m --record-command none
	run -0 redlock-cli status m
	refute_line --partial 'command'
	run --separate-stderr redlock-cli -v acquire m -n
	assert_failure 1
	[[ $stderr != *'?'* && $stderr != *manual* ]] || fail "stderr: $stderr"
}

@test "--record-command full is the default, and a bad value exits 64 with one line" {
	start_bg job run k --record-command full -- hold-job --secret=S3cretPW1
	wait_until held k
	run -0 redlock-cli status k
	assert_line 'command: hold-job --secret=***'
	run --separate-stderr redlock-cli run k --record-command all -- true
	assert_failure 64
	assert_output ''
	assert_equal "$stderr" "redlock-cli: invalid --record-command 'all': not full, name or none"
	run --separate-stderr redlock-cli acquire k --record-command=
	assert_failure 64
	assert_equal "$stderr" "redlock-cli: invalid --record-command '': not full, name or none"
}

@test "--record-command is an option of acquire and run only" {
	run --separate-stderr redlock-cli status k --record-command name
	assert_failure 64
	assert_equal "${#stderr_lines[@]}" 1
}

@test "--syslog -v -v: no secret reaches syslog" {
	syslog_need
	local t="$BATS_TEST_TMPDIR/ns"
	: >"$HOLD_FLAG"
	run syslog_run "$t" "done:" redlock-cli --syslog -v -v run k -- \
	    hold-job --password=S3cretPW1 DB_PASSWORD=S3cretPW2 \
	    postgres://u:S3cretPW3@h/db --api-key S3cretPW4
	assert_success
	assert_equal "$(cat "$t/rc")" 0
	grep -q "done:" "$t/syslog" || fail "no audit line: $(cat "$t/syslog")"
	refute_secret syslog <"$t/syslog"
	refute_secret stderr <"$t/err"
	refute_server_secret
}

@test "a command that cannot start is named masked: a NAME=VALUE word first prints no secret, and says to put env first" {
	run -127 --separate-stderr redlock-cli run k -- REDISCLI_AUTH=S3cretX redis-cli PING
	assert_output ''
	assert_equal "$stderr" "redlock-cli: REDISCLI_AUTH=***: command not found (a variable for it? put env first: -- env NAME=VALUE CMD)"
	run -127 --separate-stderr redlock-cli run k -- no-such-command-here
	assert_equal "$stderr" "redlock-cli: no-such-command-here: command not found"
}
