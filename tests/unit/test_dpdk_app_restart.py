"""A vhost-user port lost to the switch resetting DPDK's virtio-user negotiation (OVS's
vhost client reconnecting while ports are added): the app is started once more, and
only once; other missing ports are waited for as before."""

from __future__ import annotations

import pytest

from nsb.errors import RunError
from nsb.nodes.node import Interface
from nsb.vnfs.dpdk import app
from nsb.vnfs.dpdk import testpmd as testpmd_vnf

LOST = ("vhost_user_read(): Failed to recv msg header: Connection reset by peer\n"
        "virtio_user_pmd_probe(): virtio_user_dev_init fails\n")


class Process:
    def __init__(self):
        self.stopped = False

    def poll(self):
        return None

    def stop(self, grace_s):
        self.stopped = True


def make_testpmd(kind: str, log: str, answers: list[str], monkeypatch) -> testpmd_vnf.TestpmdVnf:
    vnf = object.__new__(testpmd_vnf.TestpmdVnf)
    vnf.name, vnf.node = "testpmd1", type("Node", (), {"executor": None})()
    vnf.interfaces = [Interface("xe0", kind=kind), Interface("xe1", kind=kind)]
    vnf.process, vnf._restarted, vnf.file_prefix = Process(), False, "nsb-t-testpmd1"
    vnf.starts = 0

    def start():
        vnf.starts += 1
        vnf.process = Process()

    monkeypatch.setattr(vnf, "_start", start)
    monkeypatch.setattr(vnf, "log_text", lambda: log)
    monkeypatch.setattr(vnf, "_ports_not_ready", lambda timeout_s: answers.pop(0))
    monkeypatch.setattr(app.dpdk_telemetry, "remove_runtime_dir", lambda *a: None)
    monkeypatch.setattr(app.time, "sleep", lambda s: None)
    return vnf


def test_a_lost_vhost_user_port_starts_the_app_once_more(monkeypatch):
    vnf = make_testpmd("vhostuser", LOST, ["port 1 (xe1) to exist", ""], monkeypatch)
    first = vnf.process
    vnf.wait_until_ready(30)
    assert first.stopped and vnf.starts == 1


def test_only_once(monkeypatch):
    vnf = make_testpmd("vhostuser", LOST, ["port 1 (xe1) to exist"] * 3, monkeypatch)
    monkeypatch.setattr(app.time, "monotonic", iter(range(0, 1000, 20)).__next__)
    with pytest.raises(RunError, match="still waiting for: port 1 \\(xe1\\) to exist"):
        vnf.wait_until_ready(30)
    assert vnf.starts == 1


@pytest.mark.parametrize("kind, log", [("memif", LOST), ("vhostuser", "no probe failure\n")])
def test_not_without_vhost_user_or_without_the_eals_word(monkeypatch, kind, log):
    vnf = make_testpmd(kind, log, ["port 1 (xe1) to exist"] * 3, monkeypatch)
    monkeypatch.setattr(app.time, "monotonic", iter(range(0, 1000, 20)).__next__)
    with pytest.raises(RunError):
        vnf.wait_until_ready(30)
    assert vnf.starts == 0
