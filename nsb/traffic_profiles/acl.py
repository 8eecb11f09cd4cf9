"""Repeated trials at one load (NSB's ProxACLProfile): a sample per trial, for as long
as the runner allows.

NSB's ACL profile sends at ``upper_bound`` % of line rate again and again, one
sample per ``duration``-long trial, until the runner ends the run (its sample
file tolerates 100 % loss: what it reports is how much an ACL VNF forwards under
that load). Like NSB's, it works on the first frame size until the runner stops
it (the next sizes only run if the runner leaves time, which a Duration runner
does not); an Iteration runner would never stop it, so ``attempts`` (NSB's: how
many times a frame size is tried at that load) or ``max_trials`` (its nsb name)
bounds it, and the next frame size follows. The result of a frame size is its
last trial, with the median forwarding rate over every trial
(``forwarding_rate_pps``).
"""

from __future__ import annotations

import statistics

from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import LIMITED_BY, PASS, Measurer, SearchPoint, loss_judge


class AclProfile(TrafficProfile):
    """ACL: trials at upper_bound % of line rate until the runner stops (NSB's ProxACLProfile)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "duration": {**common.DURATION, "default": 5},
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "lower_bound": {"description": "NSB's; trials run at upper_bound",
                            "type": "number", "minimum": 0, "maximum": 100},
            "upper_bound": common.UPPER_BOUND,
            "test_precision": {"description": "NSB's; accepted as its sample files write it",
                               "type": "number"},
            "step_value": {"description": "NSB's; accepted as its sample files write it",
                           "type": "number"},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            "max_trials": {"description": "stop a frame size after this many trials (bounds "
                                          "an Iteration runner)",
                           "type": "integer", "minimum": 1},
            "attempts": {"description": "NSB's name of max_trials: trials per frame size at "
                                        "upper_bound",
                         "type": "integer", "minimum": 1},
        },
    }

    def execute(self, measurer: Measurer) -> None:
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            self._repeat(measurer, frame)

    def _repeat(self, measurer: Measurer, frame: Frame) -> None:
        o = self.options
        pct = float(o["upper_bound"])
        trial = self.trial_at_pct(frame, pct, measurer.ports)
        judge = loss_judge(o["tolerated_loss_pct"])
        results, verdict, before = [], PASS, measurer.trial_count
        limit = o.get("max_trials", o.get("attempts"))
        while not measurer.should_stop() and (limit is None or len(results) < limit):
            left = (limit - len(results) - 1) if limit else 0
            done = measurer.measure(trial, SearchPoint.single(pct, left), judge,
                                    why=f"sample {len(results) + 1}")
            verdict = done.verdict
            results.append(done.result)
        if not results:
            return
        limited_by = LIMITED_BY.get(verdict, LimitedBy.NONE)
        measurer.result_ready(frame, results[-1] if verdict == PASS else None, self.speed_gbps,
                              limited_by, measurer.trial_count - before, self.spec.type,
                              extra={"forwarding_rate_pps": statistics.median(
                                 r.rx_rate_pps for r in results), "samples": len(results)})
