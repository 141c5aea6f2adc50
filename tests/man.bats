#!/usr/bin/env bats
#
# The man page: lint clean under mandoc and groff, and in step with the bash
# completion, which mirrors the command table.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

ROOT="$BATS_TEST_DIRNAME/.."
MAN_FILE="$ROOT/man/redlock-cli.1"
BASH_FILE="$ROOT/completions/redlock-cli.bash"

# the long options named in the bash file, one a line
bash_long_options() {
	grep -v '^[[:space:]]*#' "$BASH_FILE" | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

# every option, short and long, that the bash completion offers, one a line
bash_offered_options() {
	(
		# shellcheck source=../completions/redlock-cli.bash
		source "$BASH_FILE"
		echo "$_redlock_cli_global"
		for verb in acquire release extend run status; do
			_redlock_cli_verb_opts "$verb"
		done
	) | tr -s ' \t' '\n' | grep -- '^-' | sort -u
}

# documented OPT: the man page has an item for OPT, alone or after a comma
# (".It Fl t Ar ttl , Fl -ttl Ar ttl")
documented() {
	grep -qE -- "^\\.It (.* , )?Fl ${1#-}( |\$)" "$MAN_FILE"
}

# the body of one section of the man page
man_section() {
	sed -n "/^\\.Sh $1\$/,/^\\.Sh /p" "$MAN_FILE"
}

@test "the man page is mandoc -Tlint clean" {
	command -v mandoc >/dev/null || skip "mandoc is not installed"
	run mandoc -Tlint -W warning "$MAN_FILE"
	assert_success
	assert_output ''
}

@test "the man page is groff -ww clean" {
	command -v groff >/dev/null || skip "groff is not installed"
	run groff -mandoc -ww -z "$MAN_FILE"
	assert_success
	assert_output ''
}

@test "the man page is mdoc for section 1" {
	run grep -c -e '^\.Dt REDLOCK-CLI 1$' -e '^\.Dd ' -e '^\.Os' "$MAN_FILE"
	assert_output 3
}

@test "every long option in the bash completion file is documented in the man page" {
	local opt missing=""
	local -a opts
	mapfile -t opts < <(bash_long_options)
	[[ ${#opts[@]} -gt 10 ]] || fail "too few options found in $BASH_FILE: ${opts[*]}"
	for opt in "${opts[@]}"; do
		documented "$opt" || missing+=" $opt"
	done
	assert_equal "undocumented:$missing" "undocumented:"
}

@test "every option the bash completion offers, short ones too, is documented" {
	local opt missing=""
	local -a opts
	mapfile -t opts < <(bash_offered_options)
	[[ ${#opts[@]} -gt 10 ]] || fail "too few options offered: ${opts[*]}"
	for opt in "${opts[@]}"; do
		documented "$opt" || missing+=" $opt"
	done
	assert_equal "undocumented:$missing" "undocumented:"
}

@test "every long option in the man page's item lists is in the bash completion" {
	local opt missing=""
	local -a known
	mapfile -t known < <(bash_long_options)
	while read -r opt; do
		[[ " ${known[*]} " == *" --$opt "* ]] || missing+=" --$opt"
	done < <(grep -E '^\.It .*Fl -[a-z]' "$MAN_FILE" |
	    grep -oE 'Fl -[a-z][a-z0-9-]+' | sed 's/^Fl -//' | sort -u)
	assert_equal "not completed:$missing" "not completed:"
}

@test "every verb has a synopsis line and a COMMANDS entry" {
	local verb missing=""
	for verb in acquire release extend run status help; do
		man_section SYNOPSIS | grep -qx "\\.Cm $verb" ||
		    missing+=" synopsis:$verb"
		man_section COMMANDS | grep -qE "^\\.Ic $verb( |\$)|^\\.It Ic $verb( |\$)" ||
		    missing+=" commands:$verb"
	done
	assert_equal "missing:$missing" "missing:"
}

@test "every exit status of the contract has an entry" {
	local code missing=""
	for code in 0 1 3 64 69 75 76 77 126 127; do
		man_section 'EXIT STATUS' | grep -qx "\\.It $code" || missing+=" $code"
	done
	man_section 'EXIT STATUS' | grep -q '^\.It 128' || missing+=" 128+N"
	assert_equal "missing:$missing" "missing:"
}

@test "the environment variables are documented" {
	local var missing=""
	for var in REDLOCK_URL REDIS_URL REDLOCK_TOKEN REDLOCK_PREFIX \
	    REDISCLI_AUTH REDLOCK_PASSWORD REDLOCK_KEY REDLOCK_FENCE \
	    REDLOCK_TTL_MS; do
		grep -qE "Ev $var( |\$)" "$MAN_FILE" || missing+=" $var"
	done
	assert_equal "missing:$missing" "missing:"
}

@test "the man page renders with man -l" {
	command -v man >/dev/null || skip "man is not installed"
	run env MANWIDTH=80 man -l "$MAN_FILE"
	assert_success
	assert_output --partial 'SYNOPSIS'
	assert_output --partial 'CAVEATS'
}
