#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/hardened.sh: what the hardened default build (shared C library
# and OpenSSL, PIE, full RELRO) and the static-pie build (make STATIC=1)
# cost at start-up, next to flock(1) and /bin/true, then cases A and C of
# bench/run.sh for each, in one run.  Reported figures, not gates
# (bench/README.md, "Hardened and static-pie").
#
# Start-up: hyperfine -N, `redlock-cli --version` (no server, no
# connection: the loader, relocations and main's first steps), `flock
# FILE true` and `/bin/true`; RUNS (3) runs of BENCH_N (300) each; the
# median of the run medians and their range (min-max) are printed.
# BENCH_AC=0 skips cases A and C.  Needs hyperfine (make bench-deps).
set -euo pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
N=${BENCH_N:-300}
OUT=$ROOT/bench/out/hardened
mkdir -p "$OUT"
command -v hyperfine >/dev/null || { echo "hardened.sh: needs hyperfine (make bench-deps)" >&2; exit 1; }

make --no-print-directory -j2 redlock-cli >/dev/null
make --no-print-directory -j2 STATIC=1 BUILDDIR=build/bench-static \
    build/bench-static/redlock-cli >/dev/null 2>&1
default=$ROOT/redlock-cli static=$ROOT/build/bench-static/redlock-cli
lockf=$OUT/flock.lock

# One hyperfine run per round, the four commands interleaved by round.
for ((r = 1; r <= RUNS; r++)); do
	hyperfine -N -w 20 -r "$N" --export-json "$OUT/startup.$r.json" \
	    -n default "$default --version" -n static-pie "$static --version" \
	    -n flock "flock $lockf true" -n true "/bin/true" >/dev/null 2>&1
done
echo "## Start-up (ms): median of $RUNS runs of $N, [min-max of the run medians]"
python3 - "$OUT" "$RUNS" <<'PY'
import json, sys, statistics
out, runs = sys.argv[1], int(sys.argv[2])
m = {}
for r in range(1, runs + 1):
    for res in json.load(open(f"{out}/startup.{r}.json"))["results"]:
        m.setdefault(res["command"], []).append(res["median"] * 1000)
for name, v in m.items():
    print(f"| {name} | {statistics.median(v):.3f} | {min(v):.3f}-{max(v):.3f} |")
PY
[ "${BENCH_AC:-1}" = 0 ] && exit 0
for b in default static; do
	echo "## Cases A and C: $b"
	for ((r = 1; r <= RUNS; r++)); do
		REDLOCK_CLI=${!b} BENCH_CASES="A C" bash bench/run.sh \
		    >"$OUT/ac.$b.$r.log" 2>&1 || { tail -n 5 "$OUT/ac.$b.$r.log"; exit 1; }
		cp bench/out/report.md "$OUT/ac.$b.$r.md"
		grep -E '^\| (A|C) \|' "$OUT/ac.$b.$r.md"
	done
done
