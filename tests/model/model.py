# SPDX-License-Identifier: MIT
"""The reference model: the promises of the interface contract (CONTRACT.md, the project's shared
contract, of which the man page is the user's copy; cited by line as C<n>) as a sequential state
machine over a history recorded by runner.py.

A history is concurrent, but every time in it is on one clock (CLOCK_MONOTONIC), and what a
client did is bracketed: its request reached the server after it started (invoke) and before
JOIN more seconds, it held the lock from before its command's first line (cs `start`) to after
the job's last sign of life (cs `last`), a manual hold from before `acquire` returned to after
`release` was called.  Model.replay() walks the events of all clients in time order and keeps,
per lock name, the state the contract speaks of: who holds it and whether that hold is still
protected, the fences handed out, the highest order recorded by --skip-outdated.  Each rule is
checked at the event where the contract decides it; a rule that needs the whole life of a client
(queues, exit statuses, timings) is a query on the facts gathered here, asked by checks.py.

Every bound is one-sided so that a violation is a certainty, not a guess: a pair whose order
the clock cannot tell (two arrivals closer than JOIN) is not judged."""

# The faults of servers and of the network: each may make a server unreachable, slow or forgetful
# for a while.  A network fault on a client host touches only the clients on that host; a
# server's fault (restart, proxy, its clock) every client.
SERVER_FAULTS = ("restart", "proxy", "partition", "oneway", "hang", "slow", "clock")
CUTS = ("partition", "oneway")     # nothing of a renewal's reply comes back while these last


def touches(f, host):
    """Fault f may have kept a client on `host` from its servers."""
    return f["kind"] in SERVER_FAULTS and ("host" not in f or host is None or f["host"] == host)


JOIN = 1.0     # from a client's start to its first request at the server (its arrival)
AT_ONCE = 1.0  # the contract's "at once" / "within 1 s" (C121, C131, C175)
SLACK = 0.75   # scheduling noise on a loaded 2-core machine, added to every time bound
LEASE = 3.0    # a queued waiter's lease (man page QUEUES): a stopped one may lose its place

# Each promise: the contract lines it comes from, and what it says.
PROMISES = {
    "exclusion": ("C56, C146-C147", "an exclusive holder holds alone; shared holders only beside shared ones"),
    "semaphore-limit": ("C81", "at most N holders of a --limit N semaphore at once"),
    "fences": ("C79-C80, C160-C161", "a fence is > 0; an exclusive (or semaphore) holder's is larger than "
               "every fence handed out before; a shared holder's is at least every earlier exclusive one's"),
    "exit-status": ("C64-C67, C101-C102, C229-C247", "the exit status is one the contract allows for what "
                    "happened; whenever the command ran to its end, it is the command's own"),
    "skip-outdated": ("C125-C129", "a --skip-outdated run never runs once a greater order ran to exit 0, "
                      "and exits 81 only then; a retry of the same order is not outdated"),
    "fifo-order": ("C118", "--queue fifo waiters take the lock in rank order, lowest first"),
    "latest-runs-newest": ("C120", "--queue latest: at most one waiter; the lock goes to the newest"),
    "superseded-never-runs": ("C120-C124", "a waiter with a newer one beside it exits 80 at once, "
                              "without running its command"),
    "only-newer-supersedes": ("C120-C124", "exit 80 only when a waiter of a higher rank came"),
    "probe-changes-nobody": ("C112-C113", "an attempt that does not wait supersedes nobody, cancels nobody, "
                             "leaves nothing in the queue (nor jumps it)"),
    "only-higher-cancels": ("C130-C134", "--cancel-running cancels only a latest run of a lower rank"),
    "cancel-stops-holder": ("C130-C133", "a higher --cancel-running waiter makes the latest holder signal "
                            "its command within 1 s and exit 82"),
    "force-stops-run": ("C172-C176, C135-C137", "release --force removes every holder and names it; a removed "
                        "run's command gets the lost-signal within 1 s, run exits 75 (the command's own "
                        "status when it had already exited)"),
    "killed-job-dies": ("C75-C76, C106-C107", "when redlock-cli is SIGKILLed, every process of the job is "
                        "gone within 1 s"),
    "no-lost-wakeup": ("C58-C59", "no waiter still waits while the lock has been free for more than 1 s"),
    "wait-deadline": ("C35, C57-C58", "-w DUR fails after DUR (plus the I/O timeout of the attempt under way); "
                      "-n fails at once"),
    "footprint": ("C177-C179", "10 s after the last holder of a name released or expired, only its fence "
                  "counter and records are left"),
    "failure-message": ("C140, C245-C246", "every failure prints a line `redlock-cli: <what happened>` on "
                        "stderr, never an empty one, and nothing on stdout"),
    "progress": ("C57", "every client ends (nobody hangs)"),
    "cut-stops-run": ("C72-C74", "a run cut off from a majority of its servers for longer than its TTL "
                      "signals its command before the TTL, counted from the cut, has passed"),
}


def opt(args, name):
    return args[args.index(name) + 1] if name in args else None


def seconds(d):
    return float(d[:-1]) if d.endswith("s") else float(d)


class Op:
    """What a client asked for, from its arguments."""
    def __init__(self, c, key):
        a = c["args"]
        self.verb, self.key, self.args = c["verb"], c["key"], a
        self.limit = int(opt(a, "--limit")) if "--limit" in a else None
        self.shared = "-s" in a
        self.mode = "semaphore" if self.limit else "shared" if self.shared else "exclusive"
        self.queue = opt(a, "--queue") or "any"
        self.order = int(opt(a, "--order")) if "--order" in a else None
        self.cancel, self.skip = "--cancel-running" in a, "--skip-outdated" in a
        w = opt(a, "-w")
        self.probe = "-n" in a or w == "0"
        self.wait = 0.0 if self.probe else (float(w) if w is not None else None)
        self.ttl = seconds(opt(a, "-t") or "30s")
        self.usage_error = self.cancel and self.probe          # C24, C113
        self.latest = self.queue == "latest"


class Client:
    """One client's facts: times, outcome, hold, and what faults touched it."""
    def __init__(self, c, h, me):
        self.raw, self.id, self.op = c, c["id"], Op(c, c["key"])
        self.key, self.pid = c["key"], (c.get("pid") if c["verb"] == "run" else me)
        self.host = c.get("host")     # its client host on the test network (None: no network)
        self.invoke, self.complete = c.get("invoke", c["at"]), c.get("complete")
        self.exit, self.hung = c.get("exit"), c.get("hung", False)
        self.cs = c.get("cs") if c["verb"] == "run" else None
        self.start = self.last = self.fence = None
        if self.cs:
            self.start, self.last, self.fence = self.cs["start"], self.cs["last"], self.cs["fence"]
        elif c["verb"] == "acquire" and self.exit == 0 and "release_r" in c:
            self.start, self.fence = self.complete, c.get("fence")
            self.last = c["release_r"]["invoke"]
        self.faults = [f for f in h["faults"] if f.get("client") == self.id and "pid" in f]
        self.killed = next((f["t"] for f in self.faults if f["kind"] == "kill" and f["who"] == "redlock-cli"), None)
        self.guard_killed = next((f["t"] for f in self.faults if f["kind"] == "kill" and f["who"] == "guardian"), None)
        self.stops = [f for f in self.faults if f["kind"] == "stop"]
        self.end = self.complete if self.complete is not None else self.invoke
        for r in ("extend_r", "release_r"):
            if r in c:
                self.end = max(self.end, c[r]["complete"])
        # Server faults (restart, proxy, the network's) while it ran: unavailable (69) and lost
        # locks are allowed.
        self.server_faulted = any(touches(f, self.host) and f["t"] < self.end + SLACK and
                                  f.get("end", f["t"]) > self.invoke - SLACK for f in h["faults"])
        self.forced = None     # the first force that named it (or, for a manual hold, may have)
        for f in h["faults"]:
            if f["kind"] == "force" and f["key"] == self.key and self.pid in f.get("removed", []):
                # Removed between its take and its command's start: the force named it, so it
                # ran after its take, whenever the force itself began (regressions/force-at-start).
                if self.start is None and c["verb"] == "run" and f["t"] < self.end and \
                        f["complete"] > self.invoke:
                    self.forced = f
                    break
                if self.start is not None and f["t"] < self.end and f["complete"] > self.start - JOIN:
                    self.forced = f
                    break
        # Until when its hold is promised: not after a force named it, nor once a stop of
        # redlock-cli outlasted the safety margin (man page CAVEATS: a paused holder), nor past a
        # manual hold's TTL counted from its last acquire or extend.
        self.protected_until = float("inf")
        if self.forced:
            self.protected_until = self.forced["t"]
        for f in self.stops:
            if f["who"] == "redlock-cli" and f["dur"] > self.op.ttl / 4:
                self.protected_until = min(self.protected_until, f["t"])
        if c["verb"] == "acquire" and self.start is not None:
            since = c["invoke"]
            if c.get("extend_r", {}).get("exit") == 0:
                since = c["extend_r"]["invoke"]
            self.protected_until = min(self.protected_until, since + self.op.ttl * 0.99 - 0.002)
        # The server's view: when it was seen waiting.
        self.seen_waiting = []
        if c["verb"] == "run" and self.pid:
            for s in h["snaps"]:
                l = s["locks"].get(self.key)
                if l and any(w["pid"] == self.pid for w in l["waiters"]):
                    self.seen_waiting.append(s)

    # --- derived bounds -------------------------------------------------------------------
    def ran(self):
        return self.start is not None

    def disturbed(self):
        """Stopped or killed: its timing and its place in a queue are not promised."""
        return bool(self.stops) or self.killed is not None or self.guard_killed is not None

    def protected_at(self, t):
        return t < self.protected_until

    def arrival_ub(self):
        """Its first request reached the server by then."""
        t = self.invoke + JOIN
        if self.seen_waiting:
            t = min(t, self.seen_waiting[0]["t1"])
        if self.start is not None:
            t = min(t, self.start)
        return t

    def acq_lb(self):
        """It did not yet hold the lock then (it was seen waiting, or had not started)."""
        return max([self.invoke] + [s["t0"] for s in self.seen_waiting])

    def depart_lb(self):
        """It was still queued, or holding, until at least then."""
        if self.disturbed():
            return min([f["t"] for f in self.faults] + [self.invoke])
        if self.ran():
            return self.last
        t = self.complete if self.complete is not None else self.invoke
        if self.op.wait is not None:
            t = min(t, self.invoke + self.op.wait)
        return t

    def depart_ub(self):
        """It had left the queue, and released, by then."""
        t = self.end
        if self.disturbed() or self.server_faulted:
            t += max(LEASE, self.op.ttl) + SLACK   # a dead waiter's lease; a hold whose release failed
        return t

    def deadline_bound(self):
        """When a waiter that gave up must have ended (C57-C58): its -w, the attempt under way
        (the I/O timeout, 1 s, C35), and more when a server fault needs the connect timeout (1 s)
        and the give-back of an attempt whose reply was lost (one I/O timeout in all, man page
        --io-timeout; misbehaving.bats, "a probe whose reply is lost")."""
        b = self.invoke + (self.op.wait or 0) + 1.0 + SLACK
        if self.server_faulted:
            b += 2.0
        return b + sum(f["dur"] for f in self.stops)


def rank_cmp(a, b):
    """-1 if a's rank is certainly lower than b's, 1 if certainly higher, 0 if the clock cannot
    tell (C114-C116: --order N, else the server's time of first arrival; equal orders: the
    later arrival is the newer)."""
    if a.op.order is not None and b.op.order is not None and a.op.order != b.op.order:
        return -1 if a.op.order < b.op.order else 1
    if a.arrival_ub() < b.invoke:
        return -1
    if b.arrival_ub() < a.invoke:
        return 1
    return 0


class Model:
    """Replays a history; `violations` is a list of (promise, message)."""
    def __init__(self, h, me):
        self.h, self.me = h, me
        self.clients = [Client(c, h, me) for c in h["clients"]]
        self.by_pid = {c.pid: c for c in self.clients if c.op.verb == "run" and c.pid}
        self.violations = []
        self.replay()

    def bad(self, promise, msg):
        self.violations.append((promise, msg))

    def events(self):
        ev = []
        for c in self.clients:
            ev.append((c.invoke, 0, "invoke", c))
            if c.ran():
                ev.append((c.start, 2, "start", c))
                ev.append((c.last, 1, "end", c))
            # The record is written once the command exited 0 (C125-C129); a redlock-cli
            # SIGKILLed after that may have written it (regressions/killed-after-record).
            if c.op.order is not None and c.exit in (0, -9) and c.cs and c.cs.get("status") == 0 and \
                    "end" in c.cs:
                ev.append((c.cs["end"], 3, "record-written", c))     # possibly from here on
                if c.exit == 0 and not c.server_faulted:   # a server down at its end may have missed it
                    ev.append((c.complete, 3, "record-sure", c))     # surely from here on
            if c.exit == 81:
                ev.append((c.complete, 4, "outdated", c))
        return sorted(ev, key=lambda e: (e[0], e[1], e[3].id))

    def replay(self):
        state = {}
        for t, _, kind, c in self.events():
            k = state.setdefault(c.key, {"holders": set(), "fence_max": 0, "writer_max": 0,
                                         "done_sure": None, "done_possible": None})
            getattr(self, "on_" + kind.replace("-", "_"))(k, c, t)

    def on_invoke(self, k, c, t):
        # Fences handed out before it asked: its own must exceed (or, shared, reach) them.
        c.need = (k["fence_max"], k["writer_max"])

    def on_start(self, k, c, t):
        others = [h for h in k["holders"] if h.protected_at(t)]
        if c.protected_at(t):
            if c.op.mode == "exclusive" and others:
                self.bad("exclusion", "%s started while %s held %s" % (name(c), ", ".join(map(name, others)), c.key))
            elif c.op.mode == "shared" and [h for h in others if h.op.mode == "exclusive"]:
                self.bad("exclusion", "shared %s started while exclusive %s held %s" % (
                    name(c), ", ".join(name(h) for h in others if h.op.mode == "exclusive"), c.key))
            elif c.op.mode == "semaphore" and len(others) + 1 > c.op.limit:
                self.bad("semaphore-limit", "%s started as holder %d of a %d-slot semaphore %s (with %s)" % (
                    name(c), len(others) + 1, c.op.limit, c.key, ", ".join(map(name, others))))
        f = c.fence
        if f is None or f <= 0:
            self.bad("fences", "%s got fence %s, not > 0" % (name(c), f))
        elif c.op.mode == "shared":
            lim = max(c.need[1], k["writer_max"] if c.protected_at(t) else 0)
            if f < lim:
                self.bad("fences", "shared %s got fence %d, below an earlier exclusive holder's %d" % (name(c), f, lim))
        else:
            lim = c.need[0]
            if c.op.mode == "exclusive" and c.protected_at(t):
                lim = max(lim, k["fence_max"])
            if f <= lim:
                self.bad("fences", "%s got fence %d, not above %d handed out before" % (name(c), f, lim))
        if c.op.skip and k["done_sure"] is not None and k["done_sure"] > c.op.order:
            self.bad("skip-outdated", "%s (order %d) ran its command after order %d had run to exit 0" % (
                name(c), c.op.order, k["done_sure"]))
        if f:
            k["fence_max"] = max(k["fence_max"], f)
            if c.op.mode == "exclusive":
                k["writer_max"] = max(k["writer_max"], f)
        k["holders"].add(c)

    def on_end(self, k, c, t):
        k["holders"].discard(c)

    def on_record_written(self, k, c, t):
        k["done_possible"] = max(k["done_possible"] or c.op.order, c.op.order)

    def on_record_sure(self, k, c, t):
        k["done_sure"] = max(k["done_sure"] or c.op.order, c.op.order)

    def on_outdated(self, k, c, t):
        if not c.op.skip or c.ran() or k["done_possible"] is None or k["done_possible"] <= c.op.order:
            self.bad("skip-outdated", "%s (order %s) exited 81 but no greater order had run to exit 0 (%s)" % (
                name(c), c.op.order, k["done_possible"]))

    # --- exit statuses (C229-C247), a query for checks.py ---------------------------------
    def allowed_exits(self, c):
        """The statuses the contract allows c, given what happened to it; None: anything
        (redlock-cli itself was SIGKILLed, so its outcome is unknown)."""
        op = c.op
        if op.usage_error:
            return {64}                                                  # C24, C113
        long_stop = op.verb == "run" and any(f["who"] == "redlock-cli" and f["dur"] > op.ttl / 4 for f in c.stops)
        if c.killed is not None or long_stop:
            return None     # killed: unknown; paused past its lock (man page CAVEATS): not promised
        ok = {69} if c.server_faulted else set()                         # C236, C247
        if any(f["who"] == "redlock-cli" for f in c.stops):
            ok.add(69)     # stopped while taking it: too little validity left to start (C138-C140)
        # Not for a stopped guardian: run renews until it has started the command (C92, C97),
        # however long it stays stopped (regressions/guardian-stopped-at-take).
        if op.verb == "acquire":
            ok |= {0, 1} if op.probe else {0}
            if op.wait is not None: ok.add(1)                            # C57, C233
            if op.latest and not op.probe: ok.add(80)                    # C120-C124
            return ok
        cs = c.cs
        if cs is None:                                                   # the command never ran
            if op.wait is not None: ok.add(1)
            if op.latest and not op.probe: ok.add(80)
            if op.latest: ok.add(82)           # cancelled between its take and its command's start
            if op.skip: ok.add(81)                                       # C125
            if c.guard_killed is not None: ok.add(137)
            if c.forced: ok |= {1, 75}
            return ok
        term = min(cs.get("term", 1e18), cs.get("tterm", 1e18))
        if "end" in cs and cs.get("term", 1e18) > cs["end"]:
            ok.add(cs["status"])                                         # C66, C101-C102
            if term < 1e18 and c.server_faulted:
                # The lock was lost while what the command left behind ran; a force that came
                # while the server was out of reach looks the same to the run (its renewal finds
                # the lock gone before its event connection is back).
                ok.add(75)
            # A force or a cancel that came before the command's end, whose signal it beat.
            if c.forced and c.forced["t"] < cs["end"]:
                ok.add(75)
            if any(d.invoke < cs["end"] for d in self.cancellers(c)):
                ok.add(82)
            # A stopped guardian hides the command's end from run (only the guardian, its
            # parent, learns it): a cancel or force meanwhile counts as one before the end.
            if any(f["who"] == "guardian" and f["t"] - SLACK < cs["end"] < f.get("end", f["t"] + f["dur"]) + SLACK
                   for f in c.stops):
                ok.add(75)
                if self.cancellers(c): ok.add(82)
        elif "term" in cs:
            if c.forced or c.server_faulted: ok.add(75)                  # C72-C74, C172-C176
            if op.latest: ok.add(82)                                     # C130-C133
        elif c.forced and c.guard_killed is not None and c.forced["t"] < c.guard_killed + SLACK:
            # Forced, and its guardian killed before the command got the TERM (it dies with its
            # guardian, PR_SET_PDEATHSIG): run heard the force first, and a forced run is 75
            # (regressions/force-then-guardian-killed).
            ok.add(75)
        if c.guard_killed is not None and c.guard_killed < cs.get("end", 1e18):
            ok.add(137)                                                  # man page: guardian killed
        return ok

    def same_key(self, c):
        return [d for d in self.clients if d is not c and d.key == c.key]

    def cancellers(self, c, usage_errors=False):
        """Waiters that may have asked c to stop (C130): --cancel-running on its key, not
        certainly of a lower rank, possibly there while c held."""
        if not (c.op.latest and c.op.verb == "run"):
            return []
        start = c.start if c.ran() else c.invoke     # a run may be cancelled before its command starts
        return [d for d in self.same_key(c) if d.op.cancel and (usage_errors or not d.op.usage_error)
                and rank_cmp(d, c) >= 0 and d.invoke < c.end and d.depart_ub() > start - JOIN]

    def release_exits(self, c, r):
        """release/extend of a manual hold: 0 while the token still holds it, else 3 (C233-C234)."""
        ok = {69} if c.server_faulted else set()
        ok |= {0} if c.protected_at(r["invoke"]) else {0, 3}
        # The request reaches a server any time before its reply: after the TTL there, if the
        # reply came after it (a slowed link, selftest.py; a loaded machine that holds the
        # process back, open/shared-release-exit-3).
        if not c.protected_at(r["complete"]):
            ok.add(3)
        if c.forced:
            ok.add(3)
        return ok


def name(c):
    o = c.op
    bits = [o.verb, o.mode if o.mode != "exclusive" else "", "order %d" % o.order if o.order is not None else "",
            "probe" if o.probe else ""]
    return "client %d (%s)" % (c.id, " ".join(b for b in bits if b))
