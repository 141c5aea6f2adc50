#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/redis86.sh: Redis 8.6 from Debian experimental (Debian 13 has
# 8.0), built once into build/deps/redis86; prints its bin directory
# (redis-server, -sentinel, -cli).  Redis 8.4 added SET IFEQ (with IFNE,
# IFDEQ, IFDNE) and DELEX, which Valkey spells DELIFEQ.
exec "$(dirname "$0")/server.sh" redis redis experimental redis86
