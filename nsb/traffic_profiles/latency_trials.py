"""The trials a search runs after it found its answer: the confirmation at the answer's
own rate (RFC 2544 26.2's latency trial, judged like any other), and latency at
fractions of the answer (CSIT's 0 %, 10 %, 50 %, 90 %), where 0 % is no load: the
generator's latency frames alone, at a low fixed rate.

A trial here that loses frames is never hidden: a lossy confirmation is a failed
trial (the search goes on below it where the profile can, else the answer carries a
warning), and a lossy latency trial below the answer puts a warning on the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nsb import chains, units
from nsb.events import Verdict
from nsb.frames import Frame
from nsb.traffic_profiles.common import NO_LOAD_PPS
from nsb.traffic_profiles.measurer import Judge, Measurement, Measurer, SearchPoint
from nsb.trial import Trial, TrialResult, latency_record


@dataclass(frozen=True)
class Sweep:
    """Latency at fractions of the answer, and what it cannot vouch for."""

    points: dict
    warnings: tuple[str, ...] = ()


def confirm(measurer: Measurer, answer: TrialResult, judge: Judge, speed_gbps: float,
            duration_s: float | None = None, retries: int = 0) -> Measurement:
    """One more trial at the answer's rate, with latency streams, judged as the
    search's trials are (RFC 2544 26.2: latency at the throughput found; a loss there
    is a failure like any other). The rate is the one its trial was asked for, or what
    the generator really sent when it could not send that (a generator-limited answer).
    A confirmation the generator sent short of that rate (it lagged, or sent fewer
    frames) confirms nothing: it is tried again, ``retries`` times at most."""
    rate = answer.tx_rate_pps if answer.generator_limited else answer.trial.rate_pps
    trial = replace(answer.trial, latency=True, rate_pps=rate,
                    duration_s=duration_s if duration_s is not None else answer.trial.duration_s)
    line_pct = units.pps_to_pct(trial.rate_pps, trial.frame_size, speed_gbps, measurer.ports)
    why = "confirmation with latency at the throughput found"
    for attempt in range(retries + 1):
        done = measurer.measure(trial, SearchPoint.single(line_pct), judge, why=why)
        if done.verdict != Verdict.GENERATOR_LIMITED or measurer.should_stop():
            break
        why = f"confirmation with latency at the throughput found, again ({attempt + 2} of " \
              f"{retries + 1}: the generator sent the last one short)"
    return done


SLOWER = 0.01  # a passing confirmation this much slower than its answer was sent short


def confirmed(answer: TrialResult, done: Measurement) -> tuple[TrialResult, tuple[str, ...]]:
    """The answer after a confirmation that lost no more than tolerated: the
    confirmation itself when it passed at the answer's rate; the answer with the
    confirmation's latency and a latency warning when the generator sent it short every
    time, or sent it more than 1 % slower than the answer's own trial though in time
    (the answer's rate stands as the search measured it; its latency is not at that
    rate)."""
    if done.verdict == Verdict.PASS and \
            done.result.tx_rate_pps >= answer.tx_rate_pps * (1 - SLOWER):
        return done.result, ()
    return chains.latency_of(answer, done.result), (short_confirmation(done),)


def short_confirmation(done: Measurement) -> str:
    """The latency warning of a confirmation the generator never sent at the answer's
    rate: the latency the answer carries was measured at the lower rate it reached."""
    result = done.result
    how = "more slowly than the answer's own trial, though in time" \
        if done.verdict == Verdict.PASS else "short by the generator every time"
    return (f"latency measured at {result.tx_rate_pps:,.0f} pps, not at the answer's rate: "
            f"the confirmation at {result.trial.rate_pps:,.0f} pps was sent {how} "
            f"({done.reason}); the latency at the answer is unconfirmed")


def lossy_confirmation(done: Measurement, tolerated_loss_pct: float) -> str:
    """The warning of a confirmation that lost more than tolerated, in words."""
    result = done.result
    return (f"the confirmation at the answer's rate ({result.trial.rate_pps:,.0f} pps) lost "
            f"{result.loss_pct:.4g}% (tolerated {tolerated_loss_pct:g}%): the answer is "
            "not confirmed")


def sweep(measurer: Measurer, frame: Frame, ndr_pps: float, percents: list[float],
          duration_s: float, flows: int | None, speed_gbps: float,
          no_load_pps: float = NO_LOAD_PPS) -> Sweep:
    """Latency at ``percents`` of ``ndr_pps`` (0: no load), a trial each, measured and
    not judged; a trial that lost frames is a warning on the answer."""
    points, warnings = {}, []
    for pct in percents:
        if ndr_pps <= 0 or measurer.should_stop():
            break
        if pct == 0:
            trial = Trial(frame_size=frame, rate_pps=no_load_pps * measurer.ports,
                          duration_s=duration_s, flows=flows, latency_only=True)
            why = "latency at no load (latency frames only)"
        else:
            trial = Trial(frame_size=frame, rate_pps=ndr_pps * pct / 100.0,
                          duration_s=duration_s, flows=flows)
            why = f"latency at {pct:g}% of NDR"
        line_pct = units.pps_to_pct(trial.rate_pps, frame, speed_gbps, measurer.ports)
        result = measurer.measure(trial, SearchPoint.single(line_pct), _not_judged,
                                  why=why).result
        points[f"{pct:g}"] = {"rate_pps": trial.rate_pps, "sent_pps": result.tx_rate_pps,
                              "loss_pct": result.loss_pct,
                              "latency": latency_record(result.latency)}
        if result.lost_packets > 0:
            warnings.append(f"the latency trial at {pct:g}% of the NDR "
                            f"({trial.rate_pps:,.0f} pps) lost {result.loss_pct:.4g}%")
        if result.generator_limited:
            warnings.append(f"the latency trial at {pct:g}% of the NDR "
                            f"({trial.rate_pps:,.0f} pps) was sent at only "
                            f"{result.tx_rate_pps:,.0f} pps: its latency is at that rate")
    return Sweep(points, tuple(warnings))


def _not_judged(_result: TrialResult) -> tuple[Verdict, str]:
    """A latency trial below the answer is measured, not judged."""
    return Verdict.LATENCY, ""
