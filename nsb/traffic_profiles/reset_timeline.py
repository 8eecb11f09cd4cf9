"""Reset time read from a trial's timeline (RFC 6201): the trial's counts every interval,
an event at a known time, and from them the outage three ways.

- frame loss: the frames lost over the whole trial divided by the rate offered (RFC
  6201's frame-loss method; frames the DUT kept queued through the outage and forwarded
  afterwards are not lost, so it is the shorter one);
- timestamps: from the last frame forwarded before the outage to the first after it
  (RFC 6201's timestamp method), read at the timeline's resolution: the intervals
  in which nothing arrived, plus the share of each edge interval that the rate would
  have filled and did not (an edge where queued frames arrived in a burst reads short by
  their drain time);
- every frame back: from the event's start to the first reading from which the frames
  missing (sent less received) stay at the trial's final loss, give or take the frames in
  flight (never below it by more than them, never above by twice that): from there on
  every frame sent arrives, at the full rate.

Each is exact to about one sampling interval at each edge.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from nsb.intervals import EDGE_READINGS, IntervalSample, lost_by, settled_losses


@dataclass(frozen=True)
class ResetTime:
    """One trial's outage (seconds since its traffic started, or lengths in seconds)."""

    event_start_s: float
    event_end_s: float
    offered_pps: float  # what the generator sent before the event, per second
    sent_before: int  # frames sent before the event, after the warm-up
    lost_before: int  # of them lost: the rate must be loss-free
    lost_warmup: int  # frames lost in the warm-up (a switch learning its flows)
    lost_packets: int  # frames lost over the whole trial
    frame_loss_s: float
    timestamp_s: float | None  # None: nothing was forwarded after the event
    full_rate_back_s: float | None  # None: some interval lost frames to the trial's end
    interval_s: float
    sent_packets: int = 0  # frames sent over the whole trial

    @property
    def recovered(self) -> bool:
        return self.full_rate_back_s is not None

    @property
    def loss_ratio(self) -> float:
        """The share of the trial's frames lost."""
        return max(0, self.lost_packets) / self.sent_packets if self.sent_packets else 0.0


def analyse(intervals: list[IntervalSample], event_start_s: float, event_end_s: float,
            rate_pps: float, warmup_s: float = 0.0) -> ResetTime:
    """The outage of one trial; ``rate_pps`` is the rate asked (used when no interval
    ended before the event). Frames lost in the first ``warmup_s`` (a switch learning
    its flows) are not the event's, nor held against the rate. Frames lost before the
    event are those settled lost by the EDGE_READINGS'th reading before it (frames in
    flight, or counted late, are not; those lost in the readings after it are the
    event's)."""
    before = [s for s in intervals if s.end_s <= event_start_s]
    steady = [s for s in before if s.start_s >= warmup_s]
    span = sum(s.end_s - s.start_s for s in steady)
    offered = sum(s.tx_packets for s in steady) / span if span > 0 else rate_pps
    settled = settled_losses(intervals)
    lost_warmup = lost_by(settled, len(before) - len(steady))
    lost_before = max(0, lost_by(settled, len(before) - EDGE_READINGS) - lost_warmup)
    lost = sum(s.tx_packets for s in intervals) - sum(s.rx_packets for s in intervals)
    after = [s for s in intervals if s.end_s > event_start_s]
    steps = [s.end_s - s.start_s for s in intervals if not s.last]
    step = statistics.median(steps) if steps else 0.0
    # frames in flight at a reading: as many as were missing before the event, or a
    # tenth of a reading's frames
    missing, in_flight = 0, 0
    for sample in before:
        missing += sample.tx_packets - sample.rx_packets
        in_flight = max(in_flight, missing)
    allowance = max(in_flight, 0.1 * offered * step)
    return ResetTime(
        event_start_s=event_start_s, event_end_s=event_end_s, offered_pps=offered,
        sent_before=sum(s.tx_packets for s in steady), lost_before=lost_before,
        lost_warmup=lost_warmup, lost_packets=lost,
        frame_loss_s=max(0, lost - lost_before - lost_warmup) / offered
        if offered > 0 else 0.0,
        timestamp_s=_timestamp_s(before[-1:], after, offered),
        full_rate_back_s=every_frame_back_s(intervals, event_start_s, lost, allowance),
        interval_s=step, sent_packets=sum(s.tx_packets for s in intervals))


def _idle_s(sample: IntervalSample, offered_pps: float) -> float:
    """How much of ``sample`` nothing arrived, by how far its frames fell short of the
    rate (a steady rate fills an interval evenly)."""
    span = sample.end_s - sample.start_s
    if span <= 0 or offered_pps <= 0:
        return 0.0
    return span * min(1.0, max(0.0, 1.0 - sample.rx_packets / (offered_pps * span)))


def _timestamp_s(edge_before: list[IntervalSample], after: list[IntervalSample],
                 offered_pps: float, quiet=None) -> float | None:
    """Last frame forwarded before the outage to the first after: the first stretch of
    intervals after the event that are ``quiet`` (by default: nothing arrived in them)
    and the intervals around it, each by its idle share (an empty one's is all of it);
    without a quiet interval, the idle shares of the first two intervals after the
    event. None when nothing arrived after the event."""
    if not any(s.rx_packets for s in after):
        return None
    quiet = quiet or (lambda s: s.rx_packets == 0 and not s.last)
    marked = [quiet(s) for s in after]
    if not any(marked):
        return sum(_idle_s(s, offered_pps) for s in after[:2])
    first = last = marked.index(True)
    while last + 1 < len(after) and marked[last + 1]:
        last += 1
    edges = (after[first - 1:first] if first else edge_before) + after[last + 1:last + 2]
    return sum(_idle_s(s, offered_pps) for s in after[first:last + 1] + edges)


def every_frame_back_s(intervals: list[IntervalSample], event_start_s: float, lost: int,
                      allowance: float) -> float | None:
    """From the event to the end of the first reading after it from which no more than
    ``allowance`` frames are lost (settled_losses: the frames missing never fall further
    below the trial's final loss) and no more than twice that are in flight (the frames
    missing stay near the final loss: none queued behind the outage). Frames in flight
    at a reading (a DUT's pipeline, a generator counting late) vary from one reading
    to the next: vFW's were 24 to 100 before a restart and 21 to 136 after it. None
    when that is only so once the traffic stopped and drained."""
    settled = settled_losses(intervals)
    missing, back = 0, None
    for sample, known in zip(intervals, settled, strict=True):
        missing += sample.tx_packets - sample.rx_packets
        if known < lost - allowance or missing - lost > 2 * allowance:
            back = None
        elif back is None and sample.end_s > event_start_s:
            back = sample
    if back is None or back.last:
        return None
    return max(0.0, back.end_s - event_start_s)


def spread(values: list[float]) -> dict:
    """Mean, standard deviation, min and max of N trials' values."""
    if not values:
        return {}
    return {"mean": statistics.fmean(values),
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "trials": len(values)}


def record(reset: ResetTime) -> dict:
    """One trial's outage as results hold it."""
    return {"event_start_s": reset.event_start_s, "event_end_s": reset.event_end_s,
            "event_s": reset.event_end_s - reset.event_start_s,
            "offered_pps": reset.offered_pps, "sent_before_event": reset.sent_before,
            "lost_before_event": reset.lost_before, "lost_in_warmup": reset.lost_warmup,
            "lost_packets": reset.lost_packets, "frame_loss_s": reset.frame_loss_s,
            "timestamp_s": reset.timestamp_s, "full_rate_back_s": reset.full_rate_back_s,
            "recovered": reset.recovered, "interval_s": reset.interval_s,
            "sent_packets": reset.sent_packets, "loss_ratio": reset.loss_ratio}


def dut_view(timeline: list[IntervalSample], event_start_s: float, duration_s: float,
             warmup_s: float) -> dict:
    """The outage as the DUT's own counters saw it (nsb.dut_feed's timeline): frames
    that arrived at its ports and frames it sent over the trial, and by timestamps its
    own last frame sent before the event to its first after (``silent_s``), read at
    its readings' resolution. Its quiet readings are those under half its rate: a DUT
    stopped while read answers late, in one long reading that sent a little, and an
    event sent over SSH reaches it a round trip after the event's start. Readings after
    the traffic's end are the drain's only."""
    during = [s for s in timeline if s.start_s >= warmup_s and s.end_s <= duration_s]
    before = [s for s in during if s.end_s <= event_start_s]
    after = [s for s in during if s.end_s > event_start_s]
    span = sum(s.end_s - s.start_s for s in before)
    sending = sum(s.rx_packets for s in before) / span if span > 0 else 0.0
    return {"arrived": sum(s.tx_packets for s in timeline),
            "sent": sum(s.rx_packets for s in timeline),
            "sent_pps_before_event": sending,
            "silent_s": _timestamp_s(before[-1:], after, sending, quiet=lambda s: (
                s.rx_packets < 0.5 * sending * (s.end_s - s.start_s))) if sending else None,
            "readings": [[round(s.end_s, 4), s.tx_packets, s.rx_packets] for s in timeline]}
