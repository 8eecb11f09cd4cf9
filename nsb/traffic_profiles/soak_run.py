"""How a soak's trial is sent: one continuous stream read per interval where the
generator can, else back-to-back trials of one interval each."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import replace

from nsb.intervals import IntervalSample
from nsb.trial import LatencyStats, Trial, TrialResult, percentiles
from nsb.vnfs.base import TrafficGen

LOG = logging.getLogger(__name__)

OnInterval = Callable[[IntervalSample], None]


def sender(generator: TrafficGen, interval_s: float, on_interval: OnInterval,
           should_stop: Callable[[], bool]) -> Callable[[Trial], TrialResult]:
    """What runs the soak's trial: the generator's own sampling, or pieces."""
    if generator.SAMPLES_INTERVALS:
        return lambda trial: generator.run_sampled(trial, interval_s, on_interval)
    LOG.warning("%s cannot be read while its traffic runs (%s): the soak sends "
                "back-to-back trials of %g s", generator.name,
                generator.no_interval_reason, interval_s)
    return lambda trial: in_pieces(generator, trial, interval_s, on_interval, should_stop)


def in_pieces(generator: TrafficGen, trial: Trial, interval_s: float,
              on_interval: OnInterval, should_stop: Callable[[], bool]) -> TrialResult:
    """``trial`` as consecutive trials of ``interval_s`` (the last one shorter), each one
    an interval; a stop between two ends it with what was sent so far."""
    pieces = max(1, math.ceil(trial.duration_s / interval_s - 1e-9))
    results: list[TrialResult] = []
    start = 0.0
    for index in range(pieces):
        span = min(interval_s, trial.duration_s - start)
        result = generator.run_trial(replace(trial, duration_s=span))
        results.append(result)
        last = index == pieces - 1 or should_stop()
        on_interval(IntervalSample(index, start, start + span, result.tx_packets,
                                   result.rx_packets, result.latency, last=last))
        start += span
        if last:
            break
    return combined(trial, results, start)


def combined(trial: Trial, results: list[TrialResult], duration_s: float) -> TrialResult:
    """One result from consecutive pieces of a trial: counts summed, latency merged."""
    return TrialResult(
        trial=replace(trial, duration_s=duration_s),
        tx_packets=sum(r.tx_packets for r in results),
        rx_packets=sum(r.rx_packets for r in results),
        elapsed_s=sum(r.elapsed_s for r in results),
        latency=merged_latency([r.latency for r in results]),
        generator_limited=any(r.generator_limited for r in results),
        rx_missed_packets=sum(r.rx_missed_packets for r in results))


def merged_latency(parts: list[LatencyStats | None]) -> LatencyStats | None:
    """The latency of several intervals as one: extremes, the weighted mean, the
    histograms added up and their percentiles."""
    parts = [p for p in parts if p is not None and p.samples > 0]
    if not parts:
        return None
    samples = sum(p.samples for p in parts)
    buckets: dict[float, int] = {}
    for part in parts:
        for edge, count in part.histogram:
            buckets[edge] = buckets.get(edge, 0) + count
    histogram = sorted(buckets.items())
    overflow = sum(p.overflow_samples for p in parts)
    return LatencyStats(
        samples=samples, min_us=min(p.min_us for p in parts),
        avg_us=sum(p.avg_us * p.samples for p in parts) / samples,
        max_us=max(p.max_us for p in parts),
        percentiles_us=percentiles(histogram, samples, overflow) if histogram else {},
        histogram=histogram, overflow_samples=overflow)
