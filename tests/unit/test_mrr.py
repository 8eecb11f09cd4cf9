"""MRR against simulated DUTs of known receive rates: the mean and standard deviation of
the trials' receive rates, generator-limited when the generator could not send the
load and nothing was lost."""

from __future__ import annotations

import statistics

import pytest

from nsb import units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.mrr import MrrProfile
from nsb.trial import Trial, TrialResult
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator


class NoisyDut(SimulatedDutGenerator):
    """Receives the next of ``rates`` frames per second in each trial."""

    def __init__(self, rates: list[float]):
        super().__init__(capacity_pps=max(rates))
        self.rates = list(rates)

    def run_trial(self, trial: Trial) -> TrialResult:
        result = super().run_trial(trial)
        received = round(self.rates.pop(0) * trial.duration_s)
        return TrialResult(trial=trial, tx_packets=result.tx_packets, rx_packets=received,
                           elapsed_s=trial.duration_s, intended_packets=result.intended_packets)


def run(gen, **options):
    profile = make_profile(MrrProfile, packet_sizes=[64], interface_speed_gbps=1, **options)
    events = []
    profile.execute(Measurer(gen, "t", "s", events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


def test_the_answer_is_the_mean_of_the_receive_rates_with_their_spread():
    rates = [1.00e6, 1.02e6, 0.97e6, 1.01e6, 0.99e6]
    gen = NoisyDut(rates)
    trials, (result,) = run(gen, trials=5, duration=2)
    line = units.line_rate_pps(64, 1, ports=2)
    assert [t.rate_pps for t in gen.trials] == pytest.approx([line] * 5)
    assert all(t.duration_s == 2 for t in gen.trials)
    mrr = result.extra["mrr"]
    assert mrr["receive_rates_pps"] == pytest.approx(rates)
    assert result.throughput_pps == pytest.approx(statistics.fmean(rates))
    assert mrr["stdev_pps"] == pytest.approx(statistics.stdev(rates))
    assert result.limited_by == "dut" and result.trials == 5
    assert [t.verdict for t in trials] == ["pass"] * 5
    assert result.loss_pct == pytest.approx(100 * (1 - sum(rates) / (5 * line)), rel=1e-6)


def test_a_generator_that_cannot_send_the_load_sets_the_number_and_says_so():
    gen = SimulatedDutGenerator(capacity_pps=5e6, max_tx_pps=1e6)
    _, (result,) = run(gen, trials=3, duration=1, rate_pct=50)
    assert result.limited_by == "generator"
    assert "3 of 3 trials sent less than the load" in result.limited_reason
    assert result.throughput_pps == pytest.approx(1e6)
    assert result.extra["mrr"]["stdev_pps"] == 0
    assert result.extra["mrr"]["rate_pct"] == 50


def test_a_short_trials_own_words_reach_the_reason():
    from dataclasses import replace

    class HeldBack(SimulatedDutGenerator):  # as TRex says it over memif (stats.pushed_back)
        def run_trial(self, trial):
            return replace(super().run_trial(trial), generator_note="over memif, held back")

    _, (result,) = run(HeldBack(capacity_pps=5e6, max_tx_pps=1e6), trials=2, rate_pct=50)
    assert result.limited_by == "generator"
    assert result.limited_reason.endswith("is the generator's (over memif, held back)")


def test_one_trial_has_no_spread():
    _, (result,) = run(SimulatedDutGenerator(capacity_pps=2e5), trials=1)
    assert result.extra["mrr"]["stdev_pps"] == 0.0
    assert result.throughput_pps == pytest.approx(2e5)


def test_the_summary_says_the_mean_and_the_spread():
    from nsb.report.table import warning_lines

    record = {"frame_size": 64, "mrr": {"trials": 10, "duration_s": 1.0, "rate_pct": 100,
                                        "mean_pps": 1234567.0, "stdev_pps": 2345.6}}
    assert warning_lines([record]) == ["64 B: MRR of 10 trial(s) of 1 s at 100 % of line "
                                       "rate: mean 1,234,567 pps, stdev 2,346 pps"]
