#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/deps/valkey9.sh [nolua]: Valkey 9.1 from Debian sid, built once into
# build/deps/valkey9, with its Lua engine as a module (upstream's
# BUILD_LUA=module): one build serves as two servers.  Prints a bin
# directory (valkey-server, -sentinel, -cli):
#   build/deps/valkey9/bin        a valkey-server that loads the Lua module
#   build/deps/valkey9/bin-nolua  (with nolua) the same server without it:
#                                 no scripts at all, as Valkey 9 built with
#                                 BUILD_LUA=no, EVAL answering "Could not
#                                 find scripting engine"
# Valkey 9.0 added DELIFEQ, which with SET IFEQ (8.1) lets a lock be
# released and extended without a script (scripts-native.c).
set -euo pipefail
bin=$("$(dirname "$0")/server.sh" valkey valkey sid valkey9 BUILD_LUA=module)
prefix=$(dirname "$bin")
lua=$prefix/lib/libvalkeylua.so
[ -r "$lua" ] || { echo "valkey9: no $lua" >&2; exit 1; }
real=$prefix/valkey-server.real
if [ ! -x "$real" ] || ! grep -q -- --version "$bin/valkey-server"; then
	[ -x "$real" ] || mv "$bin/valkey-server" "$real"
	# The real server moves aside; valkey-sentinel (a link to it) follows
	# it, since Sentinel loads no module.  In its place, a valkey-server
	# that loads the module (after a config file, which must come first).
	ln -sf "$real" "$bin/valkey-sentinel"
	cat >"$bin/valkey-server" <<WRAP
#!/bin/sh
# valkey9.sh: Valkey 9.1 with its Lua engine, a module of this build.
case \${1-} in
--version|-v|--help|-h) exec "$real" "\$@" ;;
-*|'') exec "$real" --loadmodule "$lua" "\$@" ;;
*) conf=\$1; shift; exec "$real" "\$conf" --loadmodule "$lua" "\$@" ;;
esac
WRAP
	chmod +x "$bin/valkey-server"
fi
# Without Lua: the same names, the real server under each server's name.
mkdir -p "$prefix/bin-nolua"
for f in valkey-cli redis-cli valkey-benchmark; do
	ln -sf "$bin/valkey-${f#*-}" "$prefix/bin-nolua/$f"
done
for f in valkey-server redis-server valkey-sentinel redis-sentinel; do
	ln -sf "$real" "$prefix/bin-nolua/$f"
done
case ${1-} in
nolua) echo "$prefix/bin-nolua" ;;
*) echo "$bin" ;;
esac
