"""The trends as one HTML page: per test its answers run by run, each jumpavg group's
average drawn over its runs, the runs where a group began marked as the regression or
progression they are, and the answers left out in grey."""

from __future__ import annotations

import time
from html import escape

from nsb import __version__
from nsb.report.trend import HEADERS, Trend, rows

_AXIS = {"connections/s": "connections per second", "sessions": "sessions held",
         "reset_time_s": "reset time (s)", "blocked_time_s": "blocked time (s)",
         "overload_recovery_s": "overload recovery (s)",
         "neighbour_drop_pct": "drop with the neighbour (%)",
         "mac_capacity": "MAC addresses held", "mac_learning_rate_pps": "addresses learned/s"}
MARKS = {"regression": ("#c0392b", "triangle-down"), "progression": ("#27ae60", "triangle-up")}


def figure(trend: Trend):
    import plotly.graph_objects as go

    fig = go.Figure()
    counted = [p for p in trend.points if not p.left_out]
    fig.add_trace(go.Scatter(x=[p.task_id for p in counted], y=[p.value for p in counted],
                             mode="markers", name="answer", marker={"color": "#2c3e50"}))
    if trend.left_out:
        fig.add_trace(go.Scatter(x=[p.task_id for p in trend.left_out],
                                 y=[p.value for p in trend.left_out], mode="markers",
                                 name="left out", marker={"color": "#bdc3c7"},
                                 text=[p.left_out for p in trend.left_out]))
    _draw_groups(fig, trend, [p.task_id for p in counted])
    fig.update_layout(template="plotly_white", height=320, title=trend.name,
                      yaxis_title=_AXIS.get(trend.unit, "throughput (pps)"),
                      xaxis={"type": "category", "categoryorder": "category ascending"})
    return fig


def _draw_groups(fig, trend: Trend, ids: list[str]) -> None:
    """Each group's average over its runs (one line, broken between groups) and a mark
    where each regression or progression began: a few traces however many groups."""
    import plotly.graph_objects as go

    xs, ys, text = [], [], []
    marks: dict[str, tuple[list, list]] = {comment: ([], []) for comment in MARKS}
    start = 0
    for group in trend.groups:
        span = ids[start:start + group["runs"]]
        start += group["runs"]
        xs += [*span, span[-1]]
        ys += [group["avg"]] * len(span) + [None]
        text += [f"group avg {group['avg']:,.0f}"] * len(span) + [""]
        if group["comment"] in MARKS:
            marks[group["comment"]][0].append(group["first"])
            marks[group["comment"]][1].append(group["avg"])
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="group average", text=text,
                             hoverinfo="x+text", line={"color": "#7f8c8d", "dash": "dash"}))
    for comment, (x, y) in marks.items():
        if x:
            color, symbol = MARKS[comment]
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="markers+text", name=comment, text=[comment] * len(x),
                textposition="top center",
                marker={"color": color, "symbol": symbol, "size": 14}))


def render(found: list[Trend]) -> str:
    from plotly.offline import get_plotlyjs

    from nsb.report.html import CSS, chart
    from nsb.report.html_tables import grid

    cells = [[(escape(text), "") for text in row] for row in rows(found)]
    body = [f'<div class="scroll">{grid(HEADERS, cells, "trend-table")}</div>']
    body += [chart(figure(t), f"trend-{n}", "trend") for n, t in enumerate(found, start=1)
             if t.points]
    generated = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>nsb trends</title>", f"<style>{CSS}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>', "</head><body>",
        f'<header class="page"><h1>nsb trends</h1><p>Generated {escape(generated)} by nsb '
        f"{escape(__version__)}: {len(found)} test(s), jumpavg groups</p></header>",
        "<main>", *body, "</main></body></html>", ""])
