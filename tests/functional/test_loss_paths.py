"""Where the frames died, in the lab: a known drop put at one hop (an nftables rule on
the generator's egress or on a DUT's ingress, vFW's rules, an OVS flow) is the hop the trial's loss
budget blames, the budget adds up to what TRex sent less what it received, and a
loss-free trial counts every frame at every counted hop. Everything is real: TRex,
testpmd, l3fwd, vFW, OVS-DPDK, the kernel's counters of the veths.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from nsb.trial import Trial
from nsb.trial_paths import PathCounter
from tests.conftest import NSB, ROOT, SAMPLE, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.prox_lab import deployed
from tests.functional.trex_lab import env_with_trex, requires_trex, trex_env


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


@contextlib.contextmanager
def lab(tmp_path, task=SAMPLE, **task_args):
    """The task's scenario, its context and a PathCounter with its baseline read."""
    with trex_env(), deployed(tmp_path, task, task_args, ready_s=60.0,
                              with_context=True) as (scenario, context):
        counter = PathCounter(scenario.generator, scenario.vnfs, context)
        counter.baseline(_kpis(scenario))
        yield scenario, counter


def _kpis(scenario) -> dict:
    return {vnf.name: vnf.collect_kpi() for vnf in scenario.vnfs}


def measured(scenario, counter, trial):
    result = scenario.generator.run_trial(trial)
    return result, counter.trial(_kpis(scenario), result)


def netns(name: str, *argv: str) -> None:
    subprocess.run(["ip", "netns", "exec", name, *argv], check=True, capture_output=True)


def _adds_up(result, paths) -> None:
    """Each direction's losses and unaccounted frames are what TRex sent less what it
    received there, and the directions together the trial's loss."""
    for budget in paths.budgets:
        assert sum(loss.frames for loss in budget.losses) + budget.unaccounted == budget.lost
    assert sum(b.lost for b in paths.budgets) == result.lost_packets


def test_a_loss_free_trial_counts_every_frame_at_every_hop(tmp_path):
    with lab(tmp_path, generator="trex", link="veth", forward_mode="io") as (scenario, counter):
        result, paths = measured(scenario, counter, Trial(64, 20_000, 1.0, latency=False))
    assert result.lost_packets == 0
    assert {b.path for b in paths.budgets} == {"tg:xe0 -> tg:xe1", "tg:xe1 -> tg:xe0"}
    for budget in paths.budgets:
        assert budget.complete and budget.blind == ()
        assert {p.frames for p in budget.points} == {budget.sent}  # every hop saw each
        assert budget.losses == ()
    assert paths.worst() is None


def test_a_drop_on_the_generators_veth_is_its_own_port_to_blame(tmp_path):
    """An nftables egress rule on TRex's veth drops one frame in ten after TRex counted
    it sent: the veth's kernel counter never sent them, so the generator's own port
    refused them, not the link."""
    with lab(tmp_path, generator="trex", link="veth", forward_mode="io") as (scenario, counter):
        namespace = scenario.generator.executor.netns
        netns(namespace, "nft", "add table netdev nsbdrop")
        netns(namespace, "nft", "add chain netdev nsbdrop out { type filter hook egress device "
                                "xe0 priority 0 ; }")
        netns(namespace, "nft", "add rule netdev nsbdrop out numgen random mod 10 0 drop")
        try:
            result, paths = measured(scenario, counter, Trial(64, 20_000, 1.0, latency=False))
        finally:
            netns(namespace, "nft", "delete table netdev nsbdrop")
    assert result.lost_packets > 0
    _adds_up(result, paths)
    worst = paths.worst()
    assert (worst.hop, worst.kind) == ("tg:xe0 tx", "refused")
    assert worst.frames == pytest.approx(result.lost_packets, abs=2)
    assert not any(loss.kind == "link" for b in paths.budgets for loss in b.losses)


def test_frames_over_the_mtu_of_the_generators_own_port_are_blamed_on_it(tmp_path):
    """TRex's veth xe1 given an MTU below the trial's frames after TRex started: the
    frames it sends that way never leave its port (the kernel refuses them), and the
    loss budget says so at that port; those coming back to it are dropped by the veth
    of the SUT that sends them (the other end's MTU), once, not again at TRex's."""
    with lab(tmp_path, generator="trex", link="veth", forward_mode="io") as (scenario, counter):
        namespace = scenario.generator.executor.netns
        netns(namespace, "ip", "link", "set", "dev", "xe1", "mtu", "1000")
        try:
            result, paths = measured(scenario, counter, Trial(1518, 2_000, 1.0, latency=False))
        finally:
            netns(namespace, "ip", "link", "set", "dev", "xe1", "mtu", "1500")
    assert result.lost_packets > 0
    _adds_up(result, paths)
    by_path = {b.path: b for b in paths.budgets}
    refused = by_path["tg:xe1 -> tg:xe0"]
    assert {(loss.hop, loss.kind) for loss in refused.losses} == {("tg:xe1 tx", "refused")}
    assert refused.unaccounted == 0 and refused.lost == refused.sent
    back = by_path["tg:xe0 -> tg:xe1"]
    assert {(loss.hop, loss.kind) for loss in back.losses} == {("sut:xe1 tx", "tx_dropped")}
    assert back.unaccounted == 0 and back.lost == back.sent


def test_trafgen_s_latency_probe_is_counted_where_it_leaves_and_arrives(tmp_path):
    """trafgen sends the trial's frames and its latency probe sends its own by the same
    ports: every hop's count, kernel and testpmd alike, carries both, and the budget
    adds up with nothing unaccounted."""
    with lab(tmp_path, generator="trafgen", link="veth", forward_mode="io") as \
            (scenario, counter):
        result, paths = measured(scenario, counter, Trial(64, 2_000, 1.0))
    assert result.extra["probe_packets"] > 0
    _adds_up(result, paths)
    for budget in paths.budgets:
        assert budget.unaccounted == 0, budget
    assert sum(b.sent for b in paths.budgets) == result.tx_packets


def stalled(vnf, after_s: float, for_s: float) -> threading.Timer:
    """The VNF's processes stopped (SIGSTOP) ``after_s`` from now for ``for_s``: its
    receive rings fill and the kernel drops what arrives meanwhile."""
    pids = subprocess.run(["pgrep", "-f", f"nsb-{vnf.run.task_id}-{vnf.name}"],
                          capture_output=True, text=True).stdout.split()
    assert pids

    def pause():
        for pid in pids:
            os.kill(int(pid), signal.SIGSTOP)
        time.sleep(for_s)
        for pid in pids:
            os.kill(int(pid), signal.SIGCONT)
    timer = threading.Timer(after_s, pause)
    timer.start()
    return timer


@pytest.mark.parametrize("dut", ["testpmd", "l3fwd"])
def test_a_dut_that_stalls_is_its_rx_to_blame(dut, tmp_path):
    """The DUT stopped for 0.6 s of a 2 s trial: the kernel counted the frames into its
    veths, the DUT's own counters did not see those its rings had no room for."""
    from tests.functional.test_dpdk_apps import L3FWD

    task = SAMPLE if dut == "testpmd" else ROOT / "samples" / "dpdk" / "tc_l3fwd_phy2phy.yaml"
    args = {"generator": "trex", "link": "veth", "forward_mode": "io"} if dut == "testpmd" \
        else {"generator": "trex", "link": "veth", "cores": 1, "l3fwd_path": str(L3FWD)}
    with lab(tmp_path, task, **args) as (scenario, counter):
        stalled(scenario.vnfs[0], 0.2, 0.6)
        result, paths = measured(scenario, counter, Trial(64, 20_000, 2.0, latency=False))
    assert result.lost_packets > 0
    _adds_up(result, paths)
    worst = paths.worst()
    assert worst.hop in ("sut:xe0 rx", "sut:xe1 rx") and worst.kind == "rx_dropped"
    assert "the receiving side had no room" in worst.words
    for budget in paths.budgets:
        assert {loss.kind for loss in budget.losses} <= {"rx_dropped"}
        assert budget.unaccounted == 0


def test_vfws_rules_dropping_a_flow_is_its_forwarding_to_blame(tmp_path):
    from tests.functional.test_samplevnf import VFW_TASK, lab_args, requires_samplevnf, uplink

    requires_samplevnf()
    with lab(tmp_path, VFW_TASK, **lab_args()) as (scenario, counter):
        result, paths = measured(scenario, counter, Trial(64, 2000, 1.0, latency=False,
                                                          packets=(uplink(5001),)))
    assert result.tx_packets in (2000, 2001) and result.rx_packets == 0  # its rules drop all
    _adds_up(result, paths)
    worst = paths.worst()
    assert worst.kind == "forwarding" and worst.hop.startswith("vnf_0 (")
    assert worst.frames == result.tx_packets


def test_an_ovs_flow_dropping_half_the_flows_is_the_switch_to_blame(tmp_path):
    """OVS-DPDK PVP with testpmd on vhost-user: an OpenFlow rule drops the frames of odd
    UDP source ports coming in from the generator. OVS counted them in at that port and
    never out of the vhost-user port: the bridge's crossing is blamed, nothing else."""
    task = ROOT / "samples" / "vswitch" / "tc_ovs_dpdk_pvp_container.yaml"
    with lab(tmp_path, task) as (scenario, counter):
        ovs = next(vnf for vnf in scenario.vnfs if vnf.spec.type == "ovs")
        link = next(link for link in ovs.links if link.a.node == "tg")
        port = ovs.node.interfaces[link.switch_a.interface].name
        ovs.daemons.ofctl(ovs.bridge, "add-flow",
                          f"priority=200,in_port={port},udp,tp_src=0x1/0x1,actions=drop")
        result, paths = measured(scenario, counter, Trial(64, 4000, 1.0, latency=False))
    assert 0 < result.lost_packets < result.tx_packets
    _adds_up(result, paths)
    worst = paths.worst()
    assert worst.kind == "forwarding", worst
    assert worst.hop.startswith(f"{ovs.node.name} ({ovs.name}) "), worst
    assert worst.frames == result.lost_packets
    assert [loss.hop for budget in paths.budgets for loss in budget.losses] == [worst.hop]


def test_the_quick_start_overloaded_names_a_hop_of_its_dut(results_conf, tmp_path):
    """At a fixed 100 % of line rate the sample's frames die at its DUT: ``nsb task show
    --path`` names a hop of node sut and its kind, results.json has every trial's path."""
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0\n")
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64]}, "--rate", "100%",
                 env=env_with_trex())
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (trial,) = doc["trials"]
    assert trial["lost_packets"] > 0 and trial["path"]["directions"]
    worst = trial["path"]["worst"]
    assert worst["hop"].startswith("sut"), worst
    (result,) = doc["results"]
    assert result["lossy_hop"]["hop"] == worst["hop"]
    shown = subprocess.run([*NSB, "--config-file", str(results_conf), "task", "show",
                            task_id, "--path"], capture_output=True, text=True,
                           env=env_with_trex())
    assert shown.returncode == 0, shown.stderr
    assert f"the hop to blame: {worst['words']}" in shown.stdout
    assert "tg:xe0 -> tg:xe1: sent" in shown.stdout
    assert leftovers(task_id) == []
    json.dumps(doc)  # the paths are plain JSON
