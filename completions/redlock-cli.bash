# SPDX-License-Identifier: MIT
# bash completion for redlock-cli(1)
#
# Static: the verbs and options below mirror the command table and the man
# page; tests/completions.bats checks that the two stay in step.  Works with
# the bash-completion package and, without it, in plain bash.

_redlock_cli_verbs="acquire release extend run status list history help"

_redlock_cli_global="-u --url --user --password-file --no-auth-warning
	--connect-timeout --io-timeout --wait-replicas --wait-timeout
	--history-size --tls
	--cacert --cacertdir --cert --key --sni --insecure --prefix -q --quiet
	-v --verbose --syslog -h --help -V --version"

# Options that take an argument, padded with blanks for matching.
_redlock_cli_argopts=" -u --url --user --password-file --connect-timeout
	--io-timeout --wait-replicas --wait-timeout --history-size --cacert
	--cacertdir --cert
	--key --sni --prefix -t --ttl -w --wait --timeout -E
	--conflict-exit-code --token --renew --lost-signal --kill-after
	--lost-exit-code --jitter --min-hold -c --command --limit --queue
	--order --superseded-exit-code --outdated-exit-code
	--cancelled-exit-code --record-command --metrics-file --count "

# The URL schemes that -u accepts (see URLS in the man page).
_redlock_cli_schemes="redis:// rediss:// unix:// redis-sentinel://
	redis+cluster://"

_redlock_cli_signals=(TERM INT HUP QUIT KILL USR1 USR2 ALRM CONT STOP TSTP
	WINCH PIPE)

# _redlock_cli_verb_opts VERB: print the options of VERB.
_redlock_cli_verb_opts()
{
	case $1 in
	acquire)
		echo "-t --ttl -n --nonblock --nb --nonblocking -w --wait" \
		    "--timeout -E --conflict-exit-code --token -s --shared" \
		    "-x -e --exclusive" \
		    "--limit --fair --queue --order --cancel-running" \
		    "--record-command --json" ;;
	release)
		echo "--token --force --limit" ;;
	extend)
		echo "--token -t --ttl --limit" ;;
	run)
		echo "-t --ttl -n --nonblock --nb --nonblocking -w --wait" \
		    "--timeout -E --conflict-exit-code -s --shared -x -e" \
		    "--exclusive --limit --fair --renew --lost-signal" \
		    "--kill-after --lost-exit-code --release-on-exit -o" \
		    "--close --jitter" \
		    "--min-hold -c --command --queue --order --skip-outdated" \
		    "--cancel-running --superseded-exit-code" \
		    "--outdated-exit-code --cancelled-exit-code" \
		    "--record-command --metrics-file" ;;
	status)
		echo "--limit --json" ;;
	list)
		echo "--all --json" ;;
	history)
		echo "-n --count --json" ;;
	esac
}

# Without bash-completion, rebuild words/cword from COMP_WORDS: bash splits a
# word at each character of COMP_WORDBREAKS, so "redis://h:6379" and
# "--ttl=5s" arrive in pieces.  Pieces that touch in COMP_LINE are joined.
_redlock_cli_words()
{
	local line w i n=-1 lead

	words=()
	cword=0
	if [[ -z ${COMP_LINE-} ]]; then
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		return
	fi
	line=$COMP_LINE
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		lead=${line%%[![:space:]]*}
		line=${line#"$lead"}
		if ((i > 0 && n >= 0)) && [[ -z $lead ]]; then
			words[n]+=$w
		else
			words[++n]=$w
		fi
		line=${line#"$w"}
		if ((i == COMP_CWORD)); then
			cword=$n
		fi
	done
}

# _redlock_cli_reply WORDLIST: complete cur from WORDLIST.
_redlock_cli_reply()
{
	mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur")
}

_redlock_cli()
{
	local cur prev words cword
	local i w verb="" verb_at=0 dashdash=0 raw n

	COMPREPLY=()
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion -s -n : || return
	else
		_redlock_cli_words
		cur=${words[cword]-}
		prev=""
		if ((cword > 0)); then
			prev=${words[cword - 1]}
		fi
		if [[ $cur == --*=* ]]; then
			prev=${cur%%=*}
			cur=${cur#*=}
		fi
	fi

	# Find the verb, skipping options and their arguments, and the "--"
	# that ends run's options.
	for ((i = 1; i < cword; i++)); do
		w=${words[i]}
		if [[ $verb == run && $w == -- ]]; then
			dashdash=$i
			break
		fi
		if [[ $_redlock_cli_argopts == *[[:space:]]"$w"[[:space:]]* ]]; then
			((i++))
		elif [[ $w != -* && -z $verb ]]; then
			verb=$w
			verb_at=$i
		fi
	done

	# After run's "--": the command and its arguments.
	if ((dashdash > 0)); then
		if declare -F _command_offset >/dev/null 2>&1; then
			# _command_offset counts in COMP_WORDS, which may hold
			# more pieces than words: find the same "--" there.
			n=0
			for ((i = 1; i <= dashdash; i++)); do
				if [[ ${words[i]} == -- ]]; then
					n=$((n + 1))
				fi
			done
			for ((raw = 1; raw < ${#COMP_WORDS[@]}; raw++)); do
				if [[ ${COMP_WORDS[raw]} == -- ]]; then
					n=$((n - 1))
					if ((n == 0)); then
						break
					fi
				fi
			done
			_command_offset $((raw + 1))
		elif ((cword == dashdash + 1)); then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
		else
			compopt -o filenames 2>/dev/null || :
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return
	fi

	# The argument of the option before the cursor.
	case $prev in
	--lost-signal)
		if [[ $cur == SIG* ]]; then
			_redlock_cli_reply "${_redlock_cli_signals[*]/#/SIG}"
		else
			_redlock_cli_reply "${_redlock_cli_signals[*]}"
		fi
		return ;;
	-u|--url)
		compopt -o nospace 2>/dev/null || :
		_redlock_cli_reply "$_redlock_cli_schemes"
		if [[ $cur == *:* ]]; then
			# readline replaces only the text after the last colon
			for i in "${!COMPREPLY[@]}"; do
				COMPREPLY[i]=${COMPREPLY[i]#"${cur%"${cur##*:}"}"}
			done
		fi
		return ;;
	--password-file|--cacert|--cert|--key|--metrics-file)
		if declare -F _filedir >/dev/null 2>&1; then
			_filedir
		else
			compopt -o filenames 2>/dev/null || :
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return ;;
	--cacertdir)
		if declare -F _filedir >/dev/null 2>&1; then
			_filedir -d
		else
			compopt -o filenames 2>/dev/null || :
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		fi
		return ;;
	-t|--ttl|-w|--wait|--timeout|--renew|--kill-after|--jitter|\
	--min-hold|--connect-timeout|--io-timeout|-E|--conflict-exit-code|\
	--lost-exit-code|--token|--prefix|-c|--command|--limit|--user|\
	--wait-replicas|--wait-timeout|--sni|--order|--superseded-exit-code|\
	--outdated-exit-code|--cancelled-exit-code|--history-size|--count)
		return ;;
	-n)
		# history's -n takes a count; elsewhere it is --nonblock.
		[[ $verb == history ]] && return ;;
	--queue)
		_redlock_cli_reply "any fifo latest"
		return ;;
	--record-command)
		_redlock_cli_reply "full name none"
		return ;;
	esac

	if [[ -z $verb ]]; then
		if [[ $cur == -* ]]; then
			_redlock_cli_reply "$_redlock_cli_global"
		else
			_redlock_cli_reply "$_redlock_cli_verbs"
		fi
		return
	fi

	case $verb in
	help)
		if ((cword == verb_at + 1)) && [[ $cur != -* ]]; then
			_redlock_cli_reply "acquire release extend run status list history"
		fi
		return ;;
	acquire|release|extend|run|status|list|history)
		if [[ $cur == -* ]]; then
			_redlock_cli_reply "$(_redlock_cli_verb_opts "$verb") $_redlock_cli_global"
		fi
		return ;;
	esac
}

complete -F _redlock_cli redlock-cli
