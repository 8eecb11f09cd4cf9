"""Side by side: per frame size each task's numbers and the % difference.

Like the HPE/Intel NFVi report's "Gen10 vs. Gen9 improvement (%)" table: the
first task is the baseline and every other task is compared with it,
``diff_pct = (other - baseline) / baseline * 100``. A positive difference means
a larger number; whether that is better depends on the metric (throughput:
higher is better, latency: lower is better). Several iterations of a scenario
are averaged first, as the report averages its five runs. A throughput
difference is marked better or worse only when it is larger than both results'
uncertainty (final search interval, measured noise, spread over iterations);
otherwise the table says it is within it.

A frame size where either task's answer was set by the traffic generator
(``limited_by: generator``) is not comparable: its numbers say what the
generator sent, not what the DUT forwards, so no difference is marked there;
nor is one where either answer carries warnings (it was not confirmed).

A stateful answer compares in its own unit: a ``cps`` answer on its connections a
second, a ``concurrent_sessions`` one on the sessions held (its packets are not what
was measured); so do the answers of tests under change: a reset time and a blocked
time, an overload's recovery, a neighbour's drop (lower is better), a switch's MAC
capacity and learning rate. Answers of different kinds (frames against connections, a
reset time against a throughput) are not comparable.
"""

from __future__ import annotations

from dataclasses import dataclass

from nsb import frames, stateful_kpis
from nsb.events import LimitedBy
from nsb.report import summary
from nsb.report.loading import TaskResults


@dataclass(frozen=True)
class Metric:
    key: str  # a summary column
    label: str
    higher_is_better: bool
    digits: int


METRICS = [
    Metric("throughput_pps", "Throughput (pps)", True, 0),
    Metric("throughput_mbps", "Mbps", True, 1),
    Metric("line_rate_pct", "% line rate", True, 2),
    Metric("latency_avg_us", "Latency avg (us)", False, 1),
    Metric("latency_p99_us", "Latency p99 (us)", False, 1),
    # stateful answers (nsb.stateful_kpis)
    Metric("cps", "Connections/s", True, 0),
    Metric("sessions", "Sessions", True, 0),
    Metric("dut_sessions", "DUT sessions", True, 0),
    # answers that are no throughput (nsb.report.summary.OWN_ANSWERS)
    Metric("reset_time_s", "Reset time (s)", False, 3),
    Metric("blocked_time_s", "Blocked time (s)", False, 3),
    Metric("overload_recovery_s", "Overload recovery (s)", False, 3),
    Metric("neighbour_drop_pct", "Neighbour drop (%)", False, 2),
    Metric("mac_capacity", "MAC capacity", True, 0),
    Metric("mac_learning_rate_pps", "MAC learning rate (addresses/s)", True, 0),
]
BY_KEY = {m.key: m for m in METRICS}
# the numbers a comparison table shows, by the kind of its answers (frames: '')
TABLE_KEYS = {"": ["throughput_pps", "throughput_mbps", "line_rate_pct"],
              stateful_kpis.CPS: ["cps", "dut_sessions"],
              stateful_kpis.SESSIONS: ["sessions", "dut_sessions"],
              stateful_kpis.STATEFUL_THROUGHPUT: ["throughput_pps", "throughput_mbps",
                                                  "line_rate_pct"],
              **{kind: list(columns) for kind, columns in summary.OWN_ANSWERS.items()}}


def pct_diff(baseline: float | None, other: float | None) -> float | None:
    """(other - baseline) / baseline in percent; None when it has no meaning."""
    if baseline is None or other is None or baseline == 0:
        return None
    return (other - baseline) / baseline * 100.0


NOT_COMPARABLE = "not-comparable"


def verdict(metric: Metric, diff: float | None, within: float | None = None,
            comparable: bool = True) -> str:
    """'better', 'worse' or 'same' for the other task, given the metric's direction.
    A difference no larger than ``within`` (%, the results' uncertainty) or that
    rounds to 0.00 is 'same': it says nothing about the DUT; NOT_COMPARABLE when
    the generator limited either side."""
    if not comparable:
        return NOT_COMPARABLE
    if diff is None or abs(diff) < 0.005 or (within is not None and abs(diff) <= within):
        return "same"
    return "better" if (diff > 0) == metric.higher_is_better else "worse"


GENERATOR = LimitedBy.GENERATOR.value
# the answers' own numbers: a difference inside their uncertainty is no change
THROUGHPUT_KEYS = ("throughput_pps", "throughput_mbps", "line_rate_pct", "cps", "sessions")


def within(row: ComparisonRow, metric: Metric, other: int) -> float | None:
    """The larger uncertainty of the baseline and task ``other`` (1-based) for a
    throughput metric; None for the others (no resolution is known for them)."""
    if metric.key not in THROUGHPUT_KEYS:
        return None
    known = [u for u in (row.uncertainty[0], row.uncertainty[other]) if u is not None]
    return max(known) if known else None


@dataclass(frozen=True)
class ScenarioMatch:
    """The scenario of each task that is compared; None where a task lacks it."""

    label: str
    names: tuple[str | None, ...]


def match_scenarios(tasks: list[TaskResults]) -> list[ScenarioMatch]:
    """Same names first; scenarios left over are matched in order, so that two
    single-scenario tasks of different test cases can still be compared."""
    base = tasks[0].scenarios()
    others = [list(t.scenarios()) for t in tasks[1:]]
    matches: list[list[str | None]] = []
    leftover_base = []
    for name in base:
        if all(name in names for names in others):
            matches.append([name] * len(tasks))
            for names in others:
                names.remove(name)
        else:
            leftover_base.append(name)
    for position, name in enumerate(leftover_base):
        row: list[str | None] = [name]
        for names in others:
            row.append(names[position] if position < len(names) else None)
        matches.append(row)
    result = []
    for names in matches:
        present = list(dict.fromkeys(n for n in names if n is not None))
        result.append(ScenarioMatch(" vs ".join(present), tuple(names)))
    return result


@dataclass(frozen=True)
class ComparisonRow:
    scenario: str
    frame_size: int
    values: dict[str, list[float | None]]  # metric key -> one value per task
    diff_pct: dict[str, list[float | None]]  # metric key -> one per task after the first
    runs: list[int]  # iterations averaged, per task (0: the task lacks this frame size)
    # per task, how far its throughput can move without the DUT changing (%)
    uncertainty: list[float | None] = ()
    # per task, what limited its answer (dut, generator, upper_bound, ...; "" unmeasured)
    limited_by: list[str] = ()
    # per task, what its answer cannot vouch for ("" when it was confirmed)
    warnings: list[str] = ()
    # per task, the kind of its stateful answer ("" for frames, or not measured)
    kinds: list[str] = ()

    @property
    def kind(self) -> str:
        """The kind of answer the row compares ('' for frames): the baseline's, else
        the first task's that has one."""
        return next((k for k in self.kinds if k), "")

    def comparable(self, other: int) -> bool:
        """False when the generator set the baseline's or task ``other``'s (1-based)
        number, when either answer was not confirmed (it carries warnings), or when
        they are answers of different kinds (frames against connections)."""
        limits, warned = list(self.limited_by), list(self.warnings)
        return not any(generator_limited(limits[i]) for i in (0, other) if i < len(limits)) \
            and not any(warned[i] for i in (0, other) if i < len(warned)) \
            and not self.kinds_differ(other)

    def kinds_differ(self, other: int) -> bool:
        """The baseline and task ``other`` (both measured) answered different kinds."""
        measured = [i for i in (0, other) if i < len(self.runs) and self.runs[i]]
        return len({self.kinds[i] for i in measured if i < len(self.kinds)}) > 1

    def as_dict(self, task_ids: list[str]) -> dict:
        return {"scenario": self.scenario, "frame_size": self.frame_size, "tasks": task_ids,
                **({"stateful_kind": self.kind} if self.kind else {}),
                "runs": self.runs, "uncertainty_pct": list(self.uncertainty),
                "limited_by": list(self.limited_by),
                "comparable": [self.comparable(i) for i in range(1, len(task_ids))],
                **self.values, "diff_pct": {key: diffs for key, diffs in self.diff_pct.items()}}


def generator_limited(limited_by: str | None) -> bool:
    """``limited_by`` (one value, or several joined by ", " over iterations) names
    the generator."""
    return GENERATOR in [part.strip() for part in str(limited_by or "").split(",")]


def limits_text(row: ComparisonRow, labels: list[str], other: int) -> str:
    """What limited the baseline and task ``other``, e.g. 'A: generator, B: dut'."""
    return ", ".join(f"{labels[i]}: {row.limited_by[i] or 'not measured'}"
                     for i in (0, other) if i < len(row.limited_by))


def not_comparable_lines(labels: list[str], rows: list[ComparisonRow]) -> list[str]:
    """One line per frame size and task the generator, or an unconfirmed answer, kept
    from being compared."""
    return [f"{frames.shown(row.kind or row.frame_size)}: {labels[other]} vs {labels[0]} "
            "not comparable, "
            f"{_why_not(row, labels, other)}"
            for row in rows for other in range(1, len(labels))
            if not row.comparable(other)]


def _why_not(row: ComparisonRow, labels: list[str], other: int) -> str:
    if row.kinds_differ(other):
        return "the answers are of different kinds (" + ", ".join(
            f"{labels[i]}: {row.kinds[i] or 'frames'}" for i in (0, other)) + ")"
    warned = [f"{labels[i]}: {row.warnings[i]}" for i in (0, other)
              if i < len(row.warnings) and row.warnings[i]]
    if warned:
        return "an answer was not confirmed (" + "; ".join(warned) + ")"
    return f"the generator set the number (limited by {limits_text(row, labels, other)})"


def compare(tasks: list[TaskResults], match: ScenarioMatch) -> list[ComparisonRow]:
    """One row per frame size any of the tasks measured, in frame size order."""
    means = [summary.mean_by_frame(task, name) if name is not None else {}
             for task, name in zip(tasks, match.names, strict=True)]
    sizes = sorted({frame for per_task in means for frame in per_task}, key=frames.sort_key)
    rows = []
    for frame in sizes:
        values: dict[str, list[float | None]] = {}
        diffs: dict[str, list[float | None]] = {}
        for metric in METRICS:
            values[metric.key] = [m.get(frame, {}).get(metric.key) for m in means]
            diffs[metric.key] = [pct_diff(values[metric.key][0], v)
                                 for v in values[metric.key][1:]]
        rows.append(ComparisonRow(match.label, frame, values, diffs,
                                  [m.get(frame, {}).get("runs", 0) for m in means],
                                  [m.get(frame, {}).get("uncertainty_pct") for m in means],
                                  [m.get(frame, {}).get("limited_by", "") for m in means],
                                  [m.get(frame, {}).get("warnings", "") for m in means],
                                  [m.get(frame, {}).get(stateful_kpis.KIND_FIELD) or ""
                                   for m in means]))
    return rows


def table_keys(rows: list[ComparisonRow]) -> list[str]:
    """The numbers a comparison table shows: its answers' own (connections a second,
    sessions), packets when they are frames or the kinds are mixed."""
    kinds = {row.kind for row in rows}
    return TABLE_KEYS.get(kinds.pop(), TABLE_KEYS[""]) if len(kinds) == 1 else TABLE_KEYS[""]


def compare_all(tasks: list[TaskResults]) -> list[tuple[ScenarioMatch, list[ComparisonRow]]]:
    return [(match, compare(tasks, match)) for match in match_scenarios(tasks)]


SINGLE_RUN_NOTE = ("one run of a task: its spread is not measured, so a difference is judged "
                   "against the search resolution only and run-to-run noise can look like a "
                   "change; run several iterations (runner Iteration, iterations: 5) to tell "
                   "them apart")


def single_run_note(rows: list[ComparisonRow]) -> str | None:
    """What the reader must know when a compared result rests on one run."""
    if any(runs == 1 for row in rows for runs in row.runs):
        return SINGLE_RUN_NOTE
    return None
