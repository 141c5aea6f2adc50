#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# The man page: lint clean under mandoc and groff, and in step with the bash
# completion, which mirrors the command table.

# helpers: the assertion libraries and need; no server is started here.
load helpers

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

SRC="$ROOT/src"

# the C sources with adjacent string literals joined, so that a message split
# over several lines reads as one string
joined_sources() {
	perl -0777 -pe 's/"\s*\n\s*"//g' "$SRC"/*.c
}

# usage_options VERB: the options in VERB's usage line in src/cmd-VERB.c, one
# a line ("-t", "--limit")
usage_options() {
	perl -0777 -ne 's/"\s*\n\s*"//g; print "$1\n" if /\.usage = "([^"]*)"/' \
	    "$SRC/cmd-$1.c" | grep -oE -- '(^|[ [(])--?[a-zA-Z][a-z0-9-]*' |
	    grep -oE -- '--?[a-zA-Z][a-z0-9-]*' | sort -u
}

# synopsis_options VERB: the options in VERB's SYNOPSIS lines, one a line
synopsis_options() {
	man_section SYNOPSIS | sed -n "/^\\.Cm $1\$/,/^\\.Nm/p" |
	    grep -oE 'Fl -?[a-zA-Z][a-z0-9-]*' | sed 's/^Fl /-/' | sort -u
}

@test "the man page is mandoc -Tlint clean" {
	need mandoc
	run mandoc -Tlint -W warning "$MAN_FILE"
	assert_success
	assert_output ''
}

@test "the man page is groff -ww clean" {
	need groff
	run groff -mandoc -Tutf8 -ww -z "$MAN_FILE"
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
	    REDISCLI_AUTH REDLOCK_PASSWORD REDLOCK_USER \
	    REDLOCK_SENTINEL_PASSWORD REDLOCK_KEY REDLOCK_FENCE \
	    REDLOCK_TTL_MS; do
		grep -qE "Ev $var( |\$)" "$MAN_FILE" || missing+=" $var"
	done
	assert_equal "missing:$missing" "missing:"
}

@test "the man page renders with man -l" {
	need man
	run env MANWIDTH=80 man -l "$MAN_FILE"
	assert_success
	assert_output --partial 'SYNOPSIS'
	assert_output --partial 'CAVEATS'
}

@test "each verb's synopsis lists the options of its usage line in src" {
	local verb
	for verb in acquire release extend run status; do
		[[ -n $(usage_options "$verb") ]] || fail "no usage line found for $verb"
		assert_equal "$verb: $(synopsis_options "$verb" | tr '\n' ' ')" \
		    "$verb: $(usage_options "$verb" | tr '\n' ' ')"
	done
}

@test "--limit and --fair are documented, and nothing says they are not implemented" {
	documented --limit || fail "--limit has no item"
	documented --fair || fail "--fair has no item"
	man_section SEMAPHORES | grep -q 'Fl -limit' || fail "no SEMAPHORES section"
	man_section WAITING | grep -q 'Fl -fair' || fail "no WAITING section"
	run grep -inE 'not (yet )?(implemented|supported)|unimplemented' "$MAN_FILE"
	refute_output --partial 'limit'
	refute_output --partial 'fair'
	refute_output --partial 'semaphore'
}

@test "KEY LAYOUT names every companion key that src builds" {
	local suffix missing="" count=0
	while read -r suffix; do
		count=$((count + 1))
		man_section 'KEY LAYOUT' | grep -qF ".It Li {K}:$suffix" ||
		    missing+=" {K}:$suffix"
		man_section 'KEY LAYOUT' | grep -qF "Li {T}:K:$suffix" ||
		    missing+=" {T}:K:$suffix"
	done < <({
	    grep -ohE '[a-z_]*companion[a-z_]*\([^"]*"[^"]+"' "$SRC"/*.c |
	        grep -oE '"[^"]+"'
	    # lock.c names the KEYS companions in one table
	    sed -n '/suffixes\[LOCK_NKEYS\]/,/};/p' "$SRC"/lock.c |
	        grep -oE '"[a-z:]+"'
	} | tr -d '"' | sort -u)
	[[ $count -ge 6 ]] || fail "only $count companion keys found in src"
	assert_equal "missing:$missing" "missing:"
}

@test "the messages the man page quotes are those in src" {
	local phrase missing=""
	for phrase in \
	    "is held by " \
	    "is still held by " \
	    "has no free slot (limit" \
	    "still has no free slot (limit" \
	    "is a mutex: it cannot be used with --limit" \
	    "is a semaphore: use --limit" \
	    ", not a lock" \
	    "invalid --ttl '1.5x': unknown unit (us, ms, s, m, h, d or w)" \
	    "quorum not reached (" \
	    "replicas acknowledged it within" \
	    "warning: --insecure: the server's certificate is not verified" \
	    "warning: a password in -u on the command line may be seen by other users; use --password-file or REDISCLI_AUTH" \
	    "certificate verification failed: " \
	    "--cert and --key go together" \
	    "permission denied: " \
	    "cannot find the master" \
	    ": error: "; do
		grep -qF -- "$phrase" "$MAN_FILE" || missing+=" man:'$phrase'"
		[[ $phrase == "invalid --ttl"* ]] && continue
		joined_sources | grep -qF -- "$phrase" || missing+=" src:'$phrase'"
	done
	assert_equal "missing:$missing" "missing:"
}

@test "the busy messages in the man page match the formats in src/cmd.c" {
	local line fmt re missing=""
	while read -r fmt; do
		# "%s" passes on a line made elsewhere (a queue's ending),
		# which the test of quoted messages checks
		[[ $fmt == '%s' ]] && continue
		# a printf format into a regular expression for one line
		re=$(printf '%s' "$fmt" | sed -e 's/[][().*^$+?{}|\\]/\\&/g' \
		    -e "s/%s/[^']+/g" -e 's/%lld/[0-9]+/g')
		man_section 'EXIT STATUS' | grep -qE "^redlock-cli: $re( [0-9.]+(ms|s|m|h))?\$" ||
		    missing+=" '$fmt'"
	done < <(joined_sources | grep -oE 'log_busy\("[^"]*"' | sed 's/^log_busy("//; s/"$//')
	assert_equal "missing:$missing" "missing:"
}

@test "every long option that src/options-table.c defines has an item in the man page" {
	local opt missing="" count=0
	while read -r opt; do
		count=$((count + 1))
		documented "--$opt" || missing+=" --$opt"
	done < <(perl -0777 -ne 's/\s+/ /g; print "$1\n" while /\{ \{ "([a-z][a-z0-9-]*)", \w+, NULL, ?\w+ \}, [01] \}/g' "$SRC/options-table.c")
	[[ $count -gt 30 ]] || fail "only $count options found in src/options-table.c"
	assert_equal "undocumented:$missing" "undocumented:"
}

@test "every global option of src/options-table.c is in the synopsis and in OPTIONS" {
	local opt missing="" count=0
	while read -r opt; do
		count=$((count + 1))
		man_section SYNOPSIS | grep -qE -- "Fl -$opt( |\$)" ||
		    missing+=" synopsis:--$opt"
		man_section OPTIONS | grep -qE -- "^\\.It (.* , )?Fl -$opt( |\$)" ||
		    missing+=" options:--$opt"
	done < <(perl -0777 -ne 's/\s+/ /g; print "$1\n" while /\{ \{ "([a-z][a-z0-9-]*)", \w+, NULL, ?\w+ \}, 1 \}/g' "$SRC/options-table.c" |
	    grep -vxE 'help|version|quiet|verbose|url')
	[[ $count -gt 15 ]] || fail "only $count global options found in src/options-table.c"
	assert_equal "missing:$missing" "missing:"
}

@test "every URL scheme that src/url.c accepts has an item in URLS" {
	local scheme missing="" count=0
	while read -r scheme; do
		count=$((count + 1))
		man_section URLS | grep -qxF -- ".Li $scheme:// Oo Oo Ar user Oc Li \\&: Ar password Li @ Oc" ||
		    missing+=" $scheme://"
	done < <(grep -oE 'strncmp\(str, "[a-z+-]+"' "$SRC/url.c" |
	    sed 's/.*"\(.*\)"/\1/' | sort -u)
	[[ $count -ge 5 ]] || fail "only $count schemes found in src/url.c"
	assert_equal "missing:$missing" "missing:"
}

@test "the quorum, replication, TLS and access control sections exist" {
	local section missing=""
	for section in QUORUM REPLICATION TLS 'ACCESS CONTROL'; do
		man_section "$section" | grep -q . || missing+=" '$section'"
	done
	assert_equal "missing:$missing" "missing:"
}

@test "nothing says that several servers, TLS, Sentinel or Cluster are missing" {
	run grep -inE 'not (yet )?(implemented|supported)|unimplemented|only one server|single (redis )?server( is)? supported|talks to a single' "$MAN_FILE"
	assert_output ''
}

@test "the drift allowance in QUORUM is the one in src/lock.c" {
	grep -qF 'return (ttl_ms / 100 + 2);' "$SRC/lock.c" ||
	    fail "lock_drift_ms() in src/lock.c has changed: update QUORUM"
	man_section QUORUM | grep -qF 'drift = TTL / 100 + 2ms' ||
	    fail "QUORUM does not give the drift as TTL / 100 + 2ms"
	man_section CAVEATS | grep -qF '1% of the TTL plus 2 milliseconds' ||
	    fail "CAVEATS does not give the drift"
}

@test "CAVEATS explains why quorum fences keep increasing, and the restart risk" {
	man_section CAVEATS | grep -q 'lifts the' || fail "no lift argument"
	man_section CAVEATS | grep -q 'two majorities' || fail "no overlap argument"
	man_section CAVEATS | grep -qF 'appendfsync always' || fail "no persistence advice"
	man_section CAVEATS | grep -q 'longest TTL' || fail "no delayed restart advice"
}

# the rule words of REDLOCK_ACL_RULES in tests/helpers.bash, one a line,
# without the password and the key pattern (the man page shows a prefix)
helper_acl_words() {
	sed -n 's/^REDLOCK_ACL_RULES="\(.*\)"$/\1/p' "$ROOT/tests/helpers.bash" |
	    tr ' ' '\n' | grep -vE '^(>|~)' | grep .
}

# acl_words FILE: the words of the ACL SETUSER line(s) in FILE, one a line
acl_words() {
	perl -0777 -ne 's/\\e\n\s*/ /g; s/\\\n\s*/ /g; s/\\-/-/g; print "$1\n" if /ACL SETUSER \S+ (.*)/' "$1" |
	    tr ' ' '\n' | grep -vE '^(>|~)' | grep .
}

@test "ACCESS CONTROL gives the exact rule set of tests/helpers.bash, with ~P* ~{P*" {
	local want
	want=$(helper_acl_words)
	[[ $(wc -l <<<"$want") -gt 30 ]] || fail "REDLOCK_ACL_RULES not found in tests/helpers.bash"
	man_section 'ACCESS CONTROL' >"$BATS_TEST_TMPDIR/acl.1"
	assert_equal "$(acl_words "$BATS_TEST_TMPDIR/acl.1")" "$want"
	grep -qF 'resetkeys ~app:* ~{app:* ' "$BATS_TEST_TMPDIR/acl.1" ||
	    fail "the example does not use ~P* ~{P*"
	grep -qE 'Ql ~ Ns Ar P Ns \*' "$BATS_TEST_TMPDIR/acl.1" &&
	    grep -qE 'Ql ~\{ Ns Ar P Ns \*' "$BATS_TEST_TMPDIR/acl.1" ||
	    fail "the patterns ~P* and ~{P* are not named"
	grep -q 'make test-acl' "$BATS_TEST_TMPDIR/acl.1" || fail "no make test-acl"
	grep -qE '^\.It 77$' <(man_section 'EXIT STATUS') || fail "no exit 77"
}

@test "the README gives the same ACL rule set" {
	local want
	want=$(helper_acl_words)
	assert_equal "$(acl_words "$ROOT/README.md")" "$want"
	grep -qF '~app:* ~{app:*' "$ROOT/README.md" || fail "README lacks ~P* ~{P*"
}
