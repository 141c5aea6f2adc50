#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/redis8.sh: Redis 8.0 from Debian 13 (trixie), built once into
# build/deps/redis; prints its bin directory (redis-server, -sentinel, -cli).
exec "$(dirname "$0")/server.sh" redis redis
