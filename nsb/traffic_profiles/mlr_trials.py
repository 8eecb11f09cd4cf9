"""The trials of one MLRsearch search: the library's measurer over nsb's, and
what the profile reads back from them (the trial backing an answer, lossy trials
at or below it, the checks above it, the fallback proof)."""

from __future__ import annotations

from nsb import units
from nsb.frames import Frame
from nsb.traffic_profiles.base import TrafficProfile, step_below
from nsb.traffic_profiles.measurer import (
    GENERATOR_LIMITED,
    PASS,
    Judge,
    Measurer,
    SearchPoint,
    loss_judge,
)
from nsb.traffic_profiles.mlr_reopen import Checked
from nsb.trial import Trial, TrialResult


class MlrTrials:
    """MLRsearch's measurer interface over nsb's: the trials of one search."""

    def __init__(self, profile: TrafficProfile, measurer: Measurer, frame: Frame,
                 tolerated_loss_pct: float, frames_after: int = 0):
        self.profile = profile
        self.frames_after = frames_after
        self.measurer = measurer
        self.frame = frame
        self.judge = loss_judge(tolerated_loss_pct)
        self.results: list[TrialResult] = []
        self.verdicts: list[str] = []
        self.checks: list[TrialResult] = []  # trials run above an answer to check it

    def measure(self, intended_duration: float, intended_load: float):
        """MLRsearch's ``AbstractMeasurer.measure``: one trial, judged by the first goal."""
        from MLRsearch import MeasurementResult

        result = self._run(float(intended_duration), float(intended_load), self.judge)
        asked = result.intended_packets or round(result.trial.rate_pps
                                                 * result.trial.duration_s)
        return MeasurementResult(intended_duration=result.trial.duration_s,
                                 intended_load=result.trial.rate_pps,
                                 offered_count=result.tx_packets,
                                 loss_count=max(0, result.lost_packets),
                                 intended_count=max(int(asked), 1),
                                 duration_with_overheads=result.elapsed_s)

    def check(self, rate_pps: float, goal: dict, count: int) -> bool:
        """Up to ``count`` trials of the goal's initial duration at ``rate_pps``, above
        its answer: True at the first that meets the goal's loss ratio (more than one,
        as a burst of loss in one of them looks just like overload). Check trials
        another goal ran at the same rate and duration count."""
        judge = loss_judge(goal["loss_ratio"] * 100.0)
        duration = float(goal["initial_trial_duration"])
        done = [r for r in self.checks if r.trial.duration_s == duration
                and abs(r.trial.rate_pps - rate_pps) <= 1e-9 * rate_pps]
        for _ in range(count - len(done)):
            done.append(self._run(duration, rate_pps, judge,
                                  f"check above {goal['name']}'s answer"))
            self.checks.append(done[-1])
            if judge(done[-1])[0] == PASS:
                return True
        return any(judge(r)[0] == PASS for r in done)

    def _run(self, duration_s: float, rate_pps: float, judge: Judge,
             why: str = "") -> TrialResult:
        self.measurer.check_stop()
        speed, ports = self.profile.speed_gbps, self.measurer.ports
        trial = Trial(frame_size=self.frame, rate_pps=rate_pps, duration_s=duration_s,
                      flows=self.profile.options.get("flows"))
        pct = units.pps_to_pct(trial.rate_pps, self.frame, speed, ports)
        typical = self.profile.typical_search_s()
        spent = sum(r.trial.duration_s for r in self.results)
        left = max(typical - spent, trial.duration_s) + self.frames_after * typical
        done = self.measurer.measure(trial, SearchPoint(pct, 0.0, 100.0, seconds_left=left),
                                     judge, why=why)
        self.results.append(done.result)
        self.verdicts.append(done.verdict)
        return done.result

    def reopen_warnings(self, answer: Checked, goal: dict, load_pps: float) -> list[str]:
        """What a re-opened search leaves below its answer (full-length trials that
        lost frames there), and a check above the answer that still passed."""
        said = []
        lossy = sorted(r.trial.rate_pps for r in self.results
                       if r.trial.rate_pps < load_pps * (1 - 1e-6)
                       and r.trial.duration_s >= goal["final_trial_duration"]
                       and r.loss_pct > goal["loss_ratio"] * 100.0)
        if answer.raised and lossy:
            said.append(f"{len(lossy)} full-length trials below the answer lost more than "
                        f"the goal's loss ratio {goal['loss_ratio']:g} (the lowest at "
                        f"{lossy[0]:,.0f} pps): a check above MLRsearch's first answer "
                        f"({answer.first_lower_pps:,.0f} pps) met the goal, so the search "
                        f"went on above it")
        if answer.last_check_passed:
            said.append(f"a check trial at {answer.checks[-1][0]:,.0f} pps, above the "
                        f"answer, met the goal (searches re-opened: {answer.reopened}): the "
                        f"DUT may forward more than the answer")
        return said

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
            result = self._run(float(duration), candidate, self.judge)
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
