"""Whether TRex kept its own schedule in a trial, told by its own counters.

TRex paces its streams by its own clock and, when its data plane falls behind, sends
late rather than dropping: it sends all of a trial's rate x duration frames whatever
happens, and a trial it cannot keep up with simply lasts longer. So the frame count
alone says nothing of the rate on the wire, and the client's wall time (which adds
TRex's port-state event delay, tens to hundreds of milliseconds on a busy core) is no
witness either. What is: how many frames TRex had sent by the trial's end plus the
tolerance. nsb reads TRex's tx counters there (and, for long trials, at checkpoints on
the way), once each:

- every frame out: TRex kept its schedule; the trial's offered rate is its frames over
  the seconds TRex took to send them by its tx counter read near the start and the end
  (``send_clock``), whenever the port-state event arrives;
- frames still to send: TRex lagged; the trial is stopped at once (not left running
  for many times its length), it is generator-limited, and its rate is what TRex sent
  over the seconds it sent.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from nsb.trial import Trial
from nsb.vnfs.trex.send_clock import SendClock

LOG = logging.getLogger(__name__)
POLL_S = 0.01  # the client's port state (its subscriber's, no RPC) is checked this often
SETTLE_S = 0.02  # a second reading this much later tells a port still sending from one done
# trials at least this long are also checked on the way (a lagging 30 s trial stops early)
CHECKPOINT_FROM_S = 8.0
START_SKEW_S = 0.05  # the data plane starts this much after ``start`` returns, at most
# a burst is due this much after its frames' time (the client's poll and the counters'
# RPC): shorter bursts are checked only as far as that allows (Pacing.known_within_s)
BURST_ALLOWANCE_S = 0.02


@dataclass(frozen=True)
class Pacing:
    """How a trial's traffic went by TRex's account: the seconds it sent for (the
    trial's duration when it kept its schedule), whether it lagged, and why in words;
    ``known_within_s``: by when, after the start, every frame was known to be out (the
    port-state event or the counters said so; an upper bound on the sending time)."""

    sent_for_s: float
    lagged: bool = False
    note: str = ""
    known_within_s: float | None = None
    pace_pps: float | None = None  # a lagging trial's pace, by TRex's counters
    # seconds from TRex's first frame to its last by its tx counter (None: not known)
    measured_s: float | None = None

    def seconds_for(self, frames: int, trial: Trial) -> float:
        """The seconds TRex took to send ``frames``: at its pace when it lagged; from
        its first frame to its last, never less than its schedule, when it kept it."""
        if self.lagged:
            return frames / self.pace_pps if self.pace_pps else self.sent_for_s
        if self.measured_s and not trial.burst_frames and trial.rate_pps > 0:
            return max(self.measured_s, frames / trial.rate_pps)
        return trial.duration_s


def due_s(duration_s: float, tolerance: float) -> float:
    """When, after the start, a trial that kept its schedule has sent its last frame."""
    return duration_s * (1 + tolerance)


def checkpoints(duration_s: float) -> list[float]:
    """Seconds into a long trial at which its pace is checked (none for short ones)."""
    if duration_s < CHECKPOINT_FROM_S:
        return []
    return [duration_s * share for share in (0.25, 0.5, 0.75)]


def behind(sent: int, asked_pps: float, at_s: float, tolerance: float) -> bool:
    """TRex had sent fewer frames by ``at_s`` than its schedule allows (with the start's
    skew and the tolerance): it cannot keep the trial's rate."""
    return sent < asked_pps * max(0.0, at_s - START_SKEW_S) * (1 - tolerance)


def wait(gen, trial: Trial, started: float, allowance_s: float = 0.0,
         asked: float | None = None) -> Pacing:
    """Waits for the trial's traffic (``started``: when ``start`` returned; ``asked``:
    when it was called, the counters cleared) and tells whether TRex kept its schedule;
    stops the traffic as soon as it is known not to. ``allowance_s`` more than the
    tolerance is given to trials shorter than the client can time (a burst of
    milliseconds)."""
    due = due_s(trial.duration_s, tolerance_of(gen)) + allowance_s
    pending = checkpoints(trial.duration_s)
    clock = SendClock(trial.burst_frames or round(trial.rate_pps * trial.duration_s))
    if asked is not None:
        clock.cleared_at(asked - started)
    if not trial.burst_frames:  # a burst's pace is its own profile's business
        clock.read_start(gen, started, give_up_s=trial.duration_s / 2)
    end_from = clock.end_window(trial.duration_s) if not trial.burst_frames else due
    all_out = False
    while set(gen.tx_ports) & set(gen.client.get_active_ports()):
        now = time.monotonic() - started
        lagged = None
        if pending and now >= pending[0]:
            pending.pop(0)
            lagged = check_pace(gen, trial, started, clock)
        elif now >= due:
            return check_due(gen, trial, started, clock) or \
                _kept(trial, clock, time.monotonic() - started)
        elif now >= end_from and not all_out:
            all_out = clock.read(gen, started)[0] >= clock.intended
        if lagged:
            return lagged
        time.sleep(POLL_S)
    known = time.monotonic() - started
    if not all_out and not trial.burst_frames:  # the reading that bounds the last frame
        clock.read(gen, started)
    return _kept(trial, clock, known)


def _kept(trial: Trial, clock: SendClock, known_within_s: float) -> Pacing:
    return Pacing(trial.duration_s, known_within_s=known_within_s, measured_s=clock.span_s())


def tolerance_of(gen) -> float:
    return gen.options["generator_tolerance_pct"] / 100.0


def check_pace(gen, trial: Trial, started: float, clock: SendClock) -> Pacing | None:
    """On the way: None while TRex keeps up, else the trial stopped (``Pacing``)."""
    sent, at = clock.read(gen, started)
    if not behind(sent, trial.rate_pps, at, tolerance_of(gen)):
        return None
    return _stop(gen, trial, clock, f"TRex had sent {sent:,} frames {at:.1f} s into the "
                 f"trial, {trial.rate_pps * at:,.0f} by its schedule")


def check_due(gen, trial: Trial, started: float, clock: SendClock) -> Pacing | None:
    """At the trial's end plus the tolerance, with TRex's port still active by the
    client's account: None when every frame is out (the port-state event is late, not
    TRex), else the trial stopped (``Pacing``)."""
    intended = clock.intended
    sent, at = clock.read(gen, started)
    if sent >= intended or not _still_sending(gen, sent):
        return None
    return _stop(gen, trial, clock, f"TRex was still sending {at:.2f} s into a "
                 f"{trial.duration_s:g} s trial ({sent:,} of {intended:,} frames out)")


def sent_frames(gen) -> int:
    stats = gen.client.get_stats(ports=gen.tx_ports)
    return sum(int(stats[port]["opackets"]) for port in gen.tx_ports)


def _still_sending(gen, sent: int) -> bool:
    time.sleep(SETTLE_S)
    return sent_frames(gen) > sent


def _stop(gen, trial: Trial, clock: SendClock, why: str) -> Pacing:
    """Stops a trial TRex cannot keep up with: its pace is the slope of its counter's
    readings (or what it had sent by the reading that showed the lag, over the time
    since the start); frames sent while it is being stopped count, at that pace."""
    gen.client.stop(ports=gen.tx_ports)
    LOG.info("%s: %s: stopped, generator-limited", gen.name, why)
    at, sent = clock.readings[-1]
    pace = clock.pace_pps() or (sent / at if at > 0 and sent > 0 else None)
    return Pacing(at, lagged=True, pace_pps=pace,
                  note=f"{why}: it could not keep the rate of {trial.rate_pps:,.0f} pps and "
                       "the trial was stopped")
