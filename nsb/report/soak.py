"""A soak's loss and latency over time, its worst intervals, and PLRsearch's estimate
trial after trial: charts and tables for the HTML report (nsb.report.html)."""

from __future__ import annotations

from html import escape

import plotly.graph_objects as go

from nsb.frames import shown
from nsb.report import html_tables as tables
from nsb.report.formats import number
from nsb.report.loading import TaskResults

_LAYOUT = {"template": "plotly_white", "height": 360,
           "margin": {"l": 70, "r": 30, "t": 50, "b": 50},
           "legend": {"orientation": "h", "y": -0.2}, "hovermode": "x unified"}
LATENCY_LINES = (("min_us", "min"), ("avg_us", "avg"), ("p99_us", "p99"), ("max_us", "max"))


def section(task: TaskResults, scenario: str, prefix: str, chart) -> str:
    """The soak and PLRsearch parts of a scenario ('' when it has neither)."""
    out = []
    intervals = [r for r in task.soak_intervals if r.get("scenario") == scenario]
    for n, frame in enumerate(dict.fromkeys(r.get("frame_size") for r in intervals)):
        mine = [r for r in intervals if r.get("frame_size") == frame]
        out.append(_soak(mine, frame, f"{prefix}-soak{n}", chart))
    estimates = [r for r in task.plr_estimates if r.get("scenario") == scenario]
    for n, frame in enumerate(dict.fromkeys(r.get("frame_size") for r in estimates)):
        mine = [r for r in estimates if r.get("frame_size") == frame]
        out.append(chart(plr_chart(mine, f"PLRsearch, {shown(frame)}"),
                         f"{prefix}-plr{n}-chart", "plrsearch"))
    return "".join(out)


def _soak(intervals: list[dict], frame, prefix: str, chart) -> str:
    lossy = sum((r.get("lost_packets") or 0) > 0 for r in intervals)
    span = max((r.get("end_s") or 0) for r in intervals)
    head = (f"<h4>Soak, {escape(shown(frame))}: {len(intervals)} intervals over "
            f"{span:.0f} s, {lossy} with loss</h4>")
    figures = [chart(loss_chart(intervals, "Loss per interval"), f"{prefix}-loss-chart",
                     "soak-loss")]
    if any(r.get("latency") for r in intervals):
        figures.append(chart(latency_chart(intervals, "Latency per interval"),
                             f"{prefix}-latency-chart", "soak-latency"))
    return head + f'<div class="charts">{"".join(figures)}</div>' + \
        worst_table(intervals, f"{prefix}-worst-table")


def _middle(record: dict) -> float:
    return ((record.get("start_s") or 0) + (record.get("end_s") or 0)) / 2


def loss_chart(intervals: list[dict], title: str) -> go.Figure:
    """Loss (%) and the rates sent and received, per interval, over the soak's time."""
    x = [_middle(r) for r in intervals]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=[r.get("loss_pct") for r in intervals], name="loss %",
                             mode="lines+markers"))
    fig.add_trace(go.Scatter(x=x, y=[r.get("rx_pps") for r in intervals], name="received pps",
                             mode="lines", yaxis="y2", line={"dash": "dot"}))
    fig.update_layout(title=title, xaxis={"title": "Time since the traffic started (s)"},
                      yaxis={"title": "Loss (%)", "rangemode": "tozero"},
                      yaxis2={"title": "Received (pps)", "overlaying": "y", "side": "right",
                              "rangemode": "tozero"}, **_LAYOUT)
    return fig


def latency_chart(intervals: list[dict], title: str) -> go.Figure:
    """Latency statistics per interval over the soak's time."""
    x = [_middle(r) for r in intervals]
    fig = go.Figure()
    for key, name in LATENCY_LINES:
        y = [(r.get("latency") or {}).get(key) for r in intervals]
        if any(v is not None for v in y):
            fig.add_trace(go.Scatter(x=x, y=y, name=name, mode="lines+markers"))
    fig.update_layout(title=title, xaxis={"title": "Time since the traffic started (s)"},
                      yaxis={"title": "Latency (us)", "rangemode": "tozero"}, **_LAYOUT)
    return fig


def worst(intervals: list[dict], count: int = 5) -> list[dict]:
    """The intervals that lost most, then those of highest maximum latency."""
    def badness(r: dict) -> tuple:
        return (r.get("loss_pct") or 0.0, (r.get("latency") or {}).get("max_us") or 0.0)

    return sorted(intervals, key=badness, reverse=True)[:count]


def worst_table(intervals: list[dict], table_id: str) -> str:
    rows = []
    for r in worst(intervals):
        latency = r.get("latency") or {}
        rows.append([(escape(str(r.get("interval"))), ""),
                     (escape(f"{r.get('start_s', 0):.1f}-{r.get('end_s', 0):.1f}"), ""),
                     (escape(number(r.get("tx_packets"), 0)), ""),
                     (escape(number(r.get("lost_packets"), 0)), ""),
                     (escape(number(r.get("loss_pct"), 4)), ""),
                     (escape(number(latency.get("avg_us"), 1)), ""),
                     (escape(number(latency.get("p99_us"), 1)), ""),
                     (escape(number(latency.get("max_us"), 1)), "")])
    return '<p class="note">Worst intervals: most loss first, then highest maximum ' \
        'latency.</p><div class="scroll">' + tables.grid(
            ["Interval", "Seconds", "Sent", "Lost", "Loss (%)", "Avg (us)", "p99 (us)",
             "Max (us)"], rows, table_id) + "</div>"


def plr_chart(estimates: list[dict], title: str) -> go.Figure:
    """PLRsearch's estimate after each trial with its spread (one standard deviation),
    and each trial's offered load."""
    x = list(range(1, len(estimates) + 1))
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=x, y=[r.get("estimate_pps") for r in estimates], name="critical load estimate",
        mode="lines+markers",
        error_y={"type": "data", "array": [r.get("stdev_pps") or 0 for r in estimates]}))
    fig.add_trace(go.Scatter(x=x, y=[r.get("load_pps") for r in estimates],
                             name="trial load", mode="markers", marker={"symbol": "x"}))
    fig.update_layout(title=title, xaxis={"title": "Trial"},
                      yaxis={"title": "Load (pps)"}, **_LAYOUT)
    return fig
