# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# What the contention files (contention.bats: waking and hand-off,
# fair.bats: --queue fifo, semaphore.bats: --limit) share: one server per
# file, flushed before each test, and the probes of its state and of
# overlapping jobs.  Loaded after helpers.bash.

setup_file() {
	redis_start main
}

teardown_file() {
	redis_stop main
}

setup() {
	redis_flush
	D=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg_jobs
}

# Server time in ms (the clock of semaphore expiries).
server_ms() {
	rcli main TIME | tr -d '\r' |
	    { read -r s; read -r us; echo $(( s * 1000 + us / 1000 )); }
}

# At least N clients are blocked in BZPOPMIN on main right now.
blocked_at_least() { [ "$(blocked_on main)" -ge "$1" ]; }

# Calls of one command since CONFIG RESETSTAT (0 if never called).
cmd_calls() {
	local n
	n=$(rcli main INFO commandstats | tr -d '\r' |
	    sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p")
	echo "${n:-0}"
}

# Every command the server ran since CONFIG RESETSTAT, calls made inside
# Lua scripts included, except our own INFO and CONFIG.
all_calls() {
	rcli main INFO commandstats | tr -d '\r' |
	    sed -n 's/^cmdstat_\([a-z|]*\):calls=\([0-9]*\),.*/\1 \2/p' |
	    awk '$1 != "info" && $1 != "config" { n += $2 } END { print n + 0 }'
}

queue_len_is() { [ "$(rcli main ZCARD '{k}:queue')" = "$1" ]; }
queue_has() { rcli main ZRANGE '{k}:queue' 0 -1 | grep -qxF -- "$1"; }
# (A bare "! cmd" never fails a bats test: these are functions instead.)
queue_lacks() { ! queue_has "$1"; }
server_time_past() { [ "$(server_ms)" -gt "$1" ]; }

# A critical section that detects overlap: mkdir fails if another holder
# is inside.  Every entry is logged in $1/ran, every overlap in
# $1/overlaps.
write_probe() {
	cat >"$D/probe" <<'EOF'
#!/bin/sh
d=$1
if ! mkdir "$d/inside" 2>/dev/null; then
	echo overlap >>"$d/overlaps"
	exit 0
fi
echo "$$" >>"$d/ran"
sleep 0.02
rmdir "$d/inside"
EOF
	chmod +x "$D/probe"
}

# A job that counts how many jobs run at once, under flock(1), and keeps
# the largest count in $1/max.
write_counter_job() {
	echo 0 >"$D/cur"
	echo 0 >"$D/max"
	cat >"$D/job" <<'EOF'
#!/bin/sh
d=$1
(
	flock 9
	n=$(( $(cat "$d/cur") + 1 ))
	echo "$n" >"$d/cur"
	[ "$n" -gt "$(cat "$d/max")" ] && echo "$n" >"$d/max"
) 9>"$d/counter.lock"
echo x >>"$d/ran"
sleep 0.3
(
	flock 9
	echo $(( $(cat "$d/cur") - 1 )) >"$d/cur"
) 9>"$d/counter.lock"
EOF
	chmod +x "$D/job"
}

