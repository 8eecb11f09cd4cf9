"""Recovery from an overload, read from a trial's timeline: a steady rate, the rate
raised for a known time (the overload), the steady rate again; how long after the
overload ended frames were still lost, and how long until latency was back within a
margin of its level before.

- loss recovered: from the overload's end to the end of the last reading that lost
  frames (more than the frames in flight at a reading: a tenth of a reading's frames);
  frames a DUT queued in the overload and delivers after it are not lost;
- latency recovered: from the overload's end to the end of the readings after it whose
  mean latency stayed beyond ``margin_pct`` of the mean before the overload and beyond
  the readings' own spread then (two standard deviations of their means: with 10 samples
  a reading, one reading's mean here varied by a third from the next at a steady rate);
  a reading high again later (this machine's own hiccup) is not the overload's.

Each is exact to about one reading (late by at most one).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from nsb.intervals import EDGE_READINGS, IntervalSample, lost_by, settled_losses


@dataclass(frozen=True)
class Recovery:
    """One trial's overload and what followed it (seconds since its traffic started,
    or lengths in seconds)."""

    overload_start_s: float
    overload_end_s: float
    sent_before: int  # frames sent before the overload, after the warm-up
    lost_before: int  # of them lost: the steady rate must be loss-free
    lost_in_overload: int  # frames sent in the readings the overload spans, lost
    sent_in_overload: int  # frames sent in those readings
    overload_readings_s: float  # how long those readings span
    lost_after: int  # frames sent after the overload's last reading, lost
    latency_before_us: float | None  # the mean latency before the overload
    latency_peak_us: float | None  # the highest reading's mean latency from then on
    loss_recovery_s: float | None  # None: frames were lost to the trial's end
    latency_recovery_s: float | None  # None: no latency read, or never back

    @property
    def recovered(self) -> bool:
        return self.loss_recovery_s is not None and (
            self.latency_before_us is None or self.latency_recovery_s is not None)


def analyse(intervals: list[IntervalSample], start_s: float, end_s: float,
            warmup_s: float, margin_pct: float) -> Recovery:
    before = [s for s in intervals if s.end_s <= start_s and s.start_s >= warmup_s]
    during = [s for s in intervals if s.end_s > start_s and s.start_s < end_s]
    after = [s for s in intervals if s.start_s >= end_s]
    sent = sum(s.tx_packets for s in before)
    allowance = 0.1 * sent / len(before) if before else 0.0  # a tenth of a reading's
    # frames lost by the end of the warm-up, of the steady rate (but its last readings,
    # whose frames may be in flight) and of the overload's readings
    settled = settled_losses(intervals)
    warm, steady, over = (lost_by(settled, n) for n in (
        _count(intervals, lambda s: s.end_s <= start_s and s.start_s < warmup_s),
        _count(intervals, lambda s: s.end_s <= start_s) - EDGE_READINGS,
        _count(intervals, lambda s: s.start_s < end_s)))
    return Recovery(
        overload_start_s=start_s, overload_end_s=end_s, sent_before=sent,
        lost_before=max(0, steady - warm), lost_in_overload=max(0, over - steady),
        sent_in_overload=sum(s.tx_packets for s in during),
        overload_readings_s=sum(s.end_s - s.start_s for s in during),
        lost_after=max(0, lost_by(settled, len(intervals)) - over),
        latency_before_us=_mean_latency(before),
        latency_peak_us=max((s.latency.avg_us for s in during + after if _has_latency(s)),
                            default=None),
        loss_recovery_s=_loss_stopped_s(intervals, end_s, allowance),
        latency_recovery_s=_latency_back_s(intervals, end_s, _mean_latency(before),
                                           _spread_us(before), margin_pct))


def _count(intervals: list[IntervalSample], where) -> int:
    """How many readings from the first are ``where`` (a prefix of the timeline)."""
    count = 0
    while count < len(intervals) and where(intervals[count]):
        count += 1
    return count


def _has_latency(sample: IntervalSample) -> bool:
    return sample.latency is not None and sample.latency.samples > 0


def _mean_latency(samples: list[IntervalSample]) -> float | None:
    """The mean of the readings' latency, weighted by their samples."""
    read = [s.latency for s in samples if _has_latency(s)]
    count = sum(x.samples for x in read)
    return sum(x.avg_us * x.samples for x in read) / count if count else None


def _spread_us(samples: list[IntervalSample]) -> float:
    """Two standard deviations of the readings' mean latency."""
    means = [s.latency.avg_us for s in samples if _has_latency(s)]
    return 2 * statistics.stdev(means) if len(means) > 1 else 0.0


def _loss_stopped_s(intervals: list[IntervalSample], end_s: float,
                    allowance: float) -> float | None:
    """From ``end_s`` to the end of the last reading that lost more than ``allowance``
    frames (0: none lost after it; None: the last reading before the drain still did)."""
    read = [s for s in intervals if not s.last]
    lossy = [s for s in read if s.lost_packets > allowance and s.end_s > end_s]
    if lossy and read and lossy[-1] is read[-1]:
        return None
    return max(0.0, lossy[-1].end_s - end_s) if lossy else 0.0


def _latency_back_s(intervals: list[IntervalSample], end_s: float, level_us: float | None,
                    spread_us: float, margin_pct: float) -> float | None:
    """From ``end_s`` to the end of the last reading whose mean latency was beyond the
    margin of ``level_us`` and ``spread_us`` (0: none after it; None: no level, or the
    last reading before the drain still was)."""
    if level_us is None:
        return None
    limit = level_us * (1 + margin_pct / 100) + spread_us
    last_high = None
    for sample in (s for s in intervals if _has_latency(s) and s.end_s > end_s):
        if sample.last:
            return None  # high to the end of the traffic
        if sample.latency.avg_us <= limit:
            break
        last_high = sample
    return max(0.0, last_high.end_s - end_s) if last_high else 0.0


def record(recovery: Recovery) -> dict:
    """One trial's recovery as results hold it."""
    return {"overload_start_s": recovery.overload_start_s,
            "overload_end_s": recovery.overload_end_s,
            "overload_s": recovery.overload_end_s - recovery.overload_start_s,
            "sent_before_overload": recovery.sent_before,
            "lost_before_overload": recovery.lost_before,
            "lost_in_overload": recovery.lost_in_overload,
            "sent_in_overload": recovery.sent_in_overload,
            "overload_readings_s": recovery.overload_readings_s,
            "lost_after_overload": recovery.lost_after,
            "latency_before_us": recovery.latency_before_us,
            "latency_peak_us": recovery.latency_peak_us,
            "loss_recovery_s": recovery.loss_recovery_s,
            "latency_recovery_s": recovery.latency_recovery_s,
            "recovered": recovery.recovered}
