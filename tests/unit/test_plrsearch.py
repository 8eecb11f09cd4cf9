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
    load = plr_fit.critical_load(fit, mrr, spread, 1e-4, 2e6)
    assert math.exp(fit(load, mrr, spread)) / load == pytest.approx(1e-4, rel=1e-6)
