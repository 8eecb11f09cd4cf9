"""The VXLAN overlay sample in the lab: real TRex sends VXLAN frames to real OVS-DPDK
(userspace tunnelling on br-phy), which decapsulates them towards testpmd on
vhost-user and encapsulates what testpmd sends back. What TRex captures and counts
is checked against OVS's own port counters.
"""

from __future__ import annotations

import struct
import time

import pytest

from nsb.trial import Trial
from tests.conftest import SAMPLE, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex, running

VXLAN_SAMPLE = SAMPLE.parent / "vswitch" / "tc_ovs_dpdk_vxlan_trex.yaml"
VNI = 5001
FRAMES = 3_000


@pytest.fixture(autouse=True)
def _root_and_trex():
    requires_root()
    requires_trex()


def _vni(frame: bytes) -> int | None:
    """The VNI of an outer Ethernet/IPv4/UDP 4789/VXLAN frame, else None."""
    ether_type, = struct.unpack_from("!H", frame, 12)
    if ether_type != 0x0800 or frame[23] != 17:
        return None
    ihl = (frame[14] & 0x0F) * 4
    dport, = struct.unpack_from("!H", frame, 14 + ihl + 2)
    if dport != 4789:
        return None
    return int.from_bytes(frame[14 + ihl + 8 + 4:14 + ihl + 8 + 7], "big")


def _settled(ovs) -> dict:
    """OVS's port counters once two reads half a second apart agree: the tunnel port's
    counters lagged behind the frames its flows had forwarded (2535 of 3001 read right
    after a trial, in one run)."""
    def ports() -> dict:
        return {k: v for k, v in ovs.collect_kpi().items() if k.startswith("port")}

    last = ports()
    for _ in range(40):
        time.sleep(0.5)
        now = ports()
        if now == last:
            return now
        last = now
    return last


def test_trex_gets_back_re_encapsulated_frames_with_the_vni_ovs_counted(tmp_path):
    """64 B inner frames leave TRex as 114 B VXLAN frames, cross OVS-DPDK's tunnel end
    point both ways and come back as 114 B frames of the same VNI; TRex's counts are
    OVS's port counters (br-phy's ports and the vxlan port)."""
    with running(tmp_path, task=VXLAN_SAMPLE, vni=VNI) as scenario:
        gen = scenario.generator
        ovs = next(v for v in scenario.vnfs if v.name == "ovs0")
        before = ovs.collect_kpi()
        capture = gen.client.start_capture(rx_ports=[1], limit=FRAMES, bpf_filter="udp")
        result = gen.run_trial(Trial(64, 5_000, FRAMES / 5_000))
        captured: list = []
        gen.client.stop_capture(capture["id"], output=captured)
        after = _settled(ovs)
        task_id = ovs.run.task_id
    moved = {k: after[k] - before[k] for k in after if k.startswith("port")}
    assert result.tx_packets >= FRAMES * 0.9
    assert result.rx_packets > 0
    assert captured, "no frame captured"
    assert {_vni(bytes(c["binary"])) for c in captured} == {VNI}
    assert {len(c["binary"]) for c in captured} == {114 - 4}  # the capture has no FCS
    # port0/3 br-phy's from/to TRex, port1/2 br-int's to/from testpmd, port4 vxlan0
    assert moved["port0_ipackets"] == result.tx_packets
    assert moved["port3_opackets"] == result.rx_packets
    # what came out of the tunnel (decapsulated) all went to testpmd; what testpmd sent
    # back went into it (encapsulated) and out to TRex
    assert moved["port4_ipackets"] == result.tx_packets == moved["port1_opackets"]
    assert moved["port2_ipackets"] >= result.rx_packets > 0
    assert moved["port4_opackets"] >= result.rx_packets  # (OVS counts a push twice)
    assert leftovers(task_id) == []


def test_the_vxlan_sample_reports_inner_and_outer_sizes(results_conf, tmp_path):
    """The sample run by nsb: a throughput per 64 B inner frame, stated as 114 B outer,
    with nothing left behind."""
    proc = start(results_conf, {"duration_s": 1, "precision": 0.1}, task=VXLAN_SAMPLE,
                 env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    assert result["throughput_pps"] > 0
    assert result["inner_frame_size"] == 64 and result["outer_frame_size"] == 114, result
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"]
    received = sum(t["rx_packets"] for t in doc["trials"])
    assert ovs and max(k["port4_ipackets"] for k in ovs) >= received  # all came via vxlan0
    assert leftovers(task_id) == []
