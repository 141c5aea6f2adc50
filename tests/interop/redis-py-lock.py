# SPDX-License-Identifier: MIT
"""redis-py's Lock (Debian's python3-redis), one step per run, for
tests/interop.bats:

    redis-py-lock.py acquire SOCK KEY TTL_MS   prints the lock's token; exit 1 if busy
    redis-py-lock.py release SOCK KEY TOKEN    exit 0 released, 3 not the owner
"""
import sys

import redis
from redis.exceptions import LockNotOwnedError


def main(argv):
    action, sock, key = argv[1:4]
    r = redis.Redis(unix_socket_path=sock)
    if action == "acquire":
        lock = r.lock(key, timeout=int(argv[4]) / 1000.0)
        if not lock.acquire(blocking=False):
            return 1
        print(lock.local.token.decode())
        return 0
    if action == "release":
        lock = r.lock(key)
        lock.local.token = argv[4].encode()
        try:
            lock.release()
        except LockNotOwnedError:
            return 3
        return 0
    print("redis-py-lock.py: unknown action " + action, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
