"""RFC 2544 back-to-back with the real TRex in the lab: exact bursts, and the sample.

TRex sends each burst as single-burst streams over memif into testpmd; a second STL
client on the same server checks that a burst is exactly the frames asked, and the
sample's search is checked against its own trials: the burst found lost nothing,
and the next longer one tried lost frames (or the longest tried passed).
"""

from __future__ import annotations

import pytest

from nsb.trial import Trial
from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex, running, second_client

SAMPLE = ROOT / "samples" / "rfc2544" / "tc_testpmd_back2back.yaml"


@pytest.fixture(autouse=True)
def _root_and_trex():
    requires_root()
    requires_trex()


def test_a_burst_is_exactly_the_frames_asked(tmp_path):
    with running(tmp_path, task=SAMPLE, generator="trex") as scenario:
        gen = scenario.generator
        other = second_client(gen)
        try:
            other.clear_stats()
            bursts = [Trial(64, 1e6, 0.001, latency=False, burst_frames=n)
                      for n in (1, 37, 5000)]
            results = [gen.run_trial(t) for t in bursts]
            seen = other.get_stats(ports=[0, 1])
        finally:
            other.disconnect(stop_traffic=False, release_ports=False)
    for trial, result in zip(bursts, results, strict=True):
        assert result.tx_packets == trial.burst_frames, result
        assert result.intended_packets == trial.burst_frames
        burst_s = trial.burst_frames / trial.rate_pps
        if trial.burst_frames <= 37:
            assert not result.generator_limited, result
        elif result.generator_limited:
            # on a loaded machine TRex may really fall behind 1 Mpps: then the verdict
            # must carry what the pacing check saw, and the burst must have been late
            assert "could not keep the rate" in result.generator_note, result
            assert result.elapsed_s > burst_s + 0.02, result
        assert result.rx_packets <= result.tx_packets
    assert seen[0]["opackets"] == sum(t.burst_frames for t in bursts)


def test_the_sample_finds_a_loss_free_burst_bounded_by_a_lossy_one(results_conf, tmp_path):
    longest = 200_000
    proc = start(results_conf, {"generator": "trex", "packet_sizes": [64], "trials": 2,
                                "max_burst_frames": longest}, task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    seen = [(t["intended_packets"], t["tx_packets"], t["rx_packets"], t["verdict"])
            for t in doc["trials"]]
    b2b = result["back_to_back"]
    assert b2b["trials"] == 2 and len(b2b["bursts_frames"]) == 2
    assert b2b["min_frames"] <= b2b["mean_frames"] <= b2b["max_frames"] <= longest
    line_pps = 10e9 / 8 / (64 + 20)
    assert b2b["mean_s"] == pytest.approx(b2b["mean_frames"] / line_pps)
    assert result["back_to_back_frames"] == b2b["mean_frames"]
    bursts = {}
    for trial in doc["trials"]:
        bursts.setdefault(trial["intended_packets"], []).append(trial)
    for found in b2b["bursts_frames"]:
        assert found == 0 or any(t["lost_packets"] == 0 and t["tx_packets"] == found
                   for t in bursts[found]), found
        if found == longest:
            assert result["limited_by"] == "upper_bound", seen
            continue
        # the next longer burst lost frames, or was more than the generator could put
        # on its ports in one burst (over memif: more than the DUT's ring and buffers take)
        longer = bursts[found + 1]
        assert any(t["lost_packets"] > 0 or t["tx_packets"] < found + 1 for t in longer), seen
        assert result["limited_by"] in ("dut", "generator"), seen
    if result["limited_by"] == "generator":
        assert "bounded by what the generator and its ports take" in \
            result["limited_reason"], result
    assert "Back-to-back" in out or "back2back" in out
    assert leftovers(task_id) == []
