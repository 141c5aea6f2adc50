#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/valkey9-nolua.sh: Valkey 9.1 without its Lua engine, the same
# build as valkey9.sh (whose Lua is a module) started without the module;
# prints its bin directory.  There EVAL fails ("Could not find scripting
# engine 'lua'") while SET IFEQ and DELIFEQ work: the server that
# tests/noscript.bats checks the locks without scripts on.
exec "$(dirname "$0")/valkey9.sh" nolua
