"""What nsb asks of libvirt itself: a connection, a domain started within a deadline,
domains removed, and the user QEMU runs as."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
import xml.etree.ElementTree as ET

from nsb.errors import PrerequisiteError

LOG = logging.getLogger(__name__)

DEFAULT_URI = "qemu:///system"
GREETING_S = 60.0  # the longest wait for sshd's greeting on an accepted connection
VM_CONNECT_TIMEOUT_S = 60.0  # SSH connect, greeting and login to a VM (TCG is slow)


def connect(uri: str):
    """An open libvirt connection; libvirt-python or libvirtd missing is one line."""
    try:
        import libvirt
    except ImportError as exc:
        raise PrerequisiteError(f"the libvirt context needs libvirt-python ({exc}): "
                                "pip install libvirt-python (apt-get install "
                                "libvirt-dev pkg-config gcc)") from None
    libvirt.registerErrorHandler(lambda *_: None, None)  # errors come as exceptions
    try:
        return libvirt.open(uri)
    except libvirt.libvirtError as exc:
        raise PrerequisiteError(
            f"cannot connect to libvirt at {uri}: {exc.get_error_message()}"
            " (is libvirtd running? libvirtd -d, or systemctl start libvirtd)") from None


def start_domain(conn, name: str, timeout_s: float) -> str | None:
    """Start domain ``name``: None once it runs, else libvirt's error. QEMU does not
    come up before every vhost-user NIC's switch has connected: a switch that never
    comes is a TimeoutError after ``timeout_s`` (the domain destroyed), not a hang."""
    import libvirt

    domain = conn.lookupByName(name)
    failure: list[str] = []

    def create() -> None:
        try:
            domain.create()
        except libvirt.libvirtError as exc:
            failure.append(exc.get_error_message())

    starting = threading.Thread(target=create, name=f"start-{name}", daemon=True)
    starting.start()
    starting.join(timeout_s)
    if starting.is_alive():
        with contextlib.suppress(libvirt.libvirtError):
            domain.destroy()
        starting.join(30)
        raise TimeoutError(name)
    return failure[0] if failure else None


def qemu_user(conn, domain_types: set[str]) -> tuple[int, int]:
    """The uid and gid libvirt runs QEMU as (its DAC base label); root without one."""
    root = ET.fromstring(conn.getCapabilities())
    for label in root.iterfind("host/secmodel/baselabel"):
        if label.get("type") in domain_types and label.text:
            uid, gid = label.text.split(":")
            return int(uid.lstrip("+")), int(gid.lstrip("+"))
    return 0, 0


def remove_domain(conn, name: str) -> bool:
    """Destroy (if running) and undefine ``name``; False if there was no such domain."""
    import libvirt

    try:
        domain = conn.lookupByName(name)
    except libvirt.libvirtError:
        return False
    try:
        if domain.isActive():
            domain.destroy()
    except libvirt.libvirtError as exc:
        LOG.warning("domain %s: destroy failed: %s", name, exc)
    try:
        domain.undefine()
    except libvirt.libvirtError as exc:
        LOG.warning("domain %s: undefine failed: %s", name, exc)
        return False
    return True


def remove_task_domains(task_id: str, uri: str = DEFAULT_URI) -> list[str]:
    """Every domain named after ``task_id`` (a killed run's VMs); [] without libvirt."""
    try:
        conn = connect(uri)
    except PrerequisiteError:  # no libvirt here: no VMs to remove
        return []
    try:
        names = [d.name() for d in conn.listAllDomains()
                 if d.name().startswith(f"nsb-{task_id}-")]
        return [name for name in names if remove_domain(conn, name)]
    finally:
        conn.close()


def wait_for_ssh(address: str, deadline: float) -> bool:
    """True once an sshd greets on ``address``:22, False when ``deadline`` (monotonic)
    passed: a VM is up when its sshd answers on the management address. Once a
    connection is accepted the greeting is awaited up to GREETING_S: a slow guest
    (nested TCG) takes seconds to start sshd's child, and giving up sooner only
    piles up more children for it to start."""
    while True:
        try:
            with socket.create_connection((address, 22), timeout=2) as sock:
                sock.settimeout(max(2.0, min(GREETING_S, deadline - time.monotonic())))
                if sock.recv(8).startswith(b"SSH-"):
                    return True
        except OSError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)
