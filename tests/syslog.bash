# SPDX-License-Identifier: MIT
# A test syslog, for the --syslog tests: in a private mount namespace, a
# tmpfs over /dev holds a socket at /dev/log (syslog(3) always writes
# there), read by socat into a file.

# syslog_need: skip the test when that cannot be set up here.
syslog_need() {
	need socat
	unshare -m true 2>/dev/null ||
	    skip "unshare -m is not permitted here (needs root)"
}

# syslog_run DIR PATTERN CMD...: run CMD with the test syslog; its stdout,
# stderr and exit status go to DIR/out, DIR/err and DIR/rc, what reached
# syslog to DIR/syslog, read until PATTERN is in it (or 5 s passed).
syslog_run() {
	local t=$1
	mkdir -p "$t"
	cat >"$t/inner.sh" <<'EOF'
t=$1; pattern=$2; shift 2
mount --make-rprivate / || exit 90
mkdir -p "$t/realdev" && mount --rbind /dev "$t/realdev" || exit 91
mount -t tmpfs -o mode=755 testdev /dev || exit 92
for f in null zero urandom random; do
	: >"/dev/$f" && mount --bind "$t/realdev/$f" "/dev/$f" || exit 93
done
ln -s /proc/self/fd /dev/fd
socat -u UNIX-RECV:/dev/log,mode=666 OPEN:"$t/syslog",creat,append 3>&- &
sp=$!
for i in $(seq 100); do [ -S /dev/log ] && break; sleep 0.05; done
[ -S /dev/log ] || { kill "$sp"; exit 94; }
"$@" >"$t/out" 2>"$t/err"
echo $? >"$t/rc"
for i in $(seq 100); do
	grep -q "$pattern" "$t/syslog" 2>/dev/null && break
	sleep 0.05
done
kill "$sp"
wait "$sp"
exit 0
EOF
	unshare -m bash "$t/inner.sh" "$@"
}

# syslog_lines DIR: what reached syslog, one message a line (a datagram
# ends with no newline; each starts with <PRIORITY>).
syslog_lines() {
	sed -E 's/<([0-9]+)>/\n<\1>/g' "$1/syslog" | sed '/^$/d'
}
