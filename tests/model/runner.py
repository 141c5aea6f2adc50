# SPDX-License-Identifier: MIT
"""Run a schedule (gen.py) against real servers and record its history.

Servers: throwaway redis-server processes on free loopback ports (never 6379), stopped by PID.
With the restart nemesis they run with `appendonly yes, appendfsync always`: the contract's
promises hold across a restart only when the server keeps every write (man page CAVEATS,
"A server does not forget the locks it held").  With the proxy nemesis, clients reach each
server through tests/fakes/proxy; the sampler and the operator's force go direct.  With a
nemesis of the test network (partition, oneway, hang, slow, clock: tests/net/net.py), the
servers run in network namespaces of their own and each client on one of two client hosts
(`ip netns exec`), with the servers' namespace addresses; the sampler, the force and the
footprint scan reach the servers on their unix sockets, which no network fault touches.

The history (a dict) holds, on CLOCK_MONOTONIC seconds from the attempt's start:
  clients: per client its pid, invoke/complete times, exit status, stderr, its critical section
           (from cs's log) or, for a manual hold, acquire/extend/release
  faults:  what the nemesis did, when, to whom (a force with the pids it named)
  snaps:   the server's view (`list --json`) about every 0.25 s: holders' and waiters' pids
  quiet:   when the last client ended, for the footprint check (checks.py)."""
import json, os, re, shutil, signal, socket, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "net"))
import net as netlib
CS = os.path.join(HERE, "cs")
PROXY_SRC = os.path.join(HERE, "..", "fakes", "proxy.c")
HUNG_AFTER = 90.0     # a client still running this long after its start is killed (and reported)
SNAP_EVERY = 0.25


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def resp(port, *args, timeout=2.0):
    """One command to 127.0.0.1:port (or a unix socket, a path) in RESP; the decoded reply
    (errors as Exception)."""
    if isinstance(port, str):
        return netlib.resp(port, *args, timeout=timeout)
    with socket.create_connection(("127.0.0.1", port), timeout) as s:
        s.sendall(b"".join([b"*%d\r\n" % len(args)] +
                           [b"$%d\r\n%s\r\n" % (len(a), a) for a in (str(x).encode() for x in args)]))
        f = s.makefile("rb")
        return netlib.read_reply(f)


class Server:
    def __init__(self, base, persist):
        self.dir = tempfile.mkdtemp(prefix="srv.", dir=base)
        self.persist, self.proc = persist, None
        for _ in range(10):
            self.port = self.addr = free_port()
            if self.start():
                return
        raise RuntimeError("redis-server did not start: " + open(self.log).read()[-500:])

    def start(self):
        self.log = os.path.join(self.dir, "log")
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", self.dir, "--logfile", self.log, "--daemonize", "no"]
        argv += ["--appendonly", "yes", "--appendfsync", "always"] if self.persist else ["--appendonly", "no"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.proc.poll() is not None:
                return False
            try:
                if resp(self.port, "PING", timeout=0.2) == "PONG":
                    return True
            except Exception:
                pass
            time.sleep(0.025)
        return False

    def crash(self):
        """SIGKILL, by PID: with appendfsync always, every write it answered is on disk."""
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Proxy:
    """tests/fakes/proxy in front of one server; modes switched through its control file."""
    def __init__(self, exe, base, target):
        self.dir = tempfile.mkdtemp(prefix="proxy.", dir=base)
        self.ctl, self.seq = os.path.join(self.dir, "ctl"), 0
        self.proc = subprocess.Popen([exe, "0", str(target), os.path.join(self.dir, "pid"), self.ctl],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "log"), "w"))
        for _ in range(200):
            if os.path.exists(os.path.join(self.dir, "pid")):
                break
            time.sleep(0.025)
        self.port = int(re.search(r"port=(\d+)", open(self.ctl + ".ack").read()).group(1))

    def mode(self, m):
        self.seq += 1
        with open(self.ctl + ".tmp", "w") as f:
            f.write("%d %s\n" % (self.seq, m))
        os.rename(self.ctl + ".tmp", self.ctl)
        for _ in range(100):
            try:
                if open(self.ctl + ".ack").read().startswith("seq=%d " % self.seq):
                    return
            except OSError:
                pass
            time.sleep(0.02)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try: self.proc.wait(5)
            except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()


class NetServer:
    """A redis-server on a server host of the test network; addr is its unix socket."""
    def __init__(self, net, i, persist):
        self.net, self.i, self.persist = net, i, persist
        self.addr = net.sock(i)
        self.clock_off = 0.0      # seconds its faketime clock is ahead of the real one
        net.start_server(i, persist)

    def start(self):
        try:
            self.net.start_server(self.i, self.persist)
            return True
        except RuntimeError:
            return False

    def crash(self):
        self.net.kill_server(self.i)

    def stop(self):
        self.net.kill_server(self.i)


class Servers:
    """n servers for a whole checker run (attempts use key prefixes of their own)."""
    def __init__(self, n, persist=False, proxy=False, net=False, faketime=False):
        self.base = tempfile.mkdtemp(prefix="rlmodel.")
        self.servers, self.proxies, self.net, self.hosts = [], [], None, 1
        try:
            if net:
                why = netlib.can()
                if why:
                    raise RuntimeError("the network nemeses need network namespaces: " + why)
                self.net = netlib.Net.up(os.path.join(self.base, "net"), servers=n, clients=2,
                                         faketime=faketime, start=False)
                self.hosts = 2
                self.servers = [NetServer(self.net, i + 1, persist) for i in range(n)]
                self.direct = sum([["-u", "unix://" + s.addr] for s in self.servers], [])
                self.urls = sum([["-u", self.net.url(i + 1)] for i in range(n)], [])
                return
            self.servers = [Server(self.base, persist) for _ in range(n)]
            if proxy:
                exe = os.path.join(self.base, "proxy")
                subprocess.check_call(["cc", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                                       "-O2", "-o", exe, PROXY_SRC])
                self.proxies = [Proxy(exe, self.base, s.port) for s in self.servers]
        except BaseException:
            self.stop()
            raise
        self.direct = sum([["-u", "redis://127.0.0.1:%d" % s.port] for s in self.servers], [])
        ports = [p.port for p in self.proxies] or [s.port for s in self.servers]
        self.urls = sum([["-u", "redis://127.0.0.1:%d" % p] for p in ports], [])

    def stop(self):
        for p in self.proxies:
            p.stop()
        for s in self.servers:
            s.stop()
        if self.net:
            self.net.down()
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self): return self
    def __exit__(self, *a): self.stop()


def parse_cs(path, t0):
    """cs's log → {start, fence, pid, last (last sign of life of the job), end, status, term, ...},
    its times made relative to t0 as the runner's are."""
    if not os.path.exists(path):
        return None
    cs = {}
    for line in open(path).read().splitlines():
        w = line.split()
        if not w: continue
        t = float(w[1]) - t0
        cs["last"] = max(cs.get("last", 0.0), t)
        if w[0] in ("tick", "ttick") and len(w) > 2:      # a write to the fenced resource
            cs.setdefault("writes", []).append((t, w[2] == "ok"))
        if w[0] == "start":
            cs.update(start=t, fence=int(w[2]) if w[2].isdigit() else None, pid=int(w[3]))
        elif w[0] == "end":
            cs.update(end=t, status=int(w[2]))
        elif w[0] in ("term", "tterm"):
            cs.setdefault(w[0], t)
        elif w[0] == "tend":
            cs["tend"] = t
        elif w[0] == "ttick":
            cs["tail_last"] = t
    return cs if "start" in cs else None


class Attempt:
    """One schedule against the servers: client threads, a nemesis thread, a sampler thread."""
    def __init__(self, binary, servers, sched, prefix, logdir):
        self.binary, self.s, self.sched, self.prefix, self.logdir = binary, servers, sched, prefix, logdir
        self.clients = [dict(id=i, **c) for i, c in enumerate(sched["clients"])]
        if servers.net:
            for c in self.clients:
                c["host"] = c["id"] % servers.hosts      # it runs on client host c<host+1>
        self.procs = {}           # client id -> Popen of redlock-cli while it runs
        self.faults, self.snaps = [], []
        self.lock = threading.Lock()
        self.done = threading.Event()

    def now(self):
        return time.monotonic() - self.t0

    def sleep_until(self, at):
        while True:
            d = at - self.now()
            if d <= 0: return
            time.sleep(min(d, 0.05))

    def key(self, name):
        return self.prefix + name

    def cli(self, argv, c=None, urls=None, env=None):
        """redlock-cli ARGV; returns (invoke, complete, exit, stdout, stderr, pid).  A client's on
        the test network runs on its host (`ip netns exec` execs it: the pid is redlock-cli's)."""
        t = self.now()
        pre = self.s.net.exec_argv("c%d" % (c["host"] + 1)) if c is not None and "host" in c else []
        p = subprocess.Popen(pre + [self.binary] + (urls or self.s.urls) + argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, **env) if env else None)
        if c is not None:
            with self.lock: self.procs[c["id"]] = p
        try:
            out, err = p.communicate(timeout=HUNG_AFTER)
            hung = False
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            hung = True
        end = self.now()
        if c is not None:
            with self.lock: self.procs.pop(c["id"], None)
        return {"invoke": t, "complete": end, "exit": p.returncode, "out": out.decode(errors="replace"),
                "err": err.decode(errors="replace"), "pid": p.pid, "hung": hung}

    def run_client(self, c):
        self.sleep_until(c["at"])
        key = self.key(c["key"])
        if c["verb"] == "run":
            log = os.path.join(self.logdir, "cs%d" % c["id"])
            # An exclusive run writes to a toy fenced resource, one per name (cs).
            env = None
            if "-s" not in c["args"] and "--limit" not in c["args"]:
                env = {"RLMODEL_RESOURCE": os.path.join(self.logdir, "resource-" + c["key"])}
            r = self.cli(["run", key] + c["args"] + ["--", CS, log, str(c["hold"]), str(c["status"]),
                                                     str(c["tail"])], c, env=env)
            r["cs"] = parse_cs(log, self.t0)
            c.update(r)
            return
        r = self.cli(["acquire", key] + c["args"] + ["--json"], c)
        c.update(r)
        if r["exit"] != 0:
            return
        try:
            j = json.loads(r["out"])
            tok, c["fence"] = j["token"], j.get("fence")
        except (ValueError, KeyError):
            c["bad_output"] = True
            return
        limit = ["--limit", c["args"][c["args"].index("--limit") + 1]] if "--limit" in c["args"] else []
        ttl = c["args"][c["args"].index("-t") + 1]
        if c["extend"]:
            time.sleep(c["hold"] / 2)
            c["extend_r"] = self.cli(["extend", key, "--token", tok, "-t", ttl] + limit, c)
        self.sleep_until(r["complete"] + c["hold"])
        c["release_r"] = self.cli(["release", key, "--token", tok] + limit, c)

    # --- the nemesis ---------------------------------------------------------------------
    def target_pid(self, f):
        with self.lock:
            p = self.procs.get(f["client"])
        if p is None or p.poll() is not None:
            return None
        if f["who"] == "redlock-cli":
            return p.pid
        try:   # the guardian: redlock-cli's child (a run starts it before it waits)
            kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
            return int(kids[0]) if kids else None
        except OSError:
            return None

    def nemesis(self):
        timers = []
        for f in self.sched["faults"]:
            self.sleep_until(f["at"])
            if self.done.is_set():
                break          # every client has ended: nothing left to disturb
            rec = dict(f, t=self.now())
            if f["kind"] in ("kill", "stop"):
                pid = self.target_pid(f)
                if pid is None:
                    continue
                rec["pid"] = pid
                os.kill(pid, signal.SIGKILL if f["kind"] == "kill" else signal.SIGSTOP)
                if f["kind"] == "stop":
                    def cont(pid=pid, rec=rec):
                        time.sleep(f["dur"])
                        try: os.kill(pid, signal.SIGCONT)
                        except ProcessLookupError: pass
                        rec["end"] = self.now()
                    timers.append(threading.Thread(target=cont)); timers[-1].start()
            elif f["kind"] == "force":
                r = self.cli(["release", self.key(f["key"]), "--force"], urls=self.s.direct)
                rec.update(r, removed=[int(x) for x in re.findall(r"forced release of \S+ pid (\d+)", r["err"])])
            elif f["kind"] == "restart":
                srv = self.s.servers[f["server"]]
                srv.crash()
                time.sleep(f["down"])
                for _ in range(5):
                    if srv.start(): break
                    time.sleep(0.2)
                rec["end"] = self.now()
            elif f["kind"] in ("partition", "oneway", "hang", "slow"):
                net, host = self.s.net, "c%d" % (f["host"] + 1)
                if f["kind"] == "slow":
                    name = net.slow(host, f["rate"])
                elif f["kind"] == "hang":
                    name, rec["conns"] = net.hang(host, [i + 1 for i in f["servers"]])
                else:
                    name = net.cut(host, [i + 1 for i in f["servers"]],
                                   "both" if f["kind"] == "partition" else "oneway")
                rec["t"] = self.now()      # in place from here on
                try:
                    time.sleep(f["dur"])
                finally:
                    net.heal(name)
                rec["end"] = self.now()
            elif f["kind"] == "clock":
                srv = self.s.servers[f["server"]]
                if f["mode"] == "jump":
                    srv.clock_off += f["by"]
                    self.s.net.clock(srv.i, "+%.3f" % srv.clock_off)
                    rec["t"] = self.now()
                else:
                    # Twice as fast for dur: its offset grows with the real time, in 20 ms
                    # steps.  (libfaketime's own "x2" is no good here: set while the server
                    # runs, it first jumps by the server's age, and a later spec without
                    # "x" does not take the rate back.)
                    rec["t"] = t0 = self.now()
                    base = srv.clock_off
                    while self.now() - t0 < f["dur"]:
                        time.sleep(0.02)
                        srv.clock_off = base + (self.now() - t0)
                        self.s.net.clock(srv.i, "+%.3f" % srv.clock_off)
                    rec["end"] = self.now()
            elif f["kind"] == "proxy":
                if not self.s.proxies:
                    continue
                px = self.s.proxies[f["server"]]
                px.mode(f["mode"])
                time.sleep(f["dur"])
                px.mode("pass")
                rec["end"] = self.now()
            with self.lock:
                self.faults.append(rec)
        for t in timers:
            t.join()

    def sampler(self):
        while not self.done.is_set():
            t = self.now()
            try:
                p = subprocess.run([self.binary] + self.s.direct + ["list", self.prefix + "*", "--json"],
                                   stdin=subprocess.DEVNULL, capture_output=True, timeout=5)
                locks = json.loads(p.stdout) if p.returncode == 0 else None
            except (subprocess.TimeoutExpired, ValueError):
                locks = None
            if locks is not None:
                view = {}
                for l in locks:
                    view[l["key"][len(self.prefix):]] = {
                        "held": l.get("held"), "mode": l.get("mode"), "limit": l.get("limit"),
                        "holders": [h.get("pid") for h in l.get("holders", [])],
                        "waiters": [{"pid": w.get("pid"), "order": w.get("order"), "mode": w.get("mode")}
                                    for w in l.get("waiters", [])]}
                self.snaps.append({"t0": t, "t1": self.now(), "locks": view})
            time.sleep(SNAP_EVERY)

    def run(self):
        self.t0 = time.monotonic()
        ths = [threading.Thread(target=self.run_client, args=(c,)) for c in self.clients]
        nem = threading.Thread(target=self.nemesis)
        smp = threading.Thread(target=self.sampler)
        for t in ths + [nem, smp]:
            t.start()
        for t in ths:
            t.join()
        self.done.set()
        nem.join()
        smp.join()
        quiet = max([c.get("complete", 0) for c in self.clients] +
                    [c.get("release_r", {}).get("complete", 0) for c in self.clients] + [0])
        return {"prefix": self.prefix, "servers": len(self.s.servers), "keys": self.sched["keys"],
                "hosts": self.s.hosts,
                "clients": self.clients, "faults": sorted(self.faults, key=lambda f: f["t"]),
                "snaps": self.snaps, "quiet": quiet, "t0": self.t0}


def scan(servers, prefix):
    """Every key of an attempt left on each server: [(server index, key, pttl)]."""
    left = []
    for i, s in enumerate(servers.servers):
        cursor = "0"
        while True:
            cursor, keys = resp(s.addr, "SCAN", cursor, "MATCH", "*" + prefix + "*", "COUNT", 1000)
            left += [(i, k, resp(s.addr, "PTTL", k)) for k in keys]
            if cursor == "0":
                break
    return left
