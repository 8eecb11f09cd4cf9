"""How long `nsb report trend` takes, and its peak memory, over a history of 1,000 to
10,000 runs of one test (a year of hourly runs is 8,760).

The history is built in a temporary results directory, run by run: binsearch answers
with 0.5 % noise, 10 % lower from run 600 and 15 % higher from run 3,000, each
results.json with TRIALS trials as a run writes them. For each size it prints:

- cold: nothing kept (``<results_dir>/.trend-cache`` removed): every results.json is
  read and every run counted;
- +1 run: what the report before kept, and one run more (a day of hourly runs does
  this 24 times): the new run is read and added to the kept groups;
- no new run: the same report again;
- html: the +1 run case with ``--html``.

The groups found are printed too (the steps are at runs 600 and 3,000).

    python benchmarks/bench_trend.py [--runs 1000,2000,5000,10000] [--trials 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = ((0, 1e6), (600, 0.9e6), (3000, 1.035e6))  # (first run, level)
HOUR_S = 3600.0
START_S = 1.8e9


def level(n: int) -> float:
    return [value for first, value in STEPS if n >= first][-1]


def write_run(results: Path, n: int, value: float, trials: int) -> None:
    """Run n of the history, as nsb's file output writes it (the parts trends read,
    and trials that make the file as large as a real one)."""
    when = START_S + HOUR_S * n
    task_id = time.strftime("%y%m%d-%H%M%S", time.gmtime(when)) + f"-{n:06x}"
    records = [{"scenario": "s", "iteration": 0, "frame_size": 64, "trial_index": k,
                "tx_rate_pps": value * (1.2 - k / 50), "rx_rate_pps": value,
                "loss_pct": max(0.0, 20 - k), "duration_s": 10.0, "verdict": "fail",
                "latency": {"min_us": 8.0, "avg_us": 12.5, "max_us": 80.0}}
               for k in range(trials)]
    result = {"scenario": "s", "iteration": 0, "profile": "binsearch", "frame_size": 64,
              "throughput_pps": value, "throughput_mbps": value * 84 * 8 / 1e6,
              "line_rate_pct": value / 148809.52, "loss_pct": 0.0, "limited_by": "dut",
              "warnings": [], "timestamp": when + 600}
    folder = results / task_id
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({
        "format": "nsb-results/1",
        "task": {"id": task_id, "file": "/srv/tasks/tc_l3fwd_rfc2544.yaml", "args": {},
                 "started": when, "finished": when + 700, "status": "ok"},
        "trials": records, "results": [result]}, indent=1))


def report(results: Path, *extra: str) -> tuple[float, float, str]:
    """Seconds and peak memory (MB) of one `nsb report trend`, and what it printed."""
    argv = [sys.executable, "-m", "nsb", "report", "trend", "--results-dir", str(results),
            "--format", "json", *extra]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own peak, not the largest
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode:
            raise SystemExit(f"nsb report trend failed: {err.read().decode()}")
        return seconds, usage.ru_maxrss / 1024, out.read().decode()


def groups_found(out: str) -> str:
    (found,) = json.loads(out)
    return "; ".join(f"{g['runs']} at {g['avg'] / 1e6:.3f} Mpps" for g in found["groups"]) \
        + f" ({found['newest']})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="1000,2000,5000,10000",
                        help="history sizes, comma-separated")
    parser.add_argument("--trials", type=int, default=20, help="trials per results.json")
    parser.add_argument("--keep", metavar="DIR", help="build the history in DIR and keep it")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.runs.split(","))
    work = Path(args.keep or tempfile.mkdtemp(prefix="nsb-bench-trend-"))
    results = work / "results"
    results.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    built = len(list(results.glob("*/results.json")))
    print(f"nsb report trend over one test's history ({args.trials} trials per results.json)")
    print(f"{'runs':>6} {'cold s':>7} {'MB':>5} {'+1 run s':>9} {'MB':>5} {'no new s':>9} "
          f"{'MB':>5} {'html s':>7}  groups found")
    try:
        report(results)  # imports compiled and in the page cache before the first figure
        for size in sizes:
            for n in range(built, size - 1):
                write_run(results, n, level(n) * (1 + rng.uniform(-0.005, 0.005)), args.trials)
            built = max(built, size - 1)
            shutil.rmtree(results / ".trend-cache", ignore_errors=True)
            cold = report(results)
            write_run(results, built, level(built) * 0.999, args.trials)  # the newest
            built += 1
            more = report(results)
            same = report(results)
            html = report(results, "--html", str(work / "trend.html"))
            print(f"{size:>6} {cold[0]:>7.2f} {cold[1]:>5.0f} {more[0]:>9.2f} {more[1]:>5.0f} "
                  f"{same[0]:>9.2f} {same[1]:>5.0f} {html[0]:>7.2f}  {groups_found(more[2])}",
                  flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
