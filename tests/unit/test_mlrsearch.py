"""The mlrsearch profile against simulated DUTs of known capacity."""

import random

import pytest

from benchmarks.search.sim_dut import SimulatedDut
from nsb import units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.mlr_reopen import Bounds, check_rate, search_with_checks
from nsb.traffic_profiles.mlrsearch import MlrSearchProfile
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator


def profile(**overrides):
    return make_profile(MlrSearchProfile,
                        **{"packet_sizes": [64], "interface_speed_gbps": 1, **overrides})


def run(tg, prof):
    events = []
    prof.execute(Measurer(tg, "t1", "s", events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


def test_ndr_and_pdr_bracket_the_capacity_and_are_backed_by_full_trials():
    line = units.line_rate_pps(64, 1, ports=2)
    capacity = 0.4 * line
    trials, results = run(SimulatedDutGenerator(capacity), profile())
    ndr, pdr = results
    assert (ndr.extra["goal"], pdr.extra["goal"]) == ("NDR", "PDR")
    assert ndr.extra["lower_bound_pps"] <= capacity < ndr.extra["upper_bound_pps"]
    assert ndr.extra["upper_bound_pps"] / ndr.extra["lower_bound_pps"] - 1 <= 0.0051
    assert ndr.throughput_pps == pytest.approx(ndr.extra["lower_bound_pps"])
    assert ndr.loss_pct == 0 and ndr.limited_by == "dut"
    assert ndr.extra["backed_by_full_trial"]
    # the PDR goal tolerates 0.5% loss: it may sit above capacity, never below the NDR
    assert pdr.throughput_pps >= ndr.throughput_pps
    assert pdr.throughput_pps <= capacity / (1 - 0.005) * 1.006
    # short trials first, full-length ones at the end
    assert trials[0].result.trial.duration_s == 1.0
    assert max(t.result.trial.duration_s for t in trials) == 60.0
    assert all(t.reason for t in trials)


def test_upper_bound_passing():
    _, (ndr, _) = run(SimulatedDutGenerator(1e12), profile())
    assert ndr.limited_by == "upper_bound"


def test_capacity_below_the_lower_bound_reports_zero():
    _, (ndr, _) = run(SimulatedDutGenerator(10.0), profile())
    assert ndr.throughput_pps == 0 and ndr.extra["lower_bound_pps"] == 0.0


def test_goal_names_must_be_unique():
    from nsb.errors import TaskError

    with pytest.raises(TaskError, match="unique"):
        profile(goals=[{"name": "NDR"}, {"name": "NDR", "loss_ratio": 0.01}])


def test_inconsistent_goal_is_a_task_error():
    from nsb.errors import TaskError

    with pytest.raises(TaskError, match="goal NDR: Number of preceding targets is too small"):
        profile(goals=[{"name": "NDR", "preceding_targets": 0}])


def test_latency_at_fractions_of_the_ndr():
    line = units.line_rate_pps(64, 1, ports=2)
    trials, (ndr, pdr) = run(SimulatedDutGenerator(0.4 * line),
                             profile(latency_at=[10, 50, 90], latency_duration=5))
    sweep = ndr.extra["latency_at_ndr_pct"]
    assert list(sweep) == ["10", "50", "90"]
    assert sweep["50"]["rate_pps"] == pytest.approx(ndr.throughput_pps / 2)
    assert "latency_at_ndr_pct" not in pdr.extra
    assert [t.result.trial.duration_s for t in trials if t.verdict == "latency"] == [5.0] * 3


class StallsInLongTrials(SimulatedDutGenerator):
    """Capacity C, but the first ``stalls`` trials of 60 s each lose one frame, at any
    rate (a DUT that stalls now and then): MLRsearch sees every full-length trial
    it runs fail and ends without a lower bound."""

    def __init__(self, capacity_pps, stalls):
        super().__init__(capacity_pps)
        self.stalls = stalls

    def run_trial(self, trial):
        from dataclasses import replace

        result = super().run_trial(trial)
        if trial.duration_s >= 60 and self.stalls > 0:
            self.stalls -= 1
            return replace(result, rx_packets=min(result.rx_packets, result.tx_packets - 1))
        return result


def test_when_mlrsearch_finds_no_lower_bound_the_profile_still_answers():
    line = units.line_rate_pps(64, 1, ports=2)
    capacity = 0.4 * line
    trials, (ndr,) = run(StallsInLongTrials(capacity, stalls=12),
                         profile(goals=[{"name": "NDR"}]))
    assert ndr.extra["answered_by"] == "nsb fallback proof"
    assert 0 < ndr.throughput_pps <= capacity
    assert ndr.extra["backed_by_full_trial"] and ndr.loss_pct == 0
    assert ndr.extra["evidence"]["full_trials_passed"] == 1
    full = [t for t in trials if t.result.trial.duration_s >= 60]
    assert [t.verdict for t in full][-1] == "pass" and len(full) == 13
    # without the fallback the same search says so, with the rates it tried
    _, (none,) = run(StallsInLongTrials(capacity, stalls=12),
                     profile(goals=[{"name": "NDR"}], fallback_final_trials=0))
    assert none.throughput_pps == 0
    assert none.limited_reason.startswith("no rate at or above the lower bound passed")


def test_a_lossy_full_length_trial_far_below_capacity_is_checked_and_the_search_reopened():
    """Each full-length trial that loses frames is an upper bound to MLRsearch (its
    duration sum is one trial), and after each it steps down by a wider step: six
    stalls in a row leave its answer 14% below capacity. A short trial 5% above
    that answer meets the goal, so the search goes on from the answer up and ends
    within its width below capacity, saying which trials below the answer lost."""
    line = units.line_rate_pps(64, 1, ports=2)
    capacity = 0.4 * line
    ndr_only = {"goals": [{"name": "NDR"}]}
    _, (first,) = run(StallsInLongTrials(capacity, stalls=6),
                      profile(**ndr_only, check_above_pct=0))
    assert first.throughput_pps < 0.9 * capacity and first.extra["checks_above"] == []
    trials, (ndr,) = run(StallsInLongTrials(capacity, stalls=6), profile(**ndr_only))
    assert capacity * (1 - 0.005) <= ndr.throughput_pps <= capacity
    assert ndr.extra["reopened"] == 1 and ndr.extra["backed_by_full_trial"]
    checks = [t for t in trials if t.reason.startswith("check above NDR's answer")]
    assert checks[0].verdict == "pass" and checks[0].result.trial.duration_s == 1.0
    assert checks[0].result.trial.rate_pps == pytest.approx(1.05 * first.throughput_pps)
    # the answer's own check failed: overload, nothing is left to re-open
    assert [c["passed"] for c in ndr.extra["checks_above"]] == [True, False]
    assert [t.verdict for t in checks[1:]] == ["fail", "fail"]
    assert any("full-length trials below the answer lost" in w for w in ndr.warnings)


LINE_10G = units.line_rate_pps(64, 10)


def searched(model, seed, **options):
    """One search of the default goals (NDR and PDR) on a simulated DUT of known
    capacity, drawn between 10% and 95% of line rate: the DUT and the results."""
    capacity = random.Random(seed).uniform(0.10, 0.95) * LINE_10G
    dut = SimulatedDut(model, capacity, seed)
    _, results = run(dut, profile(interface_speed_gbps=10, lower_bound=1.0, **options))
    return dut, capacity, results


@pytest.mark.parametrize("model", ["M0", "M1", "M2", "P1"])
def test_a_right_answer_costs_two_short_checks_per_goal_and_is_not_reopened(model):
    """Hard capacity, livelock, a 10 ms buffer, a policer's 50 ms burst: what the
    DUT forwards 5% above a right answer loses frames, so the checks fail and the
    answers are MLRsearch's, for the price of two 1 s trials per goal."""
    for seed in range(20):
        plain, _, without = searched(model, seed, check_above_pct=0)
        dut, _, checked = searched(model, seed)
        assert [r.throughput_pps for r in checked] == [r.throughput_pps for r in without]
        rates = {c["rate_pps"] for r in checked for c in r.extra["checks_above"]}
        assert all([c["passed"] for c in r.extra["checks_above"]] == [False] and
                   r.extra["reopened"] == 0 and not r.warnings for r in checked)
        assert dut.trials - plain.trials == 2 * len(rates)
        assert dut.trial_seconds - plain.trial_seconds == pytest.approx(2.0 * len(rates))


@pytest.mark.parametrize("model", ["M3", "L1", "B1", "NX", "BX", "LX"])
def test_noisy_bursty_and_livelocked_duts_never_answer_far_below_the_truth(model):
    """Stalls, loss spikes, capacity jitter and livelock (each seed of NX, BX and LX
    draws its own): over 100 seeds no NDR or PDR answer is more than 10% below the
    capacity, and none is above what a passing trial allows (the capacity for
    the NDR, what loses 0.5% under overload for the PDR), beyond the goal's
    width and three times the capacity's jitter."""
    for seed in range(100):
        dut, capacity, (ndr, pdr) = searched(model, seed)
        above = 1 + 0.005 + 3 * dut.model.get("jitter", 0.0)
        assert 0.9 * capacity <= ndr.throughput_pps <= capacity * above, seed
        assert 0.9 * capacity <= pdr.throughput_pps <= capacity / (1 - 0.005) * above, seed
        assert ndr.extra["backed_by_full_trial"] and pdr.extra["backed_by_full_trial"]


def test_checks_and_reopened_searches_are_bounded():
    """A DUT whose every check passes and whose every re-opened search answers
    higher: max_reopens searches after the first, then the last check is said."""
    searches = []

    def run_from(lowest):
        searches.append(lowest)
        lower = lowest * 1.2 if searches[1:] else 100.0
        return [Bounds(lower, lower * 1.005)]

    answers = search_with_checks(run_from, lambda goal, rate: True, 1.0, 1e6, 0.05, 2)
    assert searches == [1.0, 100.0, 120.0]
    (answer,) = answers
    assert answer.bounds.lower_pps == pytest.approx(144.0) and answer.reopened == 2
    assert answer.raised and answer.last_check_passed and len(answer.checks) == 3
    assert [rate for rate, _ in answer.checks] == pytest.approx([105.0, 126.0, 151.2])


def test_a_reopened_search_that_finds_nothing_higher_keeps_the_answer():
    searches = []

    def run_from(lowest):
        searches.append(lowest)
        return [Bounds(100.0, 101.0), Bounds(200.0, 201.0)] if len(searches) == 1 else \
            [Bounds(None, 100.0), Bounds(230.0, 231.0)]

    checked = []

    def check(goal, rate):
        checked.append(goal)
        return goal == 0 or len(checked) < 3  # goal 1: its first check passes

    ndr, pdr = search_with_checks(run_from, check, 1.0, 1e6, 0.05, 5)
    assert searches == [1.0, 100.0]  # from the lower of the answers whose check passed
    assert (ndr.bounds.lower_pps, ndr.reopened, ndr.raised) == (100.0, 1, False)
    assert ndr.last_check_passed and len(ndr.checks) == 1  # not checked again
    assert (pdr.bounds.lower_pps, pdr.reopened, pdr.raised) == (230.0, 1, True)
    assert [ok for _, ok in pdr.checks] == [True, False]


def test_where_an_answer_is_checked():
    assert check_rate(Bounds(100.0, 100.5), 0.05, 1e6) == pytest.approx(105.0)
    assert check_rate(Bounds(100.0, 120.0), 0.05, 1e6) == 120.0  # no lower than the bound
    assert check_rate(Bounds(100.0, 100.5), 0.05, 102.0) == 102.0  # within the maximum load
    assert check_rate(Bounds(100.0, None), 0.05, 1e6) is None  # the maximum load passed
    assert check_rate(Bounds(None, 1.0), 0.05, 1e6) is None  # no answer to check
    assert check_rate(Bounds(100.0, 100.5), 0.0, 1e6) is None  # checks turned off
