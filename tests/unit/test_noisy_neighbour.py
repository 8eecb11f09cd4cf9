"""A noisy neighbour's effect from trials of known receive rates: the drop, the runs' own
spread, a drop within it reported as none, p99 of each set; and the SLA on it."""

import pytest

from nsb import sla
from nsb.traffic_profiles.noisy_neighbour import neighbour_effect
from nsb.trial import LatencyStats, Trial, TrialResult


def done(rx_pps: float, p99: float | None = None) -> TrialResult:
    latency = None if p99 is None else LatencyStats(10, 1, 2, 3, {"p99": p99})
    trial = Trial(frame_size=64, rate_pps=1e6, duration_s=1.0)
    return TrialResult(trial=trial, tx_packets=1_000_000, rx_packets=int(rx_pps),
                       elapsed_s=1.0, latency=latency)


def test_a_drop_beyond_the_spread_is_reported():
    effect = neighbour_effect([done(100e3, 10), done(102e3, 12), done(98e3, 11)],
                              [done(50e3, 40), done(52e3, 44), done(48e3, 42)], 100)
    assert effect["drop_pct"] == pytest.approx(50.0)
    assert effect["spread_pct"] == pytest.approx(4.0)  # 2k + 2k of 100k
    assert not effect["within_spread"] and effect["reported_drop_pct"] == pytest.approx(50.0)
    assert (effect["p99_us_without"], effect["p99_us_with"]) == (11, 42)
    assert effect["p99_change_us"] == 31


def test_a_drop_within_the_runs_own_spread_is_none():
    effect = neighbour_effect([done(100e3), done(110e3), done(90e3)],
                              [done(99e3), done(109e3), done(89e3)], 100)
    assert effect["drop_pct"] == pytest.approx(1.0)
    assert effect["within_spread"] and effect["reported_drop_pct"] == 0.0
    assert effect["p99_change_us"] is None  # no latency measured


def test_the_sla_checks_the_reported_drop_of_neighbour_answers_only():
    result = {"scenario": "s", "frame_size": 64, "throughput_pps": 5e4, "limited_by": "dut",
              "neighbour": {"reported_drop_pct": 12.5}}
    frames = {"scenario": "s", "frame_size": 64, "throughput_pps": 5e4, "limited_by": "dut"}
    (outcome,) = sla.check([sla.parse("neighbour_drop_pct<=10")], [result, frames])
    assert outcome.measured == 12.5 and not outcome.passed
    (ndr,) = sla.check([sla.parse("ndr_pps>=1")], [result, frames])
    assert ndr.scenario == "s" and ndr.measured == 5e4  # the frame answer, not the drop
