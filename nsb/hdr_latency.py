"""Latency from HDR histograms (HdrHistogram, as TRex's ``--hdrh`` and NFVbench give
them): percentiles and the mean to the histogram's precision instead of a coarse
bucket's ceiling, merged over directions and differenced over time (a soak's
intervals), with the precision said in the results.

TRex records every latency sample in microseconds into an HdrHistogram of 3
significant digits (1 us to 10 s) and sends it encoded (compressed, base64). Its
own ``total_min``/``total_max`` are exact (its max leaves out the first 10
samples of a run; the histogram holds those).
"""

from __future__ import annotations

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

from nsb.trial import PERCENTILES, LatencyStats

# the coarse histogram the results carry (for charts): bucket upper edges 1-2-5 per decade
_EDGE_STEPS = (1, 2, 5)


def decode(encoded: str) -> HdrHistogram:
    return HdrHistogram.decode(encoded)


def resolution(histogram: HdrHistogram) -> str:
    """How precise the percentiles and the mean are, in words."""
    digits = histogram.significant_figures
    return (f"HDR histogram, {digits} significant digits: values within "
            f"{100 * 10 ** -digits:g} % (at least 1 us)")


def merged(histograms: Iterable[HdrHistogram]) -> HdrHistogram | None:
    """One histogram of every sample of ``histograms`` (None for none)."""
    total = None
    for histogram in histograms:
        if total is None:
            total = HdrHistogram(histogram.lowest_trackable_value,
                                 histogram.highest_trackable_value,
                                 histogram.significant_figures)
        total.add(histogram)
    return total


def difference(now: HdrHistogram, before: HdrHistogram | None) -> HdrHistogram:
    """The samples ``now`` holds that ``before`` (an earlier reading of the same
    cumulative histogram) did not: an interval's own samples, bucket by bucket (the
    buckets' places are fixed, so nothing is counted twice)."""
    diff = HdrHistogram(now.lowest_trackable_value, now.highest_trackable_value,
                        now.significant_figures)
    for index in range(now.counts_len):
        count = now.get_count_at_index(index) - (
            before.get_count_at_index(index) if before is not None else 0)
        if count > 0:
            diff.record_value(now.get_value_from_index(index), count)
    return diff


def coarse_histogram(histogram: HdrHistogram) -> list[tuple[float, int]]:
    """(upper edge in us, count) on 1-2-5 edges: a short histogram for charts."""
    counts: dict[float, int] = {}
    for item in histogram.get_recorded_iterator():
        edge = _edge_above(item.value_iterated_to)
        counts[edge] = counts.get(edge, 0) + item.count_at_value_iterated_to
    return sorted(counts.items())


def _edge_above(value: float) -> float:
    """The smallest of 1, 2, 5, 10, 20, 50... at or above ``value``."""
    decade = 1
    while True:
        for step in _EDGE_STEPS:
            if decade * step >= value:
                return float(decade * step)
        decade *= 10


def stats(histogram: HdrHistogram, min_us: float | None = None,
          max_us: float | None = None) -> LatencyStats | None:
    """LatencyStats of ``histogram``: percentiles at the highest value of their HDR
    bucket (conservative within the precision, never above the maximum), the mean of
    the samples, and min and max exact where the generator counted them
    (``min_us``/``max_us``), else to the precision. None without samples."""
    samples = histogram.get_total_count()
    if samples <= 0:
        return None
    low = histogram.get_lowest_equivalent_value(histogram.get_min_value())
    high = histogram.get_max_value()
    if min_us is not None and min_us <= histogram.get_highest_equivalent_value(low):
        low = min_us  # exact, and the histogram's lowest sample agrees with it
    if max_us is not None and \
            histogram.get_lowest_equivalent_value(histogram.get_max_value()) <= max_us:
        high = max_us  # exact (a higher sample among TRex's first ten keeps the histogram's)
    # a bucket's highest value can pass the exact maximum: no sample is above that
    percentiles = {f"p{p:g}": float(min(histogram.get_value_at_percentile(p), high))
                   for p in PERCENTILES}
    mean = min(max(histogram.get_mean_value(), low), high)
    return LatencyStats(samples=samples, min_us=float(low), avg_us=mean,
                        max_us=float(high), percentiles_us=percentiles,
                        histogram=coarse_histogram(histogram), resolution=resolution(histogram),
                        hdrh=histogram.encode().decode("ascii"))
