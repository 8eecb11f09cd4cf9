"""The HTML report's sweep sections: the scaling table and charts of each swept
scenario, and against stored sweeps the same points side by side.

Element ids: ``t{n}-sweep{k}-table``, ``t{n}-sweep{k}-frames-chart``,
``t{n}-sweep{k}-values-chart`` (task n, its k-th swept scenario) and
``cmp-sweep{k}-table`` (the comparison).
"""

from __future__ import annotations

from html import escape

from nsb.report import sweep, sweep_charts
from nsb.report.html_tables import grid


def _table(headers: list[str], cells: list[list[str]], table_id: str) -> str:
    rows = [[(escape(c), "text" if i == 0 and headers[0] == "Point" else "")
             for i, c in enumerate(row)] for row in cells]
    return f'<div class="scroll">{grid(headers, rows, table_id, "numbers")}</div>'


def task_section(results: list[dict], n: int, chart) -> str:
    """The sweeps of task ``n``; empty when it swept nothing. ``chart(figure, id, kind)``
    is the page's way to embed a figure."""
    found = sweep.sweeps(results)
    if not found:
        return ""
    out = []
    for k, swept in enumerate(found, start=1):
        prefix = f"t{n}-sweep{k}"
        names = ", ".join(dict.fromkeys(name for p in swept.points for name in p))
        out += [f'<h3 id="{prefix}">Sweep of {escape(swept.scenario)} over {escape(names)}</h3>',
                f'<p class="note">{len(swept.points)} points, one run of the scenario each; '
                "throughput (pps, mean over iterations) per frame size, and each later "
                "point's ratio to the first.</p>",
                _table(*sweep.scaling_table(swept), f"{prefix}-table"),
                '<div class="charts">'
                + chart(sweep_charts.throughput_by_frame(swept), f"{prefix}-frames-chart",
                        "sweep-frames")
                + chart(sweep_charts.throughput_by_value(swept), f"{prefix}-values-chart",
                        "sweep-values") + "</div>"]
        density = sweep.density_table(swept)
        if density:
            out += ["<h4>Service chain density</h4>",
                    _table(*density, f"{prefix}-density-table"),
                    '<div class="charts">' + chart(sweep_charts.density(swept),
                                                   f"{prefix}-density-chart", "sweep-density")
                    + "</div>"]
    return "\n".join(out)


def comparison_section(tasks_results: list[list[dict]], labels: list[str]) -> str:
    """The baseline's sweeps against the other tasks' at the same points."""
    matches = sweep.matched(tasks_results)
    out = []
    for k, (base, others) in enumerate(matches, start=1):
        out += [f"<h3>Sweep of {escape(base.scenario)}</h3>",
                '<p class="note">Throughput at the same sweep points; a point a task did '
                "not run is '-'.</p>",
                _table(*sweep.comparison_table(base, others, labels), f"cmp-sweep{k}-table")]
    return "\n".join(out)
