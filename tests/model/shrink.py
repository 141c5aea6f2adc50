# SPDX-License-Identifier: MIT
"""Delta debugging over a schedule: drop clients while the same check still fails."""
import time
def shrink(sched, fails, budget=60):
    t0 = time.monotonic(); i = 0
    while i < len(sched) and time.monotonic() - t0 < budget and len(sched) > 1:
        cand = sched[:i] + sched[i + 1:]
        if fails(cand): sched = cand
        else: i += 1
    return sched
