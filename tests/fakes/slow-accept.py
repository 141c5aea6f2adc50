#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""slow-accept: a broken server whose second connection is slow to connect.

Usage: slow-accept.py PORTFILE LOG HOLD_MS

Listens on 127.0.0.1 (a free port, written to PORTFILE once it listens),
reads what every connection sends and never answers.  After the first
connection it fills its own accept queue with a connection of its own and
leaves it there for HOLD_MS, so that the next client's SYN is dropped and
sent again by the kernel about 1 s later: a TCP connect that takes a second,
as on a congested link.  LOG gets one line per connection accepted.
SIGTERM: exit 0."""
import os, signal, socket, sys, time, threading

def main(portfile, log, hold_ms):
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)            # an accept queue of one
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, portfile)
    conns, n = [], 0
    while True:
        c, _ = ls.accept()
        n += 1
        with open(log, "a") as f:
            f.write("accepted %d\n" % n)
        conns.append(c)
        threading.Thread(target=drain, args=(c,), daemon=True).start()
        if n == 1:
            filler = socket.create_connection(ls.getsockname())
            time.sleep(hold_ms / 1000.0)
            c2, _ = ls.accept()     # the filler: the queue has room again
            conns += [filler, c2]

def drain(c):
    while c.recv(65536):
        pass

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
