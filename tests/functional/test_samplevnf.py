"""The real SampleVNF binaries (DPDK 17.05: vFW, vACL, vCGNAPT, UDP_Replay) in the lab,
driven by the real TRex, every count checked against the VNF's own stats.

The lab's ports are veths, which the VNFs take as af_packet ports. Such a port
opens one socket per queue pair and the kernel spreads frames over all of them:
NSB's software load-balancing layout (lb_config SW) uses one queue pair per port,
so nothing is lost from the first frame; the run-to-completion layout (HW) uses
two, and the second socket, which no pipeline reads, takes its share of the frames
(the kernel hashes them over both) until its 512-frame ring is full: up to 512
frames per port are lost. That test warms the ports up until a trial loses nothing,
then counts.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

import pytest

from nsb.executors.local import call_in_netns
from nsb.packets import Direction, IpRange, PacketSpec, PortRange
from nsb.trial import Trial
from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.test_faults import _events, _wait_for
from tests.functional.trex_lab import env_with_trex, requires_trex, running

SAMPLES = ROOT / "samples" / "samplevnf"
VFW_TASK = SAMPLES / "tc_vfw_rfc2544.yaml"
TOOLS = Path(os.environ.get("NSB_SAMPLEVNF_PATH") or
             ROOT.parent / "shared" / "tools" / "samplevnf")
POOLS = ("/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
         "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
BINARIES = ("vFW", "vACL", "vCGNAPT", "UDP_Replay")


def requires_samplevnf():
    if not (TOOLS / "vFW").exists():
        pytest.skip(f"no SampleVNF binaries at {TOOLS} (set NSB_SAMPLEVNF_PATH)")


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()
    requires_samplevnf()


@pytest.fixture
def pools():
    """The hugepage pools before the test; after it, they must be as they were."""
    before = [Path(p).read_text() for p in POOLS]
    yield before
    assert [Path(p).read_text() for p in POOLS] == before


def lab_args(**more) -> dict:
    return {"context": "netns", "bin_path": str(TOOLS), **more}


def gone(task_id: str) -> list[str]:
    """What a run left: the lab's usual suspects, DPDK 17.05's runtime files in
    /var/run, hugetlbfs mounts and SampleVNF processes."""
    found = leftovers(task_id)
    found += [f"path {p}" for p in Path("/var/run").glob(f".nsb-{task_id}*")]
    found += [f"mount {line}" for line in Path("/proc/mounts").read_text().splitlines()
              if task_id in line]
    procs = subprocess.run(["ps", "-eo", "pid=,comm="], capture_output=True, text=True).stdout
    found += [f"process {line.strip()}" for line in procs.splitlines()
              if line.split()[-1] in BINARIES]
    return found


def uplink(dst_port: int, dst: str = "198.18.2.2", src: str = "198.18.1.2") -> PacketSpec:
    """One flow from ``src`` (tg_0 xe0's network) to ``dst`` (tg_0 xe1's network)."""
    return PacketSpec("uplink_0", 0, Direction.UPLINK, src_ip=IpRange(src, src),
                      dst_ip=IpRange(dst, dst), src_port=PortRange(1234, 1234),
                      dst_port=PortRange(dst_port, dst_port), flows=1)


def downlink(dst_port: int, dst: str = "198.18.1.2") -> PacketSpec:
    return PacketSpec("downlink_0", 0, Direction.DOWNLINK,
                      src_ip=IpRange("198.18.2.2", "198.18.2.2"), dst_ip=IpRange(dst, dst),
                      src_port=PortRange(2001, 2001), dst_port=PortRange(dst_port, dst_port),
                      flows=1)


def delta(after: dict, before: dict, key: str) -> float:
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_vfw_forwards_what_its_rules_accept_and_drops_the_rest(tmp_path, pools):
    """vfw_rules.yaml drops UDP to ports 5000-5999 (action 1 uplink, 2 downlink);
    NSB's default rules accept the rest (action 3 uplink, 4 downlink). One queue pair
    per af_packet port (lb_config SW): every frame counts from the first trial on."""
    with running(tmp_path, VFW_TASK, **lab_args()) as scenario:
        gen, vfw = scenario.generator, scenario.vnfs[0]
        task_id = gen.run.task_id
        assert "qpairs" not in vfw.files()["vfw_config"]
        before = vfw.collect_kpi()
        passed = gen.run_trial(Trial(64, 2000, 1.0, packets=(uplink(2001),), latency=False))
        middle = vfw.collect_kpi()
        blocked = gen.run_trial(Trial(64, 2000, 1.0, packets=(uplink(5001),), latency=False))
        back = gen.run_trial(Trial(64, 1500, 1.0, packets=(downlink(2001),), latency=False))
        after = vfw.collect_kpi()
    # a stream started for 1 s at 2000 pps: TRex's stop may let the frame due at 1 s out
    assert passed.tx_packets in (2000, 2001) and passed.rx_packets == passed.tx_packets
    assert passed.ports["xe1"]["rx_packets"] == passed.tx_packets
    # vFW's own counters: what TRex sent came in; what TRex got back, its rule accepted
    assert delta(middle, before, "packets_in") == passed.tx_packets
    assert delta(middle, before, "action3_packets") == passed.rx_packets
    assert delta(middle, before, "packets_acl_forwarded") == passed.rx_packets
    assert blocked.tx_packets in (2000, 2001) and blocked.rx_packets == 0
    assert delta(after, middle, "action1_packets") == blocked.tx_packets
    assert delta(after, middle, "packets_dropped_without_rule") == blocked.tx_packets
    assert back.rx_packets == back.tx_packets and back.tx_packets in (1500, 1501)
    assert back.ports["xe0"]["rx_packets"] == back.tx_packets
    assert delta(after, middle, "action4_packets") == back.rx_packets
    assert delta(after, before, "packets_in") == sum(r.tx_packets for r in (passed, blocked,
                                                                            back))
    assert gone(task_id) == []


def test_vfw_run_to_completion_counts_exactly_after_the_warm_up(tmp_path, pools):
    """lb_config HW: ARPICMP and the worker each send on their own queue, so each
    af_packet port has two queue pairs and loses up to 512 frames to the socket
    nothing reads. Once a warm-up trial lost nothing, every frame counts."""
    with running(tmp_path, VFW_TASK, **lab_args(lb_config="HW")) as scenario:
        gen, vfw = scenario.generator, scenario.vnfs[0]
        task_id = gen.run.task_id
        assert "vdev = net_af_packet0,iface=xe0,qpairs=2" in vfw.files()["vfw_config"]
        both = (uplink(2001), downlink(2001))
        lost = []
        while not lost or lost[-1]:  # the rings of the sockets nothing reads fill up
            warm = gen.run_trial(Trial(64, 2000, 1.0, packets=both, latency=False))
            lost.append(warm.tx_packets - warm.rx_packets)
            assert len(lost) <= 5, lost
        before = vfw.collect_kpi()
        trial = gen.run_trial(Trial(64, 4000, 1.0, packets=both, latency=False))
        after = vfw.collect_kpi()
    # the warm-up lost at most what the second sockets' rings hold, 512 frames per port
    assert 0 <= sum(lost) <= 2 * 512, lost
    assert trial.rx_packets == trial.tx_packets and 4000 <= trial.tx_packets <= 4002
    assert delta(after, before, "packets_in") == trial.tx_packets
    assert delta(after, before, "action3_packets") == trial.ports["xe1"]["rx_packets"] == \
        trial.ports["xe0"]["tx_packets"]
    assert delta(after, before, "action4_packets") == trial.ports["xe0"]["rx_packets"] == \
        trial.ports["xe1"]["tx_packets"]
    assert gone(task_id) == []


def test_the_vfw_sample_runs_in_the_lab(results_conf, tmp_path, pools):
    """``nsb task start`` of the sample: TRex's RFC 2544 search through vFW, vFW's
    KPIs sampled after each trial and consistent with what TRex counted."""
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0\n")
    proc = start(results_conf, lab_args(duration_s=1), task=VFW_TASK, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    assert result["throughput_pps"] > 0
    by_trial = {k["trial_index"]: k["kpis"] for k in doc["kpis"] if k["source"] == "vnf__0"}
    lossless = [t for t in doc["trials"] if t["rx_packets"] == t["tx_packets"]]
    assert lossless, doc["trials"]
    for trial in lossless:
        # in a trial nothing was lost in, vFW received and accepted all TRex sent
        now, prior = by_trial[trial["trial_index"]], by_trial.get(trial["trial_index"] - 1, {})
        assert delta(now, prior, "packets_in") == trial["tx_packets"]
        assert delta(now, prior, "action3_packets") + delta(now, prior, "action4_packets") \
            == trial["rx_packets"]
    assert gone(task_id) == []


CORRELATED_TASK = SAMPLES / "tc_vfw_correlated_rfc2544.yaml"


def test_udp_replay_reflects_through_vfw_back_to_trex(tmp_path, pools):
    """NSB's correlated traffic: TRex sends into vFW only; UDP_Replay on tg_1 sends each
    frame back (addresses swapped: vFW's downlink rule, action 4, passes it); TRex
    counts it on the port that sent it, the other port stays silent."""
    with running(tmp_path, CORRELATED_TASK, **lab_args()) as scenario:
        gen, vnfs = scenario.generator, {v.name: v for v in scenario.vnfs}
        vfw, replay = vnfs["vnf__0"], vnfs["tg__1"]
        task_id = gen.run.task_id
        vfw_before, replay_before = vfw.collect_kpi(), replay.collect_kpi()
        trial = gen.run_trial(Trial(64, 2000, 1.0, packets=(uplink(2001),), latency=False,
                                    reflected=True))
        vfw_after, replay_after = vfw.collect_kpi(), replay.collect_kpi()
    sent = trial.tx_packets
    assert trial.rx_packets == sent and sent in (2000, 2001)
    assert trial.ports == {"xe0": {"tx_packets": sent, "rx_packets": sent, "rx_missed": 0},
                           "xe1": {"tx_packets": 0, "rx_packets": 0, "rx_missed": 0}}
    assert delta(replay_after, replay_before, "port0_rx_packets") == sent
    assert delta(replay_after, replay_before, "port0_tx_packets") == sent
    assert delta(replay_after, replay_before, "packets_dropped") == 0
    assert delta(vfw_after, vfw_before, "action3_packets") == sent  # on its way out
    assert delta(vfw_after, vfw_before, "action4_packets") == sent  # reflected back
    assert gone(task_id) == []


def test_the_correlated_sample_runs_in_the_lab(results_conf, tmp_path, pools):
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0\n")
    proc = start(results_conf, lab_args(duration_s=1), task=CORRELATED_TASK,
                 env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    assert result["throughput_pps"] > 0
    # NSB's Throughput of correlated traffic counts what came back twice
    assert result["correlated_throughput_fps"] == pytest.approx(2 * result["throughput_pps"])
    for trial in doc["trials"]:  # uplinks only, back where they left
        assert trial["ports"]["xe1"] == {"tx_packets": 0, "rx_packets": 0, "rx_missed": 0}, \
            trial
    replay = {k["trial_index"]: k["kpis"] for k in doc["kpis"] if k["source"] == "tg__1"}
    lossless = [t for t in doc["trials"] if t["rx_packets"] == t["tx_packets"]]
    assert lossless, doc["trials"]
    for trial in lossless:
        now, prior = replay[trial["trial_index"]], replay.get(trial["trial_index"] - 1, {})
        assert delta(now, prior, "port0_tx_packets") == trial["rx_packets"]
    assert gone(task_id) == []


def with_sut(tmp_path: Path, plugin: str, rules: bool = True) -> Path:
    """The vFW sample with another SampleVNF in vFW's place."""
    copy = tmp_path / "samples"
    shutil.copytree(ROOT / "samples", copy)
    folder = copy / "samplevnf"
    descriptor = folder / "vnf_descriptors" / "vfw.yaml"
    descriptor.write_text(descriptor.read_text().replace("FWApproxVnf", plugin))
    task = folder / VFW_TASK.name
    if not rules:
        task.write_text(task.read_text().replace("      rules: vfw_rules.yaml\n", ""))
    return task


class Capture:
    """Frames arriving at an interface of a lab node (an af_packet socket in its
    namespace, beside TRex's): their IPv4/UDP source and destination."""

    def __init__(self, netns: str, iface: str):
        def opened():
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
            sock.bind((iface, 0))
            sock.settimeout(0.5)
            return sock
        self.sock = call_in_netns(f"/run/netns/{netns}", opened)

    def addresses(self) -> set[tuple[str, int, str, int]]:
        seen = set()
        try:
            while True:
                frame = self.sock.recv(2048)
                src, dst, sport, dport = struct.unpack("!4s4sHH", frame[26:38])
                seen.add((socket.inet_ntoa(src), sport, socket.inet_ntoa(dst), dport))
        except TimeoutError:
            self.sock.close()
            return seen


def test_vacl_forwards_what_its_rules_accept_and_drops_the_rest(tmp_path, pools):
    with running(tmp_path, with_sut(tmp_path, "AclApproxVnf"), **lab_args()) as scenario:
        gen, acl = scenario.generator, scenario.vnfs[0]
        task_id = gen.run.task_id
        assert "p acl applyruleset" in acl.files()["acl_script"]
        before = acl.collect_kpi()
        passed = gen.run_trial(Trial(64, 2000, 1.0, packets=(uplink(2001),), latency=False))
        blocked = gen.run_trial(Trial(64, 2000, 1.0, packets=(uplink(5001),), latency=False))
        after = acl.collect_kpi()
    assert passed.rx_packets == passed.tx_packets and passed.tx_packets in (2000, 2001)
    assert blocked.rx_packets == 0
    assert delta(after, before, "packets_in") == passed.tx_packets + blocked.tx_packets
    assert delta(after, before, "packets_fwd") == passed.rx_packets
    assert delta(after, before, "packets_dropped") == blocked.tx_packets
    assert delta(after, before, "action1_packets") == blocked.tx_packets
    assert delta(after, before, "action3_packets") == passed.rx_packets
    assert gone(task_id) == []


def test_vcgnapt_translates_the_private_gateway_to_the_public_address(tmp_path, pools):
    """NSB's static NAPT: the private port's gateway (pod routing_table: 198.18.1.10)
    leaves as 152.16.40.10 (NSB's first public address), port for port, and the
    answers to that port come back to the gateway. vCGNAPT on the lab's two shared cores lets
    frames out in bursts up to half a second apart: TRex waits for 1 s of quiet before
    it counts (its drain_quiet_s)."""
    task = with_sut(tmp_path, "CgnaptApproxVnf", rules=False)
    with running(tmp_path, task, **lab_args()) as scenario:
        gen, cgnapt = scenario.generator, scenario.vnfs[0]
        task_id, netns = gen.run.task_id, gen.executor.netns
        gen.options.update(drain_quiet_s=1.0, drain_timeout_s=5.0)
        assert cgnapt.translations() == [
            "p 5 entry addm 198.18.1.10 1 152.16.40.10 1 0 32 4095 4095 4095"]
        before = cgnapt.collect_kpi()
        out = Capture(netns, "xe1")
        sent = gen.run_trial(Trial(64, 2000, 1.0, packets=(uplink(2001, src="198.18.1.10"),),
                                   latency=False))
        out_addresses = out.addresses()
        back = Capture(netns, "xe0")
        answered = gen.run_trial(Trial(64, 1000, 1.0, packets=(downlink(1234, "152.16.40.10"),),
                                       latency=False))
        back_addresses = back.addresses()
        after = cgnapt.collect_kpi()
    assert sent.rx_packets == sent.tx_packets >= 2000
    assert out_addresses == {("152.16.40.10", 1234, "198.18.2.2", 2001)}
    assert answered.rx_packets == answered.tx_packets >= 1000
    assert back_addresses == {("198.18.2.2", 2001, "198.18.1.10", 1234)}
    both = sent.tx_packets + answered.tx_packets
    assert delta(after, before, "packets_in") == both
    assert delta(after, before, "packets_fwd") == both  # vCGNAPT's Translated
    assert gone(task_id) == []


def test_after_sigkill_the_next_run_gives_back_what_vfw_had(results_conf, tmp_path, pools):
    """nsb killed mid-trial: vFW ends with it (its pseudo-terminal closes, and with vFW
    its mount namespace and hugetlbfs), but DPDK 17.05's /var/run files and the 1 GB
    page stay; the next run removes them and gives the page back (the pools fixture
    checks the pools afterwards)."""
    killed = start(results_conf, lab_args(duration_s=5), task=VFW_TASK, env=env_with_trex())
    task_id, _ = _wait_for(lambda: (e := _events(tmp_path / "results")) and
                           "TrialStarted" in e[1] and e, killed, "trial")
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)
    time.sleep(0.5)
    left = gone(task_id)
    assert not [item for item in left if "vFW" in item], "\n".join(left)
    assert [item for item in left if f"/var/run/.nsb-{task_id}" in item], "\n".join(left)
    assert not [line for line in Path("/proc/mounts").read_text().splitlines()
                if task_id in line and "hugetlbfs" in line]
    assert [Path(p).read_text() for p in POOLS] != pools  # its page is still out

    conf = tmp_path / "second.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {tmp_path}/second\nlog_dir = {tmp_path}/logs\n"
                    "nfvi_interval = 0\n")
    after = start(conf, lab_args(duration_s=1), task=VFW_TASK, env=env_with_trex())
    _, err = after.communicate(timeout=900)
    assert after.returncode == 0, err
    assert f"task {task_id} ended without cleaning up" in err
    assert gone(task_id) == []
    doc = json.loads((tmp_path / "results" / task_id / "results.json").read_text())
    assert doc["task"]["status"] == "killed"
    second_id, _ = results_of(tmp_path / "second")
    assert gone(second_id) == []
