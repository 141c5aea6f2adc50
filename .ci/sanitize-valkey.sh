#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/sanitize-valkey.sh FILE...: make sanitize (the ASan+UBSan build) with
# the given bats files, against Valkey 9.1 built from Debian sid's source
# (tests/deps/valkey9.sh, cached in build/deps/), its Sentinel and Cluster
# included: two axes of CI in one run of the suite.  Then the same server
# without its Lua engine (one build: Lua is a module there) runs
# tests/noscript.bats, the locks of a server that has no scripts at all.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash tests/deps/valkey9.sh)
nolua=$(bash tests/deps/valkey9.sh nolua)
"$bin/valkey-server" --version
export REDLOCK_TEST_SERVER_BIN=$bin/valkey-server
export REDLOCK_TEST_SENTINEL_BIN=$bin/valkey-sentinel
export REDLOCK_TEST_CLI_BIN=$bin/valkey-cli
export REDLOCK_TEST_MISSING=fail
make sanitize SUITE="$*"
echo "=== the same server without Lua"
export REDLOCK_TEST_SERVER_BIN=$nolua/valkey-server
export REDLOCK_TEST_NOLUA_BIN=$nolua/valkey-server
exec make sanitize SUITE=tests/noscript.bats
