"""The summary the published reports print, as plain numbers: one row per result.

Rows have stable snake_case keys (the CSV columns and JSON fields of
``nsb report table``); the HTML and text tables format the same rows.
"""

from __future__ import annotations

import statistics

from nsb import frames, stateful_kpis
from nsb.report.loading import TaskResults

LATENCY_KEYS = ("min_us", "avg_us", "max_us", "p50_us", "p90_us", "p99_us", "p99_9_us")
COLUMNS = ["task_id", "scenario", "iteration", "frame_size", "throughput_pps",
           "throughput_mbps", "line_rate_pct", "loss_pct",
           *(f"latency_{key.replace('.', '_')}" for key in LATENCY_KEYS), "pdv_us",
           "limited_by", "trials", "profile", "warnings", "latency_at_pps",
           # a stateful answer's (empty for frames): its kind, the connections a second
           # offered, asked and established, sessions held, the DUT's own count
           stateful_kpis.KIND_FIELD, *stateful_kpis.RESULT_KEYS,
           # a reset_time or reconfig answer's mean outage by frame loss (empty otherwise)
           "reset_time_s", "blocked_time_s",
           # a noisy_neighbour answer's drop in % (0 within the runs' spread; else empty)
           "neighbour_drop_pct",
           # a mac_learning answer's (RFC 2889): the table's capacity, the learning rate
           "mac_capacity", "mac_learning_rate_pps",
           # an overload_recovery answer's: the longer of its two recovery times (mean)
           "overload_recovery_s",
           # a tunnel's answer (empty otherwise): frame_size is then the inner frame's
           "outer_frame_size"]
# answers that are no throughput: the result's key that marks each -> its columns
OWN_ANSWERS = {"reset": ("reset_time_s", "blocked_time_s"),
               "overload": ("overload_recovery_s",), "neighbour": ("neighbour_drop_pct",),
               "mac_learning": ("mac_capacity", "mac_learning_rate_pps")}
# numbers that are averaged when a scenario ran several iterations
MEAN_KEYS = [c for c in COLUMNS
             if c.startswith(("throughput", "line_rate", "loss", "latency", "pdv"))
             or c in stateful_kpis.RESULT_KEYS
             or any(c in columns for columns in OWN_ANSWERS.values())]


def row(task_id: str, result: dict) -> dict:
    """One result record as a flat row (latency values None when not measured)."""
    latency = result.get("latency") or {}
    out = {"task_id": task_id, "scenario": result.get("scenario", ""),
           "iteration": result.get("iteration", 0), "frame_size": result["frame_size"],
           "throughput_pps": result.get("throughput_pps"),
           "throughput_mbps": result.get("throughput_mbps"),
           "line_rate_pct": result.get("line_rate_pct"), "loss_pct": result.get("loss_pct")}
    for key in LATENCY_KEYS:
        out[f"latency_{key.replace('.', '_')}"] = latency.get(key)
    # packet delay variation as RFC 5481 reports it: the 99.9th percentile of the
    # delay less the minimum delay
    low, high = latency.get("min_us"), latency.get("p99_9_us")
    out["pdv_us"] = high - low if isinstance(low, (int, float)) and isinstance(
        high, (int, float)) else None
    out.update(limited_by=result.get("limited_by", ""), trials=result.get("trials"),
               profile=result.get("profile", ""),
               warnings="; ".join(str(w) for w in result.get("warnings") or []),
               # the rate the latency was measured at, where that was not the answer's
               latency_at_pps=result.get("latency_measured_at_pps")
               if result.get("latency_warnings") else None)
    stateful = stateful_kpis.of(result)
    out[stateful_kpis.KIND_FIELD] = stateful_kpis.kind(result) or None
    out.update({key: None for key in stateful_kpis.RESULT_KEYS})
    out.update(stateful_kpis.result_numbers(stateful))
    # a reset-time answer's outage (mean of its trials, by frame loss), else None
    out["reset_time_s"] = (result.get("reset") or {}).get("reset_time_s")
    out["blocked_time_s"] = (result.get("reset") or {}).get("blocked_time_s")
    out["neighbour_drop_pct"] = (result.get("neighbour") or {}).get("reported_drop_pct")
    out["mac_capacity"] = (result.get("mac_learning") or {}).get("mac_capacity")
    out["mac_learning_rate_pps"] = (result.get("mac_learning") or {}).get("learning_rate_pps")
    out["overload_recovery_s"] = (result.get("overload") or {}).get("overload_recovery_s")
    if "outer_frame_size" in result:  # a tunnel's: frame_size is the inner frame's
        out["outer_frame_size"] = result["outer_frame_size"]
    return out


def rows(task: TaskResults) -> list[dict]:
    """Every result of the task, in the order the run produced them."""
    return [row(task.id, result) for result in task.results]


def mean_by_frame(task: TaskResults, scenario: str) -> dict[int, dict]:
    """Per frame size, the mean of each number over the scenario's iterations
    (the published reports' "average of N runs"); ``runs`` says how many."""
    grouped: dict[int, list[dict]] = {}
    for result in task.results_of(scenario):
        grouped.setdefault(result["frame_size"], []).append(row(task.id, result))
    means = {}
    for frame, group in sorted(grouped.items(), key=lambda item: frames.sort_key(item[0])):
        mean = {"frame_size": frame, "runs": len(group)}
        if "outer_frame_size" in group[0]:
            mean["outer_frame_size"] = group[0]["outer_frame_size"]
        for key in MEAN_KEYS:
            values = [r[key] for r in group if r[key] is not None]
            mean[key] = sum(values) / len(values) if values else None
        # the kind of answer: a stateful one's, or one that is no throughput (a reset)
        raw = [r for r in task.results_of(scenario) if r["frame_size"] == frame]
        mean[stateful_kpis.KIND_FIELD] = group[0][stateful_kpis.KIND_FIELD] or next(
            (kind for kind in OWN_ANSWERS if isinstance(raw[0].get(kind), dict)), None)
        limits = sorted({r["limited_by"] for r in group})
        mean["limited_by"] = ", ".join(limits)
        mean["warnings"] = "; ".join(dict.fromkeys(r["warnings"] for r in group
                                                   if r["warnings"]))
        mean["uncertainty_pct"] = uncertainty_pct(
            [r for r in task.results_of(scenario) if r["frame_size"] == frame],
            _search_precision_pct(task, scenario, group))
        means[frame] = mean
    return means


def _search_precision_pct(task: TaskResults, scenario: str, group: list[dict]) -> float | None:
    """A stateful search's resolution (its profile's ``precision_pct``: its answer's
    interval is no wider), for DUT-limited stateful answers; None for frames, whose
    evidence names the failing rate above them."""
    if not group[0][stateful_kpis.KIND_FIELD] or any(r["limited_by"] != "dut" for r in group):
        return None
    precision = task.profile_of(scenario).get("precision_pct")
    return float(precision) if isinstance(precision, (int, float)) else None


def uncertainty_pct(results: list[dict], resolution_pct: float | None = None) -> float | None:
    """How far an answer can move without the DUT changing, in %: the largest of its
    final search interval (resolution: from the evidence, or ``resolution_pct``), the
    noise the search measured (fastndr's edge samples) and the spread of the answers
    over iterations (sample standard deviation); None when nothing says."""
    found = [resolution_pct] if resolution_pct is not None else []
    for result in results:
        evidence = result.get("evidence") or {}
        asked = evidence.get("rate_pps") or result.get("throughput_pps") or 0.0
        failing = evidence.get("lowest_failing_pps")
        # a generator-limited answer's interval says nothing about the DUT
        if asked > 0 and failing and result.get("limited_by") == "dut":
            found.append(100.0 * (failing - asked) / asked)
        if isinstance(result.get("noise"), (int, float)):
            found.append(100.0 * result["noise"])
    spread = spread_pct([value for r in results if (value := stateful_kpis.value(r))])
    if spread is not None:
        found.append(spread)
    return max(found) if found else None


def spread_pct(values: list[float]) -> float | None:
    """Sample standard deviation in % of the mean; None for fewer than two values."""
    if len(values) < 2 or statistics.mean(values) <= 0:
        return None
    return 100.0 * statistics.stdev(values) / statistics.mean(values)
