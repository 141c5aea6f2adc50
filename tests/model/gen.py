# SPDX-License-Identifier: MIT
"""Draw a random concurrent schedule from a seed.

A schedule is plain JSON, so that a failure can be saved and replayed (regressions/):
  {"keys": {NAME: {"kind": "lock"|"sem", "limit": N, "queue": "any"|"fifo"|"latest",
                   "orders": bool}},
   "clients": [{"at": S, "key": NAME, "verb": "run"|"acquire", "args": [...], "hold": S,
                "status": N, "tail": S, "extend": bool}],
   "faults": [{"at": S, "kind": "kill"|"stop"|"force"|"restart"|"proxy"|"partition"|"oneway"|"hang"
                                  |"slow"|"clock", ...}]}
Times are seconds from the start of the attempt.  Key names get a per-attempt prefix from the
runner, so one set of servers serves many attempts."""
import random

NEMESES = ("kill", "stop", "force", "restart", "proxy", "partition", "oneway", "hang", "slow", "clock")
# The nemeses of the test network (tests/net/): clients run on client hosts (network namespaces), the
# servers on hosts of their own.  `all` is the first five, which need no namespaces.
NET_NEMESES = ("partition", "oneway", "hang", "slow", "clock")
CLIENT_HOSTS = 2     # client i runs on host i % 2


def _key(r):
    kind = r.choices(["lock", "sem"], [4, 1])[0]
    if kind == "sem":
        return {"kind": "sem", "limit": r.choice([2, 3]), "queue": r.choice(["any", "fifo"]),
                "orders": r.random() < 0.3}
    queue = r.choices(["any", "fifo", "latest"], [3, 3, 4])[0]
    return {"kind": "lock", "queue": queue, "orders": r.random() < (0.6 if queue == "latest" else 0.3)}


def _client(r, at, name, k):
    """One client: a supervised run, a manual hold (acquire, extend, release) or a probe."""
    latest = k["queue"] == "latest"
    kinds = ["run", "run-s", "manual", "probe", "bad-probe"]
    weights = [6, 0 if latest or k["kind"] == "sem" else 3, 1, 2, 0.4 if latest else 0]
    kind = r.choices(kinds, weights)[0]
    args = ["-t", r.choice(["2s", "3s", "3s"])]
    if k["kind"] == "sem":
        args += ["--limit", str(k["limit"])]
    if kind == "run-s" or (kind in ("manual", "probe") and not latest and k["kind"] == "lock"
                           and r.random() < 0.3):
        args.append("-s")
    if k["queue"] != "any":
        args += ["--queue", k["queue"]]
    if k["orders"]:
        args += ["--order", str(r.randint(1, 5))]
    verb = "acquire" if kind == "manual" or (kind == "probe" and r.random() < 0.5) else "run"
    if kind in ("probe", "bad-probe"):
        args += r.choice([["-n"], ["-w", "0"]])
        if kind == "bad-probe":   # a usage error (Queues): a probe cannot cancel anyone
            verb = "run"
            args += ["--cancel-running"]
    else:
        w = r.choice([None, "2", "4", "8"])
        if w:
            args += ["-w", w]
        if verb == "run" and latest and r.random() < 0.5:
            args.append("--cancel-running")
    if verb == "run" and k["orders"] and kind != "bad-probe" and r.random() < 0.4:
        args.append("--skip-outdated")
    return {"at": round(at, 2), "key": name, "verb": verb, "args": args,
            "hold": r.choice([0.2, 0.5, 1.0, 2.0]), "status": r.choice([0, 0, 0, 3]),
            "tail": r.choice([0.5, 1.5]) if verb == "run" and r.random() < 0.15 else 0,
            "extend": verb == "acquire" and r.random() < 0.5}


def _faults(r, nemeses, clients, servers, keys, end):
    out = []
    for kind in nemeses:
        for _ in range(r.randint(1, max(1, len(clients) // 3))):
            c = r.randrange(len(clients))
            at = round(clients[c]["at"] + r.uniform(0.1, clients[c]["hold"] + 1.0), 2)
            if kind == "kill":
                out.append({"at": at, "kind": "kill", "client": c,
                            "who": r.choices(["redlock-cli", "guardian"], [7, 3])[0]})
            elif kind == "stop":
                out.append({"at": at, "kind": "stop", "client": c, "dur": r.choice([0.3, 0.5, 2.5, 4.0]),
                            "who": r.choices(["redlock-cli", "guardian"], [8, 2])[0]})
            elif kind == "force":
                out.append({"at": round(r.uniform(0.3, end), 2), "kind": "force", "key": r.choice(keys)})
    # Server faults one at a time, so that with 3 servers only a minority is ever down.
    t = 0.5
    for kind in [k for k in nemeses if k in ("restart", "proxy") and r.random() < 0.7]:
        t += r.uniform(0.5, 4.0)
        if t > end:
            break
        f = {"at": round(t, 2), "kind": kind, "server": r.randrange(servers)}
        if kind == "restart":
            f["down"] = r.choice([0.2, 0.5, 1.0])
        else:
            f["mode"] = r.choice(["delay 150", "delay 400", "drop", "freeze"])
            f["dur"] = r.choice([0.3, 0.8, 1.5])
        t += f.get("down", f.get("dur", 0))
        out.append(f)
    out += _net_faults(r, nemeses, servers, end)
    return sorted(out, key=lambda f: f["at"])


def _servers(r, servers):
    """Which servers a cut is from: the one server, or a minority, a majority or all of 3."""
    if servers == 1:
        return [0]
    return sorted(r.sample(range(servers), r.choice([1, 1, 2, 2, servers])))


def _net_faults(r, nemeses, servers, end):
    """The network's faults, one at a time, each on one client host (all clients on it)."""
    kinds = [k for k in nemeses if k in NET_NEMESES]
    if not kinds:
        return []        # no draw: the other nemeses' schedules stay as they were
    out, t = [], r.uniform(0.3, 1.5)
    # One server's clock misbehaves in an attempt, so that a majority keeps time (Redlock's
    # assumption): jumps of two servers within one lock's life may leave its holder a minority.
    bad_clock = r.randrange(servers) if "clock" in kinds else None
    while kinds and t < end:
        kind = r.choice(kinds)
        f = {"at": round(t, 2), "kind": kind, "host": r.randrange(CLIENT_HOSTS)}
        if kind in ("partition", "oneway"):
            # Some shorter than the TTL (2-3 s): renewals resume; some longer: the lock is lost.
            f.update(servers=_servers(r, servers), dur=r.choice([0.5, 1.5, 2.5, 4.0, 6.0]))
        elif kind == "hang":
            f.update(servers=_servers(r, servers), dur=r.choice([1.0, 2.5, 4.0, 6.0]))
        elif kind == "slow":
            f.update(rate=r.choice(["8kbit", "16kbit", "64kbit"]), dur=r.choice([1.0, 2.5, 4.0]))
        else:   # clock: one server's clock jumps past every TTL, or runs twice as fast for a while
            del f["host"]
            f.update(server=bad_clock, mode=r.choice(["jump", "jump", "fast"]))
            if f["mode"] == "jump":
                f.update(by=r.choice([4.0, 10.0]), dur=0.0)
            else:
                f.update(dur=r.choice([2.0, 4.0, 6.0]))
        out.append(f)
        t += f["dur"] + r.uniform(0.5, 3.0)
    return out


def schedule(seed, nemeses=(), servers=1, max_clients=12):
    r = random.Random(seed)
    keys = {"k%d" % i: _key(r) for i in range(r.choice([1, 1, 2, 2, 3]))}
    names = sorted(keys)
    clients, t = [], 0.0
    for _ in range(r.randint(2, max_clients)):
        t += r.choices([0.0, 0.05, 0.3, 0.8, 1.5, 2.5], [2, 2, 3, 3, 2, 1])[0]
        name = r.choice(names)
        clients.append(_client(r, t, name, keys[name]))
    faults = _faults(r, nemeses, clients, servers, names, t + 3.0) if nemeses else []
    return {"keys": keys, "clients": clients, "faults": faults}
