"""When TRex's lag is the DUT's: over a link that pushes back (memif, vhost-user), a DUT
that does not take frames fills the ring between them and TRex waits for room, so it
lags with nothing lost. A lag at a rate below a pace TRex kept earlier in the same run
is that: the generator proved it can send faster; the link refused the frames."""

from __future__ import annotations

from dataclasses import replace

from nsb.trial import TrialResult

MARGIN = 1.1  # the earlier pace must be this much faster than the rate asked


def socket_ports(ports: list) -> bool:
    """Every port is a memif or vhost-user socket (a ring the peer must drain)."""
    return bool(ports) and all(p.is_memif or p.is_vhostuser for p in ports)


def judged(result: TrialResult, ports: list, tx_ports: int, fastest_pps: float) -> TrialResult:
    """``result`` with ``pushed_back`` said when its lag is the link's (``fastest_pps``:
    the fastest per-port pace TRex sent at in this run's earlier trials)."""
    if not result.generator_limited or result.trial.burst_frames or not socket_ports(ports):
        return result
    asked = result.trial.rate_pps / max(1, tx_ports)
    if fastest_pps < asked * MARGIN:
        return result
    took = result.tx_rate_pps / max(1, tx_ports)
    kind = "memif" if all(p.is_memif for p in ports) else "vhost-user"
    return replace(result, pushed_back=(
        f"its {kind} ports took {took:,.0f} of the {asked:,.0f} pps asked per port, and TRex "
        f"sent {fastest_pps:,.0f} pps per port earlier in this run"))
