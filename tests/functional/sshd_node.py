"""A real sshd in a network namespace, reached over a veth pair: a lab node for tests.

``with sshd_node() as node:`` gives the namespace, the node's address, a client
key that is authorised for root, and the pid of the listening sshd. On exit sshd
and everything it started in the namespace is killed and the namespace, the veth
pair and the temporary directory are removed.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
PREFIX = "nsb-test-ssh-"


@dataclass
class SshdNode:
    netns: str
    host: str               # the node's address (inside the namespace)
    gateway: str            # the root namespace's end of the veth pair
    key_filename: str       # private client key authorised for root
    workdir: Path
    sshd: subprocess.Popen  # the listening sshd (ip netns exec execs it: same pid)

    @property
    def listener_pid(self) -> int:
        return self.sshd.pid

    def ns(self, *argv: str, **kwargs) -> subprocess.CompletedProcess:
        """Run ``argv`` inside the node's namespace."""
        return subprocess.run(["ip", "netns", "exec", self.netns, *argv], capture_output=True,
                              text=True, **kwargs)

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes: every sshd below the listener."""
        children: dict[int, list[int]] = {}
        names: dict[int, str] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            pid = int(stat.parent.name)
            comm, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:]
            state, ppid = rest.split()[:2]
            if state != "Z":
                children.setdefault(int(ppid), []).append(pid)
                names[pid] = comm
        found, todo = [], list(children.get(self.listener_pid, []))
        while todo:
            pid = todo.pop()
            if names.get(pid) == "sshd":
                found.append(pid)
                todo += children.get(pid, [])
        return found


def _free_subnet() -> ipaddress.IPv4Network:
    used = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True,
                          text=True, check=True).stdout
    routes = subprocess.run(["ip", "-4", "route", "show"], capture_output=True, text=True,
                            check=True).stdout
    for _ in range(100):
        net = ipaddress.ip_network(f"10.{random.randint(200, 254)}.{random.randint(0, 255)}."
                                   f"{4 * random.randint(0, 63)}/30")
        if not any(str(address) in used + routes for address in net):
            return net
    raise RuntimeError("no free 10.x.y.z/30 subnet for the sshd node")


def _root_locked() -> bool:
    for line in Path("/etc/shadow").read_text().splitlines():
        if line.startswith("root:"):
            return line.split(":")[1].startswith("!")
    return False


def _wait_port(host: str, port: int, sshd: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sshd.poll() is not None:
            raise RuntimeError(f"sshd exited with {sshd.returncode}: {log.read_text()}")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"sshd did not accept connections on {host}:{port}: {log.read_text()}")


def _sshd_config(workdir: Path, host: str, port: int) -> Path:
    """Keys (a host key, a client key authorised for root) and an sshd_config in
    ``workdir`` for an sshd on ``host``:``port``."""
    for name in ("host_key", "client_key"):
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"nsb-test-{name}",
             "-f", str(workdir / name))
    shutil.copy(workdir / "client_key.pub", workdir / "authorized_keys")
    config = workdir / "sshd_config"
    config.write_text("\n".join([
        f"Port {port}",
        f"ListenAddress {host}",
        f"HostKey {workdir / 'host_key'}",
        f"PidFile {workdir / 'sshd.pid'}",
        f"AuthorizedKeysFile {workdir / 'authorized_keys'}",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        # sshd refuses a locked account (root:!) unless PAM decides
        f"UsePAM {'yes' if _root_locked() else 'no'}",
        "StrictModes no",
        "Subsystem sftp internal-sftp",
        "LogLevel VERBOSE",
        "",
    ]))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
    return config


@dataclass
class RootSshd:
    host: str  # 127.0.0.1
    port: int
    key_filename: str  # private client key authorised for root
    workdir: Path


@contextlib.contextmanager
def root_sshd():
    """An sshd of this machine's own namespace on 127.0.0.1 and a free port: a host
    reached over SSH that is this machine (libvirt, bridges and taps it makes are the
    ones QEMU sees)."""
    workdir = Path(tempfile.mkdtemp(prefix=PREFIX))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sshd = None
    try:
        config = _sshd_config(workdir, "127.0.0.1", port)
        log = workdir / "sshd.log"
        with open(log, "wb") as handle:
            sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=handle,
                                    stderr=handle)
        _wait_port("127.0.0.1", port, sshd, log, timeout=10)
        yield RootSshd("127.0.0.1", port, str(workdir / "client_key"), workdir)
    finally:
        if sshd is not None:
            sshd.kill()
            sshd.wait(5)
        shutil.rmtree(workdir, ignore_errors=True)


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True)


@contextlib.contextmanager
def sshd_node():
    suffix = secrets.token_hex(4)
    netns, veth, peer = PREFIX + suffix, f"nsbs{suffix}", f"nsbp{suffix}"
    net = _free_subnet()
    gateway, host = (str(address) for address in list(net.hosts())[:2])
    workdir = Path(tempfile.mkdtemp(prefix=PREFIX))
    sshd = None
    try:
        _run("ip", "netns", "add", netns)
        _run("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
        _run("ip", "link", "set", peer, "netns", netns)
        _run("ip", "addr", "add", f"{gateway}/30", "dev", veth)
        _run("ip", "link", "set", veth, "up")
        _run("ip", "-n", netns, "addr", "add", f"{host}/30", "dev", peer)
        _run("ip", "-n", netns, "link", "set", peer, "up")
        _run("ip", "-n", netns, "link", "set", "lo", "up")
        config = _sshd_config(workdir, host, 22)
        log = workdir / "sshd.log"
        with open(log, "wb") as handle:
            sshd = subprocess.Popen(["ip", "netns", "exec", netns, SSHD, "-D", "-e",
                                     "-f", str(config)], stdout=handle, stderr=handle)
        _wait_port(host, 22, sshd, log, timeout=10)
        yield SshdNode(netns, host, gateway, str(workdir / "client_key"), workdir, sshd)
    finally:
        if sshd is not None:
            sshd.kill()
            sshd.wait(5)
        # everything still running in the namespace (sessions, started processes)
        pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "link", "del", veth], capture_output=True)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
        shutil.rmtree(workdir, ignore_errors=True)
