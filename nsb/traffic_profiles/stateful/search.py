"""A search over a load that is not a rate of frames (connections per second, sessions):
RFC 2544's binary search from the upper bound down to a relative precision, or FD.io
CSIT's MLRsearch library, as CSIT searches NAT44 CPS with it. Each trial is asked of
``measure(load, duration_s)`` and judged there; the search returns the fastest trial
that passed and what ended it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nsb.events import LimitedBy, Verdict
from nsb.traffic_profiles.measurer import Measurement

Measure = Callable[[float, float, float, float], Measurement]  # load, lower, upper, seconds


@dataclass(frozen=True)
class Found:
    best: Measurement | None
    limited_by: LimitedBy
    trials: list[Measurement]


def run(measure: Measure, options: dict, lower: float, upper: float, should_stop,
        data: bool = False) -> Found | None:
    """The profile's search (``options``: its search, precision_pct, duration and
    tolerated_loss_pct) over loads in [lower, upper]."""
    precision = options["precision_pct"] / 100.0
    if options["search"] == "mlrsearch":
        return mlrsearch(measure, lower, upper, precision, options["duration"],
                         options["tolerated_loss_pct"], data=data)
    return bisect(measure, lower, upper, precision, options["duration"], should_stop)


def bisect(measure: Measure, lower: float, upper: float, precision: float,
           duration_s: float, should_stop) -> Found | None:
    """The upper bound first, then halvings until the interval is within ``precision``
    (relative to its top); None when stopped."""
    trials: list[Measurement] = []
    best, limited_by, load = None, LimitedBy.NONE, upper
    while not should_stop():
        done = measure(load, lower, upper, duration_s)
        trials.append(done)
        if done.verdict == Verdict.PASS:
            best, lower = done, load
            if load >= upper:
                return Found(best, LimitedBy.UPPER_BOUND, trials)
        else:
            upper = load
            limited_by = LimitedBy.DUT if done.verdict == Verdict.FAIL else \
                LimitedBy.GENERATOR
        if upper - lower <= precision * upper:
            return Found(best, limited_by, trials)
        load = (lower + upper) / 2.0
    return None


def mlrsearch(measure: Measure, lower: float, upper: float, precision: float,
              duration_s: float, loss_pct: float, data: bool = False) -> Found:
    """MLRsearch's NDR (or PDR at ``loss_pct``) over loads in [lower, upper]: short
    trials first, trials of ``duration_s`` at the bounds, its relative width; the loss
    is of connections, or (``data``) of the sessions' datagrams of data."""
    from MLRsearch import Config, MeasurementResult, MultipleLossRatioSearch, SearchGoal

    trials: list[Measurement] = []

    class _Trials:
        def measure(self, intended_duration: float, intended_load: float):
            done = measure(float(intended_load), lower, upper, float(intended_duration))
            trials.append(done)
            c = done.result.sessions
            offered, lost, intended = ((c.data.get("sent", 0), c.data_lost,
                                        c.data.get("intended", 0)) if data
                                       else (c.attempted, c.lost, c.intended))
            if data and done.verdict == Verdict.FAIL and not lost:  # sessions failed
                lost = max(1, offered)
            return MeasurementResult(intended_duration=float(intended_duration),
                                     intended_load=float(intended_load),
                                     offered_count=offered, loss_count=lost,
                                     intended_count=max(intended, 1),
                                     duration_with_overheads=done.result.elapsed_s)

    goal = SearchGoal(loss_ratio=loss_pct / 100.0, exceed_ratio=0.5, relative_width=precision,
                      initial_trial_duration=min(1.0, duration_s),
                      final_trial_duration=duration_s, duration_sum=duration_s,
                      fail_fast=False)
    config = Config()
    config.goals, config.min_load, config.max_load = [goal], lower, upper
    found = MultipleLossRatioSearch(config=config).search(measurer=_Trials(),
                                                          debug=lambda _msg: None)[goal]
    bound = found.relevant_lower_bound
    def load_of(t):
        return t.result.trial.rate_pps if data else t.result.trial.sessions.cps

    passing = [t for t in trials if t.verdict == Verdict.PASS and bound is not None
               and abs(load_of(t) - float(bound)) <= 1e-6 * float(bound)]
    best = max(passing, key=lambda t: t.result.trial.duration_s, default=None)
    failed = [t for t in trials if t.verdict != Verdict.PASS
              and load_of(t) > (float(bound) if bound is not None else 0.0)]
    limited_by = LimitedBy.UPPER_BOUND if found.relevant_upper_bound is None else \
        LimitedBy.GENERATOR if failed and all(t.verdict == Verdict.GENERATOR_LIMITED
                                              for t in failed) else LimitedBy.DUT
    return Found(best, limited_by, trials)
