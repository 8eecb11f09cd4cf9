"""A sweep's charts, as the published scaling figures draw them: throughput vs frame
size with one line per sweep point, and throughput vs the swept value with one line
per frame size."""

from __future__ import annotations

import plotly.graph_objects as go

from nsb.report.charts import TASK_COLORS
from nsb.report.sweep import Sweep

_LAYOUT = {"template": "plotly_white", "height": 380,
           "margin": {"l": 70, "r": 30, "t": 50, "b": 50},
           "legend": {"orientation": "h", "y": -0.18}, "hovermode": "closest"}


def by_frame_data(sweep: Sweep) -> list[tuple[str, list[str], list[float | None]]]:
    """Per point: (label, frame sizes, throughput pps)."""
    sizes = sweep.frame_sizes
    return [(label, [str(f) for f in sizes], [sweep.throughput(label, f) for f in sizes])
            for label in sweep.labels]


def by_value_data(sweep: Sweep) -> tuple[str, list[tuple[str, list, list[float | None]]]]:
    """The x axis title and, per frame size, (frame, swept values, throughput pps).
    With one swept arg the values are its own (numbers stay numbers), with more the
    points' labels."""
    names = list(sweep.points[0]) if sweep.points else []
    if len(names) == 1:
        title, xs = names[0], [p[names[0]] for p in sweep.points]
    else:
        title, xs = "sweep point", list(sweep.labels)
    lines = [(str(frame), xs, [sweep.throughput(label, frame) for label in sweep.labels])
             for frame in sweep.frame_sizes]
    return title, lines


def throughput_by_frame(sweep: Sweep) -> go.Figure:
    fig = go.Figure()
    for index, (label, xs, ys) in enumerate(by_frame_data(sweep)):
        fig.add_scatter(name=label, x=xs, y=ys, mode="lines+markers",
                        line_color=TASK_COLORS[index % len(TASK_COLORS)],
                        hovertemplate="%{x} B: %{y:,.0f} pps<extra>" + label + "</extra>")
    sizes = [str(f) for f in sweep.frame_sizes]
    fig.update_layout(**_LAYOUT, title=f"{sweep.scenario}: throughput vs frame size per "
                      "sweep point",
                      xaxis={"title": "Frame size (B)", "type": "category",
                             "categoryorder": "array", "categoryarray": sizes},
                      yaxis={"title": "Throughput (pps)", "rangemode": "tozero"})
    return fig


def throughput_by_value(sweep: Sweep) -> go.Figure:
    title, lines = by_value_data(sweep)
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool)
                  for _, xs, _ in lines for x in xs)
    fig = go.Figure()
    for index, (frame, xs, ys) in enumerate(lines):
        fig.add_scatter(name=f"{frame} B", x=xs if numeric else [str(x) for x in xs], y=ys,
                        mode="lines+markers", line_color=TASK_COLORS[index % len(TASK_COLORS)],
                        hovertemplate=title + " %{x}: %{y:,.0f} pps<extra>" + frame
                        + " B</extra>")
    xaxis = {"title": title, "type": "linear" if numeric else "category"}
    if numeric:
        xaxis["tickvals"] = sorted({x for _, xs, _ in lines for x in xs})
    fig.update_layout(**_LAYOUT, title=f"{sweep.scenario}: throughput vs {title}",
                      xaxis=xaxis, yaxis={"title": "Throughput (pps)", "rangemode": "tozero"})
    return fig


def density_data(sweep: Sweep) -> list[tuple[str, list[int], list[float], list[float]]]:
    """Per frame size: (frame, chain counts, total throughput, mean per chain), over
    the sweep's points that measured chains."""
    out = []
    for frame in sweep.frame_sizes:
        counts, totals, means = [], [], []
        for label in sweep.labels:
            found = sweep.chains.get(label, {}).get(frame)
            if found:
                rates = [float(c["throughput_pps"]) for c in found["chains"]]
                counts.append(len(rates))
                totals.append(sum(rates))
                means.append(sum(rates) / len(rates))
        if counts:
            out.append((str(frame), counts, totals, means))
    return out


def density(sweep: Sweep) -> go.Figure:
    """CSIT's density figure: throughput against the number of chains, all chains
    together (solid) and per chain (dashed), one colour per frame size."""
    fig = go.Figure()
    for index, (frame, counts, totals, means) in enumerate(density_data(sweep)):
        color = TASK_COLORS[index % len(TASK_COLORS)]
        fig.add_scatter(name=f"{frame} B, all chains", x=counts, y=totals,
                        mode="lines+markers", line_color=color,
                        hovertemplate="%{x} chains: %{y:,.0f} pps<extra>" + frame + " B</extra>")
        fig.add_scatter(name=f"{frame} B, per chain", x=counts, y=means, mode="lines+markers",
                        line={"color": color, "dash": "dash"},
                        hovertemplate="%{x} chains: %{y:,.0f} pps per chain<extra>" + frame
                        + " B</extra>")
    ticks = sorted({c for _, counts, _, _ in density_data(sweep) for c in counts})
    fig.update_layout(**_LAYOUT, title=f"{sweep.scenario}: throughput vs service chains",
                      xaxis={"title": "chains", "type": "linear", "tickvals": ticks},
                      yaxis={"title": "Throughput (pps)", "rangemode": "tozero"})
    return fig
