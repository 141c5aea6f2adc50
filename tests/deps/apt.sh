#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/deps/apt.sh PKG...: install those of the Debian packages PKG...
# that are not installed yet (apt-get, through sudo unless root), quietly;
# one line names them.  For make deps and make demo-deps; make check never
# calls it.
set -eu
missing=
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed' || missing="$missing $p"
done
[ -n "$missing" ] || exit 0
echo "installing:$missing"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
# shellcheck disable=SC2086 # a list of package names
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends $missing >/dev/null
