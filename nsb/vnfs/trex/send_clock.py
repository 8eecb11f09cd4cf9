"""How long TRex really took to send a trial, by its own tx counter read over time.

A trial that kept its schedule within ``generator_tolerance_pct`` may still have sent
a few % slower than asked (a 2 s trial over memif ended 2.6 % late here, and TRex
starts slower than its rate for the first tens of milliseconds): its frames over its
nominal duration overstate the rate on the wire. So nsb reads TRex's tx counter
(``get_stats``, which TRex answers from its ports' live counters) every ``POLL_S``
just after the start and near the end, and times its first and last frame from those
readings (``nsb.counter_span``): the frames over that span are the rate it sent. The
counters were cleared before ``start`` was asked, which bounds the first frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from nsb import counter_span

POLL_S = 0.01  # readings this far apart at the start and the end: 20 ms or better
START_READINGS = 4  # readings with frames out at the start, the first frame's time
END_WINDOW_S = 0.15  # the end is read from this long before the trial's nominal end
MIN_SPAN_S = 0.2  # a pace over less than this is no pace (a trial stopped at once)


@dataclass
class SendClock:
    """TRex's tx counter as read during one trial: (seconds after ``start`` returned,
    frames sent by then), and the frames the trial sends in all."""

    intended: int
    readings: list[tuple[float, int]] = field(default_factory=list)

    def read(self, gen, started: float) -> tuple[int, float]:
        """One reading of TRex's frames sent (the middle of the request that read
        them): kept, and returned as (frames, seconds after ``started``)."""
        before = time.monotonic()
        stats = gen.client.get_stats(ports=gen.tx_ports)
        sent = sum(int(stats[port]["opackets"]) for port in gen.tx_ports)
        at = (before + time.monotonic()) / 2 - started
        self.readings.append((at, sent))
        return sent, at

    def cleared_at(self, at: float) -> None:
        """TRex's counters read 0 at ``at`` (cleared before the trial's ``start``): no
        frame went before then."""
        self.readings.insert(0, (at, 0))

    def read_start(self, gen, started: float, give_up_s: float) -> None:
        """Readings from the start until ``START_READINGS`` of them show frames out
        (or ``give_up_s`` passed, or every frame is out)."""
        shown = 0
        while shown < START_READINGS:
            sent, at = self.read(gen, started)
            if sent >= self.intended or at >= give_up_s:
                return
            shown += sent > 0
            time.sleep(POLL_S)

    def span_s(self) -> float | None:
        """Seconds from TRex's first frame to its last (None: the readings do not show
        both ends: a trial too short, or one stopped before its end)."""
        return counter_span.span_s(self.readings, self.intended)

    def pace_pps(self) -> float | None:
        """A stopped trial's pace: its frames between the first reading that showed
        some and the last reading, over the time between them (None when the readings
        span less than ``MIN_SPAN_S``)."""
        moving = [t for t, n in self.readings if n > 0]
        if len(moving) < 2 or moving[-1] - moving[0] < MIN_SPAN_S:
            return None
        return counter_span.pace(self.readings)

    def end_window(self, duration_s: float) -> float:
        """From when, after the start, the end is read every ``POLL_S``."""
        return max(0.0, duration_s - END_WINDOW_S)
