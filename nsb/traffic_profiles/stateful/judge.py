"""A stateful trial's verdict: what it lost of the connections it intended.

Connections attempted and not established are the DUT's loss; connections never
attempted are the generator's shortfall (it could not open them: its own error
counters, a trial it could not end in time), so a trial whose loss is only that is
generator-limited, never a DUT failure, as a stateless trial sent short is. A SYN sent
again that still connected counts as established (a strict judge fails on it).
"""

from __future__ import annotations

from dataclasses import dataclass

from nsb.errors import PluginContractError
from nsb.events import Verdict
from nsb.trial import TrialResult


@dataclass(frozen=True)
class SessionJudge:
    tolerated_loss_pct: float = 0.0
    strict: bool = False  # a retransmitted SYN fails the trial
    # the DUT must hold at least this share of the connections established, by its own
    # count (concurrent sessions: it keeps every one); 0: not asked
    dut_keeps_pct: float = 0.0

    def __call__(self, result: TrialResult) -> tuple[Verdict, str]:
        c = result.sessions
        if c is None:
            raise PluginContractError("a stateful profile's trial came back without its "
                                      "connections: the generator sends no stateful trials")
        tol = self.tolerated_loss_pct
        failed = c.attempted - c.established
        failed_pct = 100.0 * failed / c.intended if c.intended else 100.0
        why = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in sorted(c.failed.items())
                        if k != "not_established")
        if failed_pct > tol:
            return Verdict.FAIL, (f"{failed:,} of {c.intended:,} connections attempted and not "
                                  f"established ({failed_pct:.4g}% > tolerated {tol:g}%)"
                                  + (f"; {why}" if why else ""))
        if self.strict and c.retransmitted:
            return Verdict.FAIL, (f"{c.retransmitted:,} SYN retransmissions (strict: a "
                                  "connection that needed one fails the trial)")
        held = self._held(c)
        if held:
            return Verdict.FAIL, held
        if c.loss_pct > tol or result.generator_limited:
            note = f"; {result.generator_note}" if result.generator_note else ""
            return Verdict.GENERATOR_LIMITED, (
                f"the generator attempted {c.attempted:,} of the {c.intended:,} connections "
                f"asked ({c.never_attempted:,} never attempted){note}")
        retried = f"; {c.retransmitted:,} SYN retransmissions" if c.retransmitted else ""
        return Verdict.PASS, (f"{c.established:,} of {c.intended:,} connections established, "
                              f"loss {c.loss_pct:.4g}% <= tolerated {tol:g}%{retried}")

    def _held(self, c) -> str:
        """Why the DUT's own count falls short of the sessions asked ('' when it
        holds them or is not asked)."""
        if not self.dut_keeps_pct or c.dut_sessions is None:
            return ""
        wanted = c.established * self.dut_keeps_pct / 100.0
        if c.dut_sessions >= wanted:
            return ""
        return (f"the DUT held at most {c.dut_sessions:,} sessions by its own count, of the "
                f"{c.established:,} established")
