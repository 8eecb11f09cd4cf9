"""How an answer repeats over runs of the same task (``--repeat N``, or a runner's
iterations): per frame size the median and how far the runs are from it, said in a
line under the summary (the check the quick-start makes: within ±5 % of the median)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from nsb import frames

WITHIN_PCT = 5.0  # an answer that stays this close to its median over the runs repeats


@dataclass(frozen=True)
class Repeat:
    frame_size: object
    runs: int
    median_pps: float
    within_pct: float  # the farthest run from the median, in % of it
    limits: dict[str, int]  # what limited the runs' answers, and how many

    @property
    def repeats(self) -> bool:
        return self.within_pct <= WITHIN_PCT

    def line(self) -> str:
        limits = ", ".join(f"{count} {limit}" for limit, count in sorted(self.limits.items()))
        verdict = f"repeats within ±{WITHIN_PCT:g} %" if self.repeats else \
            f"does NOT repeat within ±{WITHIN_PCT:g} %"
        return (f"{frames.shown(self.frame_size)}: {self.runs} runs, median "
                f"{self.median_pps:,.0f} pps, every run within ±{self.within_pct:.1f} % of it: "
                f"{verdict} (limited by: {limits})")


def per_frame(results: list[dict]) -> list[Repeat]:
    """The frame sizes measured more than once, in frame size order."""
    grouped: dict = {}
    for record in results:
        grouped.setdefault(record["frame_size"], []).append(record)
    found = []
    for frame, group in sorted(grouped.items(), key=lambda item: frames.sort_key(item[0])):
        if len(group) < 2:
            continue
        rates = [float(r["throughput_pps"]) for r in group]
        median = statistics.median(rates)
        within = max(abs(rate - median) for rate in rates) / median * 100 if median else 0.0
        found.append(Repeat(frame, len(group), median, within,
                            dict(Counter(str(r.get("limited_by") or "-") for r in group))))
    return found
