"""The fastndr profile: short trials find the NDR, one full-length trial proves it."""

import pytest

from benchmarks.search.sim_dut import SimulatedDut
from nsb import units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.base import Session
from nsb.traffic_profiles.fastndr import FastNdrProfile
from tests.doubles.profiles import make_profile

LINE = units.line_rate_pps(64, 10)


def profile(**overrides):
    return make_profile(FastNdrProfile, **{"packet_sizes": [64], **overrides})


def run(tg, prof):
    events = []
    prof.execute(tg, Session("t1", "s", 0, events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


@pytest.mark.parametrize("model", ["M0", "M1", "M2"])
@pytest.mark.parametrize("seed", range(5))
def test_answer_is_within_width_below_capacity_and_backed_by_one_full_trial(model, seed):
    capacity = (0.1 + 0.17 * seed) * LINE
    dut = SimulatedDut(model, capacity, seed)
    trials, (result,) = run(dut, profile())
    assert capacity * (1 - 0.005) <= result.throughput_pps <= capacity
    assert result.loss_pct == 0 and result.extra["backed_by_full_trial"]
    full = [t for t in trials if t.result.trial.duration_s == 60.0]
    assert len(full) == 1 and full[0].verdict == "pass"
    assert full[0].result.tx_rate_pps == pytest.approx(result.throughput_pps)
    assert dut.trial_seconds <= 90


def test_buffer_is_detected_from_the_two_max_load_trials():
    dut = SimulatedDut("M2", 0.5 * LINE, 1)
    trials, (result,) = run(dut, profile())
    assert result.extra["buffer_detected"]
    assert result.extra["estimate_pps"] == pytest.approx(0.5 * LINE, rel=1e-6)
    assert [t.reason.split(":")[0] for t in trials[:2]] == ["max load",
                                                            "max load, double length"]


def test_failed_final_trial_steps_down_from_its_forwarding_rate():
    class ShortTrialsLie(SimulatedDut):
        """Short trials pass up to 2% above capacity (a deep buffer nobody detects)."""

        def run_trial(self, trial):
            result = super().run_trial(trial)
            if trial.duration_s < 60 and trial.rate_pps <= self.capacity_pps * 1.02:
                from dataclasses import replace

                return replace(result, rx_packets=result.tx_packets)
            return result

    capacity = 0.3 * LINE
    trials, (result,) = run(ShortTrialsLie("M0", capacity, 0), profile())
    finals = [t for t in trials if t.reason.startswith("final")]
    assert finals[0].verdict == "fail" and finals[-1].verdict == "pass"
    assert capacity * (1 - 0.01) <= result.throughput_pps <= capacity


def test_upper_bound_passing():
    trials, (result,) = run(SimulatedDut("M0", 2 * LINE, 0), profile())
    assert result.limited_by == "upper_bound" and len(trials) == 2


def test_generator_that_cannot_sustain_the_final_trial_steps_down():
    from tests.doubles.simulated_dut import SimulatedDutGenerator

    class Tiring(SimulatedDutGenerator):
        """Double: sends anything in short trials, at most 40% of line rate in long ones."""

        def run_trial(self, trial):
            self.max_tx_pps = 0.4 * LINE if trial.duration_s >= 60 else float("inf")
            return super().run_trial(trial)

    trials, (result,) = run(Tiring(0.5 * LINE, ports=1), profile())
    finals = [t for t in trials if t.reason.startswith("final")]
    assert [t.verdict for t in finals] == ["generator_limited", "pass"]
    assert 0.39 * LINE < result.throughput_pps <= 0.4 * LINE
    assert result.limited_by == "generator"


def test_short_trial_mode_says_it_is_not_backed_and_does_not_over_report_on_a_buffer():
    capacity = 0.6 * LINE
    trials, (result,) = run(SimulatedDut("M2", capacity, 3), profile(prove=False))
    assert result.extra["backed_by_full_trial"] is False
    assert all(t.result.trial.duration_s < 60 for t in trials)
    assert capacity * (1 - 0.005) <= result.throughput_pps <= capacity


def test_bounds_must_be_ordered():
    from nsb.errors import TaskError

    with pytest.raises(TaskError, match="lower_bound 50 must be below upper_bound 40"):
        profile(lower_bound=50, upper_bound=40)
