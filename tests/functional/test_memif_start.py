"""What nsb's memif start order rests on, shown with DPDK 22.11's testpmd: a memif
server's socket exists from its EAL's device probe, but until the program starts the
port it turns a client away ("ID not found") and that client's link never comes up;
a client connecting after the start links. nsb's DPDK VNF says it accepts clients
only once its telemetry shows the port started (``DpdkApp.wait_serving``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from nsb.executors.local import LocalExecutor, LocalProcess
from nsb.nodes.node import Interface
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.dpdk import testpmd as testpmd_vnf
from tests.conftest import requires_root

TESTPMD = "dpdk-testpmd"


@pytest.fixture
def sockets(tmp_path):
    requires_root()
    if not shutil.which(TESTPMD):
        pytest.skip("no dpdk-testpmd (Debian's dpdk package)")
    yield tmp_path
    for prefix in ("nsbt-memif-server", "nsbt-memif-early", "nsbt-memif-late"):
        shutil.rmtree(f"{dpdk_telemetry.RUNTIME_DIR}/{prefix}", ignore_errors=True)


def start_testpmd(prefix: str, role: str, socket: Path, log: Path, *extra: str) -> subprocess.Popen:
    argv = [TESTPMD, "--no-huge", "-m", "128", "--no-pci", "-l", "0-1", "--file-prefix", prefix,
            "--log-level", "*:info", "--vdev",
            f"net_memif0,role={role},id=0,socket={socket},socket-abstract=no",
            "--", "-i", "--total-num-mbufs=2048", *extra]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def link_up(prefix: str) -> bool:
    reply = dpdk_telemetry.query(LocalExecutor(), prefix, ["/ethdev/link_status,0"])
    return (reply.get("/ethdev/link_status,0") or {}).get("status") == "UP"


def telemetry_answers(prefix: str) -> bool:
    deadline = time.monotonic() + 30
    while not os.path.exists(dpdk_telemetry.socket_path(prefix)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def server_vnf(process: subprocess.Popen, socket: Path) -> testpmd_vnf.TestpmdVnf:
    """nsb's testpmd VNF around the server started here (only what wait_serving reads)."""
    vnf = object.__new__(testpmd_vnf.TestpmdVnf)
    iface = Interface("xe0", kind="memif")
    iface.socket, iface.serves_socket = str(socket), True
    vnf.name, vnf.interfaces, vnf.file_prefix = "testpmd0", [iface], "nsbt-memif-server"
    vnf.node = type("Node", (), {"executor": LocalExecutor()})()
    vnf.process = LocalProcess(process, [], None)
    return vnf


def stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
            process.wait(10)


def test_a_client_before_the_servers_port_start_never_links_and_nsb_waits_for_it(sockets):
    socket = sockets / "xe0.sock"
    server = start_testpmd("nsbt-memif-server", "server", socket, sockets / "server.log",
                     "--disable-device-start")
    early = late = None
    try:
        assert telemetry_answers("nsbt-memif-server")
        vnf = server_vnf(server, socket)
        assert socket.is_socket()  # probed: the socket is there, the port not started
        assert not vnf.wait_serving([str(socket)], time.monotonic() + 2)

        early = start_testpmd("nsbt-memif-early", "client", socket, sockets / "early.log")
        assert telemetry_answers("nsbt-memif-early")
        deadline = time.monotonic() + 20
        while "ID not found" not in (sockets / "early.log").read_text():
            assert time.monotonic() < deadline, (sockets / "early.log").read_text()
            time.sleep(0.2)

        server.stdin.write("port start all\n")
        server.stdin.flush()
        assert vnf.wait_serving([str(socket)], time.monotonic() + 20)

        time.sleep(2)  # the early client is not tried again
        assert not link_up("nsbt-memif-early")
        stop(early)
        late = start_testpmd("nsbt-memif-late", "client", socket, sockets / "late.log")
        assert telemetry_answers("nsbt-memif-late")
        deadline = time.monotonic() + 20
        while not link_up("nsbt-memif-late"):
            assert time.monotonic() < deadline, (sockets / "late.log").read_text()
            time.sleep(0.2)
    finally:
        stop(*(p for p in (server, early, late) if p is not None))
