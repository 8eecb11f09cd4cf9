"""RFC 2544 throughput by binary search over % of line rate (NSB's ProxBinSearchProfile)."""

from __future__ import annotations

import math

from nsb import units
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import GENERATOR_LIMITED, PASS, Session, TrafficProfile, judge
from nsb.trial import Trial


class BinSearchProfile(TrafficProfile):
    """RFC 2544 throughput: binary search for the highest rate with loss <= tolerated."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "duration": common.DURATION,
            "tolerated_loss": common.TOLERATED_LOSS,
            "test_precision": {"type": "number", "exclusiveMinimum": 0, "default": 1.0},
            "lower_bound": {"type": "number", "minimum": 0, "maximum": 100, "default": 0.0},
            "upper_bound": {"type": "number", "exclusiveMinimum": 0, "maximum": 100,
                            "default": 100.0},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if options["lower_bound"] >= options["upper_bound"]:
            raise spec.options_where.error(
                f"lower_bound {options['lower_bound']} must be below upper_bound "
                f"{options['upper_bound']}", "lower_bound")

    def trials_per_frame(self, lower: float | None = None, upper: float | None = None) -> int:
        """Upper bound first, then halvings until the interval is within the precision."""
        lower = self.options["lower_bound"] if lower is None else lower
        upper = self.options["upper_bound"] if upper is None else upper
        width = upper - lower
        precision = self.options["test_precision"]
        return (0 if width <= precision else math.ceil(math.log2(width / precision))) + 1

    def execute(self, tg, session: Session) -> None:
        sizes = self.frame_sizes
        for position, frame in enumerate(sizes):
            if session.should_stop():
                return
            later = self.trials_per_frame() * (len(sizes) - position - 1)
            self._search(tg, session, frame, later)

    def _search(self, tg, session: Session, frame: int, later_trials: int) -> None:
        o = self.options
        ports = tg.tx_port_count
        lower, upper = o["lower_bound"], o["upper_bound"]
        rate = upper
        best = None
        limited_by = "none"
        trials = 0
        completed = False
        while not session.should_stop():
            trial = Trial(frame_size=frame, duration_s=float(o["duration"]), flows=o.get("flows"),
                          rate_pps=units.pct_to_pps(rate, frame, self.speed_gbps, ports))
            left = self.trials_per_frame(lower, upper) + later_trials
            index, result = session.run_trial(tg, trial, rate, lower, upper, left)
            trials += 1
            verdict, reason = judge(result, o["tolerated_loss"])
            if verdict == PASS:
                lower, best = rate, result
            else:
                upper = rate
                limited_by = "generator" if verdict == GENERATOR_LIMITED else "dut"
            session.trial_done(index, result, verdict, rate, lower, upper, reason)
            if verdict == PASS and rate >= o["upper_bound"]:
                limited_by = "upper_bound"
                completed = True
                break
            if upper - lower <= o["test_precision"]:
                completed = True
                break
            rate = (lower + upper) / 2.0
        if completed:  # an interrupted search has trials but no answer
            session.result_ready(frame, best, self.speed_gbps, ports, limited_by, trials,
                                 self.spec.type)
