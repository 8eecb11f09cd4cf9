"""How a trial is judged: its verdict and the reason, from its counts and the loss a
profile tolerates (RFC 2544's is 0)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nsb import chains
from nsb.events import Verdict
from nsb.trial import TrialResult

PASS, FAIL, GENERATOR_LIMITED = Verdict.PASS, Verdict.FAIL, Verdict.GENERATOR_LIMITED

# a profile's judgement of one trial: its verdict and the reason, in words
Judge = Callable[[TrialResult], tuple[Verdict, str]]


def judge(result: TrialResult, tolerated_loss_pct: float) -> tuple[Verdict, str]:
    """Verdict and reason: loss above tolerance is a DUT failure even if the
    generator fell short; a short generator without loss proves nothing; with
    service chains, every chain must be within the tolerance on its own."""
    loss = result.loss_pct
    if loss > tolerated_loss_pct and result.dut_loss_pct <= tolerated_loss_pct:
        return GENERATOR_LIMITED, receive_side_loss(result, f"loss {loss:.4g}%")
    failed = chains.over_tolerance(result.chains, tolerated_loss_pct)
    worst = f"; chain {failed[0].chain} lost {failed[0].loss_pct:.4g}%" if failed else ""
    if loss > tolerated_loss_pct:
        return FAIL, f"loss {loss:.4g}% > tolerated {tolerated_loss_pct:g}%{worst}"
    if failed:
        return FAIL, (f"chain {failed[0].chain} lost {failed[0].loss_pct:.4g}% > tolerated "
                      f"{tolerated_loss_pct:g}% (all chains: {loss:.4g}%)")
    if result.generator_limited:
        asked = result.trial.rate_pps
        share = f" (sent {result.tx_rate_pps:,.0f} of {asked:,.0f} pps)" if asked else ""
        why = f"; {result.generator_note}" if result.generator_note else ""
        return GENERATOR_LIMITED, f"generator could not send the rate asked{share}{why}"
    return PASS, f"loss {loss:.4g}% <= tolerated {tolerated_loss_pct:g}%"


def receive_side_loss(result: TrialResult, loss: str) -> str:
    """The reason of a trial whose loss beyond tolerance the generator's own receive path
    accounts for: lost, but not by the DUT (the judges call it generator-limited)."""
    return f"{loss}, of which the generator's receive path dropped " \
        f"{result.rx_missed_packets} frames"


@dataclass(frozen=True)
class LossJudge:
    """The usual judge: ``judge`` with this tolerance (RFC 2544's is 0), which the
    measurer also reads to name the chains that failed."""

    tolerated_loss_pct: float

    def __call__(self, result: TrialResult) -> tuple[Verdict, str]:
        return judge(result, self.tolerated_loss_pct)


def loss_judge(tolerated_loss_pct: float) -> Judge:
    return LossJudge(tolerated_loss_pct)


ZERO_LOSS = loss_judge(0.0)
