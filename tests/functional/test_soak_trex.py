"""A soak with the real TRex in the lab: intervals read while one stream runs.
The sample runs testpmd behind TRex over memif for a 2-minute soak: its intervals are
consecutive, one every interval_s, each a full interval's frames at the rate (read
while the one stream runs), and their counts add up to the trial's. SIGINT in the
middle of a soak ends it with every interval read so far in results.json, the last
one up to the stop, and nothing left behind.
"""
from __future__ import annotations

import json
import signal
import time

import pytest

from nsb.traffic_profiles import plr_fit
from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

SAMPLE = ROOT / "samples" / "soak" / "tc_testpmd_soak.yaml"
RATE = 50_000


@pytest.fixture(autouse=True)
def _root_and_trex():
    requires_root()
    requires_trex()


def consecutive(intervals: list[dict]) -> None:
    assert [i["interval"] for i in intervals] == list(range(len(intervals)))
    for before, after in zip(intervals, intervals[1:], strict=False):
        assert after["start_s"] == pytest.approx(before["end_s"])
    assert intervals[0]["start_s"] == 0
    assert [i["last"] for i in intervals] == [False] * (len(intervals) - 1) + [True]


@pytest.mark.slow  # two minutes of traffic; make test-slow
def test_a_two_minute_soak_has_consecutive_intervals_summing_to_the_trial(results_conf,
                                                                         tmp_path):
    proc = start(results_conf, {"duration": 120, "interval_s": 10, "rate_pps": RATE},
                 task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (trial,) = doc["trials"]
    intervals = doc["soak_intervals"]
    consecutive(intervals)
    assert len(intervals) == 12
    assert all(i["trial_index"] == trial["trial_index"] for i in intervals)
    for interval in intervals[:-1]:  # read while sending: each a full interval's frames
        assert interval["end_s"] - interval["start_s"] == pytest.approx(10, abs=0.5)
        assert interval["tx_packets"] == pytest.approx(RATE * 10, rel=0.15)
        assert interval["latency"]["samples"] > 0
        assert interval["latency"]["min_us"] <= interval["latency"]["max_us"]
    assert sum(i["tx_packets"] for i in intervals) == trial["tx_packets"]
    assert sum(i["rx_packets"] for i in intervals) == trial["rx_packets"]
    (result,) = doc["results"]
    assert result["soak"]["intervals"] == 12 and len(result["soak"]["worst"]) == 5
    events = [json.loads(line) for line in
              (tmp_path / "results" / task_id / "events.jsonl").read_text().splitlines()]
    assert sum(e["event"] == "SoakInterval" for e in events) == 12
    assert leftovers(task_id) == []


def test_sigint_ends_the_soak_keeping_every_interval(results_conf, tmp_path):
    proc = start(results_conf, {"duration": 600, "interval_s": 2, "rate_pps": RATE},
                 task=SAMPLE, env=env_with_trex())
    results = tmp_path / "results"
    deadline = time.monotonic() + 180
    seen = 0
    while seen < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.5)
        for path in results.glob("*/results.json"):
            try:
                seen = len(json.loads(path.read_text()).get("soak_intervals", []))
            except (OSError, ValueError):
                pass
    assert seen >= 3, proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    task_id, doc = results_of(results)
    assert doc["task"]["status"] == "interrupted"
    intervals = doc["soak_intervals"]
    consecutive(intervals)
    assert len(intervals) >= seen + 1  # those read while running, and the last one
    assert intervals[-1]["end_s"] < 600
    assert all(i["tx_packets"] > 0 for i in intervals)
    assert leftovers(task_id) == []


def test_plrsearch_reports_its_estimate_after_every_trial(results_conf, tmp_path):
    plr = ROOT / "samples" / "soak" / "tc_testpmd_plrsearch.yaml"
    proc = start(results_conf, {"timeout_s": 21, "upper_bound": 5}, task=plr,
                 env=env_with_trex())
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    trials, estimates = doc["trials"], doc["plr_estimates"]
    assert [t["duration_s"] for t in trials] == [1, 2, 3, 4, 5, 6]  # 21 s of traffic
    assert [e["trial_index"] for e in estimates] == [t["trial_index"] for t in trials]
    for trial, estimate in zip(trials, estimates, strict=True):
        assert estimate["load_pps"] == trial["requested_rate_pps"]
        # CSIT's accounting: frames the generator did not send count as lost
        expected = plr_fit.observation(trial["requested_rate_pps"], trial["duration_s"],
                                       trial["tx_packets"], trial["rx_packets"])
        assert estimate["lost_packets"] == expected.lost >= max(0, trial["lost_packets"])
        assert estimate["stdev_pps"] >= 0 and set(estimate["fits"]) == {"stretch", "erf"}
    (result,) = doc["results"]
    assert result["throughput_pps"] == estimates[-1]["estimate_pps"] > 0
    assert result["plr_stdev_pps"] == estimates[-1]["stdev_pps"]
    assert leftovers(task_id) == []
