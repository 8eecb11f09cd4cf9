"""The report's RFC 2544 test types beyond throughput: the frame loss rate curve
(section 26.3) and the back-to-back frames (section 26.4), from result records
that carry them (``frame_loss_curve``, ``back_to_back``)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import plotly.graph_objects as go

from nsb.frames import shown
from nsb.report.charts import _LAYOUT, TASK_COLORS
from nsb.report.formats import number
from nsb.report.html_tables import grid

B2B_COLUMNS = [("mean_frames", "Mean (frames)", 1), ("min_frames", "Min", 0),
               ("max_frames", "Max", 0), ("stdev_frames", "Stdev", 1),
               ("mean_s", "Buffer at line rate, mean (us)", 3),
               ("min_s", "min (us)", 3), ("max_s", "max (us)", 3)]


def frame_loss_curve(results: list[dict]) -> go.Figure:
    """Loss (%) against offered load (% of line rate), one line per frame size."""
    fig = go.Figure()
    curves = [r for r in results if r.get("frame_loss_curve")]
    for index, result in enumerate(curves):
        points = result["frame_loss_curve"]
        name = shown(result.get("frame_size"))
        fig.add_scatter(name=name, x=[p["rate_pct"] for p in points],
                        y=[p["loss_pct"] for p in points], mode="lines+markers",
                        line={"color": TASK_COLORS[index % len(TASK_COLORS)]},
                        customdata=[[p.get("sent_pct") or 0, p.get("lost_packets", 0)]
                                    for p in points],
                        hovertemplate="offered %{x:g} % (sent %{customdata[0]:.2f} %): "
                                      "loss %{y:.4f} %, %{customdata[1]:,} frames<extra>"
                                      + name + "</extra>")
    fig.update_layout(**_LAYOUT, title="Frame loss rate vs offered load (RFC 2544 26.3)",
                      xaxis={"title": "Offered load (% of line rate)", "autorange": "reversed"},
                      yaxis={"title": "Frame loss (%)", "rangemode": "tozero"})
    return fig


def back_to_back_table(results: list[dict], table_id: str) -> str:
    """Per frame size the longest loss-free burst over the trials, in frames and in
    microseconds of buffering at line rate."""
    rows = []
    for result in results:
        b2b = result.get("back_to_back")
        if not b2b:
            continue
        cells = [(escape(shown(result.get("frame_size"))), "text"),
                 (escape(number(b2b.get("trials"), 0)), "")]
        for key, _, digits in B2B_COLUMNS:
            value = b2b.get(key)
            if key.endswith("_s") and value is not None:
                value = value * 1e6
            cells.append((escape(number(value, digits)), ""))
        cells.append((escape(number(b2b.get("burst_rate_pps"), 0)), ""))
        rows.append(cells)
    headers = ["Frame", "Trials"] + [h for _, h, _ in B2B_COLUMNS] + ["Burst rate (pps)"]
    return grid(headers, rows, table_id, "numbers")


def section(results: list[dict], prefix: str, chart: Callable[[go.Figure, str, str], str]
            ) -> str:
    """The HTML of these test types for one scenario ('' when it ran neither);
    ``chart`` renders a figure with its id and kind."""
    out = []
    if any(r.get("back_to_back") for r in results):
        out += ["<h4>Back-to-back frames (RFC 2544 26.4)</h4>",
                '<p class="note">The longest burst at the maximum rate forwarded without loss, '
                "over the trials; as time, the burst at line rate: how long the DUT "
                "buffers what it cannot forward.</p>",
                f'<div class="scroll">{back_to_back_table(results, f"{prefix}-b2b-table")}'
                "</div>"]
    if any(r.get("frame_loss_curve") for r in results):
        out += ["<h4>Frame loss rate (RFC 2544 26.3)</h4>",
                '<p class="note">Loss at each step down from the maximum rate, until two '
                "successive steps lost no frame.</p>",
                '<div class="charts">' + chart(frame_loss_curve(results),
                                               f"{prefix}-frame-loss-chart", "frame_loss")
                + "</div>"]
    return "\n".join(out)
