# SPDX-License-Identifier: MIT
"""The named checks.  Each takes a Model (model.py) and yields (promise, message) pairs; the
promise names are model.PROMISES, which cite the contract.  The state-machine promises
(exclusion, semaphore-limit, fences, skip-outdated) are decided by Model.replay(); the others
are queries over the facts it gathered.  To add a check: a promise in model.PROMISES, a
function here registered in CHECKS, a line in README.md."""
import os
from model import Model, rank_cmp, name, JOIN, AT_ONCE, SLACK, LEASE, SERVER_FAULTS, CUTS

BOUND = AT_ONCE + SLACK


def replayed(m):
    yield from m.violations


def exit_status(m):
    for c in m.clients:
        if c.hung:
            continue
        ok = m.allowed_exits(c)
        if ok is None and c.exit in (64, 76, 77):       # whatever happened, never these (C234-C239)
            ok = set()
        if ok is not None and c.exit not in ok:
            cs = c.cs or {}
            yield ("exit-status", "%s exited %s, allowed %s (command %s, got TERM: %s)%s" % (
                name(c), c.exit, sorted(ok), "ran to its end with %s" % cs["status"] if "end" in cs else
                "did not run" if not cs else "did not end", "term" in cs or "tterm" in cs,
                ": " + c.raw.get("err", "").strip().splitlines()[-1] if c.raw.get("err", "").strip() else ""))
        for r in ("extend_r", "release_r"):
            rr = c.raw.get(r)
            if rr and c.killed is None and rr["exit"] not in m.release_exits(c, rr):
                yield ("exit-status", "%s: %s exited %d, allowed %s (sent %.2f, answered %.2f; "
                       "its hold promised until %.2f)" % (
                           name(c), r[:-2], rr["exit"], sorted(m.release_exits(c, rr)), rr["invoke"],
                           rr["complete"], c.protected_until))


def supersede(m):
    for c in m.clients:
        if c.op.usage_error or not c.op.latest:
            continue
        if c.exit == 80:
            if c.ran():
                yield ("superseded-never-runs", "%s exited 80 after running its command" % name(c))
            near = [d for d in m.same_key(c) if d.op.latest and d.invoke < c.end and d.depart_ub() > c.invoke]
            # A waiter, or a latest holder (a probe that took the lock is one), not certainly lower.
            if not [d for d in near if (not d.op.probe or d.ran()) and rank_cmp(d, c) >= 0]:
                probes = [d for d in near if d.op.probe]
                if probes:
                    yield ("probe-changes-nobody", "%s exited 80 with only probes (%s) of a rank not below "
                           "it beside it" % (name(c), ", ".join(map(name, probes))))
                else:
                    yield ("only-newer-supersedes", "%s exited 80 though no waiter of a rank not below "
                           "its own was there" % name(c))
        if c.op.probe or c.disturbed() or c.server_faulted:
            continue
        # Seen waiting in the server's view while a certainly newer waiter or latest holder was there.
        for s in c.seen_waiting:
            newer = [d for d in m.same_key(c) if d.op.latest and not d.op.probe and not d.op.usage_error
                     and rank_cmp(d, c) == 1 and d.arrival_ub() < s["t0"] and d.depart_lb() > s["t1"]]
            if not newer:
                continue
            d = newer[0]
            if c.ran():
                yield ("superseded-never-runs", "%s ran its command though %s, of a higher rank, was there "
                       "while it waited (at %.2f)" % (name(c), name(d), s["t0"]))
            elif c.exit != 80 or c.complete > s["t1"] + BOUND:
                yield ("superseded-never-runs", "%s waited beside %s, of a higher rank (at %.2f), and "
                       "exited %s at %.2f" % (name(c), name(d), s["t0"], c.exit, c.complete))
            break


def latest_one_waiter(m):
    live = {c.pid: c for c in m.clients if c.op.verb == "run" and not c.disturbed()}
    for s in m.h["snaps"]:
        for key, l in s["locks"].items():
            ws = [live[w["pid"]] for w in l["waiters"] if w["pid"] in live]
            ws = [c for c in ws if c.op.latest and c.key == key]
            if len(ws) > 1:
                yield ("latest-runs-newest", "%d waiters queued at once on latest %s at %.2f: %s" % (
                    len(ws), key, s["t0"], ", ".join(map(name, ws))))
                break


def fifo_order(m):
    for b in m.clients:
        if not b.ran() or b.op.queue not in ("fifo", "latest") or b.disturbed() or b.op.usage_error:
            continue
        for a in m.same_key(b):
            if a.op.probe or a.disturbed() or a.op.usage_error or a.server_faulted:
                continue
            # a was queued before b took the lock, and still queued when b took it.
            if a.arrival_ub() >= (b.invoke if b.op.probe else b.acq_lb()):
                continue
            if not ((a.ran() and a.start > b.start) or (not a.ran() and a.depart_lb() > b.start + SLACK)):
                continue
            if b.op.probe:
                yield ("probe-changes-nobody", "%s took %s at %.2f ahead of queued %s" % (
                    name(b), b.key, b.start, name(a)))
            elif (b.op.queue == "fifo" and b.op.mode != "semaphore" and not (a.op.shared and b.op.shared)
                  and rank_cmp(a, b) == -1):
                yield ("fifo-order", "%s took %s at %.2f ahead of %s, queued with a lower rank" % (
                    name(b), b.key, b.start, name(a)))


def probe_not_queued(m):
    probes = {c.pid: c for c in m.clients if c.op.probe and c.op.verb == "run"}
    for s in m.h["snaps"]:
        for l in s["locks"].values():
            for w in l["waiters"]:
                if w["pid"] in probes:
                    yield ("probe-changes-nobody", "%s was shown waiting at %.2f" % (name(probes[w["pid"]]), s["t0"]))
                    probes.pop(w["pid"])


def cancels(m):
    for c in m.clients:
        if c.exit == 82:
            near = m.cancellers(c, usage_errors=True)
            if not [d for d in near if not d.op.usage_error and not d.op.probe]:
                all_c = [d for d in m.same_key(c) if d.op.cancel and d.invoke < c.end]
                if [d for d in near if d.op.probe] or [d for d in all_c if d.op.probe]:
                    yield ("probe-changes-nobody", "%s was cancelled (82) with only probes asking: %s" % (
                        name(c), ", ".join(name(d) for d in all_c if d.op.probe)))
                else:
                    yield ("only-higher-cancels", "%s was cancelled (82), but no waiter of a higher rank asked: "
                           "%s" % (name(c), ", ".join(map(name, all_c)) or "none"))
        # A certainly higher --cancel-running waiter came while its command ran: it must stop.
        if not (c.op.latest and c.op.verb == "run" and c.ran()) or c.disturbed() or c.server_faulted:
            continue
        main_end = c.cs.get("end", c.cs.get("term", c.last))
        for d in m.same_key(c):
            if not d.op.cancel or d.op.usage_error or d.disturbed() or rank_cmp(d, c) != 1:
                continue
            arr = d.arrival_ub()
            if not (d.invoke > c.start and arr + BOUND < main_end):
                continue
            if d.exit == 80 and d.complete < arr + BOUND:
                continue      # superseded at its arrival by a newer one: it cancels nothing (C124)
            term = min(c.cs.get("term", 1e18), c.cs.get("tterm", 1e18))
            if term > arr + BOUND or c.exit != 82:
                yield ("cancel-stops-holder", "%s kept running (TERM %s, exit %s) after %s asked it to stop "
                       "(by %.2f)" % (name(c), "at %.2f" % term if term < 1e18 else "never", c.exit, name(d), arr))
            break


def forces(m, me):
    for f in m.h["faults"]:
        if f["kind"] != "force" or "exit" not in f:
            continue
        held = [c for c in m.clients if c.key == f["key"] and c.ran() and c.start < f["invoke"]
                and c.last > f["complete"] and c.protected_at(f["invoke"]) and not c.disturbed()]
        ok = {0, 1} | ({69} if any(g["kind"] in ("restart", "proxy", "clock") and g["t"] < f["complete"] and
                                   g.get("end", g["t"]) > f["invoke"] - SLACK for g in m.h["faults"]) else set())
        if f["exit"] not in ok or (f["exit"] == 1 and held):
            yield ("force-stops-run", "release --force on %s exited %d while %s held it: %s" % (
                f["key"], f["exit"], ", ".join(map(name, held)) or "nobody", f["err"].strip()))
        for c in held:
            if (c.pid if c.op.verb == "run" else me) not in f.get("removed", []):
                yield ("force-stops-run", "release --force on %s did not name %s, which held it" % (f["key"], name(c)))
        for c in m.clients:
            if (c.forced is not f or c.op.verb != "run" or not c.ran() or c.disturbed()
                    or c.last < f["complete"] + BOUND):
                continue
            term = min(c.cs.get("term", 1e18), c.cs.get("tterm", 1e18))
            if term > f["complete"] + BOUND:
                yield ("force-stops-run", "%s was force-released at %.2f, but its job ran on to %.2f unsignalled" % (
                    name(c), f["complete"], c.last))


def killed_jobs(m):
    for c in m.clients:
        for t in (c.killed, c.guard_killed):
            if t is not None and c.ran() and c.start < t and c.last > t + BOUND:
                yield ("killed-job-dies", "%s was SIGKILLed at %.2f; its job still ran at %.2f" % (name(c), t, c.last))


def lost_wakeups(m):
    h, me = m.h, m.me
    runs = {c.pid: c for c in m.clients if c.op.verb == "run"}
    quiet_after = {}   # key -> time before which waiters may be held up by a dead or stopped one
    for c in m.clients:
        for f in c.faults:
            quiet_after[c.key] = max(quiet_after.get(c.key, 0), f.get("end", f["t"]) + 2 * LEASE + 4)
    server = [(f["t"] - SLACK, f.get("end", f["t"]) + max(LEASE, 3.0) + SLACK) for f in h["faults"]
              if f["kind"] in SERVER_FAULTS]

    def live(pid, key, s):
        if pid == me:
            return any(c.op.verb == "acquire" and c.key == key and c.invoke < s["t0"] and c.complete > s["t1"]
                       and not c.disturbed() for c in m.clients)
        c = runs.get(pid)
        return c is not None and c.invoke < s["t0"] and c.complete > s["t1"]

    def stuck(key, l, s):
        if not l["waiters"] or s["t0"] < quiet_after.get(key, 0):
            return False
        if any(a <= s["t1"] and s["t0"] <= b for a, b in server):
            return False
        if not all(live(w["pid"], key, s) for w in l["waiters"]):
            return False
        if not l["holders"]:
            return True
        if l["mode"] == "semaphore" and l.get("limit"):
            return len(l["holders"]) < l["limit"]
        return l["mode"] == "shared" and all(w["mode"] == "shared" for w in l["waiters"])

    for key in h["keys"]:
        first = prev = None
        for s in h["snaps"]:
            l = s["locks"].get(key)
            if l is not None and stuck(key, l, s) and (prev is None or s["t0"] - prev["t1"] < 1.0):
                first = first or s
                prev = s
                if s["t0"] - first["t1"] > BOUND:
                    yield ("no-lost-wakeup", "%s was free (%s) from %.2f to %.2f while %s waited" % (
                        key, "no holder" if not l["holders"] else "a slot or a share free", first["t1"],
                        s["t0"], ", ".join(str(w["pid"]) for w in l["waiters"])))
                    break
            else:
                first = prev = None


def deadlines(m):
    for c in m.clients:
        if c.hung or c.killed is not None or c.op.wait is None:
            continue
        acquired = c.ran() if c.op.verb == "run" else c.exit == 0
        bound = c.deadline_bound()
        if not acquired and c.complete > bound:
            yield ("wait-deadline", "%s with -w %s ended %.2fs after its start (exit %s)" % (
                name(c), c.op.wait, c.complete - c.invoke, c.exit))
        if acquired and c.op.verb == "run" and c.start > bound + 1.0:
            yield ("wait-deadline", "%s with -w %s started its command %.2fs after its start" % (
                name(c), c.op.wait, c.start - c.invoke))


def footprint(m):
    for srv, key, pttl in m.h.get("footprint", []):
        yield ("footprint", "server %d still has %s (PTTL %s ms) %.0fs after the attempt went quiet" % (
            srv, key, pttl, m.h.get("footprint_after", 0)))


def messages(m):
    for c in m.clients:
        if c.exit in (0, None) or c.hung or c.killed is not None or c.exit < 0:
            continue
        if c.cs and "end" in c.cs and c.exit == c.cs["status"]:
            continue                       # the command's own status: its own business
        lines = [l.strip() for l in c.raw.get("err", "").splitlines()]
        said = [l for l in lines if l.startswith("redlock-cli:") and l[len("redlock-cli:"):].strip()]
        if not said or "redlock-cli:" in lines:
            yield ("failure-message", "%s exited %d with stderr %r" % (name(c), c.exit, c.raw.get("err", "")[-200:]))
        elif c.op.verb == "acquire" and c.raw.get("out", "").strip():
            yield ("failure-message", "%s exited %d with stdout %r" % (name(c), c.exit, c.raw["out"][:200]))


def progress(m):
    for c in m.clients:
        if c.hung:
            yield ("progress", "%s was still running %.0fs after its start" % (name(c), c.complete - c.invoke))


def cuts(m):
    """A run cut off from a majority of its servers (partition, oneway) for longer than its TTL:
    its last acknowledged renewal came before the cut, so its lock's validity ends at most a TTL
    after it, and its command must have had the lost-signal by then (C72-C74); its job's last
    sign of life may come a moment later (SIGTERM's handler, then SIGKILL at the validity's end)."""
    n = m.h["servers"]
    for f in m.h["faults"]:
        if f["kind"] not in CUTS or "end" not in f or 2 * len(f["servers"]) <= n:
            continue
        for c in m.clients:
            if c.op.verb != "run" or not c.ran() or c.host != f["host"] or c.start >= f["t"]:
                continue
            if c.disturbed() or c.forced or c.last < f["t"]:
                continue
            if f["end"] < f["t"] + c.op.ttl:
                continue      # healed within a TTL: its renewals may go on
            if c.last > f["t"] + c.op.ttl + BOUND:
                yield ("cut-stops-run", "%s was cut off from servers %s at %.2f (until %.2f) with a %gs TTL; "
                       "its job ran on to %.2f (TERM %s)" % (name(c), f["servers"], f["t"], f["end"], c.op.ttl,
                                                          c.last, "at %.2f" % c.cs["term"] if "term" in c.cs
                                                          else "never"))


def cut_to_signal(h):
    """The longest time from a network fault on a client host (partition, oneway, hang) to the
    lost-signal of a command that was running on it: [(seconds, kind)]."""
    out = []
    for f in h["faults"]:
        if f["kind"] not in CUTS + ("hang",):
            continue
        for c in h["clients"]:
            cs = c.get("cs") or {}
            if c.get("host") == f["host"] and "term" in cs and cs["start"] < f["t"] <= cs["term"] \
                    and cs["term"] < f.get("end", f["t"]) + 1.0:
                out.append((cs["term"] - f["t"], f["kind"]))
    return out


def fenced_writes(h):
    """The toy resource (cs): (accepted, refused, stale accepted).  A stale write is one made
    after another exclusive holder of the same name, with a higher fence, had started its
    command: a write the lock alone should have prevented.  The resource keeps the highest fence
    it took and refuses lower ones; a stale write it accepted got through the fence too (it came
    before the newer holder's first write)."""
    acc = ref = stale = 0
    runs = [c for c in h["clients"] if (c.get("cs") or {}).get("writes")]
    for c in runs:
        others = [(d["cs"]["start"], d["cs"]["fence"]) for d in runs
                  if d is not c and d["key"] == c["key"] and d["cs"].get("fence") is not None]
        for t, ok in c["cs"]["writes"]:
            if not ok:
                ref += 1
                continue
            acc += 1
            if any(st < t and fe > c["cs"]["fence"] for st, fe in others):
                stale += 1
    return acc, ref, stale


CHECKS = [replayed, exit_status, supersede, latest_one_waiter, fifo_order, probe_not_queued, cancels,
          lambda m: forces(m, m.me), killed_jobs, lost_wakeups, deadlines, footprint, messages, progress, cuts]


def run_all(h, me=None):
    """{promise: [messages]} for every promise the history breaks; {} when it is allowed."""
    m = Model(h, me if me is not None else os.getpid())
    out = {}
    for check in CHECKS:
        for promise, msg in check(m):
            out.setdefault(promise, []).append(msg)
    return out
