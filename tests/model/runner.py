# SPDX-License-Identifier: MIT
"""Start throwaway redis-server processes and run redlock-cli clients; record each outcome."""
import os, socket, subprocess, tempfile, time, shutil

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    return p

class Servers:
    def __init__(self, n=1):
        self.dir = tempfile.mkdtemp(prefix="rlmodel.")
        self.procs, self.urls = [], []
        for _ in range(n):
            port = free_port()
            p = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                                  "--dir", self.dir], stdout=subprocess.DEVNULL)
            self.procs.append(p); self.urls.append("redis://127.0.0.1:%d" % port)
            for _ in range(100):
                try: socket.create_connection(("127.0.0.1", port), 0.1).close(); break
                except OSError: time.sleep(0.05)
    def stop(self):
        for p in self.procs:  # by PID, never by name
            p.kill(); p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
    def __enter__(self): return self
    def __exit__(self, *a): self.stop()

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cs")

def run_schedule(binary, urls, sched, logdir):
    """sched: list of (delay_s, argv_after_binary, hold, cmd_status). Returns history list."""
    t0 = time.monotonic(); procs = []
    ua = sum([["-u", u] for u in urls], [])
    for i, (delay, args, hold, status) in enumerate(sched):
        while time.monotonic() - t0 < delay: time.sleep(0.005)
        log = os.path.join(logdir, "c%d" % i)
        argv = [binary] + ua + args
        if args[0] == "run":
            argv += ["--", HELPER, log, str(hold), str(status)]
        start = time.monotonic()
        procs.append((i, args, hold, status, start, log,
                      subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    hist = []
    for i, args, hold, status, start, log, p in procs:
        try: out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired: p.kill(); out, err = p.communicate()
        end = time.monotonic()
        cs = None
        if os.path.exists(log):
            f = open(log).read().split()
            cs = {"start": float(f[0]), "fence": int(f[1]) if f[1].isdigit() else None,
                  "end": float(f[2]) if len(f) > 2 else None}
        hist.append({"client": i, "args": args, "hold": hold, "cmd_status": status, "t_start": start,
                     "t_end": end, "exit": p.returncode, "cs": cs, "out": out.decode().strip()})
    return hist
