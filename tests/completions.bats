#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# Shell completions: the bash function answers as the man page documents, the
# zsh and fish files parse, and the man page and the bash file list the same
# options.  Needs no Redis and no built binary.

# helpers: the assertion libraries and need; no server is started here.
load helpers

BASH_FILE="$ROOT/completions/redlock-cli.bash"
ZSH_FILE="$ROOT/completions/_redlock-cli"
FISH_FILE="$ROOT/completions/redlock-cli.fish"
MAN_FILE="$ROOT/man/redlock-cli.1"

setup() {
	# shellcheck source=../completions/redlock-cli.bash
	source "$BASH_FILE"
}

# complete_line LINE: call _redlock_cli as bash does with the cursor at the
# end of LINE (words split at blanks only; a trailing blank starts a new,
# empty word).
complete_line() {
	COMP_LINE=$1
	COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<<"$COMP_LINE"
	if [[ $COMP_LINE == *' ' ]]; then
		COMP_WORDS+=('')
	fi
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_redlock_cli
}

# complete_words LINE WORD...: the same, with COMP_WORDS given as bash splits
# LINE, at blanks and at the characters of COMP_WORDBREAKS such as ':' and '='.
complete_words() {
	COMP_LINE=$1
	COMP_POINT=${#COMP_LINE}
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_redlock_cli
}

reply() {
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

assert_reply() {
	assert_equal "$(reply)" "$1"
}

assert_reply_has() {
	local w
	for w in "${COMPREPLY[@]}"; do
		[[ $w == "$1" ]] && return 0
	done
	fail "'$1' is not among: ${COMPREPLY[*]}"
}

refute_reply_has() {
	local w
	for w in "${COMPREPLY[@]}"; do
		[[ $w == "$1" ]] && fail "'$1' should not be among: ${COMPREPLY[*]}"
	done
	return 0
}

# the long options named anywhere in the bash file, one a line
bash_long_options() {
	grep -v '^[[:space:]]*#' "$BASH_FILE" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

# the options, short and long, that the bash completion offers, one a line
bash_offered_options() {
	local verb
	{
		echo "$_redlock_cli_global"
		for verb in acquire release extend run status list history; do
			_redlock_cli_verb_opts "$verb"
		done
	} | tr -s ' \t' '\n' | grep -- '^-' | sort -u
}

@test "sourcing the bash file registers _redlock_cli for redlock-cli" {
	run complete -p redlock-cli
	assert_success
	assert_output 'complete -F _redlock_cli redlock-cli'
}

@test "an empty first word completes to the verbs, in table order" {
	complete_line 'redlock-cli '
	assert_equal "${COMPREPLY[*]}" 'acquire release extend run status list history help'
}

@test "a verb prefix completes to that verb" {
	complete_line 'redlock-cli ex'
	assert_reply 'extend'
}

@test "a dash before the verb offers the global options" {
	complete_line 'redlock-cli -'
	assert_reply_has --url
	assert_reply_has --syslog
	assert_reply_has -V
	refute_reply_has --json
}

@test "run --lo offers --lost-signal and --lost-exit-code" {
	complete_line 'redlock-cli run --lo'
	assert_reply '--lost-exit-code --lost-signal'
}

@test "run options are offered after the key too" {
	complete_line 'redlock-cli run nightly --min'
	assert_reply '--min-hold'
}

@test "run --rel offers --release-on-exit, and only run does" {
	complete_line 'redlock-cli run nightly --rel'
	assert_reply '--release-on-exit'
	complete_line 'redlock-cli acquire nightly --rel'
	assert_reply ''
}

@test "--lost-signal offers signal names" {
	complete_line 'redlock-cli run nightly --lost-signal '
	assert_reply_has TERM
	assert_reply_has KILL
	assert_reply_has USR1
}

@test "--lost-signal SIG offers signal names with the SIG prefix" {
	complete_line 'redlock-cli run nightly --lost-signal SIGT'
	assert_reply_has SIGTERM
	refute_reply_has TERM
}

@test "--lost-signal= offers signal names after the equals sign" {
	complete_words 'redlock-cli run --lost-signal=' \
	    redlock-cli run --lost-signal =
	assert_reply_has TERM
}

@test "--record-command is offered to acquire and run only, and offers full, name and none" {
	complete_line 'redlock-cli acquire k --rec'
	assert_reply --record-command
	complete_line 'redlock-cli run k --rec'
	assert_reply --record-command
	complete_line 'redlock-cli status k --rec'
	assert_reply ''
	complete_line 'redlock-cli run k --record-command '
	assert_reply 'full name none'
}

@test "fish and zsh offer full, name and none after --record-command" {
	need fish zsh
	run fish --no-config -c 'source $argv[1]; complete -C"redlock-cli run k --record-command " | string replace -r "\t.*" "" | sort' "$FISH_FILE"
	assert_success
	assert_output $'full\nname\nnone'
	# in lock_opts, which acquire and run share
	run sed -n '/^lock_opts=(/,/^)/p' "$ZSH_FILE"
	assert_line "  '--record-command=[what status shows of the command line]:how:(full name none)'"
}

# the URL schemes that src/url.c accepts, one a line ("redis", "rediss", ...)
src_url_schemes() {
	grep -oE 'strncmp\(str, "[a-z+-]+"' "$ROOT/src/url.c" |
	    sed 's/.*"\(.*\)"/\1/' | sort -u
}

@test "-u offers every URL scheme, in the man page's order" {
	complete_line 'redlock-cli -u '
	assert_equal "${COMPREPLY[*]}" \
	    'redis:// rediss:// unix:// redis-sentinel:// redis+cluster://'
	complete_line 'redlock-cli status k --url '
	assert_equal "${#COMPREPLY[@]}" 5
	assert_reply_has redis-sentinel://
	assert_reply_has redis+cluster://
}

@test "-u offers every scheme that src/url.c accepts" {
	local scheme count=0
	complete_line 'redlock-cli -u '
	while read -r scheme; do
		count=$((count + 1))
		assert_reply_has "$scheme://"
	done < <(src_url_schemes)
	[[ $count -ge 5 ]] || fail "only $count schemes found in src/url.c"
}

@test "-u with a prefix offers the matching schemes" {
	complete_line 'redlock-cli -u redis'
	assert_reply 'redis+cluster:// redis-sentinel:// redis:// rediss://'
	complete_line 'redlock-cli -u redis-'
	assert_reply 'redis-sentinel://'
	complete_line 'redlock-cli -u redis+'
	assert_reply 'redis+cluster://'
	complete_line 'redlock-cli -u rediss'
	assert_reply 'rediss://'
}

@test "-u after a colon offers the rest of the scheme" {
	complete_words 'redlock-cli -u redis:' redlock-cli -u redis :
	assert_reply '//'
	complete_words 'redlock-cli -u rediss:' redlock-cli -u rediss :
	assert_reply '//'
	complete_words 'redlock-cli -u redis-sentinel:' \
	    redlock-cli -u redis-sentinel :
	assert_reply '//'
	complete_words 'redlock-cli -u redis+cluster:' \
	    redlock-cli -u redis+cluster :
	assert_reply '//'
}

@test "a dash offers the connection, replica and TLS options before and after the verb" {
	local line opt
	for line in 'redlock-cli -' 'redlock-cli run k -' 'redlock-cli status k -'; do
		complete_line "$line"
		for opt in --user --wait-replicas --wait-timeout --tls --cacert \
		    --cacertdir --cert --key --sni --insecure; do
			assert_reply_has "$opt"
		done
	done
	complete_line 'redlock-cli --ca'
	assert_reply '--cacert --cacertdir'
	complete_line 'redlock-cli acquire k --wait-'
	assert_reply '--wait-replicas --wait-timeout'
}

@test "acquire - offers its own options, --json among them, and the global ones" {
	complete_line 'redlock-cli acquire -'
	assert_reply_has --json
	assert_reply_has --token
	assert_reply_has -n
	assert_reply_has --url
	refute_reply_has --lost-signal
}

@test "release - offers --token but not --json" {
	complete_line 'redlock-cli release k -'
	assert_reply_has --token
	refute_reply_has --json
	refute_reply_has --ttl
}

@test "status - offers --json but not --ttl" {
	complete_line 'redlock-cli status k -'
	assert_reply_has --json
	refute_reply_has --ttl
}

@test "acquire and run offer --limit and --fair" {
	local verb
	for verb in acquire run; do
		complete_line "redlock-cli $verb k -"
		assert_reply_has --limit
		assert_reply_has --fair
	done
	complete_line 'redlock-cli acquire k --f'
	assert_reply '--fair'
	complete_line 'redlock-cli run k --li'
	assert_reply '--limit'
}

@test "release, extend and status offer --limit but not --fair" {
	local verb
	for verb in release extend status; do
		complete_line "redlock-cli $verb k -"
		assert_reply_has --limit
		refute_reply_has --fair
	done
	complete_line 'redlock-cli status k --l'
	assert_reply '--limit'
}

@test "the number after --limit is not taken for the key" {
	complete_line 'redlock-cli run --limit 4 k --f'
	assert_reply '--fair'
	complete_line 'redlock-cli acquire --limit 4 --fair k --j'
	assert_reply '--json'
}

@test "global options after the verb do not hide it" {
	complete_line 'redlock-cli -q --prefix app: -u redis://h:6379 run k --jit'
	assert_reply '--jitter'
}

@test "help completes to the verbs" {
	complete_line 'redlock-cli help '
	assert_reply 'acquire extend history list release run status'
}

@test "history and list complete their options; history's -n takes a count, not a verb's option" {
	complete_line 'redlock-cli history k --'
	[[ " ${COMPREPLY[*]} " == *" --count "* && " ${COMPREPLY[*]} " == *" --json "* ]] ||
	    fail "history: ${COMPREPLY[*]}"
	[[ " ${COMPREPLY[*]} " == *" --history-size "* ]] || fail "no global: ${COMPREPLY[*]}"
	[[ " ${COMPREPLY[*]} " != *" --ttl "* ]] || fail "a lock's option: ${COMPREPLY[*]}"
	complete_line 'redlock-cli history k -n '
	assert_reply ''
	complete_line 'redlock-cli list --j'
	assert_reply '--json'
}

@test "-t completes to nothing" {
	complete_line 'redlock-cli -t '
	assert_reply ''
	complete_line 'redlock-cli acquire k -t '
	assert_reply ''
}

@test "options that take a duration, code, token, prefix or shell command complete to nothing" {
	local opt
	for opt in -t --ttl -w --wait --timeout --renew --kill-after --jitter \
	    --min-hold --connect-timeout --io-timeout -E --conflict-exit-code \
	    --lost-exit-code --token --prefix -c --command --limit --user \
	    --wait-replicas --wait-timeout --sni; do
		complete_line "redlock-cli run k $opt "
		assert_equal "$opt: $(reply)" "$opt: "
	done
}

@test "the key completes to nothing" {
	complete_line 'redlock-cli acquire '
	assert_reply ''
}

@test "--password-file completes file names" {
	touch "$BATS_TEST_TMPDIR/pass.txt"
	complete_line "redlock-cli --password-file $BATS_TEST_TMPDIR/pas"
	assert_reply "$BATS_TEST_TMPDIR/pass.txt"
}

@test "--cacert, --cert and --key complete file names, before and after the verb" {
	local opt
	touch "$BATS_TEST_TMPDIR/ca.pem" "$BATS_TEST_TMPDIR/client.pem" \
	    "$BATS_TEST_TMPDIR/client.key"
	for opt in --cacert --cert --key; do
		complete_line "redlock-cli $opt $BATS_TEST_TMPDIR/c"
		assert_equal "$opt: $(reply)" \
		    "$opt: $BATS_TEST_TMPDIR/ca.pem $BATS_TEST_TMPDIR/client.key $BATS_TEST_TMPDIR/client.pem"
		complete_line "redlock-cli run k $opt $BATS_TEST_TMPDIR/cl"
		assert_equal "$opt: $(reply)" \
		    "$opt: $BATS_TEST_TMPDIR/client.key $BATS_TEST_TMPDIR/client.pem"
	done
}

@test "--cacert=FILE completes the file name after the equals sign" {
	touch "$BATS_TEST_TMPDIR/ca.pem"
	complete_words "redlock-cli --cacert=$BATS_TEST_TMPDIR/ca" \
	    redlock-cli --cacert = "$BATS_TEST_TMPDIR/ca"
	assert_reply "$BATS_TEST_TMPDIR/ca.pem"
}

@test "--cacertdir completes directories only" {
	mkdir -p "$BATS_TEST_TMPDIR/certs.d"
	touch "$BATS_TEST_TMPDIR/certs.pem"
	complete_line "redlock-cli --cacertdir $BATS_TEST_TMPDIR/cert"
	assert_reply "$BATS_TEST_TMPDIR/certs.d"
}

@test "the argument of a TLS option is not taken for the verb" {
	touch "$BATS_TEST_TMPDIR/ca.pem"
	complete_line "redlock-cli --cacert $BATS_TEST_TMPDIR/ca.pem --sni db.example run k --ren"
	assert_reply '--renew'
	complete_line 'redlock-cli --wait-replicas 1 --user locker acquire k --j'
	assert_reply '--json'
}

@test "the word after run's -- completes to commands" {
	complete_line 'redlock-cli run k -- bas'
	assert_reply_has bash
	refute_reply_has --lost-signal
}

@test "words after run's -- are not taken for redlock-cli options" {
	complete_line 'redlock-cli run k -- ls --lo'
	refute_reply_has --lost-signal
	refute_reply_has --lost-exit-code
}

@test "a URL that bash split at its colons does not hide run's --" {
	complete_words 'redlock-cli -u redis://h:6379 run k -- bas' \
	    redlock-cli -u redis : //h : 6379 run k -- bas
	assert_reply_has bash
}

@test "the answers are the same with the bash-completion package loaded" {
	local bc=/usr/share/bash-completion/bash_completion
	if [[ ! -r $bc ]]; then
		[ "${REDLOCK_TEST_MISSING:-skip}" != fail ] ||
		    fail "bash-completion is not installed, though make deps ran"
		skip "bash-completion is not installed"
	fi
	run bash -c '
		source "$1" && source "$2" || exit 99
		t() {
			COMP_LINE=$1; COMP_POINT=${#1}
			read -ra COMP_WORDS <<<"$1"
			[[ $1 == *" " ]] && COMP_WORDS+=("")
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			COMPREPLY=(); _redlock_cli 2>/dev/null
			echo "${COMPREPLY[*]}"
		}
		t "redlock-cli "
		t "redlock-cli run --lo"
		t "redlock-cli -u "
		t "redlock-cli help "
		t "redlock-cli acquire k -t "
		t "redlock-cli acquire k --f"
		t "redlock-cli status k --limit "
		t "redlock-cli --ca"
		t "redlock-cli --user "
		mkdir -p "$3/certs.d" && touch "$3/certs.pem"
		t "redlock-cli --cacertdir $3/cert"
		echo $(t "redlock-cli --cacert $3/certs." | tr " " "\n" | sort)
	' _ "$bc" "$BASH_FILE" "$BATS_TEST_TMPDIR"
	assert_success
	assert_line -n 0 'acquire release extend run status list history help'
	assert_line -n 1 '--lost-signal --lost-exit-code'
	assert_line -n 2 'redis:// rediss:// unix:// redis-sentinel:// redis+cluster://'
	assert_line -n 3 'acquire release extend run status list history'
	assert_line -n 4 '--fair'
	assert_line -n 5 '--cacert --cacertdir'
	assert_line -n 6 "$BATS_TEST_TMPDIR/certs.d"
	assert_line -n 7 "$BATS_TEST_TMPDIR/certs.d $BATS_TEST_TMPDIR/certs.pem"
	assert_equal "${#lines[@]}" 8
}

@test "the bash file is shellcheck clean" {
	need shellcheck
	run shellcheck -s bash "$BASH_FILE"
	assert_success
	assert_output ''
}

@test "the zsh file parses with zsh -n" {
	need zsh
	run zsh -n "$ZSH_FILE"
	assert_success
	assert_output ''
}

@test "the zsh file starts with #compdef redlock-cli" {
	run head -n 1 "$ZSH_FILE"
	assert_output '#compdef redlock-cli'
}

@test "the fish file parses with fish --no-execute" {
	need fish
	run fish --no-execute "$FISH_FILE"
	assert_success
	assert_output ''
}

@test "fish completes run --lo to the lost-lock options" {
	need fish
	run fish --no-config -c 'source $argv[1]; complete -C"redlock-cli run --lo" | string replace -r "\t.*" ""' "$FISH_FILE"
	assert_success
	assert_output $'--lost-exit-code\n--lost-signal'
}

@test "fish offers --limit and --fair to acquire and run, and only --limit to status" {
	need fish
	run fish --no-config -c 'source $argv[1]; for l in "redlock-cli acquire k --" "redlock-cli run k --" "redlock-cli status k --"; echo "$l:" (complete -C"$l" | string replace -r "\t.*" "" | string match -r -- "^--(?:limit|fair)\$" | sort); end' "$FISH_FILE"
	assert_success
	assert_line -n 0 'redlock-cli acquire k --: --fair --limit'
	assert_line -n 1 'redlock-cli run k --: --fair --limit'
	assert_line -n 2 'redlock-cli status k --: --limit'
}

@test "fish offers every URL scheme after -u" {
	need fish
	run fish --no-config -c 'source $argv[1]; complete -C"redlock-cli -u " | string replace -r "\t.*" "" | sort' "$FISH_FILE"
	assert_success
	assert_output "$(printf '%s\n' redis:// rediss:// unix:// redis-sentinel:// redis+cluster:// | sort)"
}

@test "fish completes files after --cacert, --cert and --key, and only directories after --cacertdir" {
	need fish
	mkdir -p "$BATS_TEST_TMPDIR/tls/certs.d"
	touch "$BATS_TEST_TMPDIR/tls/ca.pem"
	run fish --no-config -c 'source $argv[1]; for o in --cacert --cert --key --cacertdir; echo "$o:" (complete -C"redlock-cli run k $o $argv[2]/" | string replace -r "\t.*" "" | sort); end' "$FISH_FILE" "$BATS_TEST_TMPDIR/tls"
	assert_success
	local d="$BATS_TEST_TMPDIR/tls"
	assert_line -n 0 "--cacert: $d/ca.pem $d/certs.d/"
	assert_line -n 1 "--cert: $d/ca.pem $d/certs.d/"
	assert_line -n 2 "--key: $d/ca.pem $d/certs.d/"
	assert_line -n 3 "--cacertdir: $d/certs.d/"
}

@test "zsh offers every URL scheme after -u, files after the TLS file options and directories after --cacertdir" {
	local scheme opt
	for scheme in redis rediss unix redis-sentinel redis+cluster; do
		grep -E -- "--url=\}'\[" "$ZSH_FILE" | grep -qF -- " $scheme\\://" ||
		    grep -E -- "--url=\}'\[" "$ZSH_FILE" | grep -qF -- "($scheme\\://" ||
		    fail "-u does not offer $scheme://"
	done
	for opt in --password-file --cacert --cert --key; do
		grep -qE -- "^  '$opt=\[[^]]*\]:[^:]*:_files'\$" "$ZSH_FILE" ||
		    fail "$opt does not complete files"
	done
	grep -qE -- "^  '--cacertdir=\[[^]]*\]:[^:]*:_files -/'\$" "$ZSH_FILE" ||
	    fail "--cacertdir does not complete directories"
}

@test "zsh offers --limit and --fair to acquire and run, and --limit to the other verbs" {
	local verb
	for verb in acquire run; do
		sed -n "/^lock_opts=(/,/^)/p" "$ZSH_FILE" | grep -q -- "'--limit=\[" ||
		    fail "--limit is not in lock_opts"
		sed -n "/^lock_opts=(/,/^)/p" "$ZSH_FILE" | grep -q -- "'--fair\[" ||
		    fail "--fair is not in lock_opts"
		sed -n "/^  $verb)/,/;;/p" "$ZSH_FILE" | grep -q 'lock_opts' ||
		    fail "$verb does not use lock_opts"
	done
	for verb in release extend status; do
		sed -n "/^  $verb)/,/;;/p" "$ZSH_FILE" | grep -q -- "'--limit=\[" ||
		    fail "$verb does not offer --limit"
		sed -n "/^  $verb)/,/;;/p" "$ZSH_FILE" | grep -qE -- 'lock_opts|--fair' &&
		    fail "$verb offers --fair"
	done
	return 0
}

# the long options in the SYNOPSIS of the man page, without dashes
synopsis_long_options() {
	sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$MAN_FILE" |
	    grep -oE 'Fl -[a-z][a-z0-9-]*' | sed 's/^Fl -//' | sort -u
}

@test "every long option in the man page synopsis is in the bash completion file" {
	local opt missing="" count=0
	local -a known
	mapfile -t known < <(bash_long_options)
	while read -r opt; do
		count=$((count + 1))
		[[ " ${known[*]} " == *" --$opt "* ]] || missing+=" --$opt"
	done < <(synopsis_long_options)
	[[ $count -gt 10 ]] || fail "only $count long options found in the synopsis"
	assert_equal "missing:$missing" "missing:"
}

@test "every long option in the man page synopsis is offered by the bash completion" {
	local opt missing=""
	local -a offered
	mapfile -t offered < <(bash_offered_options)
	while read -r opt; do
		[[ " ${offered[*]} " == *" --$opt "* ]] || missing+=" --$opt"
	done < <(synopsis_long_options)
	assert_equal "missing:$missing" "missing:"
}

@test "every option the bash completion offers is in the zsh and fish files" {
	local opt missing=""
	while read -r opt; do
		[[ $opt == --* ]] || continue
		grep -qE -- "(^|[^a-z-])$opt([^a-z-]|\$)" "$ZSH_FILE" ||
		    missing+=" zsh:$opt"
		grep -qE -- "-l ${opt#--}( |\$)" "$FISH_FILE" ||
		    missing+=" fish:$opt"
	done < <(bash_offered_options)
	assert_equal "missing:$missing" "missing:"
}
