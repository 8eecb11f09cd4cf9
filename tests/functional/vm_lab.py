"""libvirtd for the VM tests: started here when it does not run (no systemd in CI),
stopped again afterwards if it was started here. A hugetlbfs mount is there first,
as systemd makes one on Debian (libvirt finds it when it starts)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from nsb.vnfs.hugepages import hugetlbfs_mounted

SOCKET = Path("/var/run/libvirt/libvirt-sock")
HUGETLBFS = "/dev/hugepages"


def _answers() -> bool:
    done = subprocess.run(["virsh", "-c", "qemu:///system", "version"], capture_output=True,
                          timeout=30)
    return done.returncode == 0


@contextlib.contextmanager
def libvirtd():
    """A libvirtd answering on qemu:///system, with a hugetlbfs mount, for the block."""
    mounted = not hugetlbfs_mounted()
    if mounted:
        os.makedirs(HUGETLBFS, exist_ok=True)
        subprocess.run(["mount", "-t", "hugetlbfs", "nodev", HUGETLBFS], check=True)
        if SOCKET.exists() and _answers():  # one that runs sees mounts only when it starts:
            _stop("libvirtd")  # it is started again
            mounted = False  # and keeps the mount
    try:
        with _daemons():
            yield
    finally:
        if mounted:
            subprocess.run(["umount", "-l", HUGETLBFS], check=False)


@contextlib.contextmanager
def _daemons():
    if SOCKET.exists() and _answers():
        yield
        return
    for directory in ("/var/log/libvirt", "/var/run/libvirt"):
        os.makedirs(directory, exist_ok=True)
    started = []
    for daemon in ("virtlogd", "libvirtd"):
        if not _running(daemon):  # a zombie of one stopped before does not count
            subprocess.run([daemon, "-d"], check=True)
            started.append(daemon)
    deadline = time.monotonic() + 30
    while not (SOCKET.exists() and _answers()):
        if time.monotonic() > deadline:
            raise RuntimeError("libvirtd did not answer within 30 s: see "
                               "/var/log/libvirt/libvirtd.log")
        time.sleep(0.2)
    try:
        yield
    finally:
        for daemon in reversed(started):
            _stop(daemon)


def _stop(daemon: str) -> None:
    """SIGTERM, and wait until it is gone (a dying libvirtd still answers for a while)."""
    pids = _running(daemon)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{daemon} did not stop within 30 s of SIGTERM")
        time.sleep(0.1)


def _running(daemon: str) -> list[int]:
    pids = subprocess.run(["pgrep", "-x", daemon], capture_output=True, text=True).stdout
    return [int(pid) for pid in pids.split() if _alive(int(pid))]


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
