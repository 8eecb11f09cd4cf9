"""A stateful answer as every output gets it: the result's throughput is the packets a
second of the trial that backs it, and ``extra["stateful"]`` says what was measured in
connections (its kind, the connection rate offered and established, the sessions the
DUT held by its own count, the counts by reason) and against the generator's ceiling."""

from __future__ import annotations

from nsb.events import LimitedBy
from nsb.traffic_profiles.measurer import Measurement, Measurer

FRAME = 64  # a stateful answer's frame size: its smallest frames, TCP's control segments
CEILING_SHARE = 0.95  # an answer within 5 % of the generator's ceiling is the generator's


def record(kind: str, best: Measurement | None, ceiling_cps: float | None) -> dict:
    """``extra["stateful"]`` of an answer."""
    made: dict = {"kind": kind}
    if best is not None:
        c, load = best.result.sessions, best.result.trial.sessions
        made.update(program=load.program, request_bytes=load.request_bytes,
                    response_bytes=load.response_bytes, cps=c.offered_cps,
                    cps_asked=load.cps, established_cps=c.cps,
                    sessions=c.established if kind == "concurrent_sessions" else None,
                    dut_sessions=c.dut_sessions, counts=c.record(), trial_index=best.index)
    if ceiling_cps:
        made["generator_ceiling_cps"] = ceiling_cps
    return made


def limited(limited_by: LimitedBy, best: Measurement | None,
            ceiling_cps: float | None) -> tuple[LimitedBy, str]:
    """The answer's limit, and the reason when the generator's ceiling sets it: an
    answer within 5 % of what the generator reaches port to port is the generator's."""
    if best is None or not ceiling_cps or limited_by == LimitedBy.UPPER_BOUND:
        return limited_by, ""
    offered = best.result.sessions.offered_cps
    if offered < CEILING_SHARE * ceiling_cps:
        return limited_by, ""
    return LimitedBy.GENERATOR, (f"{offered:,.0f} connections/s is within 5 % of the "
                                 f"generator's own ceiling ({ceiling_cps:,.0f}/s without the "
                                 "DUT): the DUT's limit was not reached")


def report(measurer: Measurer, profile, kind: str, best: Measurement | None,
           limited_by: LimitedBy, trials: int, ceiling_cps: float | None = None,
           extra: dict | None = None, warnings: tuple[str, ...] = (), *,
           frame: int = FRAME, answer_pps: float | None = None,
           loss_pct: float | None = None, extra_stateful: dict | None = None,
           reason: str = "") -> None:
    """The answer to every output; a stream's (stateful throughput) states its own
    frame size, data rate and data loss; ``reason``: the profile's own words."""
    limited_by, ceiling_reason = limited(limited_by, best, ceiling_cps)
    reason = reason or ceiling_reason
    if best is None and not reason:
        reason = "no load at or above the lower bound passed"
    elif limited_by == LimitedBy.GENERATOR and not reason:  # the answer stands as it is
        reason = ("the generator could not send the faster loads asked" if answer_pps
                  is not None else "the generator could not open the connections of the "
                                   "faster loads asked")
    stateful = {**record(kind, best, ceiling_cps), **(extra_stateful or {})}
    measurer.result_ready(frame, best, profile.speed_gbps, limited_by, trials,
                          profile.spec.type, extra={**(extra or {}), "stateful": stateful},
                          reason=reason, warnings=warnings, answer_pps=answer_pps,
                          loss_pct=loss_pct)
