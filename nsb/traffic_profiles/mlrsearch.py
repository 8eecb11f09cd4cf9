"""MLRsearch (FD.io CSIT, draft-ietf-bmwg-mlrsearch): NDR and PDR in one search.

Short trials find the region, full-length trials decide at the final bounds,
and an exceed ratio tolerates rare noisy trials. The search itself is the
MLRsearch library; this profile feeds it trials through any generator's
run_trial and turns its bounds into results.

When MLRsearch ends without a lower bound for a goal (every full-length trial
it ran lost frames, as on a DUT that stalls now and then at any rate), the
profile still answers: full-length trials from the highest rate any trial
passed, each failure a width lower (or lower still, to what it forwarded),
for at most ``fallback_final_trials``. Such a result says ``answered_by:
nsb fallback proof``.

MLRsearch takes one full-length trial that lost frames as an upper bound for
good (with the duration sum equal to the final trial duration one trial decides
a load, whatever the exceed ratio), so one stall or loss burst far below the
capacity caps its answer there (``mlr_reopen``). Each answer is therefore checked: short
trials ``check_above_pct`` above it; if one meets the goal, MLRsearch searches
again from the answer up (``max_reopens`` times), and the result says so
(``checks_above``, ``reopened``, a warning naming the lossy trials below it).
"""

from __future__ import annotations

import time

from nsb import units
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common, latency_trials
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchStopped
from nsb.traffic_profiles.mlr_reopen import Bounds, Checked, search_with_checks
from nsb.traffic_profiles.mlr_trials import MlrTrials

GOAL_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_]+$"},
        "loss_ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.0},
        "exceed_ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
        "relative_width": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                           "default": 0.005},
        "initial_trial_duration": {"type": "number", "exclusiveMinimum": 0, "default": 1.0},
        "final_trial_duration": {"type": "number", "exclusiveMinimum": 0, "default": 60.0},
        "duration_sum": {"type": "number", "exclusiveMinimum": 0, "default": 60.0},
        "preceding_targets": {"type": "integer", "minimum": 0, "default": 2},
        "expansion_coefficient": {"type": "integer", "minimum": 1, "default": 2},
    },
}

# RFC 2544-equivalent NDR (one 60 s zero-loss trial decides) and a 0.5% PDR
DEFAULT_GOALS = [{"name": "NDR", "loss_ratio": 0.0}, {"name": "PDR", "loss_ratio": 0.005}]


class MlrSearchProfile(TrafficProfile):
    """MLRsearch: NDR and PDR together, short trials first, full-length trials at the bounds."""

    # trials of lengths of its own: no "duration" option
    BASE_OPTIONS = ("packet_sizes", "imix", "interface_speed_gbps", "flows")

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "lower_bound": common.positive_lower_bound(0.1),
            "upper_bound": common.UPPER_BOUND,
            "goals": {"description": "MLRsearch's goals (default: NDR at loss_ratio 0 and PDR at "
                                     "0.005)",
                      "type": "array", "minItems": 1, "items": GOAL_SCHEMA,
                      "default": DEFAULT_GOALS},
            "warmup_duration": {"type": "number", "minimum": 0, "default": 0.0},
            "search_duration_max": {"description": "seconds the search may take",
                                    "type": "number", "exclusiveMinimum": 0,
                                    "default": 86400.0},
            "flows": common.FLOWS,
            "latency_at": common.LATENCY_AT,
            "no_load_pps": common.NO_LOAD,
            "latency_duration": {"description": "seconds of a latency trial (default: the NDR "
                                                "goal's final trial duration)",
                                 "type": "number", "exclusiveMinimum": 0},
            "check_above_pct": {"description": "after MLRsearch answers, a trial of the goal's "
                                               "initial duration this far above the answer (no "
                                               "lower than its upper bound); if it meets the "
                                               "goal, MLRsearch searches again from the answer "
                                               "up (0: no check)",
                                "type": "number", "minimum": 0, "default": 5.0},
            "check_trials": {"description": "check trials per answer: the first that meets the "
                                            "goal re-opens the search",
                             "type": "integer", "minimum": 1, "default": 2},
            "max_reopens": {"description": "times the search may be re-opened above an answer "
                                           "whose check passed",
                            "type": "integer", "minimum": 0, "default": 2},
            "fallback_final_trials": {"description": "when MLRsearch finds no lower bound: "
                                                     "full-length trials from the highest rate any"
                                                     " trial passed",
                                      "type": "integer", "minimum": 0, "default": 60},
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        names = [g["name"] for g in options["goals"]]
        if len(set(names)) != len(names):
            raise spec.options_where.error("goal names must be unique", "goals")
        for index, goal in enumerate(self.goals()):
            try:
                self._search_goal(goal)
            except ValueError as exc:  # MLRsearch's own consistency checks
                raise spec.options_where.error(f"goal {goal['name']}: {exc}", "goals",
                                               index) from None

    @staticmethod
    def _search_goal(goal: dict):
        from MLRsearch import SearchGoal

        # fail_fast off: a lower bound that fails is a result (throughput 0), not a crash
        return SearchGoal(fail_fast=False, **{k: v for k, v in goal.items() if k != "name"})

    def goals(self) -> list[dict]:
        """Goals with every attribute filled from the defaults."""
        filled = []
        for goal in self.options["goals"]:
            full = {k: v["default"] for k, v in GOAL_SCHEMA["properties"].items()
                    if "default" in v}
            full.update(goal)
            filled.append(full)
        return filled

    def execute(self, measurer: Measurer) -> None:
        frames = self.frame_sizes
        for index, frame in enumerate(frames):
            if measurer.should_stop():
                return
            try:
                self._search(measurer, frame, len(frames) - index - 1)
            except SearchStopped:
                return

    def typical_search_s(self) -> float:
        """Traffic seconds one search usually takes (about 2.3 times the longer of
        each goal's final trial and duration sum, measured on simulated DUTs), capped
        by search_duration_max: the live line's time left."""
        typical = sum(2.3 * max(g["final_trial_duration"], g["duration_sum"])
                      for g in self.goals())
        return min(typical, self.options["search_duration_max"])

    def _search(self, measurer: Measurer, frame: Frame, frames_after: int = 0) -> None:
        goals = self.goals()
        search_goals = [self._search_goal(g) for g in goals]
        speed, ports = self.speed_gbps, measurer.ports
        min_load = units.pct_to_pps(self.options["lower_bound"], frame, speed, ports)
        max_load = units.pct_to_pps(self.options["upper_bound"], frame, speed, ports)
        trials = MlrTrials(self, measurer, frame, goals[0]["loss_ratio"] * 100.0, frames_after)
        deadline = time.monotonic() + self.options["search_duration_max"]
        runs: list[float] = []

        def run(lowest: float) -> list[Bounds] | None:
            runs.append(lowest)
            if len(runs) == 1:
                return self._library(trials, search_goals, lowest, max_load,
                                     self.options["search_duration_max"],
                                     self.options["warmup_duration"] or None)
            left = deadline - time.monotonic()
            if left <= 0 or lowest >= max_load:
                return None
            try:  # a re-opened search: the DUT is warm, the time left is what it may take
                return self._library(trials, search_goals, lowest, max_load, left, None)
            except RuntimeError as exc:
                if "takes too long" not in str(exc):
                    raise
                return None  # out of search_duration_max: the answers so far stand

        def check(index: int, rate: float) -> bool:
            return trials.check(rate, goals[index], self.options["check_trials"])

        answers = search_with_checks(run, check, min_load, max_load,
                                     self.options["check_above_pct"] / 100.0,
                                     self.options["max_reopens"])
        for goal, answer in zip(goals, answers, strict=True):
            self._result(measurer, frame, trials, goal, answer, (min_load, max_load),
                         goal is goals[0])

    @staticmethod
    def _library(trials: MlrTrials, search_goals: list, min_load: float, max_load: float,
                 seconds: float, warmup: float | None) -> list[Bounds]:
        """One run of the MLRsearch library from ``min_load`` up: each goal's bounds."""
        from MLRsearch import Config, MultipleLossRatioSearch

        config = Config()
        config.goals = search_goals
        config.min_load, config.max_load = min_load, max_load
        config.warmup_duration = warmup
        config.search_duration_max = seconds
        found = MultipleLossRatioSearch(config=config).search(measurer=trials,
                                                              debug=lambda _msg: None)

        def pps(value) -> float | None:
            return float(value) if value is not None else None

        return [Bounds(pps(found[g].relevant_lower_bound), pps(found[g].relevant_upper_bound),
                       pps(found[g].conditional_throughput)) for g in search_goals]

    def _result(self, measurer: Measurer, frame: Frame, trials: MlrTrials, goal: dict,
                answer: Checked, loads: tuple[float, float], first: bool) -> None:
        """One goal's result: the answer, the trial that backs it, its warnings."""
        lower, upper = answer.bounds.lower_pps, answer.bounds.upper_pps
        lower_pps = lower or 0.0
        best = trials.longest_at(lower_pps, goal["loss_ratio"]) if lower else None
        answered_by = "MLRsearch"
        if best is None:
            best = trials.fallback_proof(goal, *loads, self.options["fallback_final_trials"])
            if best is not None:
                lower_pps, answered_by = best.trial.rate_pps, "nsb fallback proof"
        limited_by = LimitedBy.UPPER_BOUND if upper is None else (
            LimitedBy.GENERATOR if trials.generator_limited_above(lower_pps)
            else LimitedBy.DUT)
        conditional = answer.bounds.conditional_pps
        extra = {
            "goal": goal["name"], "goal_loss_ratio": goal["loss_ratio"],
            "answered_by": answered_by,
            "lower_bound_pps": lower_pps, "upper_bound_pps": upper,
            "conditional_throughput_pps": conditional,
            "final_trial_duration_s": goal["final_trial_duration"],
            "backed_by_full_trial": bool(best and best.trial.duration_s
                                         >= goal["final_trial_duration"]),
            "checks_above": [{"rate_pps": r, "passed": ok} for r, ok in answer.checks],
            "reopened": answer.reopened,
        }
        warnings = trials.lossy_at(lower_pps, goal) if best is not None else []
        warnings += trials.reopen_warnings(answer, goal, lower_pps)
        if first and self.options["latency_at"] and best is not None:
            swept = latency_trials.sweep(
                measurer, frame, best.tx_rate_pps, self.options["latency_at"],
                float(self.options.get("latency_duration") or goal["final_trial_duration"]),
                self.options.get("flows"), self.speed_gbps, self.options["no_load_pps"])
            extra["latency_at_ndr_pct"] = swept.points
            warnings += swept.warnings
        measurer.result_ready(frame, best, self.speed_gbps, limited_by, len(trials.results),
                              self.spec.type, extra=extra, warnings=tuple(warnings))
