#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# The licence: LICENSE is MIT, every source, script, completion and the man
# page says so in an SPDX line, and the README points at it.

load helpers

# sources: every file of ours that is code, a script, a completion or the
# man page (not data: seed corpora, crash inputs, JSON, Markdown, SVG).
sources() {
	(cd "$ROOT" && find Makefile src tests bench completions man .ci debian/rules \
	    \( -path tests/fuzz/corpus -o -path tests/fuzz/crashes -o \
	    -path tests/fuzz/bin -o -path bench/node/node_modules -o \
	    -path bench/out \) -prune -o -type f \
	    ! -name '*.[od]' ! -name '*.json' ! -name '*.md' ! -name '*.svg' \
	    ! -name '*.tmp' ! -name scripts-sha.h ! -path 'src/tools/script-sha' \
	    ! -path tests/unit/test-units -print | sort)
}

@test "LICENSE is the MIT licence of the redlock-cli authors" {
	run -0 head -n 3 "$ROOT/LICENSE"
	assert_line -n 0 'MIT License'
	assert_line -n 1 'Copyright (c) the redlock-cli authors'
	grep -q 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' \
	    "$ROOT/LICENSE"
}

@test "every source, script, completion and the man page has an SPDX-License-Identifier: MIT line" {
	local f missing=() n=0
	while read -r f; do
		n=$((n + 1))
		grep -q 'SPDX-License-Identifier: MIT' "$ROOT/$f" || missing+=("$f")
	done < <(sources)
	# The list is not empty by accident: the C sources alone are 50.
	[ "$n" -gt 100 ] || fail "only $n files looked at"
	[ "${#missing[@]}" = 0 ] || fail "no SPDX line: ${missing[*]}"
}

@test "the README says the licence is MIT and links LICENSE" {
	grep -q 'MIT licence (\[LICENSE\](LICENSE))' "$ROOT/README.md"
	grep -qx '## Licence' "$ROOT/README.md"
}
