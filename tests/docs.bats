#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
#
# The documents say what the code does: every variable that src reads is in
# the man page's ENVIRONMENT, every message that the man page or a README
# quotes is one that src prints, and the README's short tables agree with
# the full figures in bench/README.md and tests/faults/README.md.

# helpers: the assertion libraries; no server is started here.
load helpers

MAN_FILE="$ROOT/man/redlock-cli.1"
README="$ROOT/README.md"
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
	run perl "$ROOT/tests/docs-messages.pl" "$MAN_FILE" "$README" \
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

# short_in_full SECTION FILE MIN: every figure of the table in the README's
# SECTION is in FILE's "The latest figures", and there are MIN or more
short_in_full() {
	local fig missing="" count=0 full="$BATS_TEST_TMPDIR/full.md"
	md_section "$ROOT/$2" 'The latest figures' >"$full"
	[[ $(wc -l <"$full") -gt 10 ]] || fail "$2 has no 'The latest figures' section"
	while read -r fig; do
		count=$((count + 1))
		grep -qF -- "$fig" "$full" || missing+=" $fig"
	done < <(md_section "$README" "$1" | grep '^|' | figures)
	[[ $count -ge $3 ]] || fail "only $count figures in the README's $1 table"
	assert_equal "missing:$missing" "missing:"
	grep -qF "]($2#the-latest-figures)" "$README" || fail "no link to $2"
}

@test "the README's benchmark figures are in bench/README.md's full table" {
	short_in_full Benchmarks bench/README.md 10
	grep -qF '![' "$README" || fail "the chart is gone"
}

@test "the README's reliability figures are in tests/faults/README.md's full table" {
	short_in_full Reliability tests/faults/README.md 4
}

@test "the README's first screen says what to type first" {
	run sed -n '1,12p' "$README"
	assert_line --regexp '^    make demo +# '
	assert_line --regexp '^    make test +# '
}
