#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/valkey9.sh: Valkey 9.1 from Debian sid (Debian 13 has 8.1),
# built once into build/deps/valkey9; prints its bin directory
# (valkey-server, -sentinel, -cli).  Valkey 9.0 added DELIFEQ, which with
# SET IFEQ (8.1) lets a lock be released and extended without a script.
exec "$(dirname "$0")/server.sh" valkey valkey sid valkey9
