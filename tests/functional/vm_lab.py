"""libvirtd for the VM tests: started here when it does not run (no systemd in CI),
stopped again afterwards if it was started here."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

SOCKET = Path("/var/run/libvirt/libvirt-sock")


def _answers() -> bool:
    done = subprocess.run(["virsh", "-c", "qemu:///system", "version"], capture_output=True,
                          timeout=30)
    return done.returncode == 0


@contextlib.contextmanager
def libvirtd():
    """A libvirtd answering on qemu:///system for the duration of the block."""
    if SOCKET.exists() and _answers():
        yield
        return
    for directory in ("/var/log/libvirt", "/var/run/libvirt"):
        os.makedirs(directory, exist_ok=True)
    started = []
    for daemon in ("virtlogd", "libvirtd"):
        if subprocess.run(["pgrep", "-x", daemon], capture_output=True).returncode != 0:
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
            for pid in subprocess.run(["pgrep", "-x", daemon], capture_output=True,
                                      text=True).stdout.split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGTERM)
