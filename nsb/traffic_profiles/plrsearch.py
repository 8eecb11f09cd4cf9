"""PLRsearch (FD.io CSIT): the critical load, the offered load a DUT forwards on average
at a target loss ratio, estimated from trials that get longer one after the other.

After every trial both fitting functions' posteriors (nsb.traffic_profiles.plr_fit)
give a critical load with its standard deviation; the estimate is their mixture, sent
as a PlrEstimate event. The next trial is at the midpoint of the two fits' estimates,
pulled up towards the lowest load that lost at the target after trials without loss
(those say little about where loss starts). The search ends when its traffic time
(``timeout_s``) or ``max_trials`` is spent; the answer is the last estimate and spread.
"""

from __future__ import annotations

from nsb import units
from nsb.events import LimitedBy, PlrEstimate, ResultReady, Verdict
from nsb.frames import Frame
from nsb.traffic_profiles import common, plr_fit
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.trial import Trial, TrialResult


class PlrSearchProfile(TrafficProfile):
    """Probabilistic loss ratio search: critical load and its spread per frame size."""

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
            "trial_duration_per_trial": {"description": "trial n lasts n times this, seconds",
                                         "type": "number", "exclusiveMinimum": 0,
                                         "default": 1.0},
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
        ratio, per_trial = float(o["target_loss_ratio"]), float(o["trial_duration_per_trial"])
        min_rate, max_rate = self._bounds(frame, measurer.ports)
        state = SearchState(min_rate, max_rate, ratio)
        load, number, spent = (min_rate + max_rate) / 2, 0, 0.0
        best = last = None
        while not measurer.should_stop():
            number += 1
            duration = per_trial * number
            if spent + duration > o["timeout_s"] and number > 2:
                break
            result = self._trial(measurer, frame, load, duration, state, spent)
            spent += duration
            last = state.add(result)
            best = result
            measurer.emit(PlrEstimate(
                measurer.task_id, measurer.scenario, trial_index=measurer.trial_count - 1,
                frame_size=frame, target_loss_ratio=ratio, load_pps=result.trial.rate_pps,
                duration_s=duration, lost_packets=max(0, result.lost_packets),
                estimate_pps=last.mean, stdev_pps=last.stdev,
                fits={name: (e.mean, e.stdev) for name, e in state.fits.items()}))
            if o.get("max_trials") and number >= o["max_trials"]:
                break
            load = state.next_load(number, result)
        if last is not None:
            self._answer(measurer, frame, last, best, number, state)

    def _trial(self, measurer: Measurer, frame: Frame, load: float, duration: float,
               state: SearchState, spent: float) -> TrialResult:
        o = self.options
        trial = Trial(frame_size=frame, rate_pps=load, duration_s=duration,
                      flows=o.get("flows"), latency=False)
        pct = units.pps_to_pct(load, frame, self.speed_gbps, measurer.ports)
        spread = state.last_estimate
        to_pct = units.pps_to_pct(1.0, frame, self.speed_gbps, measurer.ports)
        low = (spread.mean - spread.stdev) * to_pct if spread else pct
        high = (spread.mean + spread.stdev) * to_pct if spread else pct
        at = SearchPoint(pct, low, high, seconds_left=max(duration, o["timeout_s"] - spent))

        def judge(result: TrialResult) -> tuple[Verdict, str]:
            lost = max(0, result.lost_packets) / max(1, result.tx_packets)
            if lost <= state.ratio:
                return Verdict.PASS, f"loss ratio {lost:.3g} <= target {state.ratio:g}"
            return Verdict.FAIL, f"loss ratio {lost:.3g} > target {state.ratio:g}"

        return measurer.measure(trial, at, judge, why="PLRsearch").result

    def _answer(self, measurer: Measurer, frame: Frame, last: plr_fit.Estimate,
                best: TrialResult, trials: int, state: SearchState) -> None:
        pps = last.mean
        measurer.emit(ResultReady(
            measurer.task_id, measurer.scenario, iteration=measurer.iteration,
            frame_size=frame, throughput_pps=pps, throughput_mbps=units.pps_to_mbps(pps, frame),
            line_rate_pct=units.pps_to_pct(pps, frame, self.speed_gbps, measurer.ports),
            loss_pct=100.0 * state.ratio, latency=None, limited_by=LimitedBy.NONE,
            trials=trials, profile=self.spec.type, tx_packets=best.tx_packets,
            rx_packets=best.rx_packets,
            extra={"plr_estimate_pps": pps, "plr_stdev_pps": last.stdev,
                   "target_loss_ratio": state.ratio,
                   "plr_fits": {n: {"estimate_pps": e.mean, "stdev_pps": e.stdev}
                                for n, e in state.fits.items()}},
            limited_reason=f"critical load at loss ratio {state.ratio:g}: "
                           f"{units.pps_text(pps)} +- {units.pps_text(last.stdev)}"))


class SearchState:
    """The trials so far, the fits' estimates, and where the next trial goes."""

    def __init__(self, min_rate: float, max_rate: float, ratio: float):
        self.min_rate, self.max_rate, self.ratio = min_rate, max_rate, ratio
        self.observations: list[plr_fit.Observation] = []
        self.fits: dict[str, plr_fit.Estimate] = {}
        self.last_estimate: plr_fit.Estimate | None = None
        self.zeros = 0  # trials in a row without loss
        self.lossy: list[float] = []  # loads that lost at or above the target ratio

    def add(self, result: TrialResult) -> plr_fit.Estimate:
        trial = result.trial
        lost = max(0, result.lost_packets)
        self.observations.append(plr_fit.Observation(trial.rate_pps, trial.duration_s, lost))
        self.zeros = 0 if lost else self.zeros + 1
        if lost >= self.ratio * max(1, result.tx_packets):
            self.lossy.append(trial.rate_pps)
        self.fits = {name: plr_fit.estimate(fit, self.observations, self.ratio,
                                            self.max_rate)
                     for name, fit in plr_fit.FITS.items()}
        self.last_estimate = plr_fit.combined(list(self.fits.values()))
        return self.last_estimate

    def next_load(self, number: int, result: TrialResult) -> float:
        """The second trial at the upper bound, the next two at the rate forwarded
        (as the loss target allows), then the fits' midpoint."""
        if number == 1:
            load = self.max_rate
        elif number <= 3:
            load = result.rx_packets / result.trial.duration_s / (1 - self.ratio)
        else:
            load = sum(e.mean for e in self.fits.values()) / len(self.fits)
            lowest = min(self.lossy, default=None)
            if self.zeros and lowest is not None and lowest > load:
                load += (lowest - load) * (1 - 0.5 ** self.zeros)
        return min(self.max_rate, max(self.min_rate, load))
