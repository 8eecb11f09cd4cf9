"""A slice of a long trial: what the generator counted in it, read while traffic ran,
and which interval the frames in flight at its boundaries belong to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import accumulate

from nsb.trial import LatencyStats, latency_record


@dataclass(frozen=True)
class IntervalSample:
    """Counts between ``start_s`` and ``end_s`` (seconds since the traffic started).

    ``tx_packets`` and ``rx_packets`` are what the counters moved by in the interval.
    Frames in flight at a boundary are received in the next interval: ``carried_in``
    of them arrived in this one from the previous interval, ``carried_out`` of this
    one's arrived in the next (``InFlight`` tells them apart), so the loss is the
    interval's own frames'. The intervals of a trial sum to its totals (the last one
    is read after the traffic drained)."""

    index: int
    start_s: float
    end_s: float
    tx_packets: int
    rx_packets: int
    latency: LatencyStats | None = None
    last: bool = False  # read after the traffic stopped (drained, or ended by a signal)
    carried_in: int = 0
    carried_out: int = 0

    @property
    def lost_packets(self) -> int:
        """Frames sent in this interval that never arrived."""
        return self.tx_packets - self.rx_packets + self.carried_in - self.carried_out

    @property
    def loss_pct(self) -> float:
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
            "carried_in": sample.carried_in, "carried_out": sample.carried_out,
            "tx_pps": sample.tx_pps, "rx_pps": sample.rx_pps, "last": sample.last,
            "latency": latency_record(sample.latency)}


class InFlight:
    """Gives each interval the frames it sent: holds an interval until the next reading,
    then settles which of its apparent loss (sent less received, cumulative) was only
    in flight. Frames in flight at a boundary have arrived by the next one, so the
    loss settled by a boundary is the smaller of the apparent loss there and at the
    next boundary (never less than settled before); what is left was in flight. The
    last interval, read drained, settles everything: the intervals sum to the trial.
    Each interval reaches ``emit`` one reading late (the last at once)."""

    def __init__(self, emit: Callable[[IntervalSample], None]):
        self.emit = emit
        self.pending: IntervalSample | None = None
        self.apparent = 0  # sent less received, up to the pending interval's end
        self.settled = 0  # frames known lost up to the interval before the pending one
        self.carried = 0  # frames in flight into the pending interval

    def push(self, sample: IntervalSample) -> None:
        apparent = self.apparent + sample.tx_packets - sample.rx_packets
        if self.pending is not None:
            settled = max(self.settled, min(self.apparent, apparent))
            self._release(self.apparent - settled)
            self.settled = settled
        self.pending, self.apparent = sample, apparent
        if sample.last:
            self._release(0)

    def _release(self, carried_out: int) -> None:
        self.emit(replace(self.pending, carried_in=self.carried, carried_out=carried_out))
        self.carried, self.pending = carried_out, None


def settled_losses(samples: list[IntervalSample]) -> list[int]:
    """Frames known lost by the end of each reading: the fewest frames missing (sent
    less received, counted from the trial's start) at that reading or any later one.
    Frames in flight at a reading, or counted late by the generator (TRex's receive
    counter was seen two readings behind its transmit counter), arrive by a later one;
    frames lost never do. The last reading's (read drained) is the trial's loss."""
    missing = list(accumulate(s.tx_packets - s.rx_packets for s in samples))
    settled: list[int] = []
    for value in reversed(missing):
        settled.append(min(value, settled[-1]) if settled else value)
    return settled[::-1]


# readings just before an event whose missing frames may still be in flight (TRex's
# receive counter was seen 40 frames behind at the reading before a pause, 20 at the
# one before that, none earlier): loss before the event is settled before them
EDGE_READINGS = 4


def lost_by(settled: list[int], count: int) -> int:
    """Frames lost in the first ``count`` readings, by ``settled`` (settled_losses)."""
    return max(0, settled[count - 1]) if count > 0 else 0
