"""The report's charts of stateful trials (plotly, SVG traces): per trial the
connection rate asked against what was established (a CPS search), the sessions
asked against those established and held by the DUT by its own count (concurrent
sessions), and the connections each trial lost, by reason.

Built from trial records that carry ``sessions`` (nsb.outputs.records); x is the
trial's ``trial_index``, as everywhere in the report.
"""

from __future__ import annotations

import plotly.graph_objects as go

from nsb.events import Verdict
from nsb.report.charts import _LAYOUT, TASK_COLORS, VERDICT_COLORS


def stateful_trials(trials: list[dict]) -> list[dict]:
    """The trials whose load was connections."""
    return [t for t in trials if isinstance(t.get("sessions"), dict)]


def _index(trials: list[dict]) -> list:
    return [t.get("trial_index") for t in trials]


def _asked(fig: go.Figure, trials: list[dict], key: str, unit: str) -> None:
    """What each trial asked for, one trace per verdict (o passed, x failed)."""
    for verdict in dict.fromkeys(t.get("verdict", "") for t in trials):
        chosen = [t for t in trials if t.get("verdict", "") == verdict]
        fig.add_scatter(
            name=f"asked: {verdict}", x=_index(chosen),
            y=[t["sessions"].get(key) for t in chosen], mode="markers",
            marker={"size": 11, "color": VERDICT_COLORS.get(verdict, "#9467bd"),
                    "symbol": "circle" if verdict == Verdict.PASS else "x"},
            customdata=[[t["sessions"].get("loss_pct") or 0, t.get("reason", "")]
                        for t in chosen],
            hovertemplate="trial %{x}: asked %{y:,.0f} " + unit + ", lost %{customdata[0]:.4f}"
                          " %<br>%{customdata[1]}<extra>" + verdict + "</extra>")


def _line(fig: go.Figure, trials: list[dict], key: str, name: str, color: str,
          unit: str, symbol: str = "circle-open") -> None:
    values = [t["sessions"].get(key) for t in trials]
    if all(v is None for v in values):
        return
    fig.add_scatter(name=name, x=_index(trials), y=values, mode="markers",
                    marker={"symbol": symbol, "size": 10, "color": color},
                    hovertemplate="trial %{x}: " + name + " %{y:,.0f} " + unit
                                  + "<extra></extra>")


def _level(fig: go.Figure, value, text: str, color: str) -> None:
    if isinstance(value, (int, float)) and value > 0:
        fig.add_hline(y=value, line={"dash": "dash", "color": color, "width": 1},
                      annotation_text=text, annotation_position="top left")


def cps(trials: list[dict], answer: dict | None = None) -> go.Figure:
    """Per trial the connections a second asked, offered by the generator (its own
    counters and clock) and established; the answer and the generator's ceiling as
    levels."""
    trials = stateful_trials(trials)
    fig = go.Figure()
    _asked(fig, trials, "cps_asked", "connections/s")
    _line(fig, trials, "offered_cps", "offered", "#555", "connections/s")
    _line(fig, trials, "cps", "established", TASK_COLORS[0], "connections/s", "diamond")
    answer = answer or {}
    _level(fig, answer.get("cps"), "answer", TASK_COLORS[2])
    _level(fig, answer.get("generator_ceiling_cps"), "generator's ceiling", TASK_COLORS[1])
    fig.update_layout(**_LAYOUT, title="Connections per second: asked vs established",
                      xaxis={"title": "Trial", "dtick": 1 if len(trials) <= 40 else None},
                      yaxis={"title": "Connections/s", "rangemode": "tozero"})
    return fig


def sessions(trials: list[dict], answer: dict | None = None) -> go.Figure:
    """Per trial the sessions asked (intended), established and held by the DUT by
    its own count; the answer as a level."""
    trials = stateful_trials(trials)
    fig = go.Figure()
    _asked(fig, trials, "intended", "sessions")
    _line(fig, trials, "established", "established", TASK_COLORS[0], "sessions", "diamond")
    _line(fig, trials, "dut_sessions", "held by the DUT", TASK_COLORS[3], "sessions",
          "square-open")
    _level(fig, (answer or {}).get("sessions"), "answer", TASK_COLORS[2])
    fig.update_layout(**_LAYOUT, title="Concurrent sessions: asked vs held by the DUT",
                      xaxis={"title": "Trial", "dtick": 1 if len(trials) <= 40 else None},
                      yaxis={"title": "Sessions", "rangemode": "tozero"})
    return fig


def failed(trials: list[dict]) -> go.Figure | None:
    """Per trial the connections lost, stacked by reason, and those never attempted;
    None when no trial lost one."""
    trials = stateful_trials(trials)
    reasons = sorted({r for t in trials for r in (t["sessions"].get("failed") or {})})
    series = {r.replace("_", " "): [(t["sessions"].get("failed") or {}).get(r, 0)
                                    for t in trials] for r in reasons}
    series["never attempted"] = [t["sessions"].get("never_attempted") or 0 for t in trials]
    series = {name: values for name, values in series.items() if any(values)}
    if not series:
        return None
    fig = go.Figure()
    for number, (name, values) in enumerate(series.items()):
        fig.add_bar(name=name, x=_index(trials), y=values,
                    marker_color=TASK_COLORS[(number + 3) % len(TASK_COLORS)],
                    hovertemplate="trial %{x}: %{y:,} " + name + "<extra></extra>")
    fig.update_layout(**_LAYOUT, title="Connections lost per trial, by reason",
                      barmode="stack",
                      xaxis={"title": "Trial", "dtick": 1 if len(trials) <= 40 else None},
                      yaxis={"title": "Connections", "rangemode": "tozero"})
    return fig


def compared(labels: list[str], rows: list, key: str) -> go.Figure:
    """Each task's stateful answer in its unit (``key``: cps or sessions), one bar per
    task and row, the later tasks' labelled with their % difference from the first
    (none where they are not comparable: another kind, the generator's number)."""
    fig = go.Figure()
    for index, label in enumerate(labels):
        shown = [row for row in rows if row.kinds[index] == row.kind]
        texts = [f"{row.diff_pct[key][index - 1]:+.1f} %"
                 if index and row.comparable(index) and row.diff_pct[key][index - 1] is not None
                 else "" for row in shown]
        fig.add_bar(name=label, x=[row.kind for row in shown],
                    y=[row.values[key][index] for row in shown], text=texts,
                    textposition="outside", cliponaxis=False,
                    marker_color=TASK_COLORS[index % len(TASK_COLORS)],
                    hovertemplate="%{x}: %{y:,.0f}<extra>" + label + "</extra>")
    title = "Connections per second" if key == "cps" else "Sessions held"
    fig.update_layout(**_LAYOUT, title=title, barmode="group",
                      xaxis={"title": "Answer", "type": "category"},
                      yaxis={"title": title, "rangemode": "tozero"})
    return fig
