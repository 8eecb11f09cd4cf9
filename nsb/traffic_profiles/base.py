"""The traffic profile interface and the session that records its trials."""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from nsb import frames, units
from nsb.errors import NsbError
from nsb.events import Event, LimitedBy, ResultReady, TrialDone, TrialStarted, Verdict
from nsb.frames import Frame, FrameMix
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec
from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen

PASS, FAIL, GENERATOR_LIMITED = Verdict.PASS, Verdict.FAIL, Verdict.GENERATOR_LIMITED
LIMITED_BY = {FAIL: LimitedBy.DUT, GENERATOR_LIMITED: LimitedBy.GENERATOR}  # a failed verdict


@dataclass
class Session:
    """What a profile needs from the run: emit events, know when to stop.

    ``before_trial`` / ``after_trial`` let the engine sample NFVi KPIs while a
    trial runs and VNF KPIs right after it.
    """

    task_id: str
    scenario: str
    iteration: int
    emit: Callable[[Event], None]
    should_stop: Callable[[], bool] = lambda: False
    after_trial: Callable[[int], None] = lambda trial_index: None
    before_trial: Callable[[int], None] = lambda trial_index: None
    result_kpis: Callable[[int, float], dict] = lambda frame_size, throughput_pps: {}
    trial_count: int = field(default=0)
    # per frame size, the fastest loss-free trial the generator could not run at full rate
    _best_short: dict[int, TrialResult] = field(default_factory=dict)
    # per frame size, every judged trial (result, verdict): the evidence of its answer
    _judged: dict[int, list] = field(default_factory=dict)
    # what went wrong right after a trial (a VNF died): raised once the trial is recorded
    _after_trial_error: NsbError | None = None

    def run_trial(self, tg: TrafficGen, trial: Trial, rate_pct: float, lower_pct: float,
                  upper_pct: float, trials_left: int,
                  seconds_left: float | None = None) -> tuple[int, TrialResult]:
        """Announce, run and post-process one trial; returns (trial index, result).

        ``trials_left`` (or, for profiles whose trials differ in length,
        ``seconds_left`` of traffic) gives the live line its time left."""
        index = self.trial_count
        self.trial_count += 1
        self.emit(TrialStarted(self.task_id, self.scenario, iteration=self.iteration,
                               trial_index=index, trial=trial, rate_pct=rate_pct,
                               lower_pct=lower_pct, upper_pct=upper_pct,
                               trials_left=trials_left, seconds_left=seconds_left))
        if self._after_trial_error is not None:
            raise self._after_trial_error
        self.before_trial(index)
        try:
            result = tg.run_trial(trial)
        except BaseException:
            with contextlib.suppress(Exception):  # the trial's own error is the one to see
                self.after_trial(index)
            raise
        try:
            self.after_trial(index)
        except NsbError as exc:  # e.g. a VNF died: raised once the trial is recorded
            self._after_trial_error = exc
        return index, result

    def trial_done(self, index: int, result: TrialResult, verdict: Verdict, rate_pct: float,
                   lower_pct: float, upper_pct: float, reason: str) -> None:
        self._judged.setdefault(result.trial.frame_size, []).append((result, verdict))
        if verdict == GENERATOR_LIMITED:
            frame = result.trial.frame_size
            known = self._best_short.get(frame)
            if known is None or result.tx_rate_pps > known.tx_rate_pps:
                self._best_short[frame] = result
        self.emit(TrialDone(self.task_id, self.scenario, iteration=self.iteration,
                            trial_index=index, result=result, verdict=verdict,
                            rate_pct=rate_pct, lower_pct=lower_pct, upper_pct=upper_pct,
                            reason=reason))
        if self._after_trial_error is not None:
            raise self._after_trial_error

    def result_ready(self, frame_size: Frame, best: TrialResult | None, speed_gbps: float,
                     ports: int, limited_by: LimitedBy, trials: int, profile: str,
                     extra: dict | None = None) -> None:
        best, reason = self._generator_limited_answer(frame_size, best, limited_by)
        judged = self._judged.pop(frame_size, [])
        extra = {**(extra or {}), "evidence": evidence(best, judged)}
        if best is None and not reason:
            rates = sorted({r.trial.rate_pps for r, _ in judged})
            tried = f"; tried {len(rates)} rates, {rates[0]:,.0f}-{rates[-1]:,.0f} pps" \
                if rates else ""
            reason = f"no rate at or above the lower bound passed{tried}"
        pps = best.tx_rate_pps if best else 0.0
        self.emit(ResultReady(
            self.task_id, self.scenario, iteration=self.iteration, frame_size=frame_size,
            throughput_pps=pps, throughput_mbps=units.pps_to_mbps(pps, frame_size),
            line_rate_pct=units.pps_to_pct(pps, frame_size, speed_gbps, ports),
            loss_pct=best.loss_pct if best else 0.0, latency=best.latency if best else None,
            limited_by=limited_by, trials=trials, profile=profile,
            tx_packets=best.tx_packets if best else 0, rx_packets=best.rx_packets if best else 0,
            extra={**extra, **self.result_kpis(frame_size, pps)},
            limited_reason=reason))
        self._best_short.pop(frame_size, None)

    def _generator_limited_answer(self, frame_size: Frame, best: TrialResult | None,
                                  limited_by: LimitedBy) -> tuple[TrialResult | None, str]:
        """When the generator set the limit, the answer is the highest loss-free rate
        measured: a loss-free trial proves the DUT forwards what was really sent,
        even if that was less than asked."""
        short = self._best_short.get(frame_size)
        if limited_by != LimitedBy.GENERATOR:
            return best, ""
        if short is None or (best is not None and best.tx_rate_pps >= short.tx_rate_pps):
            return best, "the generator could not send the faster rates asked"
        asked = short.trial.rate_pps
        return short, (f"the generator sent at most {short.tx_rate_pps:,.0f} pps without loss "
                       f"(asked {asked:,.0f} pps); the DUT's limit was not reached")

def step_below(rate: float, forwarded_pps: float, width: float) -> float:
    """The next rate to prove after one failed at ``rate`` while forwarding
    ``forwarded_pps``: what it forwarded, and at least ``width`` (relative) down."""
    return min(rate * (1 - width), forwarded_pps * (1 - width / 2))


def evidence(best: TrialResult | None, judged: list[tuple[TrialResult, str]]) -> dict:
    """What backs an answer: the full-length trials that passed at its rate and the
    seconds of loss-free traffic they sent, the trials at that rate that lost
    frames, and the final search interval (the lowest failing rate above it)."""
    def same_rate(result: TrialResult) -> bool:
        return abs(result.trial.rate_pps - best.trial.rate_pps) <= \
            1e-9 * max(1.0, best.trial.rate_pps)

    failing = [r.trial.rate_pps for r, v in judged if v in (FAIL, GENERATOR_LIMITED)
               and (best is None or r.trial.rate_pps > best.trial.rate_pps)]
    found = {"lowest_failing_pps": min(failing, default=None)}
    if best is None:
        return {**found, "full_trials_passed": 0, "loss_free_s": 0.0, "failed_at_rate": 0}
    full = best.trial.duration_s
    at_rate = [(r, v) for r, v in judged if same_rate(r)]
    return {
        **found,
        "rate_pps": best.trial.rate_pps,  # the rate asked of the trial that backs the answer
        "full_trials_passed": sum(v == PASS and r.trial.duration_s >= full
                                  for r, v in at_rate),
        "loss_free_s": sum(r.trial.duration_s for r, v in at_rate
                           if v == PASS and r.lost_packets <= 0),
        "failed_at_rate": sum(v == FAIL for _, v in at_rate),
    }


def latency_sweep(tg: TrafficGen, session: Session, frame: Frame, ndr_pps: float,
                  percents: list[float], duration_s: float, flows: int | None,
                  speed_gbps: float) -> dict:
    """Latency at fractions of the found NDR (as FD.io CSIT reports): one trial each."""
    from nsb.outputs.records import latency_record

    sweep = {}
    ports = tg.tx_port_count
    for pct in percents:
        if ndr_pps <= 0 or session.should_stop():
            break
        trial = Trial(frame_size=frame, rate_pps=ndr_pps * pct / 100.0, duration_s=duration_s,
                      flows=flows)
        line_pct = units.pps_to_pct(trial.rate_pps, frame, speed_gbps, ports)
        index, result = session.run_trial(tg, trial, line_pct, line_pct, line_pct, 0)
        session.trial_done(index, result, Verdict.LATENCY, line_pct, line_pct, line_pct,
                           f"latency at {pct:g}% of NDR")
        sweep[f"{pct:g}"] = {"rate_pps": trial.rate_pps, "loss_pct": result.loss_pct,
                             "latency": latency_record(result.latency)}
    return sweep


def judge(result: TrialResult, tolerated_loss_pct: float) -> tuple[Verdict, str]:
    """Verdict and reason: loss above tolerance is a DUT failure even if the
    generator fell short; a short generator without loss proves nothing."""
    loss = result.loss_pct
    if loss > tolerated_loss_pct:
        return FAIL, f"loss {loss:.4g}% > tolerated {tolerated_loss_pct:g}%"
    if result.generator_limited:
        asked = result.trial.rate_pps
        share = f" (sent {result.tx_rate_pps:,.0f} of {asked:,.0f} pps)" if asked else ""
        return GENERATOR_LIMITED, f"generator could not send the rate asked{share}"
    return PASS, f"loss {loss:.4g}% <= tolerated {tolerated_loss_pct:g}%"


class TrafficProfile(abc.ABC):
    """Offers trials to a generator and judges what comes back."""

    OPTIONS_SCHEMA: dict | None = None

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        self.spec = spec
        self.options = options
        self.run = run
        lower, upper = options.get("lower_bound"), options.get("upper_bound")
        if lower is not None and upper is not None and lower >= upper:
            raise spec.options_where.error(
                f"lower_bound {lower} must be below upper_bound {upper}", "lower_bound")
        self.mix = self._mix(options)

    def _mix(self, options: dict) -> FrameMix | None:
        """The mix `IMIX` in packet_sizes stands for; None when none is asked for."""
        if not any(frames.is_mix_name(v) for v in options.get("packet_sizes", [])):
            return None
        try:
            return frames.parse_mix(options.get("imix", frames.SIMPLE_IMIX))
        except ValueError as exc:
            raise self.spec.options_where.error(str(exc), "imix") from None

    @property
    def frame_sizes(self) -> list[Frame]:
        """Sizes in bytes, and the mix where packet_sizes says `IMIX`."""
        return [self.mix if frames.is_mix_name(v) else v
                for v in self.options.get("packet_sizes", [])]

    @property
    def speed_gbps(self) -> float:
        return float(self.options.get("interface_speed_gbps", 10.0))

    def trial_at_pct(self, frame: Frame, pct: float, ports: int) -> Trial:
        """A trial of this profile's duration and flows at ``pct`` % of line rate."""
        return Trial(frame_size=frame, duration_s=float(self.options["duration"]),
                     flows=self.options.get("flows"),
                     rate_pps=units.pct_to_pps(pct, frame, self.speed_gbps, ports))

    def describe(self) -> dict:
        return {"type": self.spec.type, **self.options}

    @abc.abstractmethod
    def execute(self, tg: TrafficGen, session: Session) -> None:
        """Run every trial of the profile once, emitting events through ``session``."""
