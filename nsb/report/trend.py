"""Trends over the run history: each test's answers in time order, grouped into
segments of one level with CSIT's jumpavg, and the newest run classified as
regression, progression or normal.

A test is the task file with its task args, the scenario (with its sweep point), the
profile, the frame size and, for service chains, the chain: a run with other args or
another profile is another test. Generator-limited answers and unconfirmed ones (with
warnings) are not the DUT's speed: they are left out, and said to be.

A stateful answer's point is its own number (a ``cps`` answer's connections a second,
a ``concurrent_sessions`` answer's sessions held), and its test has that unit where a
frame answer's has its frame size (``connections/s``, ``sessions``): never one trend
with frame answers, though all of them were found with 64 B frames. An answer of a test
under change is a point of its own metric (``reset_time_s``, a reconfiguration's
``blocked_time_s``, ``overload_recovery_s``, ``neighbour_drop_pct``, ``mac_capacity`` and
``mac_learning_rate_pps``), its test keyed ``<metric> at <frame size>``; for the times
and the drop lower is better, so a step up is their regression.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from nsb import frames, stateful_kpis
from nsb.outputs.influxdb.names import task_args_tag
from nsb.report.loading import RESULTS_FILE
from nsb.task import input_file

# a stateful answer's unit, in its test's key where a frame answer has its frame size
STATEFUL_UNITS = tuple(stateful_kpis.UNIT[stateful_kpis.VALUE_KEY[kind]]
                       for kind in (stateful_kpis.CPS, stateful_kpis.SESSIONS))


# the metrics of answers under change (nsb.report.summary.OWN_ANSWERS) whose step up is
# a regression
LOWER_IS_BETTER = ("reset_time_s", "blocked_time_s", "overload_recovery_s",
                   "neighbour_drop_pct")
_AT = " at "  # between an answer under change's metric and its frame size in its key


def own_metrics(result: dict) -> list[str]:
    """The trend metrics of an answer under change ([] for any other answer): a
    reconfiguration's blocked time, a reset's reset time, the others' columns."""
    from nsb.report.summary import OWN_ANSWERS

    kind = next((k for k in OWN_ANSWERS if isinstance(result.get(k), dict)), None)
    if kind is None:
        return []
    if kind == "reset":
        return [reset_metric(result.get("profile"))]
    return list(OWN_ANSWERS[kind])


def reset_metric(profile: str | None) -> str:
    """A reset answer's one trend metric (its reset and blocked time are one number):
    a reconfiguration's blocked time, any other's reset time."""
    return "blocked_time_s" if profile == "reconfig" else "reset_time_s"


def own_key_frame(metric: str, frame_size) -> str:
    return f"{metric}{_AT}{frames.shown(frame_size)}"


def metric_of(frame_key) -> str:
    """An answer under change's metric from its key's fourth part ('' for others)."""
    metric, at, _ = str(frame_key).partition(_AT)
    return metric if at and metric in _own_columns() else ""


def _own_columns() -> set[str]:
    from nsb.report.summary import OWN_ANSWERS

    return {column for columns in OWN_ANSWERS.values() for column in columns}


def key_frame(frame_size, stateful_kind: str):
    """The fourth part of a test's key: the frame size, or a stateful answer's unit."""
    key = stateful_kpis.VALUE_KEY.get(stateful_kind, "throughput_pps")
    return frame_size if key == "throughput_pps" else stateful_kpis.UNIT[key]


@dataclass(frozen=True)
class Point:
    """One run's answer of a test."""

    task_id: str
    value: float  # throughput_pps; a stateful answer's cps or sessions (Trend.unit)
    left_out: str = ""  # why it is not part of the trend ('' when it is)
    time_s: float = 0.0  # when the answer was found (the result's timestamp)
    samples: tuple[float, ...] = ()  # MRR's trial receive rates: the run as jumpavg takes it


@dataclass
class Trend:
    test: tuple  # (task file stem and args, scenario, profile, frame size, chain or None)
    points: list[Point] = field(default_factory=list)
    groups: list[dict] = field(default_factory=list)  # first/last task id, runs, avg, comment
    newest: str = "normal"  # regression, progression, normal; "" with too few runs
    change_pct: float | None = None  # the newest group's average against the one before

    @property
    def name(self) -> str:
        stem, scenario, profile, frame, chain = self.test
        return f"{stem} {scenario} {profile} {frames.shown(frame)}" + (
            f" chain {chain}" if chain is not None else "")

    @property
    def unit(self) -> str:
        """What the points count: packets a second, or a stateful answer's unit."""
        frame = self.test[3]
        return frame if frame in STATEFUL_UNITS else metric_of(frame) or "pps"

    @property
    def left_out(self) -> list[Point]:
        return [p for p in self.points if p.left_out]


def history(results_dir: Path, until: str | None = None) -> dict[tuple, list[Point]]:
    """Every test's points in time order (task ids sort by start time), up to and
    including task ``until`` when given; runs that did not finish are skipped. A run's
    results.json is read again only when it changed (nsb.report.trend_cache)."""
    from nsb.report.trend_cache import RunIndex

    index = RunIndex(results_dir)
    names = _run_names(results_dir)
    tests: dict[tuple, list[Point]] = {}
    for task_id in names:
        if until is not None and task_id > until:
            break
        path = os.path.join(results_dir, task_id, RESULTS_FILE)
        for answer in index.answers(task_id, path, _answers) or []:
            key, point = tuple(answer[:5]), Point(task_id, *answer[5:8], tuple(answer[8]))
            tests.setdefault(key, []).append(point)
    index.save(set(names))
    return tests


def _run_names(results_dir: Path) -> list[str]:
    """The folders of the results directory, in name (so time) order; a run is one
    with a results.json in it."""
    try:
        with os.scandir(results_dir) as entries:
            return sorted(entry.name for entry in entries if entry.is_dir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _answers(task_id: str, path: str) -> list[list]:
    """A finished run's answers as the cache keeps them: each its test's key, then its
    value, why it is left out, its time and its trials."""
    doc = json.loads(input_file.read_text(Path(path), path, limit=256 << 20))
    task = doc.get("task") or {}
    if task.get("status") != "ok":
        return []
    stem = test_name(Path(str(task.get("file") or "task")).stem,
                     task_args_tag(task["args"]) if task.get("args") else "")
    return [[*key, point.value, point.left_out, point.time_s, list(point.samples)]
            for result in doc.get("results") or []
            for key, point in _points(stem, task_id, result)]


def test_name(test_case: str, args_tag: str) -> str:
    """The first part of a test's key: the task file's stem, and its args when it has any."""
    return f"{test_case} {args_tag}" if args_tag else test_case


def left_out_because(limited_by: str | None, warnings: bool) -> str:
    """Why an answer is no point of its trend ('' when it is one)."""
    return "generator-limited" if limited_by == "generator" else \
        "unconfirmed" if warnings else ""


def _points(stem: str, task_id: str, result: dict):
    """The test keys and points one result gives: its own, and each chain's."""
    why = left_out_because(result.get("limited_by"), bool(result.get("warnings")))
    when = float(result.get("timestamp") or 0.0)
    if metrics := own_metrics(result):
        yield from _own_points(stem, task_id, result, metrics, why, when)
        return
    key = (stem, result.get("scenario", ""), result.get("profile", ""),
           key_frame(result.get("frame_size"), stateful_kpis.kind(result)))
    samples = tuple(float(r) for r in (result.get("mrr") or {}).get("receive_rates_pps") or ())
    yield (*key, None), Point(task_id, float(stateful_kpis.value(result) or 0.0), why, when,
                              samples)
    for share in result.get("chains") or []:
        yield (*key, share["chain"]), Point(task_id, float(share["throughput_pps"]), why, when)


def _own_points(stem: str, task_id: str, result: dict, metrics: list[str], why: str,
                when: float):
    """An answer under change's points, one per metric: its value (summary.row's, as
    InfluxDB's nsb_result holds it, so both histories agree); an answer without the
    number is left out."""
    from nsb.report.summary import row

    values = row(task_id, result)
    for metric in metrics:
        value = values.get(metric)
        yield ((stem, result.get("scenario", ""), result.get("profile", ""),
                own_key_frame(metric, result.get("frame_size")), None),
               Point(task_id, float(value) if value is not None else 0.0,
                     why or ("" if value is not None else "no answer"), when))


def classify(test: tuple, points: list[Point], store=None) -> Trend:
    """jumpavg's groups over the points that count; the newest run's class is its
    group's: a group that began below (above) the one before is a regression
    (progression). ``store`` (nsb.report.trend_cache.GroupStore) keeps what was
    counted, for the next time."""
    from nsb.report.trend_cache import GroupStore

    points = [p if p.left_out or _finite(p) else dataclasses.replace(p, left_out="no number")
              for p in points]
    trend = Trend(test, points)
    counted = [p for p in points if not p.left_out]
    if len(counted) < 2:
        trend.newest = ""
        return trend
    # a run with trials is their sequence (CSIT's MRR trending): jumpavg then weighs a
    # step against the runs' own spread, not only against the spread of their means
    found = (store or GroupStore(None)).groups(
        test, [p.task_id for p in counted],
        [list(p.samples) if p.samples else p.value for p in counted])
    lower_is_better = trend.unit in LOWER_IS_BETTER
    for group in found:
        comment = _INVERTED.get(group.comment, group.comment) if lower_is_better \
            else group.comment
        trend.groups.append({"first": counted[group.first].task_id,
                             "last": counted[group.last].task_id,
                             "runs": group.last - group.first + 1, "avg": group.avg,
                             "stdev": group.stdev, "comment": comment})
    last = trend.groups[-1]
    trend.newest = last["comment"] if counted[-1] is points[-1] else \
        f"left out ({points[-1].left_out})"
    if len(trend.groups) > 1:
        before = trend.groups[-2]["avg"]
        trend.change_pct = 100.0 * (last["avg"] - before) / before if before else None
    return trend


_INVERTED = {"regression": "progression", "progression": "regression"}


def _finite(point: Point) -> bool:
    """A value jumpavg can group (a damaged file may hold NaN or infinity)."""
    return all(map(math.isfinite, (point.value, *point.samples)))


def grouped(trend: Trend):
    """(point, group) for every counted point, in time order."""
    counted = iter(p for p in trend.points if not p.left_out)
    for group in trend.groups:
        for _ in range(group["runs"]):
            yield next(counted), group


def trends(results_dir: Path, until: str | None = None) -> list[Trend]:
    """The trends of the results directory's history, extending what it keeps."""
    from nsb.report.trend_cache import GroupStore

    return of_history(history(results_dir, until), GroupStore(results_dir))


def of_history(tests: dict[tuple, list[Point]], store=None) -> list[Trend]:
    """Each test's trend, in the order of their names."""
    return [classify(test, points, store)
            for test, points in sorted(tests.items(), key=_order)]


def _order(item) -> tuple:
    (stem, scenario, profile, frame, chain), _ = item
    return stem, scenario, profile, str(frame), -1 if chain is None else chain


HEADERS = ["Test", "Runs", "Left out", "Groups (runs: average)", "Newest", "Change"]


def rows(found: list[Trend]) -> list[list[str]]:
    out = []
    for trend in found:
        left = trend.left_out
        reasons = sorted({p.left_out for p in left})
        groups = "; ".join(f"{g['runs']}: {value_text(g['avg'], trend.unit)}"
                           for g in trend.groups) or "-"
        change = f"{trend.change_pct:+.1f} %" if trend.change_pct is not None else "-"
        out.append([trend.name, str(len(trend.points)),
                    f"{len(left)} ({', '.join(reasons)})" if left else "0", groups,
                    trend.newest or "too few runs", change])
    return out


def value_text(value: float, unit: str) -> str:
    """A group's average in its unit: whole numbers, an answer under change's times in
    milliseconds' resolution."""
    if unit.endswith("_s") or unit.endswith("_pct"):
        return f"{value:,.3f} {unit}"
    return f"{value:,.0f} {unit}"


_VALUE_NAME = {stateful_kpis.UNIT[key]: key for key in ("cps", "sessions")}


def as_json(found: list[Trend]) -> str:
    """Each point's value under its own name: throughput_pps, cps or sessions."""
    return json.dumps([{"test": list(t.test), "name": t.name, "newest": t.newest,
                        "change_pct": t.change_pct, "groups": t.groups, "unit": t.unit,
                        "points": [{"task_id": p.task_id,
                                    _VALUE_NAME.get(t.unit, metric_of(t.test[3])
                                                    or "throughput_pps"): p.value,
                                    "left_out": p.left_out,
                                    **({"trials_pps": list(p.samples)} if p.samples else {})}
                                   for p in t.points]}
                       for t in found], indent=1)
