"""A TRex trial read every interval while its traffic runs (a soak): one continuous
stream, the port counters and the latency streams' statistics taken at each interval's
end and turned into that interval's counts.

TRex keeps its counters cumulative; an interval is the difference of two readings.
Its latency comes from the difference of TRex's HDR histograms (nsb.hdr_latency):
an interval's own samples, its percentiles and mean to the histogram's precision, min
and max exact where the interval set a new overall minimum or maximum. The last
interval is read once the traffic drained, so the intervals sum to the trial.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace

from nsb import frames, hdr_latency
from nsb.errors import RunError
from nsb.intervals import InFlight, IntervalSample
from nsb.trial import LatencyStats, Trial, TrialResult
from nsb.vnfs.trex import pacing, stats
from nsb.vnfs.trex.send_clock import SendClock

LOG = logging.getLogger(__name__)
POLL_S = 0.05


class Readings:
    """The previous cumulative reading: what the next interval is counted from."""

    def __init__(self, gen, pg_ids: list[int]):
        self.gen, self.pg_ids = gen, pg_ids
        self.tx = self.rx = 0
        self.hdr = None  # the latency samples so far (an HDR histogram)
        self.low: float | None = None
        self.high: float | None = None
        self.start_s = 0.0
        self.index = 0
        self.port_stats: dict = {}  # the last reading's port counters

    def take(self, port_stats: dict, pgid_stats: dict | None, end_s: float,
             last: bool = False) -> IntervalSample:
        """The interval from the previous reading to this one."""
        tx = sum(int(port_stats[p]["opackets"]) for p in self.gen.tx_ports)
        rx = stats.received(port_stats, self.gen.rx_ports)
        latency = self._latency(pgid_stats) if pgid_stats else None
        sample = IntervalSample(self.index, self.start_s, end_s, tx - self.tx, rx - self.rx,
                                latency, last=last)
        self.tx, self.rx, self.start_s, self.index = tx, rx, end_s, self.index + 1
        return sample

    def _latency(self, pgid_stats: dict) -> LatencyStats | None:
        """The interval's own latency samples: the HDR histogram now less the one at the
        previous reading (bucket by bucket). Min and max are exact where the interval set
        a new overall minimum or maximum (TRex counts those), else to the histogram's
        precision."""
        total = stats.latency(pgid_stats, self.pg_ids)
        histogram = stats.hdr_histogram(pgid_stats, self.pg_ids)
        if total is None or histogram is None:
            return None
        own = hdr_latency.difference(histogram, self.hdr)
        new_low = self.low is None or total.min_us < self.low
        new_high = self.high is None or total.max_us > self.high
        self.hdr, self.low, self.high = histogram, total.min_us, total.max_us
        return hdr_latency.stats(own, min_us=total.min_us if new_low else None,
                                 max_us=total.max_us if new_high else None)


def run(gen, trial: Trial, interval_s: float,
        on_interval: Callable[[IntervalSample], None]) -> TrialResult:
    """``trial`` as one stream, ``on_interval`` called for every ``interval_s`` (one
    reading late: frames in flight at a boundary go to the interval that sent them,
    nsb.intervals.InFlight). Stopped early (a signal), the traffic is stopped and
    what was sent is the last interval."""
    if isinstance(trial.frame_size, frames.FrameMix) and not gen.SENDS_FRAME_MIX:
        raise RunError(f"{gen.name}: {gen.no_frame_mix_reason}")
    gen._check_frame_fits(frames.largest(trial.frame_size))
    flows = trial.flows or gen.options["flows"]
    pg_ids = gen._load_streams(trial, flows)
    client, ports = gen.client, list(range(len(gen.ports)))
    client.clear_stats(ports=ports)
    readings, assigned = Readings(gen, pg_ids), InFlight(on_interval)
    gen.traffic_started = None
    client.start(ports=gen.tx_ports, duration=trial.duration_s, force=True)
    started = gen.traffic_started = time.monotonic()  # events are timed from here
    try:
        pace = _sample_while_sending(gen, readings, trial, interval_s, started, assigned.push)
    except BaseException:
        with contextlib.suppress(Exception):
            client.stop(ports=gen.tx_ports)
            assigned.push(_last(gen, readings, pg_ids, time.monotonic() - started))
        raise
    client.wait_on_traffic(ports=gen.tx_ports, timeout=5, rx_delay_ms=gen.options["rx_delay_ms"])
    final = _last(gen, readings, pg_ids, pace.sent_for_s)
    assigned.push(final)
    port_stats = readings.port_stats
    missed = gen.rx_missed(gen.rx_ports)
    latency = stats.latency(client.get_pgid_stats(pg_ids), pg_ids) if pg_ids else None
    return stats.trial_result(replace(trial, flows=flows), gen, port_stats, pace, latency,
                              missed)


def _sample_while_sending(gen, readings: Readings, trial: Trial, interval_s: float,
                          started: float, on_interval) -> pacing.Pacing:
    """Reads an interval at each boundary while TRex sends; whether it kept its schedule
    (checked at every boundary: a generator that falls behind stops the soak there)."""
    client, ports = gen.client, list(range(len(gen.ports)))
    tx_ports = set(gen.tx_ports)
    due = pacing.due_s(trial.duration_s, pacing.tolerance_of(gen))
    clock = SendClock(round(trial.rate_pps * trial.duration_s))  # the lag checks' readings
    boundary = interval_s
    while tx_ports & set(client.get_active_ports()):
        now = time.monotonic() - started
        if now >= boundary and boundary < trial.duration_s - POLL_S:
            pgid = client.get_pgid_stats(readings.pg_ids) if readings.pg_ids else None
            on_interval(readings.take(client.get_stats(ports=ports), pgid, now))
            boundary += interval_s
            if pacing.behind(readings.tx, trial.rate_pps, now, pacing.tolerance_of(gen)):
                lagged = pacing.check_pace(gen, trial, started, clock)
                if lagged:
                    return lagged
            continue
        if now >= due:
            return pacing.check_due(gen, trial, started, clock) or pacing.Pacing(trial.duration_s)
        time.sleep(POLL_S)
    return pacing.Pacing(trial.duration_s)


def _last(gen, readings: Readings, pg_ids: list[int], end_s: float) -> IntervalSample:
    """The last interval, once the receive counters rest (nothing left in flight)."""
    port_stats = gen._drain(list(range(len(gen.ports))))
    readings.port_stats = port_stats
    pgid = gen.client.get_pgid_stats(pg_ids) if pg_ids else None
    return readings.take(port_stats, pgid, end_s, last=True)
