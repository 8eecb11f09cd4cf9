"""The report's charts as plotly figures (SVG traces only: no WebGL needed).

Every figure is built from result, trial and KPI records (see
nsb.outputs.records); nothing here knows about HTML.
"""

from __future__ import annotations

from statistics import fmean

import plotly.graph_objects as go

from nsb.events import Verdict
from nsb.frames import shown
from nsb.frames import sort_key as frame_order

TASK_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]
VERDICT_COLORS = {Verdict.PASS: "#2ca02c", Verdict.FAIL: "#d62728",
                  Verdict.GENERATOR_LIMITED: "#ff7f0e",
                  "latency": "#7f7f7f"}
LATENCY_STATS = [("min_us", "min"), ("p50_us", "p50"), ("avg_us", "avg"), ("p90_us", "p90"),
                 ("p99_us", "p99"), ("p99.9_us", "p99.9"), ("max_us", "max")]
_LAYOUT = {"template": "plotly_white", "height": 380,
           "margin": {"l": 70, "r": 30, "t": 50, "b": 50},
           "legend": {"orientation": "h", "y": -0.18}, "hovermode": "closest"}


def _frame_axis(frames: list[int]) -> dict:
    """Frame sizes as evenly spaced categories, as the published charts draw them."""
    return {"title": "Frame size (B)", "type": "category",
            "categoryorder": "array", "categoryarray": [str(f) for f in frames]}


def throughput(series: list[tuple[str, dict[int, dict]]], title: str) -> go.Figure:
    """Bars of throughput (pps) per frame size, one colour per task; ``series`` is
    (label, means by frame size). Each bar is labelled with its % of line rate;
    with several tasks, the later ones with their % difference from the first
    instead (as the HPE/Intel report's charts do)."""
    from nsb.report.compare import pct_diff

    fig = go.Figure()
    frames = sorted({f for _, means in series for f in means}, key=frame_order)
    baseline = series[0][1]
    for index, (label, means) in enumerate(series):
        sizes = [f for f in frames if f in means]
        if index == 0:
            texts = [_pct_text(means[f]["line_rate_pct"], "") for f in sizes]
        else:
            texts = [_pct_text(pct_diff(baseline.get(f, {}).get("throughput_pps"),
                                        means[f]["throughput_pps"]), "+") for f in sizes]
        fig.add_bar(name=label, x=[str(f) for f in sizes], text=texts,
                    textposition="outside", cliponaxis=False,
                    marker_color=TASK_COLORS[index % len(TASK_COLORS)],
                    y=[means[f]["throughput_pps"] for f in sizes],
                    customdata=[[means[f]["throughput_mbps"], means[f]["line_rate_pct"]]
                                for f in sizes],
                    hovertemplate="%{x}: %{y:,.0f} pps, %{customdata[0]:,.1f} Mbps, "
                                  "%{customdata[1]:.2f} % of line rate<extra>" + label
                                  + "</extra>")
    fig.update_layout(**_LAYOUT, title=title, barmode="group", xaxis=_frame_axis(frames),
                      yaxis={"title": "Throughput (pps)", "rangemode": "tozero"})
    return fig


def _pct_text(value: float | None, sign: str) -> str:
    """'12.34 %' (a share of line rate) or '+5.6 %' (a difference); '' when unknown."""
    if value is None:
        return ""
    return f"{value:+.1f} %" if sign else f"{value:.2f} %"


def latency(series: list[tuple[str, dict[int, dict]]], title: str,
            stats: list[str] | None = None) -> go.Figure:
    """Latency statistics (us, log axis) per frame size; one trace per task and
    statistic that has values."""
    fig = go.Figure()
    frames = sorted({f for _, means in series for f in means}, key=frame_order)
    dashes = ["solid", "dash", "dot", "dashdot"]
    for index, (label, means) in enumerate(series):
        color = TASK_COLORS[index % len(TASK_COLORS)] if len(series) > 1 else None
        chosen = [s for s in LATENCY_STATS if stats is None or s[1] in stats]
        for number, (key, name) in enumerate(chosen):
            column = f"latency_{key.replace('.', '_')}"
            sizes = [f for f in frames if means.get(f, {}).get(column) is not None]
            if not sizes:
                continue
            line = {"color": color, "dash": dashes[number % len(dashes)]} if color else {}
            fig.add_scatter(name=f"{label} {name}" if len(series) > 1 else name,
                            x=[str(f) for f in sizes], y=[means[f][column] for f in sizes],
                            mode="lines+markers", line=line,
                            hovertemplate="%{x}: %{y:,.1f} us<extra>" + f"{label} {name}"
                                          + "</extra>")
    fig.update_layout(**_LAYOUT, title=title, xaxis=_frame_axis(frames),
                      yaxis={"title": "Latency (us, log scale)", "type": "log"})
    return fig


def searched_range(trials: list[dict]) -> list[float]:
    """The y range of a trajectory: the rates the search offered and sent, with a
    margin, so a search at 1-3 % of line rate is not a flat line on 0-100 %. The
    interval's open bounds (0 and the upper bound) are left out when trials say
    more."""
    rates = [v for t in trials for v in (t.get("requested_rate_pct"), _sent_pct(t))
             if isinstance(v, (int, float))]
    if not rates:
        return [0.0, 100.0]
    low, high = min(rates), max(rates)
    margin = max((high - low) * 0.1, high * 0.02, 0.01)
    return [max(0.0, low - margin), high + margin]


def trajectory(trials: list[dict], frame_size: int) -> go.Figure:
    """The search for one frame size: the rate offered by each trial (colour: the
    verdict), the rate actually sent, and the search interval after each trial."""
    trials = [t for t in trials if t.get("frame_size") == frame_size]
    numbers = list(range(1, len(trials) + 1))
    fig = go.Figure()
    lower = [t.get("search_lower_pct") for t in trials]
    upper = [t.get("search_upper_pct") for t in trials]
    fig.add_scatter(name="interval lower", x=numbers, y=lower, mode="lines",
                    line={"shape": "hv", "width": 0.5, "color": "#9ecae1"}, showlegend=False,
                    hovertemplate="trial %{x}: lower bound %{y:.2f} %<extra></extra>")
    fig.add_scatter(name="search interval", x=numbers, y=upper, mode="lines", fill="tonexty",
                    fillcolor="rgba(158,202,225,0.35)",
                    line={"shape": "hv", "width": 0.5, "color": "#9ecae1"},
                    hovertemplate="trial %{x}: upper bound %{y:.2f} %<extra></extra>")
    sent = [_sent_pct(t) for t in trials]
    fig.add_scatter(name="sent", x=numbers, y=sent, mode="markers",
                    marker={"symbol": "circle-open", "size": 10, "color": "#555"},
                    hovertemplate="trial %{x}: sent %{y:.2f} % of line rate<extra></extra>")
    verdicts = list(dict.fromkeys(t.get("verdict", "") for t in trials))
    for verdict in verdicts:
        chosen = [(n, t) for n, t in zip(numbers, trials, strict=True)
                  if t.get("verdict", "") == verdict]
        fig.add_scatter(
            name=f"offered: {verdict}", x=[n for n, _ in chosen],
            y=[t.get("requested_rate_pct") for _, t in chosen], mode="markers",
            marker={"size": 11, "color": VERDICT_COLORS.get(verdict, "#9467bd"),
                    "symbol": "circle" if verdict == Verdict.PASS else "x"},
            customdata=[[t.get("requested_rate_pps") or 0, t.get("tx_rate_pps") or 0,
                         t.get("rx_rate_pps") or 0, t.get("loss_pct") or 0,
                         t.get("reason", ""), t.get("iteration", 0) + 1] for _, t in chosen],
            hovertemplate="trial %{x} (iteration %{customdata[5]}): offered %{y:.2f} % "
                          "(%{customdata[0]:,.0f} pps)<br>sent %{customdata[1]:,.0f} pps, "
                          "received %{customdata[2]:,.0f} pps, loss %{customdata[3]:.4f} %"
                          "<br>%{customdata[4]}<extra>" + verdict + "</extra>")
    for number, (before, after) in enumerate(zip(trials, trials[1:], strict=False), start=1):
        if before.get("iteration") != after.get("iteration"):
            fig.add_vline(x=number + 0.5, line={"dash": "dash", "color": "#888", "width": 1})
    fig.update_layout(**_LAYOUT, title=f"Search trajectory, {shown(frame_size)}",
                      xaxis={"title": "Trial", "dtick": 1},
                      yaxis={"title": "% of line rate", "range": searched_range(trials)})
    fig.update_layout(height=330)
    return fig


def _sent_pct(trial: dict) -> float | None:
    """The rate the generator actually sent, in % of line rate (as the offered rate)."""
    asked, sent = trial.get("requested_rate_pps"), trial.get("tx_rate_pps")
    pct = trial.get("requested_rate_pct")
    if not asked or sent is None or pct is None:
        return None
    return pct * sent / asked


def latency_histogram(results: list[dict], title: str) -> go.Figure:
    """Share of the latency samples per bucket, one trace per frame size."""
    fig = go.Figure()
    edges: list = []
    for result in results:
        for bucket in (result.get("latency") or {}).get("histogram") or []:
            if bucket["le_us"] not in edges:
                edges.append(bucket["le_us"])
    edges.sort(key=lambda e: float("inf") if e is None else e)
    names = [_bucket_name(e) for e in edges]
    for result in results:
        buckets = (result.get("latency") or {}).get("histogram") or []
        total = sum(b["count"] for b in buckets)
        if not total:
            continue
        fig.add_bar(name=shown(result["frame_size"]), x=[_bucket_name(b["le_us"]) for b in buckets],
                    y=[100.0 * b["count"] / total for b in buckets],
                    hovertemplate="%{x}: %{y:.1f} % of samples<extra>"
                                  f"{shown(result['frame_size'])}</extra>")
    fig.update_layout(**_LAYOUT, title=title, barmode="group",
                      xaxis={"title": "Latency up to (us)", "type": "category", "tickangle": 0,
                             "categoryorder": "array", "categoryarray": names},
                      yaxis={"title": "% of samples"})
    return fig


def _bucket_name(edge: float | None) -> str:
    return "more" if edge is None else f"{edge:g}"


def per_trial_means(kpis: list[dict], source: str, key: str) -> dict[int, float]:
    """The mean of one KPI over the samples taken during each trial."""
    values: dict[int, list[float]] = {}
    for sample in kpis:
        value = sample.get("kpis", {}).get(key)
        if sample.get("source") == source and value is not None \
                and sample.get("trial_index") is not None:
            values.setdefault(sample["trial_index"], []).append(value)
    return {index: fmean(v) for index, v in sorted(values.items())}


def process_cpu(kpis: list[dict], trials: list[dict], title: str) -> go.Figure:
    """CPU user and system % of each VNF process, mean per trial (x: trial_index as
    results.json numbers trials, from 0)."""
    fig = go.Figure()
    sizes = {t["trial_index"]: shown(t.get("frame_size")) for t in trials if "trial_index" in t}
    sources = sorted({k["source"] for k in kpis if k.get("source", "").startswith("nfvi:")})
    for number, source in enumerate(sources):
        color = TASK_COLORS[number % len(TASK_COLORS)]
        for key, dash in (("cpu_user_pct", "solid"), ("cpu_system_pct", "dot")):
            means = per_trial_means(kpis, source, key)
            if not means:
                continue
            name = f"{source.removeprefix('nfvi:')} {key.removeprefix('cpu_').removesuffix('_pct')}"
            fig.add_scatter(name=name, x=list(means), y=list(means.values()),
                            mode="lines+markers", line={"color": color, "dash": dash},
                            customdata=[[sizes.get(i, "")] for i in means],
                            hovertemplate="trial %{x} (%{customdata[0]}): %{y:.1f} %<extra>"
                                          + name + "</extra>")
    fig.update_layout(**_LAYOUT, title=title, xaxis={"title": "Trial"},
                      yaxis={"title": "CPU % (100 = one core)", "rangemode": "tozero"})
    return fig


def core_utilisation(kpis: list[dict], node: str) -> go.Figure:
    """Utilisation of each core of a node during each trial, as a heat map."""
    source = f"node:{node}"
    cores = sorted({key for k in kpis if k.get("source") == source for key in k.get("kpis", {})},
                   key=lambda key: int("".join(c for c in key if c.isdigit()) or 0))
    columns = {core: per_trial_means(kpis, source, core) for core in cores}
    trials = sorted({i for means in columns.values() for i in means})
    fig = go.Figure(go.Heatmap(
        x=trials, y=[c.removesuffix("_util_pct") for c in cores],
        z=[[columns[c].get(i) for i in trials] for c in cores], zmin=0, zmax=100,
        colorscale="Blues", colorbar={"title": "util %"},
        hovertemplate="trial %{x}, %{y}: %{z:.1f} %<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=f"Core utilisation on {node}",
                      xaxis={"title": "Trial", "dtick": 1 if len(trials) <= 40 else None},
                      yaxis={"title": "Core", "type": "category"})
    fig.update_layout(height=max(250, min(700, 120 + 22 * len(cores))))
    return fig
