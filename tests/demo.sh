#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: the main job against a throwaway redis-server.  Three "cron
# jobs" start at the same moment on one lock; they take turns, each gets a
# higher fencing token, and a fourth that will not wait gives up at once.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/redlock-cli"
dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-demo.XXXXXX")
cleanup() {
	if [ -f "$dir/pid" ]; then
		kill "$(cat "$dir/pid")" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

redis-server --port 0 --unixsocket "$dir/sock" --save '' --appendonly no \
    --daemonize yes --pidfile "$dir/pid" --dir "$dir" --logfile "$dir/log"
i=0
until [ "$(redis-cli -s "$dir/sock" PING 2>/dev/null)" = PONG ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "redis-server did not start" >&2; exit 1; }
	sleep 0.05
done
REDLOCK_URL="unix://$dir/sock"
export REDLOCK_URL

echo "== three jobs want the lock 'nightly' at once; they take turns:"
for n in 1 2 3; do
	"$bin" run nightly -t 5s -- sh -c \
	    'echo "   job '"$n"' starts (fence $REDLOCK_FENCE) at $(date +%T.%N | cut -c1-12)"; sleep 1; echo "   job '"$n"' ends"' &
done
sleep 0.3
echo "== while they run, redlock-cli status nightly says:"
"$bin" status nightly | sed 's/^/   /'
echo "== a fourth job with -n does not wait (exit status 1):"
"$bin" run nightly -n -- echo "never printed" || echo "   exit status $?"
wait
echo "== all done; the lock is free again:"
"$bin" status nightly | sed 's/^/   /' || true
echo "== by hand in a script: token=\$(redlock-cli acquire KEY) ... release:"
token=$("$bin" acquire manual-step -t 10s)
echo "   acquired, token $token"
"$bin" release manual-step --token "$token" && echo "   released"
