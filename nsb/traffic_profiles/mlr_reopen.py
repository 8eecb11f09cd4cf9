"""A check above MLRsearch's answer, and the search re-opened when it passes.

MLRsearch's relevant upper bound is the lowest load its rules call an upper
bound, and with the duration sum equal to the final trial duration one
full-length trial that lost frames is one. On a DUT that stalls or drops a burst
now and then at any rate, such a trial far below the capacity caps the answer
there for good, and after each it steps down by a wider step, so a few in a row
go far. A livelocked DUT makes it likelier: MLRsearch starts from the forwarding
rate of its first trial, at the maximum load, which livelock makes low, and
climbs through many trials, each a chance for a transient. A DUT overloaded a
little above the answer loses frames in a short trial well above it; one that
passes such a trial is not overloaded there, and the search is run again from
the answer up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Bounds:
    """One goal's answer from one MLRsearch run (None: it found no such bound)."""

    lower_pps: float | None
    upper_pps: float | None
    conditional_pps: float | None = None


@dataclass
class Checked:
    """A goal's answer after the checks: the bounds it ends with, its first answer,
    the checks run above its answers (rate, and whether a trial there met the
    goal) and how many searches were re-opened for it."""

    bounds: Bounds
    first_lower_pps: float | None
    checks: list[tuple[float, bool]] = field(default_factory=list)
    reopened: int = 0

    @property
    def raised(self) -> bool:
        """A re-opened search found a higher answer than the first."""
        return self.bounds.lower_pps != self.first_lower_pps

    @property
    def last_check_passed(self) -> bool:
        return bool(self.checks) and self.checks[-1][1]


def check_rate(bounds: Bounds, above: float, max_load: float) -> float | None:
    """Where to check a goal's answer: ``above`` (relative) over it and no lower
    than its upper bound, within the search's maximum load; None when there is
    nothing to check (no answer, or no upper bound: the maximum load passed)."""
    if not bounds.lower_pps or bounds.upper_pps is None or above <= 0:
        return None
    rate = min(max(bounds.lower_pps * (1 + above), bounds.upper_pps), max_load)
    return rate if rate > bounds.lower_pps else None


def search_with_checks(run: Callable[[float], list[Bounds] | None],
                       check: Callable[[int, float], bool | None], min_load: float,
                       max_load: float, above: float, max_reopens: int) -> list[Checked]:
    """``run(min_load)`` searches (every goal) from ``min_load`` up; ``check(goal,
    rate)`` says whether a check trial at ``rate`` met the goal (None: not run).
    A goal whose check passed is searched again from its answer up, at most
    ``max_reopens`` times, and takes the new answer when it is higher; a goal
    whose answer did not rise is not checked again."""
    answers = [Checked(b, b.lower_pps) for b in run(min_load) or []]
    pending = list(range(len(answers)))
    for round_ in range(max_reopens + 1):
        passed = []
        for index in pending:
            rate = check_rate(answers[index].bounds, above, max_load)
            ok = check(index, rate) if rate is not None else None
            if ok is not None:
                answers[index].checks.append((rate, ok))
            if ok:
                passed.append(index)
        lowest = min((answers[i].bounds.lower_pps for i in passed), default=None)
        again = run(lowest) if lowest is not None and round_ < max_reopens else None
        if again is None:
            break
        pending = []
        for index in passed:
            answers[index].reopened += 1
            if (again[index].lower_pps or 0.0) > answers[index].bounds.lower_pps:
                answers[index].bounds = again[index]
                pending.append(index)
    return answers
