#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: the main jobs against a throwaway redis-server, each command
# shown before what it prints.  Three hosts' cron jobs start at the same
# moment on one lock: one runs, the others skip.  Three deploys that wait
# take turns, each with a higher fence.  Then a lock held by hand.
# DEMO_BIN: the redlock-cli to show (the Makefile's build).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
bin=${DEMO_BIN:-$here/redlock-cli}
dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-demo.XXXXXX")
step="starting redis-server"
# A step that fails stops the demo (set -e): say which (and the server's
# log, if it did not start), rather than end in silence.
cleanup() {
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "make demo: stopped at $step (exit $rc)" >&2
		[ "$step" != "starting redis-server" ] || [ ! -s "$dir/log" ] ||
		    tail -n 20 "$dir/log" >&2
	fi
	if [ -f "$dir/pid" ]; then
		kill "$(cat "$dir/pid")" 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

redis-server --port 0 --unixsocket "$dir/sock" --save '' --appendonly no \
    --daemonize yes --pidfile "$dir/pid" --dir "$dir" --logfile "$dir/log"
# Up to 30 s by the clock, not by a count of tries: a loaded machine
# may take long to start processes.
end=$(($(date +%s) + 30))
until [ "$(redis-cli -s "$dir/sock" PING 2>/dev/null)" = PONG ]; do
	[ "$(date +%s)" -lt "$end" ] ||
	    { echo "redis-server did not start" >&2; exit 1; }
	sleep 0.05
done
REDLOCK_URL="unix://$dir/sock"
export REDLOCK_URL
# The commands as a user types them: redlock-cli on PATH.
mkdir "$dir/bin"
ln -s "$bin" "$dir/bin/redlock-cli"
PATH="$dir/bin:$PATH"

# show TEXT: a step's title; cmd ARGS...: the command, then its output.
show() { echo; printf '# %s\n' "$@"; }
cmd() { printf '$ %s\n' "$*"; step="'$*'"; }

echo "redis-server on $REDLOCK_URL (REDLOCK_URL), stopped at the end"

show "Three hosts' cron fire at once.  -n: the hosts that find the lock" \
    "held skip this run; --min-hold 1m: a host whose cron is late skips too."
job='echo "host $HOST runs the report"; sleep 1'
cmd "redlock-cli run -n --min-hold 1m nightly -- sh -c '$job'    # on 3 hosts"
for h in a b c; do
	HOST=$h redlock-cli run -n --min-hold 1m nightly -- sh -c "$job" \
	    || echo "host $h skipped (exit $?)" &
done
wait
cmd "redlock-cli status nightly"
redlock-cli status nightly

show "Three deploys that wait (-w) take turns.  REDLOCK_FENCE grows with" \
    "every holder: a resource that keeps the highest fence it has seen can" \
    "refuse a late write from an older holder."
job='echo "deploy $N starts, fence $REDLOCK_FENCE"; sleep 0.5'
cmd "redlock-cli run -w 30s deploy -- sh -c '$job'    # 3 at once"
for n in 1 2 3; do
	N=$n redlock-cli run -w 30s deploy -- sh -c "$job" &
done
wait

show "A lock held across a script's steps, by hand."
cmd 'token=$(redlock-cli acquire -t 1m reindex)'
token=$(redlock-cli acquire -t 1m reindex)
cmd "redlock-cli status reindex"
redlock-cli status reindex
cmd 'redlock-cli release reindex --token "$token"'
redlock-cli release reindex --token "$token"
echo
echo "See 'redlock-cli help' and man redlock-cli for more."
