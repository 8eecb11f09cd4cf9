"""How long `nsb --help` takes (the goal is under 0.3 s); prints the numbers."""

import statistics
import subprocess
import sys
import time

RUNS = 15


def main() -> None:
    argv = [sys.executable, "-m", "nsb", "--help"]
    subprocess.run(argv, capture_output=True, check=True)  # warm the page cache
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    print(f"nsb --help: median {statistics.median(times):.3f} s, min {min(times):.3f} s, "
          f"max {max(times):.3f} s over {RUNS} runs (goal < 0.300 s)")


if __name__ == "__main__":
    main()
