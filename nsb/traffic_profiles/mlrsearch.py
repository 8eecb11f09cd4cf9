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
"""

from __future__ import annotations

from nsb import units
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common, latency_trials
from nsb.traffic_profiles.base import TrafficProfile, step_below
from nsb.traffic_profiles.measurer import (
    GENERATOR_LIMITED,
    PASS,
    Measurer,
    SearchPoint,
    SearchStopped,
    loss_judge,
)
from nsb.trial import Trial, TrialResult

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
        from MLRsearch import Config, MultipleLossRatioSearch

        ports = measurer.ports
        speed = self.speed_gbps
        goals = self.goals()
        search_goals = [self._search_goal(g) for g in goals]
        config = Config()
        config.goals = search_goals
        config.min_load = units.pct_to_pps(self.options["lower_bound"], frame, speed, ports)
        config.max_load = units.pct_to_pps(self.options["upper_bound"], frame, speed, ports)
        config.warmup_duration = self.options["warmup_duration"] or None
        config.search_duration_max = self.options["search_duration_max"]
        trials = _MlrMeasurer(self, measurer, frame, goals[0]["loss_ratio"] * 100.0,
                              frames_after)
        found = MultipleLossRatioSearch(config=config).search(measurer=trials,
                                                              debug=lambda _msg: None)
        for goal, search_goal in zip(goals, search_goals, strict=True):
            result = found[search_goal]
            lower = result.relevant_lower_bound
            upper = result.relevant_upper_bound
            lower_pps = float(lower) if lower is not None else 0.0
            best = trials.longest_at(lower_pps, goal["loss_ratio"]) if lower else None
            answered_by = "MLRsearch"
            if best is None:
                best = trials.fallback_proof(goal, config.min_load, config.max_load,
                                               self.options["fallback_final_trials"])
                if best is not None:
                    lower_pps, answered_by = best.trial.rate_pps, "nsb fallback proof"
            conditional = result.conditional_throughput
            limited_by = LimitedBy.UPPER_BOUND if upper is None else (
                LimitedBy.GENERATOR if trials.generator_limited_above(lower_pps)
                else LimitedBy.DUT)
            extra = {
                "goal": goal["name"], "goal_loss_ratio": goal["loss_ratio"],
                "answered_by": answered_by,
                "lower_bound_pps": lower_pps,
                "upper_bound_pps": float(upper) if upper is not None else None,
                "conditional_throughput_pps": float(conditional) if conditional else None,
                "final_trial_duration_s": goal["final_trial_duration"],
                "backed_by_full_trial": bool(best and best.trial.duration_s
                                             >= goal["final_trial_duration"]),
            }
            warnings = trials.lossy_at(lower_pps, goal) if best is not None else []
            if goal is goals[0] and self.options["latency_at"] and best is not None:
                swept = latency_trials.sweep(
                    measurer, frame, best.tx_rate_pps, self.options["latency_at"],
                    float(self.options.get("latency_duration") or goal["final_trial_duration"]),
                    self.options.get("flows"), speed, self.options["no_load_pps"])
                extra["latency_at_ndr_pct"] = swept.points
                warnings += swept.warnings
            measurer.result_ready(frame, best, speed, limited_by, len(trials.results),
                                  self.spec.type, extra=extra, warnings=tuple(warnings))


class _MlrMeasurer:
    """MLRsearch's measurer interface over nsb's: the trials of one search."""

    def __init__(self, profile: MlrSearchProfile, measurer: Measurer, frame: Frame,
                 tolerated_loss_pct: float, frames_after: int = 0):
        self.profile = profile
        self.frames_after = frames_after
        self.measurer = measurer
        self.frame = frame
        self.judge = loss_judge(tolerated_loss_pct)
        self.results: list[TrialResult] = []
        self.verdicts: list[str] = []

    def measure(self, intended_duration: float, intended_load: float):
        from MLRsearch import MeasurementResult

        self.measurer.check_stop()
        speed, ports = self.profile.speed_gbps, self.measurer.ports
        trial = Trial(frame_size=self.frame, rate_pps=float(intended_load),
                      duration_s=float(intended_duration),
                      flows=self.profile.options.get("flows"))
        pct = units.pps_to_pct(trial.rate_pps, self.frame, speed, ports)
        typical = self.profile.typical_search_s()
        spent = sum(r.trial.duration_s for r in self.results)
        left = max(typical - spent, trial.duration_s) + self.frames_after * typical
        done = self.measurer.measure(trial, SearchPoint(pct, 0.0, 100.0, seconds_left=left),
                                     self.judge)
        result = done.result
        self.results.append(result)
        self.verdicts.append(done.verdict)
        asked = result.intended_packets or round(trial.rate_pps * trial.duration_s)
        return MeasurementResult(intended_duration=trial.duration_s,
                                 intended_load=trial.rate_pps,
                                 offered_count=result.tx_packets,
                                 loss_count=max(0, result.lost_packets),
                                 intended_count=max(int(asked), 1),
                                 duration_with_overheads=result.elapsed_s)

    def fallback_proof(self, goal: dict, min_load: float, max_load: float,
                       budget: int) -> TrialResult | None:
        """Full-length trials from the highest rate that passed any trial down, a
        width (or to what a failed trial forwarded) per failure."""
        width, duration = goal["relative_width"], goal["final_trial_duration"]
        passed = [r.trial.rate_pps for r in self.results
                  if r.loss_pct <= goal["loss_ratio"] * 100.0]
        candidate = max(passed, default=max_load * (1 - width))
        for _ in range(budget):
            if candidate < min_load:
                return None
            self.measure(duration, candidate)
            result = self.results[-1]
            if result.loss_pct <= goal["loss_ratio"] * 100.0 and \
                    not result.generator_limited:
                return result
            candidate = step_below(candidate, result.rx_rate_pps, width)
        return None

    def lossy_at(self, load_pps: float, goal: dict) -> list[str]:
        """The answer's rate had trials that lost more than the goal's loss ratio (its
        exceed ratio tolerates some): said, never hidden behind the answer's loss."""
        at_rate = [r for r in self.results
                   if abs(r.trial.rate_pps - load_pps) <= 1e-6 * max(1.0, load_pps)]
        lossy = [r for r in at_rate if r.loss_pct > goal["loss_ratio"] * 100.0]
        if not lossy:
            return []
        worst = max(lossy, key=lambda r: r.loss_pct)
        return [f"{len(lossy)} of the {len(at_rate)} trials at the answer's rate "
                f"({load_pps:,.0f} pps) lost more than the goal's loss ratio "
                f"{goal['loss_ratio']:g} (the worst {worst.loss_pct:.4g}% in "
                f"{worst.trial.duration_s:g} s); MLRsearch's exceed ratio "
                f"{goal['exceed_ratio']:g} accepts that"]

    def longest_at(self, load_pps: float, loss_ratio: float) -> TrialResult | None:
        """The longest trial at ``load_pps`` that met the loss ratio (backs the answer)."""
        matching = [r for r in self.results
                    if abs(r.trial.rate_pps - load_pps) <= 1e-6 * max(1.0, load_pps)
                    and r.loss_pct <= loss_ratio * 100.0]
        return max(matching, key=lambda r: r.trial.duration_s, default=None)

    def generator_limited_above(self, load_pps: float) -> bool:
        above = [v for r, v in zip(self.results, self.verdicts, strict=True)
                 if r.trial.rate_pps > load_pps and v != PASS]
        return bool(above) and all(v == GENERATOR_LIMITED for v in above)
