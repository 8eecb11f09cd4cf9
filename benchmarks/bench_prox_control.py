"""Seconds of control per trial against the real PROX, in the embedded lab; prints them.

A trial's wall time minus its traffic time is what nsb spends talking to PROX:
setting frame size and rate, watching snapshots, stopping, waiting for a
snapshot after the stop and for the lat tasks' count to rest, reading latency
and port counters. PROX is NSB_PROX_PATH or ../shared/tools/prox/prox; it runs
with -r 0.1, nsb's default. Needs root.
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRIALS, DURATION_S, RATE_PPS = 8, 1.0, 20_000


def main() -> int:
    from nsb.trial import Trial
    from tests.functional.prox_lab import PROX, running_sample

    if not PROX.is_file():
        print(f"PROX control per trial: skipped (no PROX at {PROX}; set NSB_PROX_PATH)")
        return 0
    if os.geteuid() != 0:
        print("PROX control per trial: skipped (needs root for the embedded lab)")
        return 0
    with tempfile.TemporaryDirectory() as tmp, running_sample(Path(tmp)) as scenario:
        tg = scenario.generator
        tg.run_trial(Trial(64, RATE_PPS, DURATION_S))  # warm-up
        control = []
        for _ in range(TRIALS):
            started = time.monotonic()
            tg.run_trial(Trial(64, RATE_PPS, DURATION_S))
            control.append(time.monotonic() - started - DURATION_S)
    print(f"PROX control per trial ({TRIALS} trials of {DURATION_S:g} s at {RATE_PPS} pps, "
          f"real PROX, -r 0.1): median {statistics.median(control):.2f} s, "
          f"max {max(control):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
