"""The one seam between a traffic profile and the run: ask for a trial, get it judged.

As MLRsearch's ``AbstractMeasurer.measure(intended_duration, intended_load)``, a
profile calls ``Measurer.measure(trial, at)`` and gets back a ``Measurement``;
the events every output sees (TrialStarted, the trial's KPI samples, TrialDone)
and what the run does around a trial (``TrialHooks``) stay behind it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, replace

from nsb import chains, units
from nsb.errors import NsbError
from nsb.events import (
    Event,
    KpiSample,
    LimitedBy,
    ResultReady,
    TrialDone,
    TrialStarted,
    Verdict,
)
from nsb.frames import Frame
from nsb.loss_budget import TrialPaths
from nsb.traffic_profiles import seam_checks
from nsb.traffic_profiles.evidence import evidence, failed_above, same_counts
from nsb.traffic_profiles.judges import (  # noqa: F401  (the seam's names, as before)
    ZERO_LOSS,
    Judge,
    LossJudge,
    loss_judge,
    receive_side_loss,
)
from nsb.traffic_profiles.trial_hooks import TrialHooks
from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen

PASS, FAIL, GENERATOR_LIMITED = Verdict.PASS, Verdict.FAIL, Verdict.GENERATOR_LIMITED
LIMITED_BY = {FAIL: LimitedBy.DUT, GENERATOR_LIMITED: LimitedBy.GENERATOR}  # a failed verdict



class SearchStopped(Exception):
    """The runner asked to stop between trials: the search ends without an answer."""


@dataclass(frozen=True)
class SearchPoint:
    """Where the search stands when it asks for a trial: the live line shows it and
    the trial's events record it. ``trials_left`` (or, for profiles whose trials
    differ in length, ``seconds_left`` of traffic) gives the time left."""

    rate_pct: float
    lower_pct: float
    upper_pct: float
    trials_left: int = 0
    seconds_left: float | None = None

    @classmethod
    def single(cls, pct: float, trials_left: int = 0) -> SearchPoint:
        """A trial that is its own interval (a fixed rate, a verification, latency)."""
        return cls(pct, pct, pct, trials_left)


@dataclass(frozen=True)
class Measurement:
    """One trial as recorded: its index in the scenario, counters and verdict."""

    index: int
    result: TrialResult
    verdict: Verdict
    reason: str


class Measurer:
    """Runs a profile's trials on the generator and records them for the outputs.

    One measurer serves a scenario: trial indices run on across the runner's
    iterations (``start_iteration``), the searches' evidence does not.
    """

    def __init__(self, generator: TrafficGen, task_id: str, scenario: str,
                 emit: Callable[[Event], None], hooks: TrialHooks | None = None, *,
                 should_stop: Callable[[], bool] = lambda: False, iteration: int = 0,
                 service_chains: tuple[chains.Chain, ...] = (), profile: str = ""):
        self.generator = generator
        self.profile = profile  # the profile's type: named when it misuses the seam
        self.chains = service_chains  # counted apart in every trial (nsb.chains)
        self._tolerated_pct = 0.0  # the last judge's loss tolerance: which chains failed
        self.task_id, self.scenario, self.iteration = task_id, scenario, iteration
        self.emit = emit
        self.hooks = hooks if hooks is not None else TrialHooks()
        self.should_stop = should_stop
        self.trial_count = 0  # trials run so far: the next trial's index
        # per frame size, the rate (asked) at and above which a loss overruled what the
        # generator sent short without loss (a lossy confirmation below them)
        self._short_cap: dict[Frame, float] = {}
        # per frame size, every judged trial (result, verdict): the evidence of its answer
        self._judged: dict[Frame, list[tuple[TrialResult, Verdict]]] = {}
        # per trial (by its result, held: a freed one's id may be another's), its index, paths
        self._trials: dict[int, tuple[TrialResult, int, TrialPaths | None]] = {}

    @property
    def ports(self) -> int:
        """The generator's transmitting ports: line rate is per port, rates are summed."""
        return self.generator.tx_port_count

    def start_iteration(self, iteration: int, should_stop: Callable[[], bool]) -> None:
        """The runner's next iteration: the same trial indices, a fresh search."""
        self.iteration, self.should_stop = iteration, should_stop
        for kept in (self._short_cap, self._judged, self._trials):
            kept.clear()

    def check_stop(self) -> None:
        """Unwinds a search the runner asked to stop (``SearchStopped``)."""
        if self.should_stop():
            raise SearchStopped()

    def measure(self, trial: Trial, at: SearchPoint, judge: Judge = ZERO_LOSS, *,
                why: str = "", after: Callable[[Verdict], SearchPoint] | None = None,
                run: Callable[[Trial], TrialResult] | None = None) -> Measurement:
        """Run ``trial`` and record it judged. ``why`` prefixes the reason; ``after``
        gives where the search stands once the verdict is in (TrialDone's interval),
        for a search that narrows its interval with each trial; ``run`` sends the trial
        another way than ``generator.run_trial`` (a soak reading it per interval)."""
        seam_checks.trial_asked(self.profile or "?", trial, at, judge, SearchPoint)
        index = self.trial_count
        self.trial_count += 1
        self.emit(TrialStarted(self.task_id, self.scenario, iteration=self.iteration,
                               trial_index=index, trial=trial, rate_pct=at.rate_pct,
                               lower_pct=at.lower_pct, upper_pct=at.upper_pct,
                               trials_left=at.trials_left, seconds_left=at.seconds_left))
        result, hook_error = self._run(trial, index, run or self.generator.run_trial)
        seam_checks.trial_done(getattr(self.generator, "name", "?"), result)
        if self.chains:
            result = self._counted_per_chain(result)
        self._tolerated_pct = getattr(judge, "tolerated_loss_pct", 0.0)
        verdict, reason = judge(result)
        reason = f"{why}: {reason}" if why and reason else why or reason
        self._record(result, verdict)
        path = self.hooks.trial_paths(index)
        self._trials[id(result)] = (result, index, path)
        done = after(verdict) if after is not None else at
        self.emit(TrialDone(self.task_id, self.scenario, iteration=self.iteration,
                            trial_index=index, result=result, verdict=verdict,
                            rate_pct=done.rate_pct, lower_pct=done.lower_pct,
                            upper_pct=done.upper_pct, reason=reason, path=path))
        if hook_error is not None:  # e.g. a VNF died: raised once the trial is recorded
            raise hook_error
        return Measurement(index, result, verdict, reason)

    def _counted_per_chain(self, result: TrialResult) -> TrialResult:
        """The trial with each chain's counts; generator-limited too when a chain was sent
        less than its share of the frames the generator meant to send (PROX: none)."""
        per_chain = chains.counts(self.chains, result.ports, result.pair_latency,
                                  result.chain_counts)
        result = replace(result, chains=per_chain)
        if (result.intended_packets or 0) <= 0:
            return result
        shares = chains.intended(self.chains, result.trial, result.intended_packets)
        short = chains.short_of_share(per_chain, shares, self.generator_tolerance)
        if not short:
            return result
        note = "; ".join(f"chain {c.chain} was sent {c.tx_packets:,} of its {share:,.0f} "
                         "frames" for c, share in short)
        return replace(result, generator_limited=True, generator_note="; ".join(
            n for n in (result.generator_note, note) if n))

    @property
    def generator_tolerance(self) -> float:
        """How far below the rate asked a generator may send (a fraction, its option)."""
        options = getattr(self.generator, "options", None) or {}
        return float(options.get("generator_tolerance_pct", 5.0)) / 100.0

    def _run(self, trial: Trial, index: int, send: Callable[[Trial], TrialResult]
             ) -> tuple[TrialResult, NsbError | None]:
        """The trial between the hooks; the trial's own error is the one to see. A
        stateful trial's DUTs are reset before it and counted while it runs."""
        self.hooks.trial_started(index)
        try:
            if trial.sessions is not None:
                self.hooks.sessions_started(index, trial.sessions.hold_s > 0,
                                            trial.sessions.fresh)
            result = send(trial)
            if getattr(result, "sessions", None) is not None:  # a TrialResult's: checked next
                result = replace(result, sessions=replace(
                    result.sessions, dut_sessions=self.hooks.sessions_counted(index)))
        except BaseException:
            with contextlib.suppress(Exception):
                if trial.sessions is not None:  # the witness's sampling ends with the trial
                    self.hooks.sessions_counted(index)
            with contextlib.suppress(Exception):
                self.hooks.trial_measured(index)
            raise
        try:
            self.hooks.trial_measured(index, result)
        except NsbError as exc:
            return result, exc
        return result, None

    def _record(self, result: TrialResult, verdict: Verdict) -> None:
        self._judged.setdefault(result.trial.frame_size, []).append((result, verdict))

    def _best_short(self, frame: Frame) -> TrialResult | None:
        """The fastest trial the generator sent short that may answer: a short trial is
        an answer only if nothing was lost (frames its own receive path dropped cannot
        be vouched for), with chains if every chain got as much as the others (its
        total is then their even split's), and if it was asked below where a loss
        overruled the search (``overruled``)."""
        cap = self._short_cap.get(frame, float("inf"))
        shorts = [r for r, v in self._judged.get(frame, []) if v == GENERATOR_LIMITED
                  and r.trial.rate_pps < cap and not (r.rx_missed_packets and r.lost_packets > 0)
                  and chains.even(r.chains, self.generator_tolerance)]
        return max(shorts, key=lambda r: r.tx_rate_pps, default=None)

    def overruled(self, frame: Frame, rate_pps: float) -> None:
        """A trial asked at ``rate_pps`` lost frames after the search had passed there (a
        lossy confirmation): what the generator sent short when asked that much or more
        no longer answers."""
        self._short_cap[frame] = min(self._short_cap.get(frame, float("inf")), rate_pps)

    def sample(self, index: int, generator_kpis: dict | None = None) -> None:
        """KPIs without a trial (a profile that only watches): the generator's
        ``generator_kpis`` and the hooks' after-trial samples, under ``index``."""
        if generator_kpis:
            self.emit(KpiSample(self.task_id, self.scenario, source=self.generator.name,
                                node=self.generator.node.name, kpis=generator_kpis,
                                trial_index=index))
        self.hooks.trial_measured(index)

    def result_ready(self, frame_size: Frame, best: TrialResult | Measurement | None,
                     speed_gbps: float, limited_by: LimitedBy = LimitedBy.DUT,
                     trials: int | None = None, profile: str = "",
                     extra: dict | None = None, reason: str = "",
                     warnings: tuple[str, ...] = (), answer_pps: float | None = None,
                     loss_pct: float | None = None, evidence_of: dict | None = None) -> None:
        """The answer for ``frame_size``: ``best``, the trial it is (a TrialResult, or
        the Measurement measure() returned; None: no answer), with the trials that back
        it (evidence); ``trials``: how many the search ran (default: those measured at
        this frame size); ``reason``: the profile's own words for ``limited_by`` (its
        answer stands); ``warnings``: what the answer cannot vouch for (a lossy
        confirmation). An estimate (PLRsearch) gives its own ``answer_pps``,
        ``loss_pct`` and evidence; ``best`` then only lends its counts."""
        best, limited_by = seam_checks.answer(profile or self.profile or "?", frame_size, best,
                                              limited_by)
        trials = len(self._judged.get(frame_size, [])) if trials is None else trials
        profile = profile or self.profile
        if not reason:
            best, reason = self._generator_limited_answer(frame_size, best, limited_by)
        judged = self._judged.pop(frame_size, [])
        extra = {**(extra or {}), "evidence": evidence_of or evidence(
            best, judged, lambda r: self._index_of(r, judged))}
        blamed = self._blamed(best, judged)
        if blamed is not None:
            extra["lossy_hop"] = blamed
        if self.chains:
            extra.update(self._per_chain(best, judged))
        if best is None and not reason:
            rates = sorted({r.trial.rate_pps for r, _ in judged})
            tried = f"; tried {len(rates)} rates, {rates[0]:,.0f}-{rates[-1]:,.0f} pps" \
                if rates else ""
            reason = f"no rate at or above the lower bound passed{tried}"
        pps = answer_pps if answer_pps is not None else best.tx_rate_pps if best else 0.0
        if loss_pct is None:
            loss_pct = best.loss_pct if best else 0.0
        self.emit(ResultReady(
            self.task_id, self.scenario, iteration=self.iteration, frame_size=frame_size,
            throughput_pps=pps, throughput_mbps=units.pps_to_mbps(pps, frame_size),
            line_rate_pct=units.pps_to_pct(pps, frame_size, speed_gbps, self.ports),
            loss_pct=loss_pct, latency=best.latency if best else None,
            limited_by=limited_by, trials=trials, profile=profile,
            tx_packets=best.tx_packets if best else 0, rx_packets=best.rx_packets if best else 0,
            extra={**extra, **self.hooks.result_kpis(frame_size, pps)},
            limited_reason=reason, warnings=tuple(warnings)))
        self._short_cap.pop(frame_size, None)

    def _index_of(self, result: TrialResult, judged: list) -> int | None:
        """The index of the trial ``result`` is (or whose counts it carries)."""
        entry = self._trials.get(id(result))
        if entry is not None and entry[0] is result:
            return entry[1]
        same = [r for r, _ in judged if same_counts(r, result)
                and self._trials.get(id(r), (None,))[0] is r]
        return self._trials[id(same[-1])][1] if same else None

    def _path_of(self, result: TrialResult) -> tuple[int | None, TrialPaths | None]:
        entry = self._trials.get(id(result))  # the index of the trial and where its frames went
        found = entry is not None and entry[0] is result and entry[2] is not None
        return (entry[1], entry[2]) if found else (None, None)

    def _per_chain(self, best: TrialResult | None,
                   judged: list[tuple[TrialResult, Verdict]]) -> dict:
        """Each chain's share of the answer (its rate: its part of the frames sent) and
        where its frames died, and the chain that failed first above it."""
        made: dict = {}
        above = sorted(failed_above(best, judged), key=lambda r: r.trial.rate_pps)
        if best is not None and best.chains:
            made["chains"] = []
            for share in best.chains:
                shown = share.record(best)
                shown["throughput_pps"] = shown.pop("tx_rate_pps")
                chain = next(c for c in self.chains if c.index == share.chain)
                shown["lossy_hop"] = chains.lossy_hop(
                    chain, [best, *above], self._path_of)
                made["chains"].append(shown)
        first = chains.first_failing(above, self._tolerated_pct)
        if first is not None:
            made["first_failing_chain"] = first
        return made

    def _blamed(self, best: TrialResult | None,
                judged: list[tuple[TrialResult, Verdict]]) -> dict | None:
        """The hop and kind that lost the most where the answer's limit was: in the
        answer's own trial when it lost frames, else in the failed trial just above it."""
        if best is not None and best.lost_packets > 0:
            chosen = best
        else:
            chosen = min(failed_above(best, judged), key=lambda r: r.trial.rate_pps,
                         default=None)
        index, path = self._path_of(chosen) if chosen else (None, None)
        worst = path.worst() if path is not None else None
        if worst is None:
            return None
        return {"trial_index": index, "hop": worst.hop, "kind": worst.kind,
                "frames": worst.frames, "words": worst.words}

    def answer(self, frame_size: Frame, best: TrialResult | None,
               limited_by: LimitedBy) -> tuple[TrialResult | None, str]:
        """The trial ``result_ready`` would report for ``frame_size`` given the search's
        ``best``, and why (for a profile that measures something more at the answer's
        rate and then reports that trial with this reason: it stands)."""
        return self._generator_limited_answer(frame_size, best, limited_by)

    def _generator_limited_answer(self, frame_size: Frame, best: TrialResult | None,
                                  limited_by: LimitedBy) -> tuple[TrialResult | None, str]:
        """When the generator set the limit, the answer is the highest loss-free rate
        measured: a loss-free trial proves the DUT forwards what was really sent,
        even if that was less than asked."""
        short = self._best_short(frame_size)
        if limited_by != LimitedBy.GENERATOR:
            return best, ""
        if short is None or (best is not None and best.tx_rate_pps >= short.tx_rate_pps):
            return best, "the generator could not send the faster rates asked"
        asked = short.trial.rate_pps
        return short, (f"the generator sent at most {short.tx_rate_pps:,.0f} pps without loss "
                       f"(asked {asked:,.0f} pps); the DUT's limit was not reached")
