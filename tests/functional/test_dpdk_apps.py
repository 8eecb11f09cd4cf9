"""DPDK's l3fwd and l2fwd (the real binaries, v22.11) as nsb's VNFs in the embedded lab.

Frames sent by hand through l3fwd come out of the other port with their TTL one
lower and their MACs those of the route (l3fwd's port, the generator's port); the
generators' counts equal l3fwd's own, read from its DPDK telemetry; l2fwd forwards
frames unchanged; the sample runs both core counts; nothing stays behind.
``DPDK_APPS`` is NSB_DPDK_APPS, else ../shared/tools/dpdk-apps beside the checkout.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

from nsb.executors.local import call_in_netns
from nsb.trial import Trial
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.prox_lab import deployed
from tests.functional.trex_lab import TREX_SERVER, env_with_trex, trex_env
from tests.unit.test_dpdk_apps import lab_task

DPDK_APPS = Path(os.environ.get("NSB_DPDK_APPS") or ROOT.parent / "shared" / "tools" / "dpdk-apps")
L3FWD, L2FWD = DPDK_APPS / "l3fwd", DPDK_APPS / "l2fwd"
SAMPLE = ROOT / "samples" / "dpdk" / "tc_l3fwd_phy2phy.yaml"
ETH_P_ALL, PACKET_OUTGOING = 0x0003, 4
MARK_PORT = 9  # UDP discard: the frames this test sends by hand


@pytest.fixture(autouse=True)
def _root_and_binaries():
    requires_root()
    for binary in (L3FWD, L2FWD):
        if not os.access(binary, os.X_OK):
            pytest.skip(f"no DPDK {binary.name} at {binary} (set NSB_DPDK_APPS to a directory "
                        "with l3fwd and l2fwd built from DPDK 22.11's examples)")


def _counts(vnf) -> dict[int, tuple[int, int]]:
    """port -> (ipackets, opackets) as the VNF's DPDK telemetry counts them."""
    reply = dpdk_telemetry.query(vnf.executor, vnf.file_prefix,
                                 ["/ethdev/stats,0", "/ethdev/stats,1"])
    return {p: (reply[f"/ethdev/stats,{p}"]["ipackets"], reply[f"/ethdev/stats,{p}"]["opackets"])
            for p in (0, 1)}


def _frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, ttl: int) -> bytes:
    """A 60-byte Ethernet/IPv4/UDP frame (64 B with FCS) to UDP port MARK_PORT."""
    udp = struct.pack("!HHHH", 1024, MARK_PORT, 8 + 18, 0) + bytes(18)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, ttl, 17, 0,
                         socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
    return bytes.fromhex(dst_mac.replace(":", "") + src_mac.replace(":", "")) + \
        b"\x08\x00" + header + udp


def _checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _send_and_capture(netns: str, out_if: str, in_if: str, frame: bytes, count: int) -> list:
    """Send ``frame`` ``count`` times on ``out_if`` in ``netns``; the frames to UDP port
    MARK_PORT that arrive on ``in_if`` within 3 s."""
    def work() -> list[bytes]:
        rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        try:
            rx.bind((in_if, ETH_P_ALL))
            rx.settimeout(0.2)
            tx.bind((out_if, 0))
            for _ in range(count):
                tx.send(frame)
                time.sleep(0.001)
            got, deadline = [], time.monotonic() + 3.0
            while len(got) < count and time.monotonic() < deadline:
                try:
                    data, address = rx.recvfrom(2048)
                except TimeoutError:
                    continue
                if address[2] != PACKET_OUTGOING and data[12:14] == b"\x08\x00" and \
                        struct.unpack("!H", data[36:38])[0] == MARK_PORT:
                    got.append(data)
            return got
        finally:
            rx.close()
            tx.close()
    return call_in_netns(f"/run/netns/{netns}", work)


def _through(scenario, count: int, ttl: int = 64) -> tuple[list[bytes], dict, dict]:
    """``count`` frames from tg:xe0 to tg:xe1's address through the VNF: what tg:xe1
    got, and the VNF's counters before and after."""
    vnf, gen = scenario.vnfs[0], scenario.generator
    tg = gen.node.interfaces
    sut = vnf.node.interfaces
    frame = _frame(tg["xe0"].mac, sut["xe0"].mac, tg["xe0"].address, tg["xe1"].address, ttl)
    before = _counts(vnf)
    got = _send_and_capture(gen.executor.netns, "xe0", "xe1", frame, count)
    time.sleep(0.2)
    return got, before, _counts(vnf)


def _no_process_of(binary: Path) -> None:
    left = subprocess.run(["pgrep", "-af", str(binary)], capture_output=True, text=True).stdout
    assert not [line for line in left.splitlines() if "pgrep" not in line], left


def test_l3fwd_routes_with_ttl_decremented_and_macs_rewritten(tmp_path):
    args = {"generator": "trafgen", "cores": 1, "l3fwd_path": str(L3FWD)}
    with deployed(tmp_path, SAMPLE, args, ready_s=60.0) as scenario:
        got, before, after = _through(scenario, 200)
        tg, sut = scenario.generator.node.interfaces, scenario.vnfs[0].node.interfaces
    assert len(got) == 200
    for data in got:
        assert data[0:6] == bytes.fromhex(tg["xe1"].mac.replace(":", ""))  # --eth-dest
        assert data[6:12] == bytes.fromhex(sut["xe1"].mac.replace(":", ""))  # its port's MAC
        assert data[22] == 63  # TTL 64 - 1
        assert _checksum(data[14:34]) == 0  # the header checksum follows the TTL
        assert socket.inet_ntoa(data[30:34]) == tg["xe1"].address
    # l3fwd counted what went in on port 0 and out of port 1, exactly
    assert after[0][0] - before[0][0] == 200
    assert after[1][1] - before[1][1] == 200
    assert after[0][1] == before[0][1] and after[1][0] == before[1][0]
    _no_process_of(L3FWD)


def test_l3fwd_counts_equal_the_generators(tmp_path):
    """trafgen over veth (af_packet, two lcores sharing the ports' queues)."""
    args = {"generator": "trafgen", "cores": 2, "l3fwd_path": str(L3FWD)}
    with deployed(tmp_path, SAMPLE, args, ready_s=60.0) as scenario:
        gen, vnf = scenario.generator, scenario.vnfs[0]
        before = _counts(vnf)
        results = [gen.run_trial(Trial(64, 10_000, 1.0)), gen.run_trial(Trial(1518, 5_000, 1.0))]
        after = _counts(vnf)
        kpis = vnf.collect_kpi()
    _check_counts_agree(results, before, after)
    assert kpis["packets_in"] == after[0][0] + after[1][0]
    assert kpis["packets_fwd"] == after[0][1] + after[1][1]
    _no_process_of(L3FWD)


def test_l3fwd_counts_equal_trexs_over_memif(tmp_path):
    if not TREX_SERVER.exists():
        pytest.skip(f"no TRex at {TREX_SERVER.parent} (set NSB_TREX_PATH)")
    args = {"generator": "trex", "cores": 1, "l3fwd_path": str(L3FWD), "flows": 16}
    with trex_env(), deployed(tmp_path, SAMPLE, args, ready_s=60.0) as scenario:
        gen, vnf = scenario.generator, scenario.vnfs[0]
        before = _counts(vnf)
        results = [gen.run_trial(Trial(64, 200_000, 1.0)), gen.run_trial(Trial(512, 100_000, 1.0))]
        after = _counts(vnf)
    assert all(r.rx_packets > 0.99 * r.tx_packets for r in results), results
    _check_counts_agree(results, before, after, per_port=True)
    _no_process_of(L3FWD)


def _check_counts_agree(results, before, after, per_port: bool = False) -> None:
    """The VNF received what the generator sent (its latency frames too), and the
    generator received what the VNF sent; ``per_port`` on each port (TRex counts per
    port; sut:xe0 is cabled to tg:xe0, sut:xe1 to tg:xe1)."""
    received = sum(after[p][0] - before[p][0] for p in (0, 1))
    sent = sum(after[p][1] - before[p][1] for p in (0, 1))
    assert received == sum(r.tx_packets for r in results)
    assert sent == sum(r.rx_packets for r in results) > 0
    for port, name in ((0, "xe0"), (1, "xe1")) if per_port else ():
        assert after[port][0] - before[port][0] == sum(r.ports[name]["tx_packets"]
                                                       for r in results)
        assert after[port][1] - before[port][1] == sum(r.ports[name]["rx_packets"]
                                                       for r in results)


def test_l2fwd_forwards_frames_unchanged(tmp_path):
    # both generator ports silenced: nothing but this test's frames reaches l2fwd
    task = lab_task(tmp_path, app="l2fwd", options={"l2fwd_path": str(L2FWD)},
                    generator_options={"bidirectional": True})
    with deployed(tmp_path, task, {}, ready_s=60.0) as scenario:
        got, before, after = _through(scenario, 100)
        sut = scenario.vnfs[0].node.interfaces
        result = scenario.generator.run_trial(Trial(64, 10_000, 1.0))
        last = _counts(scenario.vnfs[0])
    assert len(got) == 100
    # --no-mac-updating: the frame as sent, to sut:xe0's MAC, TTL untouched
    assert all(d[0:6] == bytes.fromhex(sut["xe0"].mac.replace(":", "")) and d[22] == 64
               for d in got)
    assert after[0][0] - before[0][0] == 100 and after[1][1] - before[1][1] == 100
    _check_counts_agree([result], after, last)
    _no_process_of(L2FWD)


def test_the_sample_runs_both_core_counts(results_conf, tmp_path):
    """TRex (where installed, else trafgen) over veth (l3fwd runs one lcore over memif),
    with a notice that says why."""
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0\n")
    with_trex = TREX_SERVER.exists()
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64],
                                "l3fwd_path": str(L3FWD)}, task=SAMPLE,
                 **({"env": env_with_trex()} if with_trex else {}))
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    assert ("with 2 cores trex sends over veth pairs" if with_trex else "TRex not found") \
        in err
    task_id, doc = results_of(tmp_path / "results")
    assert [r["scenario"] for r in doc["results"]] == ["l3fwd_1core", "l3fwd_2cores"]
    for result in doc["results"]:
        trials = [t for t in doc["trials"] if t["scenario"] == result["scenario"]]
        passed = [t for t in trials if t["verdict"] in ("pass", "generator_limited")]
        # on a loaded machine one l3fwd core may lose frames at every rate TRex reaches
        # (the DUT is the limit and no rate asked passed): the answer is then 0, never a
        # rate no trial measured without loss
        assert result["loss_pct"] == 0, result
        if result["throughput_pps"] == 0:
            assert result["limited_by"] == "dut" and "passed" in result["limited_reason"]
        else:
            assert any(t["tx_rate_pps"] == pytest.approx(result["throughput_pps"])
                       for t in passed), result
        best = next((t for t in passed
                     if t["tx_rate_pps"] == pytest.approx(result["throughput_pps"])), trials[-1])
        # l3fwd's own counters (sampled after each trial) forwarded what was received
        samples = {k["trial_index"]: k["kpis"] for k in doc["kpis"]
                   if k["source"] == "l3fwd0" and k["scenario"] == result["scenario"]}
        prior = samples.get(best["trial_index"] - 1, {})
        forwarded = samples[best["trial_index"]]["packets_fwd"] - prior.get("packets_fwd", 0)
        # a generator-limited or failed trial may have lost frames on TRex's own af_packet
        # receive, after l3fwd forwarded them
        assert forwarded == best["rx_packets"] if best["verdict"] == "pass" \
            else forwarded >= best["rx_packets"]
    assert "l3fwd_2cores" in out and "Frame (B)" in out
    assert leftovers(task_id) == []
    _no_process_of(L3FWD)
