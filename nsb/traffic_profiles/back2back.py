"""RFC 2544 back-to-back frames (section 26.4; VSPerf's ``back2back``).

Per frame size, bursts at the maximum rate (line rate, or ``rate_pct``/``rate_pps``):
a binary search on the burst's length in frames finds the longest burst the DUT
forwards without losing a frame, to ``resolution_frames``. The search is one RFC
trial; it is repeated ``trials`` times (the RFC asks 50) and the result is their
mean, with min/max/stdev, in frames and in seconds of buffering at line rate
(frames / line-rate pps): how long the DUT absorbs traffic it cannot forward.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

from nsb import units
from nsb.events import LimitedBy, Verdict
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import PASS, Measurer, SearchPoint, receive_side_loss
from nsb.trial import Trial, TrialResult

RATE_TOLERANCE = 0.05  # a burst proven this much slower than asked is a warning


def burst_judge(result: TrialResult) -> tuple[Verdict, str]:
    """A burst passes when every frame of it was sent and came back; frames the
    generator's own receive path dropped are not the DUT's loss."""
    asked = result.trial.burst_frames or 0
    if result.lost_packets > 0 and result.lost_packets <= result.rx_missed_packets:
        return Verdict.GENERATOR_LIMITED, receive_side_loss(
            result, f"burst of {asked} frames: {result.lost_packets} lost")
    if result.lost_packets > 0:
        return Verdict.FAIL, f"burst of {asked} frames: {result.lost_packets} lost"
    if result.tx_packets < asked:
        return Verdict.GENERATOR_LIMITED, \
            f"the generator sent {result.tx_packets} of the burst's {asked} frames"
    if result.generator_limited:
        return Verdict.GENERATOR_LIMITED, \
            f"the generator sent the burst's {asked} frames slower than the rate asked " \
            f"({result.tx_rate_pps:,.0f} of {result.trial.rate_pps:,.0f} pps)"
    return Verdict.PASS, f"burst of {asked} frames forwarded without loss"


class BackToBackProfile(TrafficProfile):
    """Back-to-back: the longest loss-free burst at the maximum rate, per frame size."""

    NEEDS_BURSTS = True  # the generator must send exact bursts (TrafficGen.SENDS_BURSTS)

    # trials of lengths of its own: no "duration" option
    BASE_OPTIONS = ("packet_sizes", "imix", "interface_speed_gbps", "flows")

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            # the bursts' rate: RFC 2544 asks minimum inter-frame gaps (line rate)
            "rate_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 100,
                         "default": 100.0},
            "rate_pps": {"type": "number", "exclusiveMinimum": 0},
            # searches, each to the longest loss-free burst (RFC 2544: at least 50)
            "trials": {"type": "integer", "minimum": 1, "default": 5},
            # the longest burst tried: this many seconds at the rate (RFC 2544: a trial
            # of at least 2 s), or max_burst_frames
            "max_burst_s": {"type": "number", "exclusiveMinimum": 0, "default": 2.0},
            "max_burst_frames": {"type": "integer", "minimum": 1},
            # the search ends when the longest passing and the shortest failing burst
            # are this many frames apart
            "resolution_frames": {"type": "integer", "minimum": 1, "default": 1},
        },
    }

    def rate_pps(self, frame: Frame, ports: int) -> float:
        """The bursts' rate, summed over the sending ports."""
        if "rate_pps" in self.options:
            return float(self.options["rate_pps"])
        return units.pct_to_pps(self.options["rate_pct"], frame, self.speed_gbps, ports)

    def max_burst(self, frame: Frame, ports: int) -> int:
        """The longest burst tried, in frames."""
        if "max_burst_frames" in self.options:
            return int(self.options["max_burst_frames"])
        return max(1, round(self.rate_pps(frame, ports) * self.options["max_burst_s"]))

    def trials_per_search(self, longest: int) -> int:
        """The longest burst first, then halvings down to the resolution."""
        resolution = self.options["resolution_frames"]
        return 1 + max(0, math.ceil(math.log2(max(1, longest) / resolution)))

    def execute(self, measurer: Measurer) -> None:
        sizes = self.frame_sizes
        for position, frame in enumerate(sizes):
            if measurer.should_stop():
                return
            self._frame(measurer, frame, len(sizes) - position - 1)

    def _frame(self, measurer: Measurer, frame: Frame, later_sizes: int) -> None:
        ports, before = measurer.ports, measurer.trial_count
        rate, longest = self.rate_pps(frame, ports), self.max_burst(frame, ports)
        per_search = self.trials_per_search(longest)
        found: list[int] = []
        answers: list[TrialResult] = []  # each search's longest loss-free burst
        self._short = None  # why the first burst the generator fell short on did
        best: TrialResult | None = None
        limits: set[LimitedBy] = set()
        repeats = self.options["trials"]
        for repeat in range(repeats):
            left = per_search * (repeats - repeat - 1 + later_sizes * repeats)
            searched = self._search(measurer, frame, rate, longest, repeat, left)
            if searched is None:
                return  # interrupted: trials, but no answer
            frames_ok, result, limited_by = searched
            found.append(frames_ok)
            limits.add(limited_by)
            answers += [result] if result is not None else []
            if result is not None and (best is None or
                                       result.trial.burst_frames > best.trial.burst_frames):
                best = result
        limited_by = next((lim for lim in (LimitedBy.GENERATOR, LimitedBy.DUT)
                           if lim in limits), LimitedBy.UPPER_BOUND)
        line_pps = units.line_rate_pps(frame, self.speed_gbps, ports)
        summary = spread(found, line_pps)
        proven = min((sent_rate(r) for r in answers), default=None)
        summary.update(burst_rate_pps=rate, line_rate_pps=line_pps, max_burst_frames=longest,
                       resolution_frames=self.options["resolution_frames"],
                       burst_rate_proven_pps=proven)
        warnings = () if proven is None or proven >= rate * (1 - RATE_TOLERANCE) else (
            f"the loss-free bursts were sent at the rate asked ({rate:,.0f} pps) as far as the "
            f"generator's counters can tell: at least {proven:,.0f} pps (a burst shorter than "
            "the client can time is proven no faster)",)
        measurer.result_ready(
            frame, _at_burst_rate(best), self.speed_gbps, limited_by,
            measurer.trial_count - before, self.spec.type,
            extra={"back_to_back": summary, "back_to_back_frames": summary["mean_frames"],
                   "back_to_back_s": summary["mean_s"]}, reason=self._reason(limited_by),
            warnings=warnings)

    def _reason(self, limited_by: LimitedBy) -> str:
        """Why the answer is not longer, in words."""
        if limited_by == LimitedBy.GENERATOR and self._short is not None:
            return (f"{self._short}: the answer is bounded by what the generator and its "
                    "ports take in one burst")
        if limited_by == LimitedBy.UPPER_BOUND:
            return "the longest burst tried passed (max_burst_frames, max_burst_s)"
        return "longer bursts lost frames"

    def _search(self, measurer: Measurer, frame: Frame, rate: float, longest: int,
                repeat: int, later: int):
        """One RFC trial: (longest loss-free burst, its result, what ended it), or None
        when the runner stopped it. ``passed`` < the answer <= ``failed``-1."""
        passed, failed, best = 0, longest + 1, None
        limited_by = LimitedBy.UPPER_BOUND
        burst = longest
        pct = units.pps_to_pct(rate, frame, self.speed_gbps, measurer.ports)
        while True:
            if measurer.should_stop():
                return None
            left = self.trials_per_search(max(1, failed - passed)) - 1 + later
            trial = Trial(frame_size=frame, rate_pps=rate, duration_s=burst / rate,
                          flows=self.options.get("flows"), latency=False, burst_frames=burst)
            done = measurer.measure(trial, SearchPoint.single(pct, left), burst_judge,
                                    why=f"trial {repeat + 1}/{self.options['trials']}")
            if done.verdict == PASS:
                passed, best = burst, done.result
            else:  # the shortest failing burst so far: its side sets the limit
                failed = burst
                limited_by = LimitedBy.GENERATOR if done.verdict == Verdict.GENERATOR_LIMITED \
                    else LimitedBy.DUT
                if limited_by == LimitedBy.GENERATOR:
                    self._short = self._short or done.reason
            if failed - passed <= self.options["resolution_frames"] or failed > longest:
                return passed, best, limited_by
            burst = (passed + failed) // 2


def sent_rate(result: TrialResult) -> float:
    """The rate a burst is known to have been sent at, at least: by the generator's own
    counters (TRex: all frames out by ``known_within_s``), else its own clock."""
    return result.proven_tx_pps if result.proven_tx_pps is not None else result.tx_rate_pps


def spread(found: list[int], line_pps: float) -> dict:
    """The trials' longest loss-free bursts: each, and min/mean/max/stdev in frames and
    in seconds of buffering at line rate."""
    mean = statistics.fmean(found)
    stdev = statistics.stdev(found) if len(found) > 1 else 0.0
    frames_ = {"min_frames": min(found), "mean_frames": mean, "max_frames": max(found),
               "stdev_frames": stdev}
    seconds = {key.replace("_frames", "_s"): value / line_pps for key, value in frames_.items()}
    return {"trials": len(found), "bursts_frames": list(found), **frames_, **seconds}


def _at_burst_rate(result: TrialResult | None) -> TrialResult | None:
    """The longest loss-free burst as the frame size's result: its rate is the rate it
    was sent at (a burst's wall time is no measure of its rate)."""
    if result is None:
        return None
    rate = result.trial.rate_pps
    return replace(result, measured_tx_pps=rate, measured_rx_pps=rate)
