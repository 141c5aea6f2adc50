#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/valkey9-nolua.sh: Valkey 9.1 from Debian sid built without its
# Lua engine (upstream's switch BUILD_LUA=no, in its README and
# src/Makefile), once, into build/deps/valkey9-nolua; prints its bin
# directory.  Valkey 9 made scripting a module that a build may leave out:
# there EVAL and FUNCTION fail while SET IFEQ and DELIFEQ still work, the
# server a script-free lock would have to run on.  Most of the suite fails
# on it, as every lock operation of redlock-cli is a Lua script.
exec "$(dirname "$0")/server.sh" valkey valkey sid valkey9-nolua BUILD_LUA=no
