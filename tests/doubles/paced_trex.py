"""Test double: TRex's STL client as far as a trial's pacing sees it (no packets).

It copies what was measured on TRex 3.08 here (memif and af_packet, 64 B): a stream
of rate x duration frames is always sent in full; a data plane that cannot keep the
rate sends at what it can (``capacity_pps``) and the trial lasts longer; the client's
port state (``get_active_ports``) turns idle ``event_delay_s`` after the last frame
and the first frame leaves ``start_delay_s`` after ``start``;
``get_stats`` reads the tx counter as it is at that moment; ``stop`` ends the traffic.
What it cannot show: bursts of catching up after a stall, the counters' own update
granularity, frames on the receive side.
"""

from __future__ import annotations

import time


class PacedTrexClient:
    def __init__(self, capacity_pps: float, event_delay_s: float = 0.0,
                 start_delay_s: float = 0.0):
        self.capacity_pps = capacity_pps
        self.event_delay_s = event_delay_s
        self.start_delay_s = start_delay_s  # the data plane starts this long after start()
        self.started: float | None = None
        self.rate_pps = 0.0
        self.frames = 0
        self.stopped_at: float | None = None
        self.stats_reads = 0

    def start(self, rate_pps: float, duration_s: float) -> None:
        self.started, self.stopped_at = time.monotonic() + self.start_delay_s, None
        self.rate_pps = rate_pps
        self.frames = round(rate_pps * duration_s)

    def _pace(self) -> float:
        return min(self.rate_pps, self.capacity_pps)

    def _sent(self, at: float) -> int:
        end = self.stopped_at if self.stopped_at is not None else at
        return min(self.frames, int(self._pace() * max(0.0, end - self.started)))

    def _last_frame_at(self) -> float:
        if self.stopped_at is not None:
            return self.stopped_at
        return self.started + self.frames / self._pace()

    # the STL client's calls that nsb's pacing makes

    def get_active_ports(self) -> list[int]:
        return [0] if time.monotonic() < self._last_frame_at() + self.event_delay_s else []

    def get_stats(self, ports):
        self.stats_reads += 1
        return {0: {"opackets": self._sent(time.monotonic())}}

    def stop(self, ports=None) -> None:
        self.stopped_at = time.monotonic()


class PacedTrexGen:
    """What pacing needs of the TRex generator: its client, tx ports, options, name."""

    def __init__(self, client: PacedTrexClient, tolerance_pct: float = 5.0):
        self.client = client
        self.tx_ports = [0]
        self.options = {"generator_tolerance_pct": tolerance_pct}
        self.name = "paced-trex"
