"""Time and peak memory of `nsb` on hostile input; prints them per class of case.

Every case of tests/hostile_corpus.py (resource bombs, bad bytes, wrong types,
template towers...) runs through the real command, one at a time so that the
times are not skewed by each other. The goal: each case ends in under 5 s
within 200 MB (tests check the exit, the line and the memory, not the time).
"""

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_S, GOAL_MB = 5.0, 200.0


def main() -> int:
    from tests import hostile_corpus

    by_class: dict[str, list] = defaultdict(list)
    for case in hostile_corpus.cases():
        outcome = hostile_corpus.run_case(case)
        by_class[case.name.rsplit("-", 1)[0] if case.name.count("-") > 1 else case.name].append(
            (case.name, outcome))
    worst_s = worst_mb = 0.0
    print(f"{'class':32} {'cases':>5} {'max s':>7} {'max MB':>7}")
    for name, outcomes in sorted(by_class.items()):
        slowest = max(o.elapsed_s for _, o in outcomes)
        largest = max(o.max_rss_mb for _, o in outcomes)
        worst_s, worst_mb = max(worst_s, slowest), max(worst_mb, largest)
        print(f"{name:32} {len(outcomes):5d} {slowest:7.2f} {largest:7.1f}")
    total = sum(len(v) for v in by_class.values())
    met = worst_s < GOAL_S and worst_mb < GOAL_MB
    print(f"hostile input: {total} cases, slowest {worst_s:.2f} s (goal < {GOAL_S:g}), "
          f"largest {worst_mb:.0f} MB (goal < {GOAL_MB:g}): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
