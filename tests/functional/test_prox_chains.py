"""Service chains with PROX as the generator, in the embedded lab: the chain sample's
PROX config (a .j2 template rendered with the chains' port pairs) gives each chain a
gen task on its tx port and a lat task on its rx port. The lab's 2 CPUs hold one chain
(PROX runs one gen task per core, beside its master core): its counts and latency
come from PROX's own per-pair tasks and ports, and they equal what the chain's testpmd
counted (DPDK telemetry); two chains are one pre-flight line naming the missing core."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.prox_lab import PROX

SAMPLE = ROOT / "samples" / "chains" / "tc_testpmd_chains.yaml"
pytestmark = pytest.mark.skipif(not PROX.is_file(),
                                reason=f"no PROX binary at {PROX} (set NSB_PROX_PATH)")


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def test_a_prox_chain_counts_what_its_testpmd_counted(results_conf, tmp_path):
    proc = start(results_conf, {"generator": "prox", "chains": 1, "prox_path": str(PROX),
                                "duration_s": 1, "upper_bound": 2.0, "test_precision": 0.25},
                 task=SAMPLE)
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert doc["trials"]
    for trial in doc["trials"]:
        (share,) = trial["chains"]
        # the chain's ports (PROX's port counters) against its gen and lat tasks
        assert (share["tx_packets"], share["rx_packets"]) == \
            (trial["tx_packets"], trial["rx_packets"])
        if share["rx_packets"]:  # its own pair's lat task measured its latency
            assert share["latency"]["samples"] > 0
    telemetry = [s["kpis"] for s in doc["kpis"] if s["source"] == "testpmd0"][-1]
    assert telemetry["port0_ipackets"] == sum(t["chains"][0]["tx_packets"] for t in doc["trials"])
    # what testpmd sent back arrived, or the path names where on the way to PROX's port it
    # was lost (the link, or the port's own receive: PROX's af_packet ring overflows on
    # this shared core, counted as the kernel port's rx_dropped)
    dropped_on_return = sum(loss["frames"] for t in doc["trials"]
                            for loss in t["path"]["directions"][0]["losses"]
                            if loss["hop"] in ("link testpmd0:xe1 -> tg:xe1", "tg:xe1 rx"))
    assert telemetry["port1_opackets"] == \
        sum(t["chains"][0]["rx_packets"] for t in doc["trials"]) + dropped_on_return
    (result,) = doc["results"]
    (row,) = result["chains"]
    assert row["chain"] == 0 and row["throughput_pps"] == pytest.approx(result["throughput_pps"])
    assert row["latency"]["samples"] > 0
    assert leftovers(task_id) == []


def test_more_prox_chains_than_cores_is_one_preflight_line(results_conf, tmp_path):
    proc = start(results_conf, {"generator": "prox", "chains": 2, "prox_path": str(PROX)},
                 task=SAMPLE)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, err
    assert "gen_chains-lab.cfg.j2 names lcores 2, which the node does not have" in err
    assert "no traffic was sent" in err
