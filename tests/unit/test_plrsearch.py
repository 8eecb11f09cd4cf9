"""PLRsearch against a simulated DUT of known critical load: its estimate converges
within its stated spread, reported after every trial."""

import math
import random

import pytest

from nsb.events import PlrEstimate, ResultReady, TrialDone
from nsb.outputs import records
from nsb.traffic_profiles import plr_fit
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.plrsearch import PlrSearchProfile
from nsb.trial import TrialResult
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator

TARGET = 1e-7


class RandomLossDut(SimulatedDutGenerator):
    """Forwards about ``capacity`` frames per second; below it loses a few at random,
    more the closer the load is: on average the integral up to the load of a logistic
    step of ``width`` at ``capacity`` (a smooth knee) per second."""

    def __init__(self, capacity: float, width: float, seed: int):
        super().__init__(capacity_pps=capacity)
        self.width = width
        self.rng = random.Random(seed)

    def loss_per_s(self, load: float) -> float:
        def softplus(u):
            return u if u > 30 else math.log1p(math.exp(u))
        return self.width * (softplus((load - self.capacity_pps) / self.width)
                             - softplus(-self.capacity_pps / self.width))

    def critical_load(self) -> float:
        """Where the average loss ratio is TARGET: bisection on this DUT's own curve."""
        low, high = 1.0, 2 * self.capacity_pps
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if self.loss_per_s(mid) / mid < TARGET else (low, mid)
        return low

    def run_trial(self, trial):
        self.trials.append(trial)
        sent = round(trial.rate_pps * trial.duration_s)
        lost = min(sent, self._poisson(self.loss_per_s(trial.rate_pps) * trial.duration_s))
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=sent - lost,
                           elapsed_s=trial.duration_s)

    def _poisson(self, mean: float) -> int:
        if mean > 50:
            return max(0, round(self.rng.gauss(mean, math.sqrt(mean))))
        count, threshold, product = 0, math.exp(-mean), self.rng.random()
        while product > threshold:
            count += 1
            product *= self.rng.random()
        return count


def search(dut, **options):
    options = {"packet_sizes": [64], "interface_speed_gbps": 10,
               "target_loss_ratio": TARGET, "trial_duration_per_trial": 1.0,
               "timeout_s": 600, "max_trials": 14, **options}
    events = []
    make_profile(PlrSearchProfile, **options).execute(Measurer(dut, "t1", "s", events.append))
    return events


@pytest.mark.parametrize(("capacity", "width", "seed"),
                         [(6.0e6, 2.0e4, 1), (2.5e6, 5.0e4, 7)])
def test_the_estimate_converges_to_the_critical_load_within_its_spread(capacity, width, seed):
    dut = RandomLossDut(capacity, width, seed)
    critical = dut.critical_load()
    assert critical < capacity - 5 * width  # far below where loss is obvious
    events = search(dut)
    estimates = [e for e in events if isinstance(e, PlrEstimate)]
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    last = estimates[-1]
    assert abs(last.estimate_pps - critical) <= 2 * last.stdev_pps
    assert last.stdev_pps < 0.05 * critical  # and the spread is narrow by then
    assert last.stdev_pps < estimates[2].stdev_pps  # it narrowed as trials went on
    assert result.throughput_pps == last.estimate_pps
    assert result.extra["plr_stdev_pps"] == last.stdev_pps
    assert set(result.extra["plr_fits"]) == {"stretch", "erf"}


def test_an_estimate_after_every_trial_and_longer_trials():
    events = search(RandomLossDut(4e6, 3e4, 3), max_trials=6)
    trials = [e for e in events if isinstance(e, TrialDone)]
    estimates = [e for e in events if isinstance(e, PlrEstimate)]
    assert [e.trial_index for e in estimates] == [t.trial_index for t in trials]
    assert [t.result.trial.duration_s for t in trials] == [1, 2, 3, 4, 5, 6]
    assert all(events.index(t) < events.index(e) for t, e in zip(trials, estimates,
                                                                  strict=True))
    line_rate = 2 * 10e9 / (84 * 8)
    assert trials[0].result.trial.rate_pps == pytest.approx((0.01 + 1.0) / 2 * line_rate)
    assert trials[1].result.trial.rate_pps == pytest.approx(line_rate)
    record = records.record(estimates[-1])
    assert set(record["fits"]) == {"stretch", "erf"}
    assert record["stdev_pps"] == estimates[-1].stdev_pps


def test_the_timeout_bounds_the_traffic_time():
    dut = RandomLossDut(4e6, 3e4, 5)
    search(dut, timeout_s=30, max_trials=100)
    durations = [t.duration_s for t in dut.trials]
    assert durations == [1, 2, 3, 4, 5, 6, 7] and sum(durations) <= 30


@pytest.mark.parametrize("fit", list(plr_fit.FITS.values()))
def test_a_fitting_function_is_the_integral_of_a_smoothed_step(fit):
    mrr, spread = 1e6, 1e4
    loss = [math.exp(fit(x, mrr, spread)) for x in (9.0e5, 1.1e6, 1.2e6)]
    assert loss[0] < 1e-3 * spread  # far below mrr: almost nothing lost
    assert loss[2] - loss[1] == pytest.approx(1e5, rel=1e-3)  # far above: the excess
    # the loss ratio at the critical load is the target
    load = plr_fit.critical_load(fit, mrr, spread, 1e-4, 1.0, 2e6)
    assert math.exp(fit(load, mrr, spread)) / load == pytest.approx(1e-4, rel=1e-6)


class HardKneeDut(SimulatedDutGenerator):
    """Loses nothing below ``capacity_pps`` and exactly the excess above it; a generator
    that sends at most ``max_tx_pps`` leaves the rest unsent (generator-limited)."""

    def run_trial(self, trial):
        self.trials.append(trial)
        asked = round(trial.rate_pps * trial.duration_s)
        sent = round(min(trial.rate_pps, self.max_tx_pps) * trial.duration_s)
        received = min(sent, round(self.capacity_pps * trial.duration_s))
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received,
                           elapsed_s=trial.duration_s, generator_limited=sent < asked - 4,
                           intended_packets=asked)


LINE = 2 * 10e9 / (84 * 8)  # 64 B on two 10G ports


def _answer(events):
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    return result, result.throughput_pps, result.extra["plr_stdev_pps"]


@pytest.mark.parametrize("capacity_pct", [3.0, 40.0, 77.0])
def test_a_hard_knee_is_found_within_its_stated_spread_which_is_not_zero(capacity_pct):
    capacity = capacity_pct / 100 * LINE
    result, estimate, stdev = _answer(search(HardKneeDut(capacity)))
    assert stdev > 0
    assert abs(estimate - capacity) <= max(3 * stdev, 0.02 * capacity)
    assert result.limited_by == "dut"
    assert result.extra["evidence"]["trials"] == result.trials == 14


def test_a_dut_that_never_loses_is_at_the_upper_bound_never_above_it():
    result, estimate, _ = _answer(search(HardKneeDut(1e12), upper_bound=80.0))
    assert estimate <= 0.8 * LINE
    assert result.limited_by == "upper_bound" and "at or above the upper bound" in \
        result.limited_reason
    for event in search(HardKneeDut(1e12), upper_bound=80.0, max_trials=5):
        if isinstance(event, PlrEstimate):
            assert event.estimate_pps <= 0.8 * LINE * (1 + 1e-12)


def test_a_generator_capped_below_the_dut_limits_the_answer_to_what_it_sent():
    cap = 0.30 * LINE
    dut = HardKneeDut(0.60 * LINE, max_tx_pps=cap)
    result, estimate, stdev = _answer(search(dut))
    assert result.limited_by == "generator"
    assert estimate <= cap
    assert estimate >= cap - max(3 * stdev, 0.03 * cap)
    assert "unsent frames count as lost" in result.limited_reason
    done = [e for e in search(HardKneeDut(0.60 * LINE, max_tx_pps=cap), max_trials=3)
            if isinstance(e, TrialDone)]
    assert "unsent" in done[1].reason  # the upper bound's trial: the generator's shortfall


def test_a_generator_above_the_dut_finds_the_dut():
    capacity = 0.50 * LINE
    result, estimate, stdev = _answer(search(HardKneeDut(capacity, max_tx_pps=0.9 * LINE)))
    assert result.limited_by == "dut"
    assert abs(estimate - capacity) <= max(3 * stdev, 0.03 * capacity)


def test_a_dut_below_the_lower_bound_is_at_the_lower_bound():
    result, estimate, _ = _answer(search(HardKneeDut(0.005 * LINE), lower_bound=1.0))
    assert result.limited_by == "lower_bound"
    assert estimate == pytest.approx(0.01 * LINE, rel=1e-3)


def test_csits_trial_number_offset_lengthens_every_trial():
    dut = RandomLossDut(4e6, 3e4, 3)
    search(dut, trial_duration_per_trial=0.1, trial_number_offset=50, max_trials=3)
    assert [t.duration_s for t in dut.trials] == pytest.approx([5.1, 5.2, 5.3])


def test_frames_rounding_leaves_unsent_are_not_loss_those_a_generator_could_not_send_are():
    assert plr_fit.observation(1e6, 2.0, 1_999_998, 1_999_998).lost == 0
    short = plr_fit.observation(1e6, 2.0, 1_500_000, 1_499_990)
    assert short.unsent == 500_000 and short.lost == 500_010


class QuadraticKneeDut(RandomLossDut):
    """Loss that starts at ``start`` and grows with the square of the excess load: a knee
    neither fitting function has, so the stated spread must cover the mismatch."""

    def __init__(self, start: float, k: float, seed: int):
        super().__init__(start, 1.0, seed)
        self.start, self.k = start, k

    def loss_per_s(self, load: float) -> float:
        return self.k * max(0.0, load - self.start) ** 2

    def critical_load(self) -> float:
        low, high = self.start, 10 * self.start
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if self.loss_per_s(mid) / mid < TARGET else (low, mid)
        return low


@pytest.mark.parametrize(("start", "k", "seed"), [(5e6, 1e-6, 0), (2e6, 1e-9, 2)])
def test_a_knee_the_fits_do_not_have_is_within_three_stated_deviations(start, k, seed):
    dut = QuadraticKneeDut(start, k, seed)
    _, estimate, stdev = _answer(search(dut))
    assert stdev > 0 and abs(estimate - dut.critical_load()) <= 3 * stdev
