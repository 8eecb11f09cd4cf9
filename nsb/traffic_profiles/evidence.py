"""What backs an answer: the trials at its rate, the seconds of loss-free traffic they
sent, the trial it was taken from, and where the search's interval ended above it."""

from __future__ import annotations

from nsb.events import Verdict
from nsb.trial import TrialResult

PASS, FAIL, GENERATOR_LIMITED = Verdict.PASS, Verdict.FAIL, Verdict.GENERATOR_LIMITED


def failed_above(best: TrialResult | None,
                 judged: list[tuple[TrialResult, Verdict]]) -> list[TrialResult]:
    """The trials that failed at a rate above the answer's (all failed ones without one)."""
    return [r for r, v in judged if v == FAIL and
            (best is None or r.trial.rate_pps > best.trial.rate_pps)]


def evidence(best: TrialResult | None, judged: list[tuple[TrialResult, Verdict]],
             index_of=lambda _result: None) -> dict:
    """What backs an answer: the full-length trials that passed at its rate and the
    seconds of loss-free traffic they sent, the trials at that rate that lost
    frames, the final search interval (the lowest failing rate above it) and the
    index of the trial the answer's counts are from (``index_of``: a result's)."""
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
        "trial_index": index_of(best),
        "full_trials_passed": sum(v == PASS and r.trial.duration_s >= full
                                  for r, v in at_rate),
        "loss_free_s": sum(r.trial.duration_s for r, v in at_rate
                           if v == PASS and r.lost_packets <= 0),
        "failed_at_rate": sum(v == FAIL for _, v in at_rate),
    }


def same_counts(a: TrialResult, b: TrialResult) -> bool:
    """One trial's counts, whatever was added to them since (a later trial's latency)."""
    return a.trial == b.trial and a.tx_packets == b.tx_packets and \
        a.rx_packets == b.rx_packets and a.elapsed_s == b.elapsed_s
