"""PLRsearch (FD.io CSIT): the critical load, the offered load a DUT forwards on average
at a target loss ratio, estimated from trials that get longer one after the other.

As CSIT's PLRsearch: trial n lasts ``trial_duration_per_trial`` x (``trial_number_offset``
+ n) seconds; the first trial is at the middle of the bounds, the second at the upper
one, the next two at the rate forwarded (as the loss target allows), then at the mean
of the two fits' estimates, pulled up towards the loads that lost at the target after
trials that did not. Frames the generator did not send count as lost. After every
trial both fits' posteriors (nsb.traffic_profiles.plr_integrator over
nsb.traffic_profiles.plr_fit) give the log of the critical load's mean and variance;
they are combined as CSIT combines them, sent as a PlrEstimate event, and the search
ends when its traffic time (``timeout_s``) or ``max_trials`` is spent.

The estimate never leaves the bounds: an estimate that reaches one is limited by it
(``upper_bound``, ``lower_bound``), and one the generator's own limit sets (it sent
less than asked at loads the estimate reaches) is limited by the generator and no
higher than what it sent. Unlike CSIT, whose estimate lags a trial (it integrates
while the next trial runs), nsb integrates after each trial, with it.
"""

from __future__ import annotations

import math

from nsb import units
from nsb.events import PlrEstimate, Verdict
from nsb.frames import Frame
from nsb.traffic_profiles import common, plr_fit
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.traffic_profiles.plr_state import Estimate, SearchState
from nsb.trial import Trial, TrialResult


class PlrSearchProfile(TrafficProfile):
    """Probabilistic loss ratio search: critical load and its spread per frame size."""

    # trials of lengths of its own: no "duration" option
    BASE_OPTIONS = ("packet_sizes", "imix", "interface_speed_gbps", "flows")

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "target_loss_ratio": {"description": "the loss ratio (lost / sent) whose load is "
                                                 "searched",
                                  "type": "number", "exclusiveMinimum": 0, "maximum": 0.5,
                                  "default": 1e-7},
            "trial_duration_per_trial": {"description": "trial n lasts (trial_number_offset + "
                                                        "n) times this, seconds",
                                         "type": "number", "exclusiveMinimum": 0,
                                         "default": 1.0},
            "trial_number_offset": {"description": "added to the trial number for its "
                                                   "duration (CSIT: 50 with 0.1 s per trial: "
                                                   "5.1 s, 5.2 s, ...)",
                                    "type": "integer", "minimum": 0, "default": 0},
            "timeout_s": {"description": "seconds of traffic per frame size: the search "
                                         "ends before a trial would go beyond",
                          "type": "number", "exclusiveMinimum": 0, "default": 1800},
            "max_trials": {"description": "the search ends after this many trials",
                           "type": "integer", "minimum": 2},
            "lower_bound": {**common.positive_lower_bound(1.0),
                            "description": "lowest load tried, in % of line rate"},
            "upper_bound": common.UPPER_BOUND,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
        },
    }

    def execute(self, measurer: Measurer) -> None:
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            self._search(measurer, frame)

    def _bounds(self, frame: Frame, ports: int) -> tuple[float, float]:
        o = self.options
        return (units.pct_to_pps(o["lower_bound"], frame, self.speed_gbps, ports),
                units.pct_to_pps(o["upper_bound"], frame, self.speed_gbps, ports))

    def _search(self, measurer: Measurer, frame: Frame) -> None:
        o = self.options
        per_trial = float(o["trial_duration_per_trial"])
        state = SearchState(*self._bounds(frame, measurer.ports), float(o["target_loss_ratio"]))
        load, spent, trials_before = state.first_load(), 0.0, measurer.trial_count
        while not measurer.should_stop():
            number = len(state.results) + 1
            duration = per_trial * (o["trial_number_offset"] + number)
            if state.results and (spent + duration > o["timeout_s"] or
                                  number > o.get("max_trials", math.inf)):
                break
            result = self._trial(measurer, frame, load, duration, state, spent)
            spent += duration
            estimate = state.add(result)
            measurer.emit(PlrEstimate(
                measurer.task_id, measurer.scenario, trial_index=measurer.trial_count - 1,
                frame_size=frame, target_loss_ratio=state.ratio, load_pps=result.trial.rate_pps,
                duration_s=duration, lost_packets=state.observations[-1].lost,
                estimate_pps=estimate.mean, stdev_pps=estimate.stdev,
                fits={name: (math.exp(f.mean), math.exp(f.mean) * math.sqrt(f.variance))
                      for name, f in state.fits.items()}))
            load = state.next_load()
        if state.last is not None:
            self._answer(measurer, frame, state, measurer.trial_count - trials_before)

    def _trial(self, measurer: Measurer, frame: Frame, load: float, duration: float,
               state: SearchState, spent: float) -> TrialResult:
        o = self.options
        trial = Trial(frame_size=frame, rate_pps=load, duration_s=duration,
                      flows=o.get("flows"), latency=False)
        pct = units.pps_to_pct(load, frame, self.speed_gbps, measurer.ports)
        to_pct = units.pps_to_pct(1.0, frame, self.speed_gbps, measurer.ports)
        spread = state.last
        low = (spread.mean - spread.stdev) * to_pct if spread else pct
        high = (spread.mean + spread.stdev) * to_pct if spread else pct
        at = SearchPoint(pct, low, high, seconds_left=max(duration, o["timeout_s"] - spent))

        def judge(result: TrialResult) -> tuple[Verdict, str]:
            counted = plr_fit.observation(result.trial.rate_pps, result.trial.duration_s,
                                          result.tx_packets, result.rx_packets)
            ratio = counted.lost / counted.intended
            unsent = f", {counted.unsent:,} of them unsent" if counted.unsent else ""
            if ratio <= state.ratio:
                return Verdict.PASS, f"loss ratio {ratio:.3g} <= target {state.ratio:g}"
            verdict = Verdict.GENERATOR_LIMITED if result.generator_limited and \
                result.lost_packets <= 0 else Verdict.FAIL
            return verdict, f"loss ratio {ratio:.3g} > target {state.ratio:g}{unsent}"

        return measurer.measure(trial, at, judge, why="PLRsearch").result

    def _answer(self, measurer: Measurer, frame: Frame, state: SearchState,
                trials: int) -> None:
        estimate, limited_by, reason = state.answer()
        measurer.result_ready(
            frame, state.nearest_below(estimate.mean), self.speed_gbps, limited_by, trials,
            self.spec.type, reason=reason, answer_pps=estimate.mean,
            loss_pct=100.0 * state.ratio, evidence_of=state.evidence(),
            extra={"plr_estimate_pps": estimate.mean, "plr_stdev_pps": estimate.stdev,
                   "target_loss_ratio": state.ratio,
                   "trial_number_offset": self.options["trial_number_offset"],
                   "plr_fits": {name: {"estimate_pps": math.exp(f.mean),
                                       "log_stdev": math.sqrt(f.variance),
                                       "effective_samples": f.effective_samples}
                                for name, f in state.fits.items()}})


__all__ = ["Estimate", "PlrSearchProfile"]
