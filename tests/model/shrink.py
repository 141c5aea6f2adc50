# SPDX-License-Identifier: MIT
"""Shrinking: drop faults, then clients, one at a time, while the same promise still breaks,
until none can go or the time budget runs out (delta debugging with single steps, which is
enough for schedules of at most a few dozen entries)."""
import time


def without_client(sched, i):
    faults = []
    for f in sched["faults"]:
        if f.get("client") == i:
            continue
        if f.get("client", -1) > i:
            f = dict(f, client=f["client"] - 1)
        faults.append(f)
    return dict(sched, clients=sched["clients"][:i] + sched["clients"][i + 1:], faults=faults)


def without_fault(sched, i):
    return dict(sched, faults=sched["faults"][:i] + sched["faults"][i + 1:])


def earlier(sched):
    """The same schedule moved to start at 0 (shorter to replay, same spacing)."""
    t = min(c["at"] for c in sched["clients"])
    return dict(sched, clients=[dict(c, at=round(c["at"] - t, 2)) for c in sched["clients"]],
                faults=[dict(f, at=round(f["at"] - t, 2)) for f in sched["faults"]])


def shrink(sched, fails, budget=120):
    """fails(schedule) -> bool: the promise still breaks.  Returns the smallest schedule found."""
    t0 = time.monotonic()
    for drop, count in ((without_fault, lambda s: len(s["faults"])), (without_client, lambda s: len(s["clients"]))):
        i = 0
        while i < count(sched) and time.monotonic() - t0 < budget and len(sched["clients"]) > 1:
            cand = drop(sched, i)
            if fails(cand):
                sched = cand
            else:
                i += 1
    cand = earlier(sched)
    if cand != sched and time.monotonic() - t0 < budget and fails(cand):
        sched = cand
    return sched
