#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/sanitize-valkey.sh FILE...: make sanitize (the ASan+UBSan build) with
# the given bats files, against Valkey 8.1 built from Debian 13's source
# (tests/deps/valkey.sh, cached in build/deps/), its Sentinel and Cluster
# included: two axes of CI in one run of the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash tests/deps/valkey.sh)
"$bin/valkey-server" --version
export REDLOCK_TEST_SERVER_BIN=$bin/valkey-server
export REDLOCK_TEST_SENTINEL_BIN=$bin/valkey-sentinel
export REDLOCK_TEST_CLI_BIN=$bin/valkey-cli
export REDLOCK_TEST_MISSING=fail
exec make sanitize SUITE="$*"
