#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/hiredis-redis86.sh FILE...: make test HIREDIS=1 (hiredis 1.2, linked
# statically, then shared for HIREDIS_SHARED_SUITE) with the given bats
# files, against Redis 8.6 built from Debian experimental's source
# (tests/deps/redis86.sh, cached in build/deps/), its Sentinel and Cluster
# included: two axes of CI in one run, as sanitize-valkey.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash tests/deps/redis86.sh)
"$bin/redis-server" --version
export REDLOCK_TEST_SERVER_BIN=$bin/redis-server
export REDLOCK_TEST_SENTINEL_BIN=$bin/redis-sentinel
export REDLOCK_TEST_CLI_BIN=$bin/redis-cli
export REDLOCK_TEST_MISSING=fail
exec make test HIREDIS=1 SUITE="$*" \
    HIREDIS_SHARED_SUITE="tests/cli.bats"
