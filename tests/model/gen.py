# SPDX-License-Identifier: MIT
"""Draw a random concurrent schedule from a seed, biased to few keys and mixed modes."""
import random

def schedule(seed, nclients=None):
    r = random.Random(seed)
    key = "k%d" % r.randrange(2)
    n = nclients or r.randint(2, 6)
    sched, t = [], 0.0
    for _ in range(n):
        t += r.choice([0.0, 0.1, 0.3])
        kind = r.choices(["excl", "shared", "latest", "probe"], [3, 2, 3, 2])[0]
        args = ["run", key]
        if kind == "shared": args.append("-s")
        if kind == "latest":
            args += ["--queue", "latest", "--order", str(r.choice([5, 10]))]
            if r.random() < 0.7: args.append("--cancel-running")
        if kind == "probe":
            args = ["acquire", key, "-n", "--queue", "latest"]
        if args[0] == "run": args += ["-w", "5"]
        sched.append((round(t, 2), args, r.choice([0.3, 0.8, 1.5]), r.choice([0, 0, 3])))
    return sched
