"""Small loopback networks (the embedding tests, the examples): keys made by
`gcnode keygen`, one ZPL file per peer on free ports, processes started with
their output in a log file and waited for with a deadline (killed past it).

GC_BUILD_DIR and GC_SOURCE_DIR (ctest sets them) say where the build and
the repository are; by default the repository this file is in."""
from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

_REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("GC_BUILD_DIR", os.path.join(_REPO, "build"))
SOURCE = os.environ.get("GC_SOURCE_DIR", _REPO)
GCNODE = os.path.join(BUILD, "gcnode")


def _ephemeral_range() -> "tuple[int, int]":
    """The kernel's range for the local ports of outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(v) for v in f.read().split())
        if 0 < lo <= hi < 65536:
            return lo, hi
    except (OSError, ValueError):
        pass
    return 32768, 60999


def free_ports(n: int) -> List[int]:
    """n consecutive TCP ports nobody listens on now, outside the ephemeral
    range: while peers start, each one connects again and again to
    neighbours not yet listening, and every attempt takes an ephemeral local
    port, which may be the one a slower peer is about to bind (ports from
    bind(0), as this took before, failed a test that way under load:
    "Address already in use"). gcnet's rule (harness/gc_ports.c), in Python."""
    lo, hi = _ephemeral_range()
    starts = list(range(10000, lo - n)) + list(range(hi + 1, 65536 - n))
    if not starts:
        raise RuntimeError("no room for %d TCP ports outside the ephemeral range %d-%d" % (n, lo, hi))
    rng = random.SystemRandom()
    for _ in range(64):
        start = rng.choice(starts)
        try:
            for port in range(start, start + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return list(range(start, start + n))
    raise RuntimeError("no %d free TCP ports outside the ephemeral range %d-%d" % (n, lo, hi))


def fail(msg: str) -> None:
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


class Net:
    """n peers with keys in DIR/keys and configs DIR/pI.zpl."""

    def __init__(self, tag: str, n: int, settings: Dict[str, object], where: Optional[str] = None):
        if where:
            os.makedirs(where, exist_ok=True)
        self.dir = where or tempfile.mkdtemp(prefix="gc-%s-" % tag)
        self.keep = bool(where)
        self.n = n
        self.ports = free_ports(n)
        self.procs: Dict[int, subprocess.Popen] = {}
        for i in range(n):
            subprocess.run([GCNODE, "keygen", "--out", self.path("keys"), "--name", "p%d" % i],
                           check=True, stdout=subprocess.DEVNULL)
        for i in range(n):
            self.write_config(i, settings)

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def write_config(self, i: int, settings: Dict[str, object]) -> None:
        """settings: {"train/rounds": 20, ...}; node/index, keys, peers are filled in."""
        keys = {"node/index": i, "node/key": self.path("keys/p%d.key" % i),
                "node/progress": "off", "node/network": "embed-test",
                "node/status_file": self.path("p%d.status" % i),
                "node/metrics": self.path("p%d.jsonl" % i)}
        keys.update(settings)
        sections: Dict[str, List[str]] = {}
        for k, v in keys.items():
            sec, name = k.split("/", 1)
            sections.setdefault(sec, []).append('    %s = "%s"' % (name, v))
        with open(self.path("p%d.zpl" % i), "w") as f:
            for sec, lines in sections.items():
                f.write(sec + "\n" + "\n".join(lines) + "\n")
            f.write("peers\n")
            for j in range(self.n):
                f.write('    %d\n        endpoint = "tcp://127.0.0.1:%d"\n        key = "%s"\n'
                        % (j, self.ports[j], self.path("keys/p%d.pub" % j)))

    def start(self, i: int, argv: List[str], env: Optional[Dict[str, str]] = None) -> None:
        e = dict(os.environ)
        e["OPENBLAS_NUM_THREADS"] = "1"
        e.update(env or {})
        log = open(self.path("p%d.log" % i), "ab")
        self.procs[i] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=e)

    def start_native(self, i: int, args: Optional[List[str]] = None) -> None:
        self.start(i, [GCNODE, "run", "--config", self.path("p%d.zpl" % i)] + (args or []))

    def wait(self, i: int, timeout: float) -> int:
        try:
            return self.procs[i].wait(timeout=max(timeout, 0.1))
        except subprocess.TimeoutExpired:
            self.procs[i].kill()
            self.procs[i].wait()
            return -1

    def wait_line(self, i: int, prefix: str, timeout: float, anywhere: bool = False) -> None:
        """Wait until peer i's log has a line starting with prefix (or, with
        anywhere, containing it): it got that far; or fail with its log. E.g.
        a PyTorch peer's "peer=" line says it is open and has its neighbours
        or gave up waiting for them; its ": listening," log line says it is
        open and about to wait for them."""
        end = time.time() + timeout
        while time.time() < end:
            if any(l.startswith(prefix) or (anywhere and prefix in l) for l in self.log(i).splitlines()):
                return
            if self.procs[i].poll() is not None:
                break
            time.sleep(0.05)
        fail("peer %d printed no '%s' line in %.0f s; its log:\n%s" % (i, prefix, timeout, self.log(i)[-3000:]))

    def wait_all(self, timeout: float) -> Dict[int, int]:
        end = time.time() + timeout
        return {i: self.wait(i, end - time.time()) for i in list(self.procs)}

    def wait_success(self, timeout: float, what: str = "peer") -> None:
        """wait_all, and fail with the log of the first peer that did not exit 0."""
        for i, c in self.wait_all(timeout).items():
            if c != 0:
                fail("%s %d exited %d:\n%s" % (what, i, c, self.log(i)[-3000:]))

    def log(self, i: int) -> str:
        with open(self.path("p%d.log" % i), errors="replace") as f:
            return f.read()

    def last_line(self, i: int, prefix: str) -> str:
        lines = [l for l in self.log(i).splitlines() if l.startswith(prefix)]
        if not lines:
            fail("peer %d printed no '%s' line; its log:\n%s" % (i, prefix, self.log(i)[-3000:]))
        return lines[-1]

    def close(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        if self.keep or os.environ.get("GC_KEEP_TMP"):
            print("kept " + self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def fields(line: str) -> Dict[str, str]:
    """'peer=1 rounds=20 x=...' -> dict."""
    return dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
