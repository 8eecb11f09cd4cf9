"""jumpavg's grouping of a test's runs (``jumpavg.classify``, to the last bit) with its
state kept, so a history that grew by a run costs one pass over the open group lists
instead of a new classification of every run.

``jumpavg.classify`` reads the runs once. Before run i it keeps, for every earlier run
j, an open group list: the best grouping of the runs before j, then one group from j to
the newest run. Run i opens list i (the best grouping so far, then a group of run i),
joins the last group of every other list, and the list of fewest bits is the best
grouping up to i. That is n²/2 steps for n runs, each an object with its own run list in
jumpavg (time and memory quadratic); here the lists are arrays of what the next step
needs: their last group's statistics, the bits of the groups before it, and per run
where the best grouping's last group began. Extended with more runs, a state answers
exactly as a classification of all of them does, as long as no new run is above the
largest before it (the largest value sets the unit every bit is counted in).

The statistics are jumpavg's own arithmetic, operation by operation (IEEE adds,
multiplies, divides and square roots give the same bits in numpy); which list is best
is screened with numpy's logarithm and decided with jumpavg's ``BitCountingStats``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from jumpavg import AvgStdevStats, BitCountingStats

SBPS = 12.0  # jumpavg.classify's default significant bits per sample
# how far numpy's logarithm and a different order of operations may take the screened
# bits from jumpavg's, relative to their magnitude (the error is below 1e-13)
SCREEN_MARGIN = 1e-9

Run = float | Sequence[float]  # an answer, or a run's trial results (MRR)
ARRAYS = ("sizes", "avgs", "stdevs", "before_bits", "copy_sizes", "copy_avgs",
          "copy_stdevs", "best")


@dataclass
class State:
    """Where ``jumpavg.classify`` is after ``runs`` runs. Per open list j: its last
    group's size, average and standard deviation, and the bits of the groups before it;
    the best list's last group as copied when j opened (its average is the one j's
    group is coded against; unused for j = 0). Per run i: where the best grouping of
    the runs up to i began its last group. Arrays may be longer than ``runs``."""

    max_value: float
    runs: int = 0
    sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    avgs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    stdevs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    before_bits: np.ndarray = field(default_factory=lambda: np.zeros(0))
    copy_sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    copy_avgs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    copy_stdevs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    best: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    best_bits: float = math.nan  # the best grouping's bits (not counted after one run)

    @property
    def unit(self) -> float:
        return self.max_value / (pow(2.0, SBPS + 1.0) - 1.0)

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays, each as long as the runs."""
        return {name: getattr(self, name)[:self.runs] for name in ARRAYS}


@dataclass(frozen=True)
class Group:
    first: int  # index of its first and last run
    last: int
    size: int  # values in it (an MRR run counts its trials)
    avg: float
    stdev: float
    comment: str  # regression, progression or normal, against the group before


def run_stats(run: Run) -> tuple[int, float, float]:
    """A run as jumpavg takes it: a value, or its trials' size, average and deviation."""
    if isinstance(run, (float, int)):
        stats = (1, float(run), 0.0)
    else:
        one = AvgStdevStats.for_runs(list(run))
        stats = (one.size, one.avg, one.stdev)
    if not (math.isfinite(stats[1]) and math.isfinite(stats[2])) or stats[0] < 1:
        raise ValueError(f"not a run jumpavg can group: {run!r}")
    return stats


def max_value(runs: Sequence[Run]) -> float:
    """The largest value of the runs, as jumpavg.classify finds it (0 at least)."""
    top = 0.0
    for run in runs:
        for value in (run,) if isinstance(run, (float, int)) else run:
            if value > top:
                top = value
    return top


def fits(state: State, runs: Sequence[Run]) -> bool:
    """Whether ``state`` (after the first ``state.runs`` of ``runs``) extends to all of
    them as a classification of them all would count: no new run above its maximum."""
    return state.runs <= len(runs) and max_value(runs[state.runs:]) <= state.max_value


def classify(runs: Sequence[Run], state: State | None = None) -> State:
    """The state after ``runs``: ``state``, after the first ``state.runs`` of them and
    :func:`fits`, extended with the others; else a classification from the first."""
    if state is None:
        state = State(max_value(runs))
    elif not fits(state, runs):
        raise ValueError("the state does not extend to these runs")
    done = state.runs
    if done == len(runs):
        return state
    state = _grown(state, len(runs))
    stats = [run_stats(run) for run in runs[done:]]
    screen = _Screen(state)
    for i, run in enumerate(stats, start=done):
        _step(state, screen, i, run)
    return state


def _grown(state: State, total: int) -> State:
    """A copy of ``state`` with room for ``total`` runs (the given one is not changed)."""
    grown = State(state.max_value, state.runs, best_bits=state.best_bits)
    for name, old in state.arrays().items():
        new = np.zeros(total, old.dtype)
        new[:state.runs] = old
        setattr(grown, name, new)
    return grown


def _step(state: State, screen: _Screen, i: int, run: tuple[int, float, float]) -> None:
    """jumpavg.classify's loop body for run i: open list i, add the run to the others'
    last groups, keep the best list."""
    if i:
        _open(state, screen, i)
    one = AvgStdevStats.for_runs([AvgStdevStats(*run)])  # the group of run i alone
    state.sizes[i], state.avgs[i], state.stdevs[i] = one.size, one.avg, one.stdev
    _join(state, i, run)
    state.runs = i + 1
    if i == 0 or state.max_value <= 0.0:  # no runs above 0: one group (no bits to count)
        state.best[i] = 0
        return
    screen.add(i)
    state.best[i], state.best_bits = _choose(state, screen, i)


def _open(state: State, screen: _Screen, i: int) -> None:
    """List i: the best list so far with its last group copied (jumpavg's copy_fast:
    the copy's statistics are counted again), then a group of run i coded against it."""
    j = int(state.best[i - 1])
    copy = AvgStdevStats.for_runs([_stats(state, j)])
    state.copy_sizes[i], state.copy_avgs[i], state.copy_stdevs[i] = \
        copy.size, copy.avg, copy.stdev
    if state.max_value <= 0.0:
        state.before_bits[i] = 0.0
    elif i == 1:  # nothing counted the first list's bits yet
        state.before_bits[i] = 0.0 + _bits(state, copy, None)
    else:
        state.before_bits[i] = state.best_bits


def _join(state: State, i: int, run: tuple[int, float, float]) -> None:
    """Run i added to the last group of lists 0..i-1: AvgStdevStats.for_runs([group's
    stats, run]), its operations in jumpavg's order."""
    if not i:
        return
    size, avg, stdev = run
    s = state.sizes[:i]
    total = 0.0 + (state.avgs[:i] * s) / s
    moment = 0.0 + (state.stdevs[:i] * state.stdevs[:i]) * s
    delta = avg - total
    n = s + size
    total = total + (delta * size) / n
    moment = moment + (stdev * stdev) * size
    moment = moment + (((delta * delta) * s) * size) / n
    state.sizes[:i], state.avgs[:i], state.stdevs[:i] = n, total, np.sqrt(moment / n)


def _stats(state: State, j: int):
    return AvgStdevStats(int(state.sizes[j]), float(state.avgs[j]), float(state.stdevs[j]))


def _bits(state: State, stats, prev_avg: float | None) -> float:
    """A group's bits, by jumpavg (BitCountingGroup.bits)."""
    return BitCountingStats.for_runs_and_params(
        runs=[stats], max_value=state.max_value, unit=state.unit, prev_avg=prev_avg).bits


def _list_bits(state: State, j: int) -> float:
    """Open list j's bits, by jumpavg (BitCountingGroupList.bits)."""
    prev = None if j == 0 else float(state.copy_avgs[j])
    return float(state.before_bits[j]) + _bits(state, _stats(state, j), prev)


def _choose(state: State, screen: _Screen, i: int) -> tuple[int, float]:
    """The best list after run i and its bits, as jumpavg.classify picks it: list i,
    unless an earlier one has fewer bits (the first of those with fewest). Lists the
    screen puts clearly above the fewest cannot be it, so only the others are counted
    by jumpavg."""
    rough = screen.bits(i)
    low = float(rough.min())
    margin = SCREEN_MARGIN * (screen.scale(i, rough) + 1.0)
    best, best_bits = i, _list_bits(state, i)
    for j in np.flatnonzero(rough[:i] <= low + margin).tolist():
        bits = _list_bits(state, j)
        if bits < best_bits:
            best, best_bits = j, bits
    return best, best_bits


class _Screen:
    """Every open list's bits at once, with numpy's logarithm: close to jumpavg's, to
    find the few lists that may be the best."""

    def __init__(self, state: State):
        self.state = state
        unit = state.unit
        self.top = state.max_value / unit if unit else 0.0
        self.prev = np.zeros(len(state.sizes))  # each list's previous average, in units
        self.norm = np.ones(len(state.sizes))  # and the norm of jumpavg's coding of it
        self.tables = _SizeTables()
        self.add(slice(1, state.runs))

    def add(self, lists: int | slice) -> None:
        if not self.state.unit:
            return
        prev = self.state.copy_avgs[lists] / self.state.unit
        self.prev[lists] = prev
        self.norm[lists] = prev * prev - (prev - 1) * self.top + self.top * self.top / 2

    def bits(self, i: int) -> np.ndarray:
        state, unit, top = self.state, self.state.unit, self.top
        s = state.sizes[:i + 1]
        self.tables.grow(int(s.max()))
        avg = (state.avgs[:i + 1] * s) / s / unit
        stdev = np.sqrt(((state.stdevs[:i + 1] * state.stdevs[:i + 1]) * s) / s) / unit
        bits = self.tables.size_bits[s].copy()
        bits[1:] -= np.log2((np.abs(avg[1:] - self.prev[1:i + 1]) + 1) / self.norm[1:i + 1])
        bits[0] += math.log2(top + 1)
        spread = (np.log2((stdev + 1) * (stdev + 2)) + math.log2(1 - 1 / (top + 2))
                  + self.tables.sphere[s] + np.log2(stdev + 1) * (s - 2))
        return state.before_bits[:i + 1] + np.where(s >= 2, bits + spread, bits)

    def scale(self, i: int, rough: np.ndarray) -> float:
        """A bound on the magnitude of the terms summed into the bits."""
        s = int(self.state.sizes[:i + 1].max())
        return float(np.abs(rough).max() + np.abs(self.state.before_bits[:i + 1]).max()
                     + self.tables.magnitude(s) + 64.0 * s)


class _SizeTables:
    """The terms of a group's bits that depend on its size only, by size."""

    def __init__(self):
        self.size_bits = np.zeros(1)
        self.sphere = np.zeros(1)
        self.largest = np.zeros(1)  # the largest magnitude of both up to each size

    def grow(self, size: int) -> None:
        if size < len(self.size_bits):
            return
        sizes = range(len(self.size_bits), max(size + 1, 2 * len(self.size_bits)))
        self.size_bits = np.append(self.size_bits, [math.log2(k * (k + 1)) for k in sizes])
        self.sphere = np.append(self.sphere, [
            (math.log(2) + math.log(math.pi) * ((k - 1) / 2) - math.lgamma((k - 1) / 2)
             + math.log(k) * ((k - 2) / 2)) / math.log(2) if k >= 2 else 0.0
            for k in sizes])
        self.largest = np.maximum.accumulate(np.abs(self.size_bits) + np.abs(self.sphere))

    def magnitude(self, size: int) -> float:
        self.grow(size)
        return float(self.largest[size])


def groups(state: State, runs: Sequence[Run], upto: int | None = None) -> list[Group]:
    """The best grouping of the runs up to index ``upto`` (the newest by default), as
    jumpavg.classify of those runs gives it when their maximum is the state's."""
    end = state.runs - 1 if upto is None else upto
    if end < 0:
        return []
    spans = []
    while end >= 0:
        spans.append((int(state.best[end]), end))
        end = spans[-1][0] - 1
    spans.reverse()
    found, before = [], None
    for k, (first, last) in enumerate(spans):
        if k == len(spans) - 1:  # the newest group, not copied yet
            size, avg, stdev = _last_group(state, runs, first, last)
        else:  # copied when the list after it opened
            size, avg, stdev = (int(state.copy_sizes[last + 1]),
                                float(state.copy_avgs[last + 1]),
                                float(state.copy_stdevs[last + 1]))
        before = avg if before is None else before
        comment = "regression" if avg < before else "progression" if avg > before \
            else "normal"
        found.append(Group(first, last, size, avg, stdev, comment))
        before = avg
    return found


def _last_group(state: State, runs: Sequence[Run], first: int, last: int):
    """The statistics of list ``first``'s last group after run ``last``: the state's
    when it is the newest run, else the same additions done again."""
    if last == state.runs - 1:
        return int(state.sizes[first]), float(state.avgs[first]), float(state.stdevs[first])
    stats = AvgStdevStats.for_runs([AvgStdevStats(*run_stats(runs[first]))])
    for run in runs[first + 1:last + 1]:
        stats = AvgStdevStats.for_runs([stats, AvgStdevStats(*run_stats(run))])
    return stats.size, stats.avg, stats.stdev
