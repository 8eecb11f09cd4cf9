"""A noisy neighbour's effect from trials of known receive rates: the drop, the runs' own
spread, a drop within it reported as none, p99 of each set; and the SLA on it."""

import contextlib
from types import SimpleNamespace

import pytest

from nsb import sla, units
from nsb.events import ResultReady
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.noisy_neighbour import NoisyNeighbourProfile, neighbour_effect
from nsb.traffic_profiles.trial_hooks import TrialHooks
from nsb.trial import LatencyStats, Trial, TrialResult
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator


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


class _Neighbourhood(TrialHooks):
    """A DUT whose capacity drops to ``loud_pps`` while the neighbour runs."""

    def __init__(self, dut, loud_pps: float):
        self.dut, self.quiet_pps, self.loud_pps = dut, dut.capacity_pps, loud_pps

    @contextlib.contextmanager
    def neighbour(self, spec):
        self.dut.capacity_pps = self.loud_pps
        try:
            yield SimpleNamespace(ran={"stress-ng": spec})
        finally:
            self.dut.capacity_pps = self.quiet_pps


def _run_ndr(quiet_pps: float, loud_pps: float, **options):
    dut = SimulatedDutGenerator(capacity_pps=quiet_pps)
    profile = make_profile(NoisyNeighbourProfile, packet_sizes=[64], interface_speed_gbps=1,
                           neighbour={"stressor": "cpu", "cpus": "1"}, measure="ndr",
                           trials=2, duration=1, latency=False, **options)
    events = []
    profile.execute(Measurer(dut, "t", "s", events.append, _Neighbourhood(dut, loud_pps)))
    return [e for e in events if isinstance(e, ResultReady)]


def test_the_ndr_with_and_without_a_neighbour_is_each_dut_s_known_capacity():
    line = units.line_rate_pps(64, 1, ports=2)
    (result,) = _run_ndr(0.6 * line, 0.3 * line, precision_pct=1)
    effect = result.extra["neighbour"]
    assert effect["measure"] == "ndr"
    # each search ends within its precision below the capacity it searched
    for rate in effect["without"]["receive_rates_pps"]:
        assert 0.6 * line * 0.99 <= rate <= 0.6 * line
    for rate in effect["with"]["receive_rates_pps"]:
        assert 0.3 * line * 0.99 <= rate <= 0.3 * line
    assert effect["drop_pct"] == pytest.approx(50.0, abs=1.0)
    assert not effect["within_spread"] and result.throughput_pps == pytest.approx(
        effect["with"]["mean_pps"])


def test_no_rate_without_loss_is_no_drop_and_says_why():
    line = units.line_rate_pps(64, 1, ports=2)
    (result,) = _run_ndr(0.6 * line, 0.001 * line, lower_pct=1)
    assert result.throughput_pps == 0 and result.limited_by == "dut"
    assert "lost frames even at 1 %" in result.limited_reason
