"""Per trial of a ``reset_time``, ``reconfig`` or ``overload_recovery`` answer, its
timeline for the HTML report: the rates sent and received and the loss per reading,
latency when read, with the event (a pause, a restart, a rule churn, the overload)
marked where it happened and the recovery the trial measured."""

from __future__ import annotations

import plotly.graph_objects as go

from nsb.report.soak import LATENCY_LINES

# the answers this module draws: the result's key -> (what happened, its start and end keys)
EVENTS = {"reset": ("event", "event_start_s", "event_end_s"),
          "overload": ("overload", "overload_start_s", "overload_end_s")}
MAX_TRIALS = 5  # trials drawn per answer


def section(results: list[dict], intervals: list[dict], prefix: str, chart) -> str:
    """The timelines of the answers among ``results`` ('' when none has one)."""
    out = []
    for r_index, result in enumerate(results):
        for key, (name, start, end) in EVENTS.items():
            answer = result.get(key)
            if not isinstance(answer, dict):
                continue
            for trial in answer.get("trials", [])[:MAX_TRIALS]:
                mine = [s for s in intervals if s.get("trial_index") == trial.get("trial_index")]
                if not mine:
                    continue
                fig = timeline_chart(mine, trial[start], trial[end], name,
                                     f"Trial {trial['trial_index']}: {name} at "
                                     f"{trial[start]:.2f}-{trial[end]:.2f} s")
                add_duts(fig, trial.get("duts") or {})
                out.append(chart(fig,
                                 f"{prefix}-event{r_index}-{trial['trial_index']}-chart",
                                 "event-timeline"))
    if not out:
        return ""
    return ("<h4>Timeline of each trial, the event marked</h4>"
            f'<div class="charts">{"".join(out)}</div>')


def add_duts(fig: go.Figure, duts: dict) -> None:
    """Each DUT's own sending rate, by its counters read during the trial (dotted)."""
    for name, seen in duts.items():
        readings = seen.get("readings") or []
        x, y, before = [], [], None
        for end_s, _, sent in readings:
            if before is not None and end_s > before:
                x.append((before + end_s) / 2)
                y.append(sent / (end_s - before))
            before = end_s
        if x:
            fig.add_trace(go.Scatter(x=x, y=y, name=f"{name} sent pps (its own counters)",
                                     mode="lines", line={"dash": "dot"}))


def timeline_chart(intervals: list[dict], start_s: float, end_s: float, name: str,
                   title: str) -> go.Figure:
    """Sent and received per second and frames lost per reading; mean latency on a
    second axis when read; the event shaded from its start to its end."""
    x = [((r.get("start_s") or 0) + (r.get("end_s") or 0)) / 2 for r in intervals]
    fig = go.Figure()
    for key, label in (("tx_pps", "sent pps"), ("rx_pps", "received pps")):
        fig.add_trace(go.Scatter(x=x, y=[r.get(key) for r in intervals], name=label,
                                 mode="lines"))
    fig.add_trace(go.Bar(x=x, y=[max(0, r.get("lost_packets") or 0) for r in intervals],
                         name="lost per reading", opacity=0.5))
    key, label = LATENCY_LINES[1]
    latency = [(r.get("latency") or {}).get(key) for r in intervals]
    if any(v is not None for v in latency):
        fig.add_trace(go.Scatter(x=x, y=latency, name=f"latency {label} (us)",
                                 mode="lines+markers", yaxis="y2"))
    fig.add_vrect(x0=start_s, x1=max(end_s, start_s + 0.01), fillcolor="red", opacity=0.15,
                  line_width=0, annotation_text=name, annotation_position="top left")
    fig.update_layout(title=title, template="plotly_white", height=360,
                      xaxis={"title": "Time since the traffic started (s)"},
                      yaxis={"title": "Frames per second / lost", "rangemode": "tozero"},
                      yaxis2={"title": "Latency (us)", "overlaying": "y", "side": "right",
                              "rangemode": "tozero"},
                      legend={"orientation": "h", "y": -0.2}, hovermode="x unified")
    return fig
