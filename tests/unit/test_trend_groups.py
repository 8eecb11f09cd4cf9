"""jumpavg's grouping with its state kept (nsb.report.trend_groups): the groups are
jumpavg.classify's to the last bit, and a state extended run by run is the state
counted from the first run, on histories of known steps, ties and MRR trials."""

from __future__ import annotations

import math
import random

import jumpavg
import numpy as np
import pytest

from nsb.report import trend_groups


def _jumpavg(runs):
    """jumpavg.classify's groups as (first, last, size, avg, stdev, comment)."""
    found, start = [], 0
    for group in jumpavg.classify(runs):
        found.append((start, start + len(group) - 1, group.stats.size, group.stats.avg,
                      group.stats.stdev, group.comment))
        start += len(group)
    return found


def _ours(state, runs, upto=None):
    return [(g.first, g.last, g.size, g.avg, g.stdev, g.comment)
            for g in trend_groups.groups(state, runs, upto)]


def _history(kind: str, runs: int, seed: int) -> list:
    """Runs of a DUT whose level steps now and then: answers with 1 % noise, answers
    rounded to 10 kpps (ties), small integers (many ties) or MRR runs of 1-8 trials."""
    rng = random.Random(seed)
    level, found = rng.uniform(1e5, 1e7), []
    for _ in range(runs):
        if rng.random() < 0.1:
            level *= rng.uniform(0.7, 1.3)
        if kind == "mrr":
            found.append([level * (1 + rng.gauss(0, 0.03)) for _ in range(rng.randint(1, 8))])
        elif kind == "rounded":
            found.append(round(level * (1 + rng.gauss(0, 0.002)), -4))
        elif kind == "small":
            found.append(float(rng.choice([1, 2, 3, 3])))
        else:
            found.append(level * (1 + rng.gauss(0, 0.01)))
    return found


@pytest.mark.parametrize("kind", ["noisy", "rounded", "small", "mrr"])
@pytest.mark.parametrize("seed", range(6))
def test_the_groups_are_jumpavgs_to_the_last_bit(kind, seed):
    runs = _history(kind, random.Random(seed).randint(1, 90), seed)
    assert _ours(trend_groups.classify(runs), runs) == _jumpavg(runs)


def test_a_known_step_is_found_where_it_was_made():
    rng = random.Random(3)
    runs = [1e6 * (1 + rng.uniform(-0.005, 0.005)) for _ in range(300)] + \
           [0.9e6 * (1 + rng.uniform(-0.005, 0.005)) for _ in range(200)]
    found = trend_groups.groups(trend_groups.classify(runs), runs)
    assert [(g.first, g.last, g.comment) for g in found] == \
        [(0, 299, "normal"), (300, 499, "regression")]
    assert found[1].avg == pytest.approx(0.9e6, rel=1e-3)


@pytest.mark.parametrize("kind", ["noisy", "rounded", "small", "mrr"])
def test_a_state_extended_run_by_run_is_the_state_counted_at_once(kind):
    runs = _history(kind, 120, 11)
    top = max(range(len(runs)), key=lambda k: trend_groups.max_value(runs[k:k + 1]))
    whole = trend_groups.classify(runs)
    state = trend_groups.classify(runs[:top + 1])
    for end in range(top + 2, len(runs) + 1):
        assert trend_groups.fits(state, runs[:end])
        state = trend_groups.classify(runs[:end], state)
        if end % 20 == 0:
            assert _ours(state, runs[:end]) == _jumpavg(runs[:end])
    assert state.runs == whole.runs and state.best_bits == whole.best_bits
    for name, array in whole.arrays().items():
        assert np.array_equal(state.arrays()[name], array), name


def test_extending_leaves_the_state_it_was_given_as_it_was():
    runs = _history("noisy", 40, 2)
    runs[0] = 2e7  # the largest first: every run after it extends
    state = trend_groups.classify(runs[:30])
    before = {name: array.copy() for name, array in state.arrays().items()}
    trend_groups.classify(runs, state)
    assert state.runs == 30
    assert all(np.array_equal(state.arrays()[name], before[name]) for name in before)


def test_a_run_above_the_largest_so_far_does_not_extend_a_state():
    """The largest value sets the unit jumpavg counts every bit in."""
    runs = [1e6, 1.01e6, 0.99e6, 1.02e6]
    state = trend_groups.classify(runs[:3])
    assert not trend_groups.fits(state, runs)
    with pytest.raises(ValueError, match="does not extend"):
        trend_groups.classify(runs, state)


def test_an_earlier_point_of_the_history_is_read_from_the_state():
    runs = _history("noisy", 80, 5)
    runs[3] = 3e7  # the largest, early: every later prefix has the same maximum
    state = trend_groups.classify(runs)
    for upto in (3, 10, 41, 78, 79):
        assert _ours(state, runs, upto) == _jumpavg(runs[:upto + 1])


@pytest.mark.parametrize("kind", ["noisy", "small", "mrr"])
def test_the_screen_only_narrows_the_lists_jumpavg_counts(monkeypatch, kind):
    """Screened bits off by up to a quarter of the margin (made wide here, so that
    lists close to the best trade places) change nothing: jumpavg's own count of the
    lists within the margin decides, ties included."""
    rng = random.Random(1)
    screened = trend_groups._Screen.bits

    def off(self, i):
        rough = screened(self, i)
        err = trend_groups.SCREEN_MARGIN * (self.scale(i, rough) + 1.0) / 4
        return rough + np.array([rng.uniform(-err, err) for _ in range(len(rough))])

    monkeypatch.setattr(trend_groups, "SCREEN_MARGIN", 1e-2)
    monkeypatch.setattr(trend_groups._Screen, "bits", off)
    runs = _history(kind, 90, 4)
    assert _ours(trend_groups.classify(runs), runs) == _jumpavg(runs)


def test_runs_of_nothing_are_one_group_and_a_run_that_is_no_number_is_refused():
    """jumpavg cannot count bits when no value is above 0: nothing changed there."""
    runs = [0.0, 0.0, 0.0]
    assert _ours(trend_groups.classify(runs), runs) == [(0, 2, 3, 0.0, 0.0, "normal")]
    with pytest.raises(ValueError, match="not a run"):
        trend_groups.classify([1.0, math.nan])
