#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tests/net: a test network of network namespaces, for real partitions (issue 39).

    net.py up DIR [--servers N] [--clients N] [--faketime]   make one; its state in DIR/net.json
    net.py down DIR                                          stop its servers, delete its namespaces
    net.py cut DIR HOST SERVERS both|oneway                  drop traffic (prints the fault's name)
    net.py hang DIR HOST SERVERS                             blackhole the established connections
    net.py slow DIR HOST RATE                                a tbf rate limit on HOST's link
    net.py heal DIR NAME                                     undo one fault
    net.py clock DIR SERVER SPEC                             the server's faketime spec ("+10": ahead)
    net.py sweep                                             delete namespaces of owners gone
    net.py can                                               exit 0 where namespaces can be made

HOST is c1, c2 ... (client hosts), SERVERS a comma list of server numbers (1, 2 ...).

Every namespace is named rlnet-OWNER-NAME, OWNER being the pid of the process that owns the network
(the checker, or the bats file): `br` holds the bridge, `cN` are client hosts, `sN` server hosts, each
joined to the bridge by a veth pair made inside the bridge's namespace.  Nothing of the root
namespace (its interfaces, routes, nftables) is touched; every fault is an nftables table in a client
host's namespace, or a tbf qdisc on that host's veth pair.  Each server host runs a real redis-server
on ADDR:7000 (its own namespace, so no other server's port) and on a unix socket in DIR, which is
how the tests' own observer reaches it whatever the network does (a unix socket is a file, not a
network address).  Servers are stopped by PID; the namespaces are deleted by name after every
process still in them (`ip netns pids`) was SIGKILLed by PID.  A network whose owner is gone
(a test killed with SIGKILL) is swept by the next `up` or `sweep`.

With --faketime every server runs under Debian's libfaketime (LD_PRELOAD, with tests/net/ftguard.c
in front of it so that jemalloc's start-up does not deadlock it), reading its spec from
DIR/sN/faketime at every call: writing "+10" there makes its clock jump 10 s forward.  (Not "x2":
libfaketime applies a rate from the process's start, so setting one while the server runs makes it
jump first, and a later spec without one does not take it back; a fast clock is made of small
steps instead, as the model checker's clock nemesis does.)  Only CLOCK_REALTIME is faked (FAKETIME_DONT_FAKE_MONOTONIC),
as an NTP step does: Redis expires keys on it."""
import json, os, re, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "rlnet-"
SUBNET = "10.99.0."
PORT = 7000
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def sh(*argv, check=True, quiet=True):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), p.returncode, p.stderr.strip()))
    return p.stdout


def can():
    """'' where namespaces, veth pairs and nftables can be used here; else why not (one line)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "nft", "tc"):
        if not any(os.access(os.path.join(d, tool), os.X_OK) for d in os.environ.get("PATH", "").split(":")
                   + ["/usr/sbin", "/sbin"]):
            return "%s is not installed" % tool
    name = "%sprobe%d" % (PREFIX, os.getpid())
    try:
        sh("ip", "netns", "add", name)
    except RuntimeError as e:
        return "ip netns add failed: %s" % str(e).split(": ", 2)[-1][:80]
    try:
        sh("ip", "netns", "exec", name, "nft", "add", "table", "inet", "probe")
        return ""
    except RuntimeError as e:
        return "nftables in a namespace failed: %s" % str(e).split(": ", 2)[-1][:80]
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return "\nState:\tZ" not in open("/proc/%d/status" % pid).read()
    except OSError:
        return False


def namespaces():
    out = sh("ip", "netns", "list", check=False)
    return [l.split()[0] for l in out.splitlines() if l.startswith(PREFIX)]


def delete_ns(name):
    """SIGKILL, by PID, each process still in the namespace, then delete it."""
    for pid in sh("ip", "netns", "pids", name, check=False).split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    for _ in range(50):
        if not sh("ip", "netns", "pids", name, check=False).split():
            break
        time.sleep(0.02)
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


def sweep(owner=None):
    """Delete the namespaces of owners that are gone (or all of `owner`'s); their names."""
    gone = []
    for n in namespaces():
        m = re.match(re.escape(PREFIX) + r"(\d+)-", n)
        if not m:
            continue
        pid = int(m.group(1))
        if (owner is not None and pid == owner) or (owner is None and not alive(pid)):
            delete_ns(n)
            gone.append(n)
    return gone


class Net:
    """A bridge namespace, client hosts and server hosts; state in DIR/net.json."""

    def __init__(self, d, state=None):
        self.dir = os.path.abspath(d)
        self.st = state if state is not None else json.load(open(os.path.join(self.dir, "net.json")))

    # --- names and addresses -------------------------------------------------------------
    @property
    def owner(self): return self.st["owner"]
    def ns(self, host): return "%s%d-%s" % (PREFIX, self.owner, host)
    def clients(self): return ["c%d" % (i + 1) for i in range(self.st["clients"])]
    def servers(self): return ["s%d" % (i + 1) for i in range(self.st["servers"])]
    def addr(self, host): return SUBNET + str((10 if host[0] == "c" else 20) + int(host[1:]))
    def url(self, i): return "redis://%s:%d" % (self.addr("s%d" % i), PORT)
    def sock(self, i): return os.path.join(self.dir, "s%d" % i, "sock")
    def exec_argv(self, host): return ["ip", "netns", "exec", self.ns(host)]

    def save(self):
        tmp = os.path.join(self.dir, "net.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.st, f, indent=1)
        os.rename(tmp, os.path.join(self.dir, "net.json"))

    # --- up and down ---------------------------------------------------------------------
    @classmethod
    def up(cls, d, servers=3, clients=2, faketime=False, owner=None, start=True):
        sweep()
        d = os.path.abspath(d)
        os.makedirs(d, exist_ok=True)
        net = cls(d, {"owner": owner or os.getpid(), "servers": servers, "clients": clients,
                      "faketime": faketime, "pids": {}, "faults": {}, "seq": 0})
        net.save()
        try:
            net._build()
            for i in range(1, servers + 1 if start else 1):
                net.start_server(i)
        except BaseException:
            net.down()
            raise
        return net

    def _build(self):
        hosts = self.clients() + self.servers()
        for h in ["br"] + hosts:
            sh("ip", "netns", "add", self.ns(h))
            sh("ip", "-n", self.ns(h), "link", "set", "lo", "up")
        br = self.ns("br")
        sh("ip", "-n", br, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", br, "link", "set", "br0", "up")
        for h in hosts:
            # Made inside the bridge's namespace, its peer moved straight into the host's.
            sh("ip", "-n", br, "link", "add", "p-" + h, "type", "veth", "peer", "name", "eth0",
               "netns", self.ns(h))
            sh("ip", "-n", br, "link", "set", "p-" + h, "master", "br0", "up")
            sh("ip", "-n", self.ns(h), "addr", "add", self.addr(h) + "/24", "dev", "eth0")
            sh("ip", "-n", self.ns(h), "link", "set", "eth0", "up")

    def guard(self):
        so = os.path.join(self.dir, "ftguard.so")
        if not os.path.exists(so):
            sh("cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC", "-o", so,
               os.path.join(HERE, "ftguard.c"), "-ldl")
        return so

    def start_server(self, i, persist=False):
        """redis-server in host sN, on ADDR:7000 and DIR/sN/sock; its pid kept in net.json."""
        d = os.path.join(self.dir, "s%d" % i)
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ)
        if self.st["faketime"]:
            ft = os.path.join(d, "faketime")
            if not os.path.exists(ft):
                with open(ft, "w") as f:
                    f.write("+0\n")
            env.update(LD_PRELOAD="%s:%s" % (self.guard(), FAKETIME_LIB), FAKETIME_TIMESTAMP_FILE=ft,
                       FAKETIME_NO_CACHE="1", FAKETIME_DONT_FAKE_MONOTONIC="1")
        sock = self.sock(i)
        if os.path.exists(sock):
            os.unlink(sock)
        argv = self.exec_argv("s%d" % i) + [
            "redis-server", "--port", str(PORT), "--bind", self.addr("s%d" % i), "--unixsocket", sock,
            "--unixsocketperm", "700", "--save", "", "--dir", d, "--logfile", os.path.join(d, "log"),
            "--daemonize", "no", "--protected-mode", "no"]
        argv += ["--appendonly", "yes", "--appendfsync", "always"] if persist else ["--appendonly", "no"]
        # `ip netns exec` execs the server: the pid is the server's.
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(d, "stderr"), "a"), start_new_session=True)
        self.st["pids"][str(i)] = p.pid
        self.save()
        for _ in range(200):
            if p.poll() is not None:
                raise RuntimeError("redis-server s%d exited %s: %s" % (i, p.returncode, self.tail(i)))
            if os.path.exists(sock):
                try:
                    if ping(sock):
                        return p
                except OSError:
                    pass
            time.sleep(0.025)
        raise RuntimeError("redis-server s%d did not answer: %s" % (i, self.tail(i)))

    def tail(self, i):
        d = os.path.join(self.dir, "s%d" % i)
        out = ""
        for f in ("stderr", "log"):
            try: out += open(os.path.join(d, f)).read()[-300:]
            except OSError: pass
        return out

    def kill_server(self, i):
        pid = self.st["pids"].pop(str(i), None)
        self.save()
        if pid and alive(pid):
            os.kill(pid, signal.SIGKILL)
            for _ in range(100):
                if not alive(pid):
                    break
                time.sleep(0.01)
            try: os.waitpid(pid, os.WNOHANG)
            except ChildProcessError: pass

    def down(self):
        for i in list(self.st["pids"]):
            self.kill_server(int(i))
        sweep(owner=self.owner)

    # --- faults --------------------------------------------------------------------------
    def _name(self, kind):
        self.st["seq"] += 1
        return "%s%d" % (kind, self.st["seq"])

    def nft(self, host, script):
        p = subprocess.run(self.exec_argv(host) + ["nft", "-f", "-"], input=script, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("nft in %s: %s" % (host, p.stderr.strip()))

    def cut(self, host, servers, mode="both"):
        """Drop, in HOST's namespace, what goes between it and SERVERS: both ways, or with
        mode 'oneway' only the replies (requests pass; a SYN's SYN-ACK is dropped too)."""
        name = self._name("cut")
        addrs = ", ".join(self.addr("s%d" % i) for i in servers)
        rules = ["chain in { type filter hook input priority -10; ip saddr { %s } drop; }" % addrs]
        if mode == "both":
            rules.append("chain out { type filter hook output priority -10; ip daddr { %s } drop; }" % addrs)
        self.nft(host, "table inet %s {\n%s\n}\n" % (name, "\n".join(rules)))
        self.st["faults"][name] = {"host": host, "kind": "nft"}
        self.save()
        return name

    def connections(self, host, servers):
        """HOST's established TCP connections to SERVERS: [(server address, local port)]."""
        out = sh(*(self.exec_argv(host) + ["ss", "-Htn", "state", "established"]), check=False)
        want = {self.addr("s%d" % i) for i in servers}
        conns = []
        for line in out.splitlines():
            w = line.split()
            if len(w) < 4:
                continue
            local, peer = w[-2], w[-1]
            pa, pp = peer.rsplit(":", 1)
            if pa in want and pp == str(PORT):
                conns.append((pa, int(local.rsplit(":", 1)[1])))
        return conns

    def hang(self, host, servers):
        """Blackhole HOST's established connections to SERVERS both ways (no RST, no FIN);
        new connections pass.  (name, number of connections)."""
        conns = self.connections(host, servers)
        name = self._name("hang")
        out = " ".join("ip daddr %s tcp sport %d drop;" % c for c in conns)
        inn = " ".join("ip saddr %s tcp dport %d drop;" % c for c in conns)
        self.nft(host, "table inet %s {\nchain in { type filter hook input priority -10; %s }\n"
                 "chain out { type filter hook output priority -10; %s }\n}\n" % (name, inn, out))
        self.st["faults"][name] = {"host": host, "kind": "nft"}
        self.save()
        return name, len(conns)

    def slow(self, host, rate="32kbit"):
        """A token bucket on HOST's link, both ways: RATE, a 1600-byte burst, packets queue up
        to 3 s (netem is not in this kernel; tbf delays by queueing)."""
        name = self._name("slow")
        tbf = ["root", "tbf", "rate", rate, "burst", "1600", "latency", "3s"]
        sh("tc", "-n", self.ns(host), "qdisc", "add", "dev", "eth0", *tbf)
        sh("tc", "-n", self.ns("br"), "qdisc", "add", "dev", "p-" + host, *tbf)
        self.st["faults"][name] = {"host": host, "kind": "tbf"}
        self.save()
        return name

    def heal(self, name):
        f = self.st["faults"].pop(name, None)
        self.save()
        if f is None:
            return
        if f["kind"] == "nft":
            subprocess.run(self.exec_argv(f["host"]) + ["nft", "delete", "table", "inet", name], capture_output=True)
        else:
            subprocess.run(["tc", "-n", self.ns(f["host"]), "qdisc", "del", "dev", "eth0", "root"], capture_output=True)
            subprocess.run(["tc", "-n", self.ns("br"), "qdisc", "del", "dev", "p-" + f["host"], "root"],
                           capture_output=True)

    def clock(self, i, spec):
        """Server i's libfaketime spec from now on ('+10': 10 s ahead of the real clock)."""
        path = os.path.join(self.dir, "s%d" % i, "faketime")
        with open(path + ".tmp", "w") as f:
            f.write(spec + "\n")
        os.rename(path + ".tmp", path)


def ping(sock, timeout=0.5):
    return resp(sock, "PING", timeout=timeout) == "PONG"


def resp(sock, *args, timeout=2.0):
    """One command on a unix socket, in RESP; a simple reply, an integer or a list of them."""
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    try:
        s.connect(sock)
        s.sendall(b"".join([b"*%d\r\n" % len(args)] +
                           [b"$%d\r\n%s\r\n" % (len(a), a) for a in (str(x).encode() for x in args)]))
        f = s.makefile("rb")
        return read_reply(f)
    finally:
        s.close()


def read_reply(f):
    """One RESP reply from file f (the model's runner reads with it too)."""
    line = f.readline().rstrip(b"\r\n")
    t, rest = line[:1], line[1:]
    if t == b"+": return rest.decode()
    if t == b"-": raise Exception(rest.decode())
    if t == b":": return int(rest)
    if t == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
    if t == b"*":
        n = int(rest)
        return None if n < 0 else [read_reply(f) for _ in range(n)]
    raise Exception("bad reply %r" % line)


def main(argv):
    if not argv:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    cmd, a = argv[0], argv[1:]
    if cmd == "can":
        why = can()
        if why:
            print(why)
        return 1 if why else 0
    if cmd == "sweep":
        for n in sweep():
            print("deleted " + n)
        return 0
    if cmd == "up":
        import argparse
        ap = argparse.ArgumentParser(prog="net.py up")
        ap.add_argument("dir")
        ap.add_argument("--servers", type=int, default=3)
        ap.add_argument("--clients", type=int, default=2)
        ap.add_argument("--faketime", action="store_true")
        ap.add_argument("--owner", type=int, help="the pid the network belongs to (default: this one's parent)")
        o = ap.parse_args(a)
        net = Net.up(o.dir, o.servers, o.clients, o.faketime, owner=o.owner or os.getppid())
        for i in range(1, o.servers + 1):
            print("%s %s %s" % (net.url(i), net.sock(i), net.st["pids"][str(i)]))
        return 0
    net = Net(a[0])
    if cmd == "down":
        net.down()
    elif cmd == "cut":
        print(net.cut(a[1], [int(x) for x in a[2].split(",")], a[3] if len(a) > 3 else "both"))
    elif cmd == "hang":
        name, n = net.hang(a[1], [int(x) for x in a[2].split(",")])
        print("%s %d" % (name, n))
    elif cmd == "slow":
        print(net.slow(a[1], a[2]))
    elif cmd == "heal":
        net.heal(a[1])
    elif cmd == "clock":
        net.clock(int(a[1]), a[2])
    elif cmd == "exec":
        os.execvp("ip", net.exec_argv(a[1]) + a[2:])
    else:
        print("net.py: unknown command %s" % cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
