"""What one port counted: frames it received and sent, and the frames it dropped by
kind, as the plugin that owns the port reads them. Cumulative counters (DPDK's,
OVS's, the kernel's) are differenced between two readings; a kind's words say what
such a drop means, for the hop a trial's loss is blamed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# drops on the receive side of a port: the frames arrived, and were not taken in
RX_DROPS = ("imissed", "rx_nombuf", "ierrors", "rx_dropped", "generator_rx")
# drops on the transmit side: the frames were handed to the port and not sent
TX_DROPS = ("oerrors", "tx_dropped", "refused")

WORDS = {
    "imissed": "imissed: the receive ring overflowed, the DUT did not poll fast enough",
    "rx_nombuf": "rx_nombuf: no packet buffer for the frames it received",
    "ierrors": "ierrors: frames received in error",
    "rx_dropped": "rx dropped: the receiving side had no room for them",
    "generator_rx": "the generator's own receive path dropped them",
    "oerrors": "oerrors: the port failed to transmit them",
    "tx_dropped": "tx dropped: the other end did not take them (its ring full, its MTU "
                  "below the frame, its state) or the queue was full",
    "refused": "counted sent by the generator, never sent by its own kernel port (a frame "
               "over the port's MTU, a filter or a full queue on its egress)",
    "forwarding": "received but never sent: dropped inside (a full transmit queue, no "
                  "route, a rule)",
    "link": "lost on the link between the two ports",
    "unaccounted": "lost between ports without counters",
}


@dataclass(frozen=True)
class PortCount:
    """A port's frames received (``rx``) and sent (``tx``), None where it keeps no such
    counter, and its drops by kind (RX_DROPS, TX_DROPS)."""

    rx: int | None = None
    tx: int | None = None
    drops: Mapping[str, int] = field(default_factory=dict)

    @property
    def arrived(self) -> int | None:
        """Frames that reached the port: those it took in and those its receive side
        dropped."""
        if self.rx is None:
            return None
        return self.rx + sum(self.drops.get(kind, 0) for kind in RX_DROPS)

    def rx_drops(self) -> dict[str, int]:
        return {k: v for k, v in self.drops.items() if k in RX_DROPS and v}

    def tx_drops(self) -> dict[str, int]:
        return {k: v for k, v in self.drops.items() if k in TX_DROPS and v}


def difference(after: PortCount, before: PortCount | None) -> PortCount:
    """What a port counted between two readings of cumulative counters."""
    if before is None:
        return after

    def minus(now: int | None, then: int | None) -> int | None:
        return None if now is None else now - (then or 0)

    kinds = set(after.drops) | set(before.drops)
    return PortCount(minus(after.rx, before.rx), minus(after.tx, before.tx),
                     {k: after.drops.get(k, 0) - before.drops.get(k, 0) for k in kinds})


def from_kpis(kpis: Mapping[str, float], prefix: str, names: Mapping[str, str]) -> PortCount:
    """A port's counts from KPIs named ``<prefix><counter>`` (e.g. ``port0_ipackets``);
    ``names`` maps the KPI's counter names to rx, tx and the drop kinds."""
    values = {kind: int(kpis[f"{prefix}{counter}"]) for counter, kind in names.items()
              if f"{prefix}{counter}" in kpis}
    return PortCount(values.pop("rx", None), values.pop("tx", None), values)
