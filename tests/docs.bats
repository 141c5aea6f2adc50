#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# The documents say what the code does: every variable that src reads is in
# the man page's ENVIRONMENT, every message that the man page or a README
# quotes is one that src prints, the short tables of bench/README.md and
# HACKING.md agree with the full figures in bench/README.md and
# tests/faults/README.md, and the README stays a user's guide of one size.

# helpers: the assertion libraries; no server is started here.
load helpers

MAN_FILE="$ROOT/man/redlock-cli.1"
README="$ROOT/README.md"
HACKING="$ROOT/HACKING.md"
SRC="$ROOT/src"

# the body of one section of the man page
man_section() {
	sed -n "/^\\.Sh $1\$/,/^\\.Sh /p" "$MAN_FILE"
}

# md_section FILE TITLE: the body of the "## TITLE" section of FILE
md_section() {
	awk -v h="## $2" '$0 == h { on = 1; next } on && /^## / { exit } on' "$1"
}

# the figures of a Markdown text, one a line: 0.24, 1.35, 11,239, 500
figures() {
	grep -oE '[0-9][0-9,.]*[0-9]' | sed 's/[.,]$//' | sort -u
}

@test "every environment variable that src reads is in ENVIRONMENT" {
	local var missing="" count=0
	while read -r var; do
		count=$((count + 1))
		man_section ENVIRONMENT | grep -qx "\\.It Ev $var" || missing+=" $var"
	# Not only getenv("X"): a name may reach getenv through a variable
	# or a macro, so take every string that is a variable's whole name.
	done < <(grep -ohE '"(REDLOCK|REDIS|REDISCLI)_[A-Z0-9_]*"' \
	    "$SRC"/*.c "$SRC"/*.h | tr -d '"' | sort -u)
	[[ $count -ge 8 ]] || fail "only $count variables found in src"
	assert_equal "missing:$missing" "missing:"
}

@test "every message that the man page and the READMEs quote is one that src prints" {
	run perl "$ROOT/tests/docs-messages.pl" "$MAN_FILE" "$README" "$HACKING" \
	    "$ROOT/bench/README.md" "$ROOT/tests/faults/README.md" -- "$SRC"/*.c
	assert_success
	assert_output ''
	# It looks at the man page's messages indeed: they are many.
	[[ $(grep -c '^redlock-cli: ' "$MAN_FILE") -ge 15 ]]
}

@test "the message check finds a message that src does not print" {
	local doc="$BATS_TEST_TMPDIR/doc.1"
	printf '%s\n' "redlock-cli: lock 'k' is held by another owner" \
	    "redlock-cli: lock 'k' is held by someone else" \
	    "redlock-cli: cannot connect to redis://h:1: Connection refused" \
	    "redlock-cli: cannot connect to redis://h:1: connection went away" >"$doc"
	run perl "$ROOT/tests/docs-messages.pl" "$doc" -- "$SRC"/*.c
	assert_failure 1
	assert_equal "$output" "$doc: lock 'k' is held by someone else
$doc: cannot connect to redis://h:1: connection went away"
}

@test "the README's exit codes are those of the man page's EXIT STATUS" {
	local man readme
	man=$(man_section 'EXIT STATUS' | sed -n 's/^\.It \([0-9][0-9]*\)\( Ns.*\)\{0,1\}$/\1/p' |
	    sort -n | tr '\n' ' ')
	readme=$(md_section "$README" 'Exit status' | grep -oE '^\| [0-9][0-9, +N]*' |
	    grep -oE '[0-9]+' | sort -n | tr '\n' ' ')
	[[ $man == *' 64 '* ]] || fail "no exit codes found in the man page: $man"
	assert_equal "$readme" "$man"
}

@test "the README shows run's -c, and -E and --lost-exit-code next to the exit codes" {
	grep -qE "redlock-cli run [^ ]+ .*-c '[^']+&&[^']+'" "$README" ||
	    fail "no run KEY -c 'cmd1 && cmd2' example"
	md_section "$README" 'Exit status' >"$BATS_TEST_TMPDIR/exit.md"
	grep -qF -- '--lost-exit-code' "$BATS_TEST_TMPDIR/exit.md" || fail "no --lost-exit-code"
	# shellcheck disable=SC2016 # Markdown's backquotes
	grep -qF -- '`-E CODE`' "$BATS_TEST_TMPDIR/exit.md" || fail "no -E"
	grep -qF -- '--conflict-exit-code' "$BATS_TEST_TMPDIR/exit.md" ||
	    fail "no --conflict-exit-code"
	grep -qi "command's own status" "$BATS_TEST_TMPDIR/exit.md" ||
	    fail "does not say that run passes the command's status through"
}

@test "the README names the directories that make install puts the completions in" {
	local var dir file missing=""
	for var in BASHCOMPDIR ZSHCOMPDIR FISHCOMPDIR; do
		# shellcheck disable=SC2016 # $PREFIX as the README writes it
		dir=$(sed -n "s/^${var}[[:space:]]*?=[[:space:]]*//p" "$ROOT/Makefile" |
		    sed 's/\$(PREFIX)/$PREFIX/')
		[ -n "$dir" ] || fail "no default for $var in the Makefile"
		md_section "$README" Completions | grep -qF -- "$dir/" || missing+=" $var=$dir"
	done
	assert_equal "missing:$missing" "missing:"
	# and the file names that the install target gives them
	# shellcheck disable=SC2016 # make's $(DESTDIR), not the shell's
	while read -r file; do
		md_section "$README" Completions | grep -qF -- "/$file\`" || missing+=" $file"
	done < <(sed -n 's/.*install -m 644 completions\/[^ ]* \$(DESTDIR)\$([A-Z]*COMPDIR)\/\(.*\)$/\1/p' \
	    "$ROOT/Makefile")
	assert_equal "missing:$missing" "missing:"
}

# short_in_full DOC SECTION FILE MIN: every figure of the table in DOC's
# SECTION is in FILE's "The latest figures", and there are MIN or more
short_in_full() {
	local fig missing="" count=0 full="$BATS_TEST_TMPDIR/full.md"
	md_section "$ROOT/$3" 'The latest figures' >"$full"
	[[ $(wc -l <"$full") -gt 10 ]] || fail "$3 has no 'The latest figures' section"
	while read -r fig; do
		count=$((count + 1))
		grep -qF -- "$fig" "$full" || missing+=" $fig"
	done < <(md_section "$ROOT/$1" "$2" | grep '^|' | figures)
	[[ $count -ge $4 ]] || fail "only $count figures in $1's $2 table"
	assert_equal "missing:$missing" "missing:"
}

@test "bench/README.md's short table has its figures in its full table, and the README links it" {
	short_in_full bench/README.md 'In short' bench/README.md 10
	grep -qF '![' "$ROOT/bench/README.md" || fail "the chart is gone"
	# The README keeps one comparison table, of no figure, and links the figures.
	md_section "$README" 'How it compares' >"$BATS_TEST_TMPDIR/compare.md"
	grep -qF '](bench/README.md)' "$BATS_TEST_TMPDIR/compare.md" || fail "no link to bench/README.md"
	for peer in 'flock(1)' 'etcdctl lock' 'SET NX PX' node-redlock; do
		grep -q "^| .*$peer" "$BATS_TEST_TMPDIR/compare.md" || fail "no row for $peer"
	done
	run grep -E '^\|.*[0-9]\.[0-9]' "$BATS_TEST_TMPDIR/compare.md"
	assert_failure
}

@test "HACKING.md's reliability figures are in tests/faults/README.md's full table" {
	short_in_full HACKING.md Reliability tests/faults/README.md 4
	grep -qF '](tests/faults/README.md#the-latest-figures)' "$HACKING" ||
	    fail "no link to tests/faults/README.md"
	grep -qF '](HACKING.md#reliability)' "$README" || fail "the README does not link it"
}

@test "the README's first screen says what to type first" {
	run sed -n '1,12p' "$README"
	assert_line --regexp '^    make demo +# installs what is missing .*builds.* throwaway Redis'
	assert_line --regexp '^    make test +# .*test suite'
}

@test "the README is a user's guide of 260 lines at most, in the issue's order" {
	local lines
	lines=$(wc -l <"$README")
	[[ $lines -le 260 ]] || fail "README.md has $lines lines"
	assert_equal "$(grep -E '^## ' "$README" | tr '\n' '|')" \
	    "## Use|## Connecting|## Scaling out|## Security|## Exit status|## How it compares|## Completions|## Licence|"
	# Development and packaging live in HACKING.md.
	for title in Reliability Compatibility CI; do
		grep -qx "## $title" "$HACKING" || fail "HACKING.md has no $title section"
	done
}

@test "the README's cron example skips busy hosts and holds a minimum" {
	local cron
	cron=$(grep -E '^    (\*|[0-9])[^ ]* [^ ]+ [^ ]+ [^ ]+ [^ ]+ redlock-cli ' "$README") ||
	    fail "no crontab line"
	[[ $cron == *' run '* && $cron == *' -n '* ]] || fail "no run -n: $cron"
	[[ $cron == *' --min-hold '* ]] || fail "no --min-hold: $cron"
}

@test "the README's CI section keeps what a CI user needs" {
	local ci="$BATS_TEST_TMPDIR/ci.md" want
	awk '$0 == "### CI" { on = 1; next } on && /^## / { exit } on' "$README" >"$ci"
	for want in 'continue-on-error: true' 'steps.deploy.outputs.outcome' \
	    'exit_codes: [80, 81, 82]' 'soft_fail:' 'make dist' 'sha256sum -c SHA256SUMS' \
	    'concurrency:' 'do not compare' '-t 30s' 'timeout(1)' 'SIGINT, then SIGTERM'; do
		grep -qF -- "$want" "$ci" || fail "the CI section lacks: $want"
	done
	# two lines install it from make dist's tarball
	[[ $(awk '/^### On a CI runner/ { on = 1 } on && /^```sh/ { c = 1; next }
	    c && /^```/ { exit } c { n++ } END { print n }' "$README") == 2 ]] ||
	    fail "not two lines of install"
}
