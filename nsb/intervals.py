"""A slice of a long trial: what the generator counted in it, read while traffic ran."""

from __future__ import annotations

from dataclasses import dataclass

from nsb.trial import LatencyStats, latency_record


@dataclass(frozen=True)
class IntervalSample:
    """Counts between ``start_s`` and ``end_s`` (seconds since the traffic started).

    Frames in flight at a boundary are counted received in the next interval, so one
    interval's loss can be slightly off either way; the intervals of a trial always
    sum to its totals (the last one is read after the traffic drained)."""

    index: int
    start_s: float
    end_s: float
    tx_packets: int
    rx_packets: int
    latency: LatencyStats | None = None
    last: bool = False  # read after the traffic stopped (drained, or ended by a signal)

    @property
    def lost_packets(self) -> int:
        return self.tx_packets - self.rx_packets

    @property
    def loss_pct(self) -> float:
        """Loss of the interval, 0 when it received more than it sent (frames of the
        previous interval still in flight at its start)."""
        if self.tx_packets <= 0:
            return 0.0
        return 100.0 * max(0, self.lost_packets) / self.tx_packets

    @property
    def tx_pps(self) -> float:
        span = self.end_s - self.start_s
        return self.tx_packets / span if span > 0 else 0.0

    @property
    def rx_pps(self) -> float:
        span = self.end_s - self.start_s
        return self.rx_packets / span if span > 0 else 0.0


def interval_record(sample: IntervalSample) -> dict:
    """One interval as results hold it."""
    return {"interval": sample.index, "start_s": sample.start_s, "end_s": sample.end_s,
            "tx_packets": sample.tx_packets, "rx_packets": sample.rx_packets,
            "lost_packets": sample.lost_packets, "loss_pct": sample.loss_pct,
            "tx_pps": sample.tx_pps, "rx_pps": sample.rx_pps, "last": sample.last,
            "latency": latency_record(sample.latency)}
