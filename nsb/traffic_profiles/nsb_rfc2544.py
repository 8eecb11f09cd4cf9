"""NSB's TRex RFC 2544 search (``RFC2544Profile``), trial by trial as NSB runs it.

NSB's RFC2544Profile (``rfc2544.py``, ``get_drop_percentage``) starts at
``frame_rate`` % of line rate, with the interval [0, frame_rate]. After each
trial it compares the drop percentage (``|out - in| / out``, over all ports)
with ``allowed_drop_rate: "low - high"`` (``Rfc2544ResourceHelper``): above high
lowers the interval's top to the rate, below low raises its bottom to it, in
between is the answer. The next rate is the middle of the interval (rounded
to 5 decimals); the search ends at the answer, or when the next rate would be
less than ``resolution`` % from the last (IXIA's RFC 2544 profile and later
NSB: NSB's TRex profile otherwise bisects until the runner stops it).

nsb reports, per frame size (the mix the packet definitions give), the
fastest trial that dropped at most ``high`` %, as every profile reports its
answer (``ResultReady``).
"""

from __future__ import annotations

import math
from dataclasses import replace

from nsb import units
from nsb.events import LimitedBy, Verdict
from nsb.traffic_profiles.measurer import LIMITED_BY, PASS, Measurer, SearchPoint
from nsb.traffic_profiles.nsb_trex_base import (
    DEFINITIONS,
    SCHEMA_PIECES,
    NsbTrexProfile,
    drop_judge,
    drop_pct,
)
from nsb.trial import TrialResult

DEFAULT_RESOLUTION_PCT = 0.1  # NSB's Rfc2544ResourceHelper.DEFAULT_RESOLUTION


class Rfc2544Profile(NsbTrexProfile):
    """NSB's RFC2544Profile: binary search from frame_rate % by allowed_drop_rate, to resolution."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "frame_rate": {"description": "% of line rate; null (NSB's template without "
                                          "extra_args) is 100",
                           "anyOf": [
                {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
                {"type": "string", "pattern": r"^\s*([0-9]*\.[0-9]+|[0-9]+)\s*%?\s*$"},
                {"type": "null"}], "default": 100},
            "resolution": {"description": "the search stops when its interval is this narrow, in %"
                                          " of line rate",
                           "type": "number", "exclusiveMinimum": 0,
                           "default": DEFAULT_RESOLUTION_PCT},
            **SCHEMA_PIECES,
        },
        "patternProperties": DEFINITIONS,
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.start_pct, _ = self.parse_rate("%")
        if self.start_pct > 100:
            raise spec.options_where.error(
                f"frame_rate {self.start_pct:g} is above 100 (% of line rate)", "frame_rate")

    def trials_left(self, lower: float, upper: float) -> int:
        """Trials until the interval is narrower than the resolution (at most)."""
        width = upper - lower
        resolution = self.options["resolution"]
        return 1 + (math.ceil(math.log2(width / resolution)) if width > resolution else 0)

    def execute(self, measurer: Measurer) -> None:
        packets = self.offered_packets(measurer.ports)
        rate, lower, upper = self.start_pct, 0.0, self.start_pct
        best: tuple[float, TrialResult] | None = None
        limited_by = LimitedBy.NONE
        trials_before = measurer.trial_count
        judge = drop_judge(self.drop_high_pct)
        while not measurer.should_stop():
            at = SearchPoint(rate, lower, upper, self.trials_left(lower, upper))
            trial = self.trial(units.pct_to_pps(rate, self.frame, self.speed_gbps,
                                                measurer.ports), packets)
            done = measurer.measure(trial, at, judge, after=_narrowed(at))
            found = False
            if done.verdict != PASS:
                upper, limited_by = rate, LIMITED_BY[done.verdict]
            else:
                best = (rate, done.result)
                if drop_pct(done.result) < self.drop_low_pct:
                    lower = rate
                else:
                    found = True  # within the allowed drop rate: NSB's answer
            following = round((upper + lower) / 2.0, 5)
            if found or abs(following - rate) < self.options["resolution"]:
                self._answer(measurer, best, limited_by, measurer.trial_count - trials_before)
                return
            rate = following

    def _answer(self, measurer: Measurer, best: tuple[float, TrialResult] | None,
                limited_by: LimitedBy, trials: int) -> None:
        extra: dict = {"allowed_drop_rate_pct": [self.drop_low_pct, self.drop_high_pct],
                       "resolution_pct": self.options["resolution"],
                       "start_rate_pct": self.start_pct}
        result = None
        if best is not None:
            rate, result = best
            extra.update({"nsb_rate_pct": rate, "drop_pct": drop_pct(result)})
            if rate >= self.start_pct:
                limited_by = LimitedBy.UPPER_BOUND
            if self.options["correlated_traffic"]:
                # NSB counts the reflected traffic too: its Throughput is twice what came in
                extra["correlated_throughput_fps"] = 2 * result.rx_rate_pps
        measurer.result_ready(self.frame, result, self.speed_gbps, limited_by, trials,
                              self.spec.type, extra=extra)


def _narrowed(at: SearchPoint):
    """The interval after a verdict: a failure lowers its top, a pass raises its bottom."""
    def after(verdict: Verdict) -> SearchPoint:
        if verdict != PASS:
            return replace(at, upper_pct=at.rate_pct)
        return replace(at, lower_pct=at.rate_pct)
    return after
