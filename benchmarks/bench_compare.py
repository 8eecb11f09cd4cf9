"""How often `nsb report` marks a difference between two runs, by iterations per run.

Two runs of a simulated DUT whose capacity jitters from trial to trial (Gaussian,
JITTER of its mean) are compared the way `nsb report table A B` compares them
(nsb.report.compare: marked only beyond both results' resolution and spread).
Printed per number of iterations: how often the same DUT is marked different
(false alarms) and how often a DUT with CHANGE more capacity is marked better
(detections), over PAIRS pairs, for binsearch (NSB's 0.1 % precision).

    python benchmarks/bench_compare.py [--pairs 200] [--jitter 0.03] [--change 0.05]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.search.sim_dut import MODELS, SimulatedDut  # noqa: E402
from nsb import units  # noqa: E402
from nsb.events import ResultReady  # noqa: E402
from nsb.outputs.records import result_record  # noqa: E402
from nsb.report import compare  # noqa: E402
from nsb.report.loading import TaskResults  # noqa: E402
from nsb.traffic_profiles.binsearch import BinSearchProfile  # noqa: E402
from nsb.traffic_profiles.measurer import Measurer  # noqa: E402
from tests.doubles.profiles import make_profile  # noqa: E402

FRAME, SPEED_GBPS = 64, 10
OPTIONS = {"packet_sizes": [FRAME], "duration": 10, "tolerated_loss": 0.0,
           "test_precision": 0.1, "lower_bound": 0.0, "upper_bound": 100.0,
           "interface_speed_gbps": SPEED_GBPS}


def run(capacity: float, iterations: int, seed: str) -> TaskResults:
    """One task: ``iterations`` binary searches of the DUT, as results.json holds them."""
    records = []
    for iteration in range(iterations):
        dut = SimulatedDut("J", capacity, hash((seed, iteration)) & 0xFFFFFFFF)
        measurer = Measurer(dut, seed, "sc", lambda e: records.append(result_record(e))
                            if isinstance(e, ResultReady) else None, iteration=iteration)
        make_profile(BinSearchProfile, **OPTIONS).execute(measurer)
    return TaskResults(Path(seed), {"id": seed}, results=records)


def marked(a: TaskResults, b: TaskResults) -> str:
    [(match, [row])] = compare.compare_all([a, b])
    metric = compare.BY_KEY["throughput_pps"]
    return compare.verdict(metric, row.diff_pct["throughput_pps"][0],
                           compare.within(row, metric, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--jitter", type=float, default=0.03)
    parser.add_argument("--change", type=float, default=0.05)
    args = parser.parse_args()
    MODELS["J"] = {"jitter": args.jitter}
    line = units.line_rate_pps(FRAME, SPEED_GBPS)
    print(f"binsearch, capacity jitter {args.jitter:.1%} per trial, change {args.change:+.0%}, "
          f"{args.pairs} pairs")
    print(f"{'iterations per run':>20} {'same DUT marked':>16} {'change marked better':>21}")
    for iterations in (1, 3, 5, 10):
        false_alarms = detections = 0
        for pair in range(args.pairs):
            capacity = random.Random(pair).uniform(0.2, 0.8) * line
            base = run(capacity, iterations, f"{pair}-a")
            same = run(capacity, iterations, f"{pair}-b")
            faster = run(capacity * (1 + args.change), iterations, f"{pair}-c")
            false_alarms += marked(base, same) != "same"
            detections += marked(base, faster) == "better"
        print(f"{iterations:>20} {100 * false_alarms / args.pairs:>15.1f}% "
              f"{100 * detections / args.pairs:>20.1f}%")


if __name__ == "__main__":
    main()
