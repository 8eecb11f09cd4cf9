"""A sweep's results as the scaling tables of the published reports: per frame size
(rows) the throughput at each sweep point (columns), and against a stored sweep
the same points side by side.

Works on result records (``results.json``'s ``results``); a result of a sweep
carries ``sweep`` (its point) and its scenario is named ``<scenario>@<point>``
(nsb.task.sweep).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nsb import frames
from nsb.report.compare import pct_diff
from nsb.task.sweep import point_label


@dataclass(frozen=True)
class Sweep:
    """One scenario's sweep: its points in run order and, per point label, the mean
    over iterations per frame size (throughput_pps, throughput_mbps, line_rate_pct)."""

    scenario: str
    points: tuple[dict, ...]
    means: dict[str, dict]  # point label -> frame size -> numbers
    # point label -> frame size -> the service chains of its (first) result (nsb.chains)
    chains: dict[str, dict] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        return [point_label(p) for p in self.points]

    @property
    def frame_sizes(self) -> list:
        sizes = {f for by_frame in self.means.values() for f in by_frame}
        return sorted(sizes, key=frames.sort_key)

    def throughput(self, label: str, frame) -> float | None:
        return self.means.get(label, {}).get(frame, {}).get("throughput_pps")


MEAN_KEYS = ("throughput_pps", "throughput_mbps", "line_rate_pct")


def sweeps(results: list[dict]) -> list[Sweep]:
    """The sweeps among the results, one per scenario swept, in run order."""
    grouped: dict[str, dict[str, list[dict]]] = {}
    points: dict[str, dict[str, dict]] = {}
    for result in results:
        point = result.get("sweep")
        if not isinstance(point, dict) or not point:
            continue
        label = point_label(point)
        base = str(result.get("scenario", "")).removesuffix(f"@{label}")
        grouped.setdefault(base, {}).setdefault(label, []).append(result)
        points.setdefault(base, {}).setdefault(label, point)
    return [Sweep(base, tuple(points[base].values()),
                  {label: _means(group) for label, group in by_point.items()},
                  {label: _chains(group) for label, group in by_point.items()})
            for base, by_point in grouped.items()]


def _chains(results: list[dict]) -> dict:
    """Per frame size, the chains of the point's first result that has them."""
    out: dict = {}
    for result in results:
        if result.get("chains") and result["frame_size"] not in out:
            out[result["frame_size"]] = {"chains": result["chains"],
                                         "first": result.get("first_failing_chain")}
    return out


def density_table(sweep: Sweep) -> tuple[list[str], list[list[str]]] | None:
    """CSIT's density table for a sweep of service chains: per frame size and point,
    the chains' total throughput, the mean and the slowest chain's, and the chain that
    failed first above the answer. None when the sweep's results have no chains."""
    if not any(sweep.chains.values()):
        return None
    headers = ["Frame (B)", "Point", "Chains", "Total (pps)", "Per chain, mean (pps)",
               "Slowest chain (pps)", "Failed first"]
    cells = []
    for frame in sweep.frame_sizes:
        for label in sweep.labels:
            found = sweep.chains.get(label, {}).get(frame)
            if not found:
                continue
            rates = [float(c["throughput_pps"]) for c in found["chains"]]
            first = found["first"] or {}
            cells.append([str(frame), label, str(len(rates)),
                          _pps(sweep.throughput(label, frame)), _pps(sum(rates) / len(rates)),
                          _pps(min(rates)),
                          f"chain {first['chain']}" if "chain" in first else "-"])
    return headers, cells


def _means(results: list[dict]) -> dict:
    by_frame: dict = {}
    for result in results:
        by_frame.setdefault(result["frame_size"], []).append(result)
    out = {}
    for frame, group in by_frame.items():
        mean = {"runs": len(group)}
        for key in MEAN_KEYS:
            values = [r[key] for r in group if isinstance(r.get(key), (int, float))]
            mean[key] = sum(values) / len(values) if values else None
        out[frame] = mean
    return out


def _pps(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def scaling_table(sweep: Sweep) -> tuple[list[str], list[list[str]]]:
    """Headers and cells: per frame size the throughput (pps) at each point and, for
    the later points, its ratio to the first point's (``x1.85``)."""
    labels = sweep.labels
    headers = ["Frame (B)", *(f"{label} (pps)" for label in labels)]
    headers += [f"{label} / {labels[0]}" for label in labels[1:]]
    cells = []
    for frame in sweep.frame_sizes:
        values = [sweep.throughput(label, frame) for label in labels]
        row = [str(frame), *(_pps(v) for v in values)]
        row += [_ratio(values[0], v) for v in values[1:]]
        cells.append(row)
    return headers, cells


def _ratio(first: float | None, other: float | None) -> str:
    if not first or other is None:
        return "-"
    return f"x{other / first:.2f}"


def comparison_table(base: Sweep, others: list[Sweep | None], labels: list[str]
                     ) -> tuple[list[str], list[list[str]]]:
    """Against stored sweeps: per point of the baseline and frame size, each task's
    throughput (pps) at the same point and its % difference from the baseline; a
    point a task did not run is '-'."""
    headers = ["Point", "Frame (B)", *(f"{label} (pps)" for label in labels)]
    headers += [f"{label} vs {labels[0]} (%)" for label in labels[1:]]
    cells = []
    for point in base.labels:
        for frame in base.frame_sizes:
            first = base.throughput(point, frame)
            if first is None:
                continue
            rest = [o.throughput(point, frame) if o else None for o in others]
            diffs = [pct_diff(first, v) for v in rest]
            cells.append([point, str(frame), _pps(first), *(_pps(v) for v in rest),
                          *("-" if d is None else f"{d:+.2f}" for d in diffs)])
    return headers, cells


def matched(tasks_results: list[list[dict]]) -> list[tuple[Sweep, list[Sweep | None]]]:
    """The baseline's sweeps, each with the sweep of the same scenario in every other
    task (None where a task has none)."""
    first, *rest = [{s.scenario: s for s in sweeps(results)} for results in tasks_results]
    return [(sweep, [other.get(name) for other in rest]) for name, sweep in first.items()]


def text_tables(tasks_results: list[list[dict]], labels: list[str], task_ids: list[str]
                ) -> list:
    """rich Tables: each task's scaling tables, then the comparisons of their sweeps."""
    from rich.markup import escape
    from rich.table import Table

    def grid(title: str, headers: list[str], cells: list[list[str]]):
        table = Table(title=escape(title))
        for index, header in enumerate(headers):
            table.add_column(escape(header), justify="left" if header == "Point" else "right",
                             no_wrap=index == 0)
        for row in cells:
            table.add_row(*(escape(c) for c in row))
        return table

    out = []
    for results, task_id in zip(tasks_results, task_ids, strict=True):
        for sweep in sweeps(results):
            out.append(grid(f"{sweep.scenario}: throughput per sweep point (task {task_id})",
                            *scaling_table(sweep)))
            density = density_table(sweep)
            if density:
                out.append(grid(f"{sweep.scenario}: service chain density (task {task_id})",
                                *density))
    if len(tasks_results) > 1:
        for base, others in matched(tasks_results):
            out.append(grid(f"{base.scenario} sweep: {' vs '.join(labels[1:])} vs {labels[0]}",
                            *comparison_table(base, others, labels)))
    return out


def markdown(tasks_results: list[list[dict]], labels: list[str], task_ids: list[str]
             ) -> list[str]:
    """The same tables as Markdown lines."""
    def table(title: str, headers: list[str], cells: list[list[str]]) -> list[str]:
        def line(values):
            return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"
        align = ["---" if h == "Point" else "---:" for h in headers]
        return [f"### {title}", "", line(headers), "|" + "|".join(align) + "|",
                *(line(row) for row in cells), ""]

    lines = []
    for results, task_id in zip(tasks_results, task_ids, strict=True):
        for sweep in sweeps(results):
            lines += table(f"{sweep.scenario}: throughput per sweep point (task {task_id})",
                           *scaling_table(sweep))
            density = density_table(sweep)
            if density:
                lines += table(f"{sweep.scenario}: service chain density (task {task_id})",
                               *density)
    if len(tasks_results) > 1:
        for base, others in matched(tasks_results):
            lines += table(f"{base.scenario} sweep: {' vs '.join(labels[1:])} vs {labels[0]}",
                           *comparison_table(base, others, labels))
    return lines


def json_doc(tasks_results: list[list[dict]], task_ids: list[str]) -> list[dict]:
    """Per task and swept scenario: the points and, per frame size, the throughput
    (pps) at each point, for scripts."""
    out = []
    for results, task_id in zip(tasks_results, task_ids, strict=True):
        for sweep in sweeps(results):
            out.append({"task_id": task_id, "scenario": sweep.scenario,
                        "points": [dict(p) for p in sweep.points],
                        "throughput_pps": [
                            {"frame_size": frame,
                             **{label: sweep.throughput(label, frame) for label in sweep.labels}}
                            for frame in sweep.frame_sizes]})
    return out
