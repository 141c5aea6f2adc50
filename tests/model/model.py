# SPDX-License-Identifier: MIT
"""Sequential reference facts of the contract used by the checks (see README.md)."""
EXIT = {0: "ok", 1: "busy", 3: "not-held", 64: "usage", 69: "unavailable", 75: "lost/forced",
        80: "superseded", 81: "outdated", 82: "cancelled"}
def order(args):
    return int(args[args.index("--order") + 1]) if "--order" in args else None
def is_latest(args): return "latest" in args
def is_shared(args): return "-s" in args
