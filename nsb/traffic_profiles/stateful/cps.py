"""Connections per second: the highest rate of new connections at which no more than
the tolerated share of the connections intended is lost (FD.io CSIT's NAT44 CPS; RFC
9411's connections per second). Each trial opens connections at one rate for its
duration, each running the profile's program; the DUT's state is reset before each
(its own method), so no trial inherits another's sessions."""

from __future__ import annotations

from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.traffic_profiles.stateful import answer, common, search
from nsb.traffic_profiles.stateful.judge import SessionJudge
from nsb.trial import Trial, latency_record


class CpsProfile(TrafficProfile):
    """Connections per second: the highest rate of new connections losing no more than tolerated."""

    BASE_OPTIONS = ("interface_speed_gbps",)  # frames are the sessions' business
    NEEDS_SESSIONS = True  # the generator must send stateful trials
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **common.OPTIONS,
            "lower_cps": {"description": "the lowest connection rate tried",
                          "type": "number", "exclusiveMinimum": 0, "default": 100},
            "upper_cps": {"description": "the highest connection rate tried (first)",
                          "type": "number", "exclusiveMinimum": 0, "default": 100000},
            "precision_pct": common.PRECISION,
            "search": common.SEARCH,
            "generator_ceiling_cps": {"description": "the generator's own ceiling, measured "
                                                     "without the DUT (a calibration run): an "
                                                     "answer within 5 % of it is the "
                                                     "generator's",
                                      "type": "number", "exclusiveMinimum": 0},
            "latency_at": {"description": "after the search, a trial at each of these % of "
                                          "the rate found, its connections' counts and the "
                                          "generator's latency stream recorded (e.g. "
                                          "[10, 50, 90])",
                           "type": "array", "items": {"type": "number", "exclusiveMinimum": 0,
                                                      "maximum": 100}, "default": []},
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if options["lower_cps"] >= options["upper_cps"]:
            raise spec.options_where.error(f"lower_cps {options['lower_cps']:g} must be below "
                                           f"upper_cps {options['upper_cps']:g}", "lower_cps")
        common.check_program(self)

    @property
    def judge(self) -> SessionJudge:
        return SessionJudge(self.options["tolerated_loss_pct"],
                            self.options["strict_retransmissions"])

    def measure(self, measurer: Measurer, cps: float, lower: float, upper: float,
                duration_s: float, why: str = "", latency: bool = False):
        trial = Trial(frame_size=answer.FRAME, rate_pps=0.0, duration_s=duration_s,
                      latency=latency, sessions=common.session_load(self, cps))
        at = SearchPoint(100.0 * cps / self.options["upper_cps"],
                         100.0 * lower / self.options["upper_cps"],
                         100.0 * upper / self.options["upper_cps"])
        return measurer.measure(trial, at, self.judge, why=why)

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        before = measurer.trial_count

        def one(cps, lower, upper, seconds):
            return self.measure(measurer, cps, lower, upper, seconds)

        found = search.run(one, o, o["lower_cps"], o["upper_cps"], measurer.should_stop)
        if found is None:
            return
        extra = {}
        if found.best is not None and o["latency_at"]:
            extra["cps_at_pct"] = self._points(measurer, found.best)
        answer.report(measurer, self, "cps", found.best, found.limited_by,
                      measurer.trial_count - before, o.get("generator_ceiling_cps"), extra)

    def _points(self, measurer: Measurer, best) -> dict:
        """Trials at fractions of the rate found: what each established and lost, and
        the latency of the generator's probes through the DUT meanwhile."""
        points = {}
        found_cps = best.result.trial.sessions.cps
        for pct in self.options["latency_at"]:
            if measurer.should_stop():
                break
            cps = found_cps * pct / 100.0
            done = self.measure(measurer, cps, cps, cps, self.options["duration"],
                                why=f"at {pct:g}% of the rate found", latency=True)
            points[f"{pct:g}"] = {"cps": cps, "verdict": done.verdict.value,
                                  "counts": done.result.sessions.record(),
                                  "latency": latency_record(done.result.latency)}
        return points
