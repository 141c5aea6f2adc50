# SPDX-License-Identifier: MIT
"""Named checks over a history; each returns a list of violation strings."""
from model import order, is_latest, is_shared
TOL = 0.02

def mutual_exclusion(h):
    v = []; cs = [c for c in h if c["cs"] and c["cs"]["end"] and c["args"][0] == "run"]
    for a in cs:
        for b in cs:
            if a["client"] < b["client"] and a["args"][1] == b["args"][1] and not (is_shared(a["args"]) and is_shared(b["args"])):
                if a["cs"]["start"] < b["cs"]["end"] - TOL and b["cs"]["start"] < a["cs"]["end"] - TOL:
                    v.append("clients %d and %d overlap" % (a["client"], b["client"]))
    return v

def fences(h):
    v = []; cs = sorted([c for c in h if c["cs"]], key=lambda c: c["cs"]["start"])
    last = {}
    for c in cs:
        f, k = c["cs"]["fence"], c["args"][1]
        if f is None or f <= 0: v.append("client %d fence %s not > 0" % (c["client"], f)); continue
        if k in last and f < last[k]: v.append("client %d fence %d below earlier writer's %d" % (c["client"], f, last[k]))
        if not is_shared(c["args"]): last[k] = f
    return v

def probe_changes_nobody(h):
    v = []
    for c in h:
        if c["exit"] == 80 and is_latest(c["args"]):
            newer = [d for d in h if d is not c and d["args"][1] == c["args"][1] and d["args"][0] == "run"
                     and is_latest(d["args"]) and d["t_start"] > c["t_start"] and (order(d["args"]) or 0) >= (order(c["args"]) or 0)]
            if not newer: v.append("client %d exited 80 with no newer/higher waiter (a probe superseded it?)" % c["client"])
    return v

def only_higher_cancels(h):
    v = []
    for c in h:
        if c["exit"] == 82:
            hi = [d for d in h if d is not c and d["args"][1] == c["args"][1] and "--cancel-running" in d["args"]
                  and (order(d["args"]) or 0) > (order(c["args"]) or 0)]
            if not hi: v.append("client %d (order %s) cancelled by no higher order" % (c["client"], order(c["args"])))
    return v

def exit_is_commands(h):
    return ["client %d command ran to its end (status %d) but run exited %d" % (c["client"], c["cmd_status"], c["exit"])
            for c in h if c["cs"] and c["cs"]["end"] and c["args"][0] == "run" and c["exit"] != c["cmd_status"]]

CHECKS = {"mutual-exclusion": mutual_exclusion, "fences": fences, "probe-changes-nobody": probe_changes_nobody,
          "only-higher-cancels": only_higher_cancels, "exit-is-commands": exit_is_commands}
def run_all(h):
    return {n: f(h) for n, f in CHECKS.items() if f(h)}
