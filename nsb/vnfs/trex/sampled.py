"""A TRex trial read every interval while its traffic runs (a soak): one continuous
stream, the port counters and the latency streams' statistics taken at each interval's
end and turned into that interval's counts.

TRex keeps its counters cumulative; an interval is the difference of two readings.
Its latency comes from the difference of the latency histograms: the percentiles
and the average at bucket resolution (the average from bucket midpoints), min and
max to a bucket, exact where the interval set a new overall minimum or maximum. The
last interval is read once the traffic drained, so the intervals sum to the trial.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import replace

from nsb import frames
from nsb.errors import RunError
from nsb.intervals import IntervalSample
from nsb.trial import LatencyStats, Trial, TrialResult, percentiles
from nsb.vnfs.trex import stats

LOG = logging.getLogger(__name__)
POLL_S = 0.05


class Readings:
    """The previous cumulative reading: what the next interval is counted from."""

    def __init__(self, gen, pg_ids: list[int]):
        self.gen, self.pg_ids = gen, pg_ids
        self.tx = self.rx = 0
        self.hist: dict[float, int] = {}
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
        total = stats.latency(pgid_stats, self.pg_ids)
        if total is None:
            return None
        delta = {edge: count - self.hist.get(edge, 0) for edge, count in total.histogram}
        delta = sorted((edge, count) for edge, count in delta.items() if count > 0)
        low, high = self.low, self.high
        self.hist = dict(total.histogram)
        self.low, self.high = total.min_us, total.max_us
        if not delta:
            return None
        edges = [edge for edge, _ in delta]
        floors = {edge: bucket_floor(edge) for edge in edges}
        samples = sum(count for _, count in delta)
        new_low = low is None or total.min_us < low
        new_high = high is None or total.max_us > high
        return LatencyStats(
            samples=samples,
            min_us=total.min_us if new_low else max(total.min_us, floors[edges[0]]),
            avg_us=sum((floors[e] + e) / 2 * c for e, c in delta) / samples,
            max_us=total.max_us if new_high else min(total.max_us, edges[-1]),
            percentiles_us=percentiles(delta, samples), histogram=delta)


def bucket_floor(ceiling: float) -> float:
    """The lower edge of TRex's histogram bucket that ends at ``ceiling`` microseconds."""
    if ceiling <= 10:
        return 0.0
    return ceiling - 10 ** math.floor(math.log10(ceiling - 1e-9))


def run(gen, trial: Trial, interval_s: float,
        on_interval: Callable[[IntervalSample], None]) -> TrialResult:
    """``trial`` as one stream, ``on_interval`` called at every ``interval_s``. Stopped
    early (a signal), the traffic is stopped and what was sent is the last interval."""
    if isinstance(trial.frame_size, frames.FrameMix) and not gen.SENDS_FRAME_MIX:
        raise RunError(f"{gen.name}: {gen.no_frame_mix_reason}")
    gen._check_frame_fits(frames.largest(trial.frame_size))
    flows = trial.flows or gen.options["flows"]
    pg_ids = gen._load_streams(trial, flows)
    client, ports = gen.client, list(range(len(gen.ports)))
    client.clear_stats(ports=ports)
    readings = Readings(gen, pg_ids)
    client.start(ports=gen.tx_ports, duration=trial.duration_s, force=True)
    started = time.monotonic()
    try:
        wall_s = _sample_while_sending(gen, readings, trial, interval_s, started, on_interval)
    except BaseException:
        with contextlib.suppress(Exception):
            client.stop(ports=gen.tx_ports)
            on_interval(_last(gen, readings, pg_ids, time.monotonic() - started))
        raise
    client.wait_on_traffic(ports=gen.tx_ports, timeout=5, rx_delay_ms=gen.options["rx_delay_ms"])
    final = _last(gen, readings, pg_ids, wall_s)
    on_interval(final)
    port_stats = readings.port_stats
    missed = sum(int(client.get_xstats(port).get("rx_missed_errors", 0))
                 for port in gen.rx_ports)
    latency = stats.latency(client.get_pgid_stats(pg_ids), pg_ids) if pg_ids else None
    tolerance = gen.options["generator_tolerance_pct"] / 100.0
    stretched = wall_s > trial.duration_s * (1 + tolerance) + 1.0
    return stats.trial_result(replace(trial, flows=flows), gen, port_stats, wall_s,
                              stretched, latency, missed)


def _sample_while_sending(gen, readings: Readings, trial: Trial, interval_s: float,
                          started: float, on_interval) -> float:
    """Reads an interval at each boundary while TRex sends; the seconds it sent."""
    client, ports = gen.client, list(range(len(gen.ports)))
    tx_ports = set(gen.tx_ports)
    limit = trial.duration_s * gen.options["stretch_limit"] + 10
    boundary = interval_s
    while tx_ports & set(client.get_active_ports()):
        now = time.monotonic() - started
        if now > limit:
            LOG.warning("%s: TRex still sending %g s into a %g s soak; stopped", gen.name,
                        limit, trial.duration_s)
            client.stop(ports=gen.tx_ports)
            break
        if now >= boundary and boundary < trial.duration_s - POLL_S:
            pgid = client.get_pgid_stats(readings.pg_ids) if readings.pg_ids else None
            on_interval(readings.take(client.get_stats(ports=ports), pgid, now))
            boundary += interval_s
            continue
        time.sleep(POLL_S)
    return time.monotonic() - started


def _last(gen, readings: Readings, pg_ids: list[int], end_s: float) -> IntervalSample:
    """The last interval, once the receive counters rest (nothing left in flight)."""
    port_stats = gen._drain(list(range(len(gen.ports))))
    readings.port_stats = port_stats
    pgid = gen.client.get_pgid_stats(pg_ids) if pg_ids else None
    return readings.take(port_stats, pgid, end_s, last=True)
