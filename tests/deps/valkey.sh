#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/valkey.sh: Valkey 8.1 from Debian 13 (trixie), built once into
# build/deps/valkey; prints its bin directory (valkey-server, -sentinel, -cli).
exec "$(dirname "$0")/server.sh" valkey valkey
