"""Service chains in the lab, measured apart: N testpmd chains, each in its own network
namespace on its own pair of TRex ports, over memif or PVP behind OVS-DPDK. Each
chain's counts are checked against its own testpmd's telemetry (and OVS's port
counters); a chain given an nftables rate limit loses alone, sets the total rate the
chains carry together and is named as the first to fail."""

from __future__ import annotations

import subprocess

import pytest

from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.measurer import Measurer, TrialHooks
from nsb.trial_paths import PathCounter
from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.prox_lab import deployed
from tests.functional.trex_lab import env_with_trex, requires_trex, trex_env

SAMPLE = ROOT / "samples" / "chains" / "tc_testpmd_chains.yaml"


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


def test_three_chains_count_what_each_chains_testpmd_counted(results_conf, tmp_path):
    """In every trial the chains' frames add up to TRex's; over the run each chain's
    frames are what its own testpmd received and sent (DPDK telemetry)."""
    proc = start(results_conf, {"chains": 3, "duration_s": 1, "packet_sizes": [64]},
                 task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    for trial in doc["trials"]:
        shares = trial["chains"]
        assert [c["chain"] for c in shares] == [0, 1, 2]
        assert sum(c["tx_packets"] for c in shares) == trial["tx_packets"]
        assert sum(c["rx_packets"] for c in shares) == trial["rx_packets"]
        if trial["latency"]:  # a trial with latency streams: one per chain, apart
            assert all(c["latency"] and c["latency"]["samples"] > 0 for c in shares)
        if trial["verdict"] == "pass":
            assert all(c["loss_pct"] <= 0.01 for c in shares)
    for k in range(3):
        telemetry = [s["kpis"] for s in doc["kpis"] if s["source"] == f"testpmd{k}"][-1]
        sent = sum(t["chains"][k]["tx_packets"] for t in doc["trials"])
        received = sum(t["chains"][k]["rx_packets"] for t in doc["trials"])
        assert telemetry["port0_ipackets"] == sent  # TRex's xe{2k} -> the chain's testpmd
        assert telemetry["port1_opackets"] == received  # -> TRex's xe{2k+1}
    (result,) = doc["results"]
    assert [c["chain"] for c in result["chains"]] == [0, 1, 2]
    assert sum(c["throughput_pps"] for c in result["chains"]) == \
        pytest.approx(result["throughput_pps"])
    assert all(c["latency"]["samples"] > 0 for c in result["chains"])
    check_lossy_hops(doc, result)
    assert leftovers(task_id) == []


def check_lossy_hops(doc: dict, result: dict) -> None:
    """Each chain's row names a hop that lost its frames in the trial it names, on the
    chain's own path, or none where the chain lost nothing (at or above the answer)."""
    trials = {t["trial_index"]: t for t in doc["trials"]}
    for share in result["chains"]:
        k, hop = share["chain"], share["lossy_hop"]
        if hop is None:  # no counted hop lost its frames in a failed trial above
            assert not any(loss["frames"] > 0 for t in doc["trials"] if t["verdict"] == "fail"
                           and t["requested_rate_pps"] > result["throughput_pps"] * 1.0001
                           and t["path"] for loss in _direction(t, k)["losses"])
            continue
        direction = _direction(trials[hop["trial_index"]], k)
        assert {"hop": hop["hop"], "kind": hop["kind"], "frames": hop["frames"]} in \
            direction["losses"]
        assert hop["frames"] == max(loss["frames"] for loss in direction["losses"])


def _direction(trial: dict, k: int) -> dict:
    (direction,) = [d for d in trial["path"]["directions"]
                    if d["path"].startswith(f"tg:xe{2 * k} ->")]
    return direction


def test_pvp_chains_behind_ovs_dpdk_count_what_ovs_and_each_testpmd_counted(results_conf,
                                                                            tmp_path):
    """Two PVP chains: TRex's ports and each chain's testpmd on vhost-user ports of one
    OVS-DPDK bridge. In every trial each chain's frames are, hop by hop, what OVS counted
    on the chain's own four ports and what its testpmd received and sent, the hops'
    losses adding up to the chain's; over the run each testpmd's telemetry is what its
    chain's trials added up to."""
    proc = start(results_conf, {"chains": 2, "link": "vhostuser", "duration_s": 1,
                                "packet_sizes": [64], "upper_bound": 0.3,
                                "test_precision": 0.05}, task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    into, out_of = {0: [], 1: []}, {0: [], 1: []}
    for trial in doc["trials"]:
        directions = trial["path"]["directions"]
        assert len(directions) == 2
        for k, (share, direction) in enumerate(zip(trial["chains"], directions, strict=True)):
            assert direction["complete"] and direction["unaccounted"] == 0, direction
            places = {p["place"].split(" (")[0]: p["frames"] for p in direction["points"]}
            a, b = 2 * k, 2 * k + 1  # the chain's two links, each through br0
            assert places[f"tg:xe{a} tx"] == share["tx_packets"] == places[f"host:br0-{a}a rx"]
            assert places[f"testpmd{k}:xe0 rx"] == places[f"host:br0-{a}b tx"]
            assert places[f"testpmd{k}:xe1 tx"] == places[f"host:br0-{b}a rx"]
            assert places[f"tg:xe{b} rx"] == share["rx_packets"] == places[f"host:br0-{b}b tx"]
            lost = sum(loss["frames"] for loss in direction["losses"])
            assert lost == share["tx_packets"] - share["rx_packets"]
            into[k].append(places[f"testpmd{k}:xe0 rx"])
            out_of[k].append(places[f"testpmd{k}:xe1 tx"])
    for k in range(2):
        telemetry = [s["kpis"] for s in doc["kpis"] if s["source"] == f"testpmd{k}"][-1]
        assert telemetry["port0_ipackets"] == sum(into[k]) > 0
        assert telemetry["port1_opackets"] == sum(out_of[k])
    (result,) = doc["results"]
    assert [c["chain"] for c in result["chains"]] == [0, 1]
    assert result["limited_by"] in ("dut", "generator"), result  # see the PVC test
    check_lossy_hops(doc, result)
    assert leftovers(task_id) == []


def test_chains_on_one_network_count_what_each_chains_testpmd_counted(results_conf,
                                                                     tmp_path):
    """Two PVP chains on one network each way (NFVbench's service_chain_shared_net):
    TRex sends both chains' frames from xe0, each to its testpmd's MAC, and counts
    each chain by its own flow statistics. In every trial the chains add up to TRex's
    ports; each testpmd received only its own chain's frames (its telemetry, per trial);
    in a trial that lost nothing each chain's frames are exactly what its testpmd
    received and sent, whether or not TRex's port kept frames back."""
    proc = start(results_conf, {"chains": 2, "link": "vhostuser", "shared_net": True,
                                "duration_s": 1, "packet_sizes": [64], "upper_bound": 0.3,
                                "test_precision": 0.05}, task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    before = {0: (0, 0), 1: (0, 0)}
    lossless = 0
    for trial in doc["trials"]:
        shares = trial["chains"]
        assert [c["chain"] for c in shares] == [0, 1]
        assert sum(c["tx_packets"] for c in shares) == trial["tx_packets"]
        assert sum(c["rx_packets"] for c in shares) == trial["rx_packets"]
        telemetry = {s["source"]: s["kpis"] for s in doc["kpis"]
                     if s.get("trial_index") == trial["trial_index"]}
        for k, share in enumerate(shares):
            now = telemetry[f"testpmd{k}"]
            into = now["port0_ipackets"] - before[k][0]
            out_of = now["port1_opackets"] - before[k][1]
            before[k] = (now["port0_ipackets"], now["port1_opackets"])
            assert share["rx_packets"] <= out_of <= into  # TRex got back what it forwarded
            assert into > 0
            if trial["rx_packets"] == trial["tx_packets"]:  # nothing lost: exact per chain
                assert share["tx_packets"] == share["rx_packets"] == into == out_of
        lossless += trial["rx_packets"] == trial["tx_packets"]
        # its path is followed to the shared switch port, and no further
        (direction,) = trial["path"]["directions"]
        assert not direction["complete"]
        assert direction["points"][-1]["place"] == "host:br0-0a rx"
        if trial["latency"]:
            assert all(c["latency"]["samples"] > 0 for c in shares)
    assert lossless > 0
    (result,) = doc["results"]
    assert [c["chain"] for c in result["chains"]] == [0, 1]
    assert sum(c["throughput_pps"] for c in result["chains"]) == \
        pytest.approx(result["throughput_pps"])
    assert all(c["lossy_hop"] is None for c in result["chains"])  # no port is a chain's own
    assert leftovers(task_id) == []


def test_an_isolation_run_loads_one_chain_runs_its_neighbour_and_reports_the_others(
        results_conf, tmp_path):
    """Two memif chains at 0.05 % of line rate, then chain 0 sent 2 % with a neighbour
    command on its node: the neighbour ran in chain 0's namespace during the disturbed
    trial and is gone after; the disturbed trial sent chain 0 far more than chain 1
    and chain 1 what it was asked; the report's figures are the trials' own counts."""
    marker = tmp_path / "neighbour"
    neighbour = f"ip netns identify $$ > {marker}; exec sleep 120"
    proc = start(results_conf, {"chains": 2, "isolate": 0, "load_pct": 2, "duration_s": 1,
                                "packet_sizes": [64], "neighbour": neighbour},
                 task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert marker.read_text().strip() == f"nsb-{task_id}-testpmd0"
    assert "sleep 120" not in subprocess.run(["ps", "-eo", "args"], capture_output=True,
                                             text=True).stdout
    baseline, disturbed = doc["trials"]
    asked = 0.0005 * 10e9 / 8 / 84 * 1  # 0.05 % of one port's line rate, 1 s
    for trial in (baseline, disturbed):
        assert trial["chains"][1]["tx_packets"] == pytest.approx(asked, rel=0.05)
    assert disturbed["chains"][0]["tx_packets"] > 10 * disturbed["chains"][1]["tx_packets"]
    (result,) = doc["results"]
    report = result["isolation"]
    (row,) = report["chains"]
    assert row["chain"] == 1
    for name, trial in (("baseline", baseline), ("disturbed", disturbed)):
        share = trial["chains"][1]
        assert row[name]["loss_pct"] == pytest.approx(share["loss_pct"])
        assert row[name]["rx_pps"] == pytest.approx(share["rx_packets"] / trial["elapsed_s"])
    assert report["isolated"] == (row["disturbed"]["loss_pct"] <= 0.01)
    assert result["throughput_pps"] == pytest.approx(
        disturbed["chains"][1]["rx_packets"] / disturbed["elapsed_s"])
    assert leftovers(task_id) == []


def test_isolation_with_trafgen_sends_each_chain_its_own_rate(results_conf, tmp_path):
    """Two veth chains driven by trafgen, a trafgen per port pair: at 0.05 % of line rate
    each, then chain 0 at 0.2 %. In both trials chain 1 was sent exactly what it was
    asked (trafgen --num) and chain 0 more than twice that in the disturbed one (four
    times was asked: trafgen may fall behind on two shared cores); each chain's frames
    are what its own testpmd received and sent (DPDK telemetry)."""
    proc = start(results_conf, {"chains": 2, "generator": "trafgen", "isolate": 0,
                                "load_pct": 0.2, "duration_s": 1, "packet_sizes": [64]},
                 task=SAMPLE)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    baseline, disturbed = doc["trials"]
    asked = 0.0005 * 10e9 / 8 / 84  # 0.05 % of one port's line rate, 1 s
    for trial in (baseline, disturbed):
        assert trial["chains"][1]["tx_packets"] == round(asked)  # trafgen --num: exact
    assert baseline["chains"][0]["tx_packets"] == round(asked)
    assert disturbed["chains"][0]["tx_packets"] > 2 * round(asked)
    for k in range(2):
        telemetry = [s["kpis"] for s in doc["kpis"] if s["source"] == f"testpmd{k}"][-1]
        assert telemetry["port0_ipackets"] == sum(t["chains"][k]["tx_packets"]
                                                  for t in doc["trials"])
        assert telemetry["port1_opackets"] == sum(t["chains"][k]["rx_packets"]
                                                  for t in doc["trials"])
    (result,) = doc["results"]
    (row,) = result["isolation"]["chains"]
    assert row["chain"] == 1 and row["disturbed"]["loss_pct"] == pytest.approx(
        disturbed["chains"][1]["loss_pct"])
    # chain 1's rate is over its own trafgen's seconds, not its slower neighbour's
    assert row["disturbed"]["rx_pps"] == pytest.approx(
        disturbed["chains"][1]["rx_packets"], rel=0.2)
    assert leftovers(task_id) == []


def test_a_rate_limited_chain_fails_first_and_alone(tmp_path):
    """The link into chain 1 carries 2,000 frames/s (an nftables limit on the egress of
    TRex's veth to it; testpmd's af_packet bypasses the egress hook and taps see frames
    before an ingress one): the chains get the rate spread evenly, so together they carry
    about twice that; chain 1 is the one that failed first, and it lost more than chain 0
    in every trial. TRex counts on that port what its af_packet socket got out, so above
    the limit chain 1 is often sent short of its share, not lossy: those trials are
    generator-limited and their totals are no answer (the even split's is)."""
    limit = 2000
    args = {"chains": 2, "link": "veth", "duration_s": 1, "packet_sizes": [64],
            "speed_gbps": 0.1, "upper_bound": 10.0, "test_precision": 0.5}
    with trex_env(), deployed(tmp_path, SAMPLE, args, ready_s=60.0,
                              with_context=True) as (scenario, context):
        namespace = context.netns_name("tg")

        def nft(*argv):
            subprocess.run(["ip", "netns", "exec", namespace, "nft", *argv], check=True,
                           capture_output=True)
        nft("add table netdev nsbchain")
        nft("add chain netdev nsbchain out { type filter hook egress device xe2 priority 0 ; }")
        nft(f"add rule netdev nsbchain out limit rate over {limit}/second burst 50 packets "
            "drop")
        events = []
        try:
            scenario.profile.execute(Measurer(scenario.generator, "t", "chains", events.append,
                                              LaidOut(scenario, context),
                                              service_chains=scenario.chains))
        finally:
            nft("delete table netdev nsbchain")
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    trials = [e for e in events if isinstance(e, TrialDone)]
    assert result.limited_by == "dut"
    assert result.extra["first_failing_chain"]["chain"] == 1
    assert result.throughput_pps <= 2 * limit * 1.1
    step = 0.005 * 0.1e9 / 8 / 84 * 2  # test_precision, in pps over both tx ports
    assert result.throughput_pps >= 2 * limit * 0.9 - step
    for trial in trials:
        first, second = trial.result.chains
        assert second.loss_pct >= first.loss_pct
    assert any(t.verdict == "fail" and t.result.chains[0].loss_pct == 0 for t in trials)
    # where chain 1 lost its frames: at TRex's own veth, whose egress the limit is on
    # (TRex counted them sent, the veth never sent them)
    hop = result.extra["chains"][1]["lossy_hop"]
    assert (hop["hop"], hop["kind"]) == ("tg:xe2 tx", "refused"), hop
    lossy = [t for t in trials if t.trial_index == hop["trial_index"]][0]
    assert 0 < hop["frames"] <= lossy.result.chains[1].tx_packets - \
        lossy.result.chains[1].rx_packets


class LaidOut(TrialHooks):
    """Each trial's paths laid out as the run does (nsb.trial_paths), nothing more."""

    def __init__(self, scenario, context):
        self.vnfs = scenario.vnfs
        self.counter = PathCounter(scenario.generator, scenario.vnfs, context)
        self.paths = {}

    def _kpis(self):
        return {vnf.name: vnf.collect_kpi() for vnf in self.vnfs}

    def trial_started(self, index):
        if not self.counter.has_baseline:
            self.counter.baseline(self._kpis())

    def trial_measured(self, index, result=None):
        if result is not None:
            self.paths[index] = self.counter.trial(self._kpis(), result)

    def trial_paths(self, index):
        return self.paths.get(index)
