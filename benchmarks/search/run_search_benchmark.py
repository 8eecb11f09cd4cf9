"""Throughput search profiles against simulated DUTs: trials, time, and error.

For each profile and model, over SEEDS seeded DUTs with a capacity C drawn
between 10% and 95% of line rate (64 B frames, one 10 Gbit/s port), it prints:
trials per search, trial-seconds (mean, median, p95, max), wall time with 1 s overhead
per trial, and the error of the reported NDR against C (mean, 5th and 95th
percentile, count of over-reports), how many searches gave no answer, how many
under-reported by more than 5 % and how many fell far below (by more than 10 %). The
error is against the model's true zero-loss rate (C, or below C where a model loses
frames rarely below it).

    python benchmarks/search/run_search_benchmark.py [--seeds 200] [--models M0 M3]
        [--profiles fastndr]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.search.sim_dut import MODELS, SimulatedDut, true_ndr  # noqa: E402
from nsb import units  # noqa: E402
from nsb.events import ResultReady  # noqa: E402
from nsb.traffic_profiles.binsearch import BinSearchProfile  # noqa: E402
from nsb.traffic_profiles.fastndr import FastNdrProfile  # noqa: E402
from nsb.traffic_profiles.measurer import Measurer  # noqa: E402
from nsb.traffic_profiles.mlrsearch import MlrSearchProfile  # noqa: E402
from tests.doubles.profiles import make_profile  # noqa: E402

FRAME = 64
SPEED_GBPS = 10
RFC_GOAL = {"name": "NDR", "loss_ratio": 0.0, "final_trial_duration": 60.0,
            "duration_sum": 60.0, "relative_width": 0.005, "initial_trial_duration": 1.0}

PROFILES = {
    "binsearch (NSB: 0-100%, 0.1% precision, 60 s)": (BinSearchProfile, {
        "packet_sizes": [FRAME], "duration": 60, "tolerated_loss": 0.0, "test_precision": 0.1,
        "lower_bound": 0.0, "upper_bound": 100.0, "interface_speed_gbps": SPEED_GBPS}),
    "mlrsearch (RFC-equivalent NDR goal)": (MlrSearchProfile, {
        "packet_sizes": [FRAME], "interface_speed_gbps": SPEED_GBPS, "lower_bound": 1.0,
        "upper_bound": 100.0, "goals": [RFC_GOAL]}),
    "mlrsearch, no check above the answer (check_above_pct: 0)": (MlrSearchProfile, {
        "packet_sizes": [FRAME], "interface_speed_gbps": SPEED_GBPS, "lower_bound": 1.0,
        "upper_bound": 100.0, "goals": [RFC_GOAL], "check_above_pct": 0}),
    "fastndr (60 s final trial, 0.5% width)": (FastNdrProfile, {
        "packet_sizes": [FRAME], "interface_speed_gbps": SPEED_GBPS, "lower_bound": 1.0,
        "upper_bound": 100.0}),
    "fastndr, 300 s loss-free evidence (min_loss_free_s: 300)": (FastNdrProfile, {
        "packet_sizes": [FRAME], "interface_speed_gbps": SPEED_GBPS, "lower_bound": 1.0,
        "upper_bound": 100.0, "min_loss_free_s": 300}),
    "fastndr, 1 s trials only (prove: false; not backed)": (FastNdrProfile, {
        "packet_sizes": [FRAME], "interface_speed_gbps": SPEED_GBPS, "lower_bound": 1.0,
        "upper_bound": 100.0, "prove": False}),
}


def one_search(cls, options, model, seed):
    rng = random.Random(seed)
    line = units.line_rate_pps(FRAME, SPEED_GBPS)
    capacity = rng.uniform(0.10, 0.95) * line
    dut = SimulatedDut(model, capacity, seed)
    results = []
    measurer = Measurer(dut, "bench", "bench",
                        lambda e: results.append(e) if isinstance(e, ResultReady) else None)
    make_profile(cls, **options).execute(measurer)
    ndr = results[0].throughput_pps if results else 0.0
    truth = true_ndr(model, capacity)
    return dut.trials, dut.trial_seconds, 100.0 * (ndr - truth) / truth, ndr <= 0


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--profiles", nargs="*", default=[],
                        help="only the profiles whose name contains one of these")
    args = parser.parse_args()
    header = ("| profile | model | trials (mean) | trial-s mean | trial-s median | trial-s p95 | "
              "trial-s max | wall s (+1 s/trial) mean | error % mean | error % p5 | "
              "error % p95 | over-reports | no answer | gross under (< -5 %) | "
              "far below (< -10 %) |")
    print(header)
    print("|" + "---|" * 15)
    for name, (cls, options) in PROFILES.items():
        if args.profiles and not any(p in name for p in args.profiles):
            continue
        for model in args.models:
            started = time.perf_counter()
            runs = [one_search(cls, options, model, seed) for seed in range(args.seeds)]
            trials = [r[0] for r in runs]
            seconds = [r[1] for r in runs]
            errors = [r[2] for r in runs]
            walls = [s + t for s, t in zip(seconds, trials, strict=True)]
            print(f"| {name} | {model} | {statistics.mean(trials):.1f} | "
                  f"{statistics.mean(seconds):.0f} | {statistics.median(seconds):.0f} | "
                  f"{percentile(seconds, 95):.0f} | "
                  f"{max(seconds):.0f} | {statistics.mean(walls):.0f} | "
                  f"{statistics.mean(errors):+.2f} | {percentile(errors, 5):+.2f} | "
                  f"{percentile(errors, 95):+.2f} | {sum(e > 0 for e in errors)} | "
                  f"{sum(r[3] for r in runs)} | {sum(e < -5 for e in errors)} | "
                  f"{sum(e < -10 for e in errors)} |",
                  flush=True)
            print(f"  ({args.seeds} searches in {time.perf_counter() - started:.1f} s)",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
