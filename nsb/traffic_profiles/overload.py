"""Overload recovery: a steady rate (by default 75 % of the NDR), raised by
``overload_factor`` (2: 150 % of the NDR) for ``overload_s`` in the middle of the
trial, then the steady rate again; how long after the overload frames were still lost,
and how long until latency was back within ``latency_margin_pct`` of its level before.
The trial is read every ``interval_s`` (its timeline kept like a soak's); N trials give
the mean and spread; one that does not recover within ``recovery_limit_s`` fails."""

from __future__ import annotations

import time

from nsb.intervals import IntervalSample
from nsb.traffic_profiles.judges import FAIL, PASS
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.overload_timeline import Recovery, analyse, record
from nsb.traffic_profiles.reset_time import ResetTimeProfile, not_happened, not_steady
from nsb.traffic_profiles.reset_timeline import spread
from nsb.trial import TrialResult

PROPERTIES = {k: v for k, v in ResetTimeProfile.OPTIONS_SCHEMA["properties"].items()
              if k != "event"}


class OverloadRecoveryProfile(ResetTimeProfile):
    """A steady rate, an overload of known length, and the time to recover from it."""

    OPTIONS_SCHEMA = {
        **ResetTimeProfile.OPTIONS_SCHEMA,
        "properties": {
            **PROPERTIES,
            "ndr_pct": {**PROPERTIES["ndr_pct"], "default": 75},
            "latency": {**PROPERTIES["latency"], "default": True},
            "overload_factor": {"description": "the overload's rate over the steady one (2: "
                                               "150 % of the NDR from 75 %)",
                                "type": "number", "exclusiveMinimum": 1, "maximum": 100,
                                "default": 2},
            "overload_s": {"description": "seconds of overload", "type": "number",
                           "exclusiveMinimum": 0, "default": 2},
            "latency_margin_pct": {"description": "latency is back when every reading's mean "
                                                  "is within this % of its mean before (and "
                                                  "of the readings' own spread then)",
                                   "type": "number", "minimum": 0, "default": 10},
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        end = options["event_at_s"] + options["overload_s"]
        if end >= options["duration"]:
            raise spec.options_where.error(
                f"the overload ends {end:g} s into the trial, not before its end at "
                f"{options['duration']:g} s: nothing would show the recovery", "overload_s")

    ANSWER_KEY = "overload"  # nsb.report.overload_table
    WHAT = "overload recovery"

    def answer(self, found: list, pps: float) -> dict:
        return summary(found, pps, self.options)

    def event(self, measurer: Measurer):
        o = self.options

        def overload() -> None:
            measurer.generator.scale_rate(float(o["overload_factor"]))
            try:
                time.sleep(float(o["overload_s"]))
            finally:
                measurer.generator.scale_rate(1.0)

        return overload, {"type": "overload"}, float(o["event_at_s"])

    def judged(self, result: TrialResult, intervals: list[IntervalSample], happened):
        return _judged(result, intervals, happened, self.options)


def _judged(result: TrialResult, intervals: list[IntervalSample], happened,
            o: dict) -> tuple:
    """The trial's verdict, its reason and its recovery (a list of one, or none)."""
    if failed := not_happened(happened, "overload"):
        return failed
    recovery = analyse(intervals, happened.start_s, happened.end_s, o["warmup_s"],
                       o["latency_margin_pct"])
    if unknown := not_steady(result, recovery.lost_before, recovery.sent_before, o,
                             "overload"):
        return unknown
    limit = o["recovery_limit_s"]

    def too_late(seconds: float | None) -> bool:
        return seconds is None or seconds > limit

    late = [what for what, is_late in (
        ("frames were lost", too_late(recovery.loss_recovery_s)),
        ("latency was high", recovery.latency_before_us is not None
         and too_late(recovery.latency_recovery_s))) if is_late]
    if late:
        return FAIL, f"not recovered: {' and '.join(late)} {limit:g} s after the overload", \
            [recovery]
    latency = "" if recovery.latency_recovery_s is None else \
        f", latency back within {o['latency_margin_pct']:g} % after " \
        f"{recovery.latency_recovery_s:.3f} s"
    return PASS, (f"{recovery.lost_in_overload:,} frames lost in the overload; no more lost "
                  f"{recovery.loss_recovery_s:.3f} s after it{latency}"), [recovery]


def summary(indexed: list[tuple[int, Recovery]], pps: float, o: dict) -> dict:
    """The answer: each trial's recovery (with its index), the mean and spread of both
    times."""
    found = [x for _, x in indexed]

    def values(key: str) -> list[float]:
        return [getattr(x, key) for x in found if getattr(x, key) is not None]

    loss = spread(values("loss_recovery_s"))
    latency = spread(values("latency_recovery_s"))
    return {"steady_pps": pps, "overload_pps": pps * o["overload_factor"],
            "overload_s": o["overload_s"], "latency_margin_pct": o["latency_margin_pct"],
            "trials": [{"trial_index": index, **record(x)} for index, x in indexed],
            "loss_recovery_s": loss,
            "latency_recovery_s": latency,
            "recovered": bool(found) and all(x.recovered for x in found),
            "overload_recovery_s": max(loss.get("mean") or 0.0, latency.get("mean") or 0.0)
            if found else None}
