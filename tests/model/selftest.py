#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The checker checked: hand-written histories, each breaking one promise, must be reported
under that promise's name, and an allowed one must not be.  Runs in well under a second:
python3 tests/model/selftest.py (tests/model.bats runs it)."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks

ME = 1   # the checker's own pid: what the server records for a manual acquire


def run(i, key, args, invoke, complete, exit, cs=None, **kw):
    """A `run` client; cs = (start, last, fence, status or None, term or None)."""
    c = {"id": i, "at": invoke, "key": key, "verb": "run", "args": ["-t", "3s"] + args, "hold": 1, "status": 0,
         "tail": 0, "extend": False, "invoke": invoke, "complete": complete, "exit": exit, "pid": 100 + i, "err": ""}
    if cs:
        start, last, fence, status, term = cs
        c["cs"] = {"start": start, "last": last, "fence": fence}
        if status is not None:
            c["cs"].update(end=last, status=status)
        if term is not None:
            c["cs"]["term"] = term
    c.update(kw)
    return c


def hist(clients, faults=(), snaps=(), keys=None):
    return {"prefix": "t-", "servers": 1, "keys": keys or {"k": {}}, "clients": list(clients),
            "faults": list(faults), "snaps": list(snaps), "quiet": 0, "t0": 0}


def snap(t, key, holders=(), waiters=(), held=None, mode="exclusive"):
    return {"t0": t, "t1": t + 0.05, "locks": {key: {
        "held": bool(holders) if held is None else held, "mode": mode, "limit": None, "holders": list(holders),
        "waiters": [{"pid": p, "order": None, "mode": mode} for p in waiters]}}}


CASES = [
    ("allowed", None, hist([
        run(0, "k", [], 0.0, 1.2, 0, (0.1, 1.1, 10, 0, None)),
        run(1, "k", ["-w", "4"], 0.2, 2.3, 3, (1.3, 2.2, 11, 3, None)),
        run(2, "k", ["-s"], 2.5, 3.5, 0, (2.6, 3.4, 11, 0, None)),
        run(3, "k", ["-s"], 2.5, 3.5, 0, (2.7, 3.3, 11, 0, None))])),
    ("two writers at once", "exclusion", hist([
        run(0, "k", [], 0.0, 1.2, 0, (0.1, 1.1, 10, 0, None)),
        run(1, "k", [], 0.2, 1.5, 0, (0.5, 1.4, 11, 0, None))])),
    ("a reader beside a writer", "exclusion", hist([
        run(0, "k", [], 0.0, 1.2, 0, (0.1, 1.1, 10, 0, None)),
        run(1, "k", ["-s"], 0.2, 1.5, 0, (0.5, 1.4, 10, 0, None))])),
    ("three holders of a 2-slot semaphore", "semaphore-limit", hist([
        run(i, "k", ["--limit", "2"], 0.0, 2.0, 0, (0.1 + i / 10, 1.9, 10 + i, 0, None)) for i in range(3)])),
    ("a reader's fence 0", "fences", hist([run(0, "k", ["-s"], 0.0, 1.0, 0, (0.1, 0.9, 0, 0, None))])),
    ("a writer's fence not above the one before", "fences", hist([
        run(0, "k", [], 0.0, 1.0, 0, (0.1, 0.9, 10, 0, None)),
        run(1, "k", [], 1.5, 2.5, 0, (1.6, 2.4, 10, 0, None))])),
    ("a reader below the last writer", "fences", hist([
        run(0, "k", [], 0.0, 1.0, 0, (0.1, 0.9, 10, 0, None)),
        run(1, "k", ["-s"], 1.5, 2.5, 0, (1.6, 2.4, 9, 0, None))])),
    ("a late cancel replaces the command's status", "exit-status", hist([
        run(0, "k", ["--queue", "latest"], 0.0, 2.0, 82, (0.1, 1.0, 10, 0, None)),
        run(1, "k", ["--queue", "latest", "--cancel-running"], 1.5, 3.0, 0, (2.1, 2.9, 11, 0, None))])),
    ("a retry of the same order is outdated", "skip-outdated", hist([
        run(0, "k", ["--order", "5"], 0.0, 1.0, 0, (0.1, 0.9, 10, 0, None)),
        run(1, "k", ["--order", "5", "--skip-outdated"], 1.5, 1.6, 81)])),
    ("a lower order runs after a higher one ran", "skip-outdated", hist([
        run(0, "k", ["--order", "5"], 0.0, 1.0, 0, (0.1, 0.9, 10, 0, None)),
        run(1, "k", ["--order", "3", "--skip-outdated"], 1.5, 2.5, 0, (1.6, 2.4, 11, 0, None))])),
    ("a probe supersedes a waiter", "probe-changes-nobody", hist([
        run(0, "k", ["--queue", "latest"], 0.0, 3.0, 0, (0.1, 2.9, 10, 0, None)),
        run(1, "k", ["--queue", "latest", "-w", "8"], 0.5, 1.6, 80),
        run(2, "k", ["--queue", "latest", "-n"], 1.5, 1.6, 1)])),
    ("a lower order cancels a higher one", "only-higher-cancels", hist([
        run(0, "k", ["--queue", "latest", "--order", "10"], 0.0, 1.6, 82, (0.1, 1.5, 10, None, 1.5)),
        run(1, "k", ["--queue", "latest", "--order", "5", "--cancel-running"], 1.0, 2.6, 0, (1.7, 2.5, 11, 0, None))])),
    ("fifo: a later arrival first", "fifo-order", hist([
        run(0, "k", ["--queue", "fifo"], 0.0, 2.0, 0, (0.1, 1.9, 10, 0, None)),
        run(1, "k", ["--queue", "fifo"], 0.5, 5.0, 0, (3.1, 4.9, 12, 0, None)),
        run(2, "k", ["--queue", "fifo"], 1.5, 3.0, 0, (2.1, 2.9, 11, 0, None))],
        snaps=[snap(1.0, "k", [100], [101])])),
    ("two latest waiters at once", "latest-runs-newest", hist([
        run(0, "k", ["--queue", "latest"], 0.0, 2.0, 0, (0.1, 1.9, 10, 0, None)),
        run(1, "k", ["--queue", "latest"], 0.3, 3.0, 0, (2.1, 2.9, 11, 0, None)),
        run(2, "k", ["--queue", "latest"], 0.6, 4.0, 0, (3.1, 3.9, 12, 0, None))],
        snaps=[snap(1.0, "k", [100], [101, 102])])),
    ("a superseded waiter runs", "superseded-never-runs", hist([
        run(0, "k", ["--queue", "latest", "--order", "1"], 0.0, 3.0, 0, (0.1, 2.9, 10, 0, None)),
        run(1, "k", ["--queue", "latest", "--order", "2"], 0.2, 4.0, 0, (3.1, 3.9, 11, 0, None)),
        run(2, "k", ["--queue", "latest", "--order", "3"], 0.4, 6.0, 0, (4.1, 5.9, 12, 0, None))],
        snaps=[snap(1.5, "k", [100], [101])])),
    ("a cancelled holder runs on", "cancel-stops-holder", hist([
        run(0, "k", ["--queue", "latest", "--order", "1"], 0.0, 5.0, 0, (0.1, 4.9, 10, 0, None)),
        run(1, "k", ["--queue", "latest", "--order", "2", "--cancel-running"], 1.0, 6.0, 0, (5.1, 5.9, 11, 0, None))])),
    ("a forced run's job runs on", "force-stops-run", hist([
        run(0, "k", [], 0.0, 5.0, 75, (0.1, 4.9, 10, None, 4.9))],
        faults=[{"kind": "force", "key": "k", "t": 1.0, "invoke": 1.0, "complete": 1.1, "exit": 0,
                 "removed": [100], "err": ""}])),
    ("allowed: forced, then its guardian killed before the command got the TERM: 75", None, hist([
        run(0, "k", [], 0.0, 1.2, 75, (0.1, 1.05, 10, None, None),
            err="redlock-cli: the command's guardian (pid 101) was killed by SIGKILL: killing what is left of the job\n")],
        faults=[{"kind": "force", "key": "k", "t": 1.0, "invoke": 0.5, "complete": 1.0, "exit": 0,
                 "removed": [100], "err": ""},
                {"kind": "kill", "client": 0, "who": "guardian", "pid": 101, "t": 1.02}])),
    ("allowed: a run killed after its command exited 0 wrote its record: a lower order is outdated", None, hist([
        run(0, "k", ["--order", "5"], 0.0, 1.3, -9, (0.1, 1.0, 10, 0, None)),
        run(1, "k", ["--order", "1", "--skip-outdated"], 2.0, 2.1, 81,
            err="redlock-cli: lock 'k': outdated: order 5 already ran (vm, 2026-12-06T02:07:18Z)\n")],
        faults=[{"kind": "kill", "client": 0, "who": "redlock-cli", "pid": 100, "t": 1.3}])),
    ("allowed: a manual hold's release on a slowed link reaches the server after the TTL: 3", None, hist([
        {"id": 0, "at": 0.8, "key": "k", "verb": "acquire", "args": ["-t", "2s", "-n"], "hold": 1,
         "status": 0, "tail": 0, "extend": False, "invoke": 0.8, "complete": 1.1, "exit": 0,
         "pid": 100, "err": "", "fence": 10, "release_r": {"invoke": 2.1, "complete": 3.0, "exit": 3}}],
        faults=[{"kind": "slow", "t": 0.6, "end": 3.2, "host": None, "rate": "64kbit"}])),
    ("allowed: a force begun as the run began names it before its command starts: 75", None, hist([
        run(0, "k", [], 8.001, 8.14, 75,
            err="redlock-cli: lock 'k' was force-released by vm (pid 7); sending SIGTERM to the command\n")],
        faults=[{"kind": "force", "key": "k", "t": 8.0, "invoke": 8.0, "complete": 8.1, "exit": 0,
                 "removed": [100], "err": ""}])),
    ("a manual hold's release answered inside its TTL says not held", "exit-status", hist([
        {"id": 0, "at": 0.0, "key": "k", "verb": "acquire", "args": ["-t", "3s", "-s"], "hold": 1,
         "status": 0, "tail": 0, "extend": False, "invoke": 0.0, "complete": 0.05, "exit": 0,
         "pid": 100, "err": "", "fence": 10, "release_r": {"invoke": 2.0, "complete": 2.05, "exit": 3}}])),
    ("a force that names nobody", "force-stops-run", hist([
        run(0, "k", [], 0.0, 5.0, 0, (0.1, 4.9, 10, 0, None))],
        faults=[{"kind": "force", "key": "k", "t": 1.0, "invoke": 1.0, "complete": 1.1, "exit": 76,
                 "removed": [], "err": "redlock-cli: key 'k' holds a zset"}])),
    ("a killed run's job lives on", "killed-job-dies", hist([
        run(0, "k", [], 0.0, 1.0, -9, (0.1, 3.5, 10, None, None))],
        faults=[{"kind": "kill", "client": 0, "who": "redlock-cli", "pid": 100, "t": 1.0}])),
    ("a free lock and a waiter", "no-lost-wakeup", hist([
        run(0, "k", [], 0.0, 1.0, 0, (0.1, 0.9, 10, 0, None)),
        run(1, "k", [], 0.5, 5.0, 0, (4.1, 4.9, 11, 0, None))],
        snaps=[snap(1.2 + i / 4, "k", [], [101]) for i in range(10)])),
    ("-w 2 ends after 6 s", "wait-deadline", hist([
        run(0, "k", [], 0.0, 7.0, 0, (0.1, 6.9, 10, 0, None)),
        run(1, "k", ["-w", "2"], 0.5, 6.5, 1)])),
    ("a failure with an empty message", "failure-message", hist([
        run(0, "k", ["--order", "5"], 0.0, 1.0, 0, (0.1, 0.9, 10, 0, None)),
        run(1, "k", ["--order", "4", "--skip-outdated"], 1.5, 1.6, 81, err="redlock-cli: \n")])),
    ("a client hangs", "progress", hist([run(0, "k", [], 0.0, 90.0, -9, hung=True)])),
]


def main():
    failed = 0
    for title, promise, h in CASES:
        got = checks.run_all(h, ME)
        ok = (not got) if promise is None else promise in got
        print("%s %s%s" % ("ok  " if ok else "FAIL", title, "" if ok else ": got %s" % got))
        failed += not ok
    print("%d of %d cases failed" % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
