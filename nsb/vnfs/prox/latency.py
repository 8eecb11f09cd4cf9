"""Latency of a PROX trial from its ``mode=lat`` tasks: extremes, average, histogram.

Each lat task keeps a histogram of 128 buckets of 2^``latency bucket size`` TSC
cycles; the last bucket holds everything beyond (overflow). A percentile is
reported only where the histogram covers it: when its rank falls in the overflow
bucket the histogram cannot say where it lies, and the result counts the
overflowed samples instead of inventing a value.
"""

from __future__ import annotations

from collections import defaultdict

from nsb.trial import LatencyStats, percentiles
from nsb.vnfs.prox.client import LatStats, ProxClient
from nsb.vnfs.prox.config import CoreTask


def trial_latency(client: ProxClient, lat_tasks: list[CoreTask], rx_per_task: tuple[int, ...],
                  hz: int) -> LatencyStats | None:
    """Latency since ``reset stats`` over every lat task that received frames."""
    measured: list[tuple[LatStats, list[int], int, int]] = []
    for task, rx in zip(lat_tasks, rx_per_task, strict=True):
        stats, buckets = client.lat_all_stats(task.core, task.task)
        if rx > 0:
            measured.append((stats, buckets, task.bucket_size, rx))
    if not measured or all(m[0].max_since_reset_us == 0 for m in measured):
        return None  # nothing received, or PROX did not accept the link's accuracy
    total_rx = sum(m[3] for m in measured)
    # min/max since reset cover the trial; PROX's avg covers its last stats period
    avg = sum(m[0].avg_us * m[3] for m in measured) / total_rx
    low = min(m[0].min_since_reset_us for m in measured)
    high = max(m[0].max_since_reset_us for m in measured)
    histogram, overflow = merge_histograms([(m[1], m[2]) for m in measured], hz, high)
    samples = sum(count for _, count in histogram)
    return LatencyStats(samples=samples, min_us=float(low), avg_us=avg, max_us=float(high),
                        percentiles_us=percentiles(histogram, samples, overflow),
                        histogram=histogram, overflow_samples=overflow)


def merge_histograms(histograms: list[tuple[list[int], int]], hz: int,
                     max_us: float) -> tuple[list[tuple[float, int]], int]:
    """Sum PROX histograms into (upper edge in us, count), and count the overflow.

    No edge lies beyond the maximum latency seen: the overflow bucket and the bucket
    holding the maximum end there.
    """
    merged: dict[float, int] = defaultdict(int)
    overflow = 0
    for buckets, bucket_size in histograms:
        width_us = (1 << bucket_size) / hz * 1e6
        for index, count in enumerate(buckets):
            if not count:
                continue
            if index == len(buckets) - 1:
                overflow += count
                merged[round(max(max_us, index * width_us), 3)] += count
            else:  # the bucket holding the maximum ends there
                merged[round(min((index + 1) * width_us, max(max_us, index * width_us)), 3)] += \
                    count
    return sorted(merged.items()), overflow
