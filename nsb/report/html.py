"""`nsb report html`: one self-contained HTML file (plotly.js inline, no network).

Element ids are stable (tests and scripts find things by them); n is the task's
position on the command line, m the scenario's in its task, both from 1:

- ``cmp{m}-throughput-table``, ``cmp{m}-latency-table``, ``cmp{m}-throughput-chart``
  (``cmp{m}-cps-chart``, ``cmp{m}-sessions-chart`` of stateful answers),
  ``cmp{m}-latency-chart``, ``cmp-platform-table``: the comparison (several tasks)
- ``t{n}-facts``, ``t{n}-platform-table``: the task and its nodes
- ``t{n}-s{m}-summary-table`` (``-mean-table`` with several iterations),
  ``-throughput-chart``, ``-latency-chart``, ``-trajectory-{frame}-chart``,
  ``-histogram-chart``, ``-cpu-chart``, ``-cores{k}-chart``, ``-processes-table``,
  ``-trials-table``, ``-counters-table``, ``-b2b-table``, ``-frame-loss-chart``
  (nsb.report.rfc2544), ``-path-{frame}`` (nsb.report.path_html), ``-stateful-table``,
  ``-cps-chart``, ``-sessions-chart``, ``-failed-chart`` (nsb.report.stateful_html): one
  scenario
"""

from __future__ import annotations

import time
from html import escape

from nsb import __version__
from nsb.events import TaskStatus
from nsb.report import charts, compare, path_html, summary
from nsb.report import html_tables as tables
from nsb.report.loading import TaskResults

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2733;
       margin: 0; background: #f4f6f8; }
main { max-width: 1500px; margin: 0 auto; padding: 16px 28px 60px; }
header.page { background: #1d3557; color: #fff; padding: 18px 28px; }
header.page h1 { margin: 0; font-size: 22px; } header.page p { margin: 4px 0 0; opacity: .85; }
nav { margin: 14px 0; } nav a { margin-right: 14px; }
section.task, section.comparison { background: #fff; border-radius: 6px; padding: 8px 22px 18px;
       margin: 18px 0; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
h2 { border-bottom: 2px solid #1d3557; padding-bottom: 4px; }
h3 { margin-top: 28px; color: #1d3557; } h4 { margin: 22px 0 6px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13px; }
th, td { border: 1px solid #d5dbe1; padding: 3px 8px; vertical-align: top; }
thead th { background: #e8edf2; position: sticky; top: 0; }
table.numbers td, table.summary td, table.comparison td { text-align: right;
       font-variant-numeric: tabular-nums; white-space: nowrap; }
table.numbers td.text, table.summary td.text { text-align: left; }
tbody tr:nth-child(even) { background: #f8fafb; }
table.facts th, table.platform th { text-align: left; background: #f0f3f6; font-weight: 600; }
table.platform td { max-width: 520px; word-break: break-word; }
td.differs { background: #fff3cd; }
td.better { color: #1a7f37; font-weight: 600; } td.worse { color: #c62828; font-weight: 600; }
td.not-comparable { color: #8a6d00; font-style: italic; }
td.verdict.pass { color: #1a7f37; } td.verdict.fail { color: #c62828; }
td.verdict.generator_limited { color: #b35c00; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-weight: 600; }
.status.ok { background: #d4edda; } .status.error, .status.interrupted { background: #f8d7da; }
.status.running, .status.unknown { background: #fff3cd; }
.banner { background: #f8d7da; border: 1px solid #e6a1a8; padding: 8px 12px; border-radius: 4px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 12px; }
figure.chart { margin: 0; min-width: 0; overflow: hidden; border: 1px solid #e3e8ed;
               border-radius: 4px; background: #fff; }
p.note { color: #5a6772; margin: 4px 0; } details { margin: 10px 0; }
summary { cursor: pointer; font-weight: 600; }
.scroll { overflow-x: auto; }
"""


def chart(fig, chart_id: str, kind: str) -> str:
    import plotly.io as pio

    div = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=chart_id,
                      config=PLOTLY_CONFIG, default_height=f"{fig.layout.height or 380}px")
    return f'<figure class="chart" data-kind="{kind}">{div}</figure>'


def render(tasks: list[TaskResults], labels: list[str] | None = None, suite=None) -> str:
    """The whole page as one string; a ``suite`` run (nsb.suite_record.SuiteRun): its
    table of cases first, then each case's task (no comparison: they differ)."""
    from plotly.offline import get_plotlyjs

    labels = labels or [t.id for t in tasks]
    title = "nsb report: " + (f"suite {suite.name} ({suite.suite_id})" if suite
                              else " vs ".join(labels))
    nav = []
    body = []
    if suite is not None:
        nav.append('<a href="#suite">Suite</a>')
        body.append(_suite(suite))
    elif len(tasks) > 1:
        nav.append('<a href="#comparison">Comparison</a>')
        body.append(_comparison(tasks, labels))
    for n, (task, label) in enumerate(zip(tasks, labels, strict=True), start=1):
        nav.append(f'<a href="#task-{n}">{escape(label)}</a>')
        body.append(_task(task, label, n))
    generated = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{CSS}{path_html.CSS}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>', "</head><body>",
        f'<header class="page"><h1>{escape(title)}</h1>'
        f"<p>Generated {escape(generated)} by nsb {escape(__version__)} from "
        f"{len(tasks)} task(s)</p></header>",
        f"<main><nav>{''.join(nav)}</nav>", *body, "</main></body></html>", ""])


def _suite(suite) -> str:
    from nsb import suite_record

    cells = [[(escape(text), "") for text in row] for row in suite_record.table_rows(suite)]
    return ('<section class="comparison" id="suite"><h2>Suite</h2>'
            f'<p class="note">{escape(suite.file)}: {len(suite.cases)} case(s), status '
            f'{escape(suite.status)}, exit code {suite.exit_code}.</p>'
            f"<div class=\"scroll\">{tables.grid(suite_record.HEADERS, cells, 'suite-table')}"
            "</div></section>")


def _comparison(tasks: list[TaskResults], labels: list[str]) -> str:
    others = " and ".join(labels[1:])
    out = ['<section class="comparison" id="comparison">', "<h2>Comparison</h2>",
           f'<p class="note">Baseline: {escape(labels[0])}. Differences are those of '
           f"{escape(others)} from the baseline, (other - baseline) / baseline in %; green is "
           "better (higher throughput, lower latency), red is worse. Several iterations of a "
           "scenario are averaged first. A frame size where the generator limited either side is "
           "not comparable: its numbers are what the generator sent.</p>"]
    for m, (match, rows) in enumerate(compare.compare_all(tasks), start=1):
        out.append(f"<h3>{escape(match.label)}</h3>")
        if not rows:
            out.append('<p class="note">No results to compare.</p>')
            continue
        out.append(f'<div class="scroll">{tables.comparison_tables(labels, rows, f"cmp{m}")}</div>')
        if note := compare.single_run_note(rows):
            out.append(f'<p class="note">Note: {escape(note)}.</p>')
        series = []
        for task, label, name in zip(tasks, labels, match.names, strict=True):
            if name is not None:
                series.append((label, summary.mean_by_frame(task, name)))
        if (key := compare.table_keys(rows)[0]) != "throughput_pps":  # stateful answers
            from nsb.report.stateful_charts import compared

            figures = [chart(compared(labels, rows, key), f"cmp{m}-{key}-chart", key)]
        else:
            figures = [chart(charts.throughput(series, "Throughput vs frame size"),
                             f"cmp{m}-throughput-chart", "throughput")]
        if _has_latency(series):
            figures.append(chart(charts.latency(series, "Latency vs frame size",
                                                stats=["avg", "p99"]),
                                 f"cmp{m}-latency-chart", "latency"))
        out.append(f'<div class="charts">{"".join(figures)}</div>')
    from nsb.report import sweep_html

    out.append(sweep_html.comparison_section([t.results for t in tasks], labels))
    columns = [(f"{label}: {node}", facts) for task, label in zip(tasks, labels, strict=True)
               for node, facts in sorted(task.platform.items())]
    if columns:
        out += ["<h3>Platform</h3>", '<p class="note">Facts that differ are highlighted.</p>',
                f'<div class="scroll">{tables.platform_table(columns, "cmp-platform-table")}'
                "</div>"]
    out.append("</section>")
    return "\n".join(out)


def _in_packets(results: list[dict]) -> bool:
    """Whether any answer is a packet rate (a connection rate's packets are no answer)."""
    from nsb import stateful_kpis

    return any(stateful_kpis.value_key(r) == "throughput_pps" for r in results)


def _has_latency(series: list[tuple[str, dict]]) -> bool:
    return any(row.get("latency_avg_us") is not None for _, means in series
               for row in means.values())


def _task(task: TaskResults, label: str, n: int) -> str:
    description = task.task.get("description") or ""
    status = task.status
    heading = escape(label) + (f" &mdash; {escape(description)}" if description else "")
    out = [f'<section class="task" id="task-{n}">', f"<h2>{heading}</h2>"]
    facts = tables.task_facts(task)
    facts = [(k, f'<span class="status {escape(status)}">{v}</span>' if k == "Status" else v)
             for k, v in facts]
    out.append(tables.key_values(facts).replace('<table class="facts">',
                                                f'<table class="facts" id="t{n}-facts">', 1))
    if status != TaskStatus.OK:
        error = task.task.get("error") or ""
        out.append(f'<p class="banner">This run did not finish cleanly (status {escape(status)})'
                   f"{': ' + escape(error) if error else ''}. What it measured is shown.</p>")
    from nsb.report import sweep_html

    out.append(sweep_html.task_section(task.results, n, chart))
    for m, scenario in enumerate(task.scenarios(), start=1):
        out.append(_scenario(task, label, scenario, f"t{n}-s{m}"))
    dut = tables.dut_configuration(task.plan, f"t{n}-dut-table")
    if dut:
        out += ["<h3>DUT configuration</h3>", f'<div class="scroll">{dut}</div>']
    if task.platform:
        columns = sorted(task.platform.items())
        out += ["<h3>Platform</h3>",
                f'<div class="scroll">{tables.platform_table(columns, f"t{n}-platform-table")}'
                "</div>"]
    out.append("</section>")
    return "\n".join(out)


def _profile_note(task: TaskResults, scenario: str) -> str:
    profile = task.profile_of(scenario)
    if not profile:
        return ""
    parts = [f"traffic profile {profile.get('type', '?')}"]
    for key, text in (("duration", "trial duration {} s"),
                      ("tolerated_loss_pct", "tolerated loss {} %"),
                      ("tolerated_loss", "tolerated loss {} %"),  # results of nsb before
                      ("test_precision", "precision {} %"),
                      ("interface_speed_gbps", "line rate {} Gbit/s per port")):
        if profile.get(key) is not None:
            parts.append(text.format(profile[key]))
    return f'<p class="note">{escape(", ".join(parts))}</p>'


def _chains(results: list[dict], prefix: str) -> str:
    """Each service chain's share of the answers, where the scenario had chains."""
    per_chain = tables.chains_table(results, f"{prefix}-chains-table")
    out = f'<h4>Service chains</h4><div class="scroll">{per_chain}</div>' if per_chain else ""
    isolation = tables.isolation_table(results, f"{prefix}-isolation-table")
    if isolation:
        out += f'<h4>Isolation</h4><div class="scroll">{isolation}</div>'
    return out


def _scenario(task: TaskResults, label: str, scenario: str, prefix: str) -> str:
    out = [f'<h3 id="{prefix}">Scenario {escape(str(scenario))}</h3>',
           _profile_note(task, scenario)]
    results = task.results_of(scenario)
    trials = task.trials_of(scenario)
    kpis = task.kpis_of(scenario)
    iterations = task.iterations(scenario)
    out.append("<h4>Summary</h4>")
    if results:
        rows = tables.summary_rows(task, scenario)
        grid = tables.summary_table(rows, f"{prefix}-summary-table", len(iterations) > 1)
        out.append(f'<div class="scroll">{grid}</div>{_chains(results, prefix)}')
        means = summary.mean_by_frame(task, scenario)
        if len(iterations) > 1:
            out += [f"<h4>Mean of {len(iterations)} iterations</h4>",
                    '<div class="scroll">' + tables.summary_table(
                        list(means.values()), f"{prefix}-mean-table", runs_column=True)
                    + "</div>"]
        series = [(label, means)]
        figures = [chart(charts.throughput(series, "Throughput vs frame size"),
                         f"{prefix}-throughput-chart", "throughput")] \
            if _in_packets(results) else []
        if _has_latency(series):
            figures.append(chart(charts.latency(series, "Latency vs frame size"),
                                 f"{prefix}-latency-chart", "latency"))
        out.append(f'<div class="charts">{"".join(figures)}</div>')
        from nsb.report import rfc2544

        out.append(rfc2544.section(results, prefix, chart))
    else:
        out.append('<p class="note">No results: no frame size finished.</p>')
    from nsb.report import event_timeline, soak, stateful_html

    out.append(stateful_html.section(results, trials, task.profile_of(scenario).get("type", ""),
                                     prefix, chart))
    out.append(path_html.section(results, trials, prefix))
    intervals = [r for r in task.soak_intervals if r.get("scenario") == scenario]
    timelines = event_timeline.section(results, intervals, prefix, chart)
    out.append(timelines or soak.section(task, scenario, prefix, chart))
    out.append(_trajectories(trials, prefix))
    if any((r.get("latency") or {}).get("histogram") for r in results):
        out.append("<h4>Latency distribution at the result</h4>")
        out.append('<div class="charts">' + chart(
            charts.latency_histogram(results, "Latency histogram per frame size"),
            f"{prefix}-histogram-chart", "histogram") + "</div>")
    out.append(_nfvi(kpis, trials, prefix))
    if trials:
        out.append(f"<details><summary>All {len(trials)} trials</summary>"
                   f'<div class="scroll">{tables.trials_table(trials, f"{prefix}-trials-table")}'
                   "</div></details>")
    if any(not k.get("source", "").startswith(("nfvi:", "node:")) for k in kpis):
        out.append("<details><summary>VNF counters after each trial</summary>"
                   '<div class="scroll">'
                   f'{tables.vnf_counters_table(kpis, f"{prefix}-counters-table")}</div></details>')
    return "\n".join(out)


def _trajectories(trials: list[dict], prefix: str) -> str:
    """Each frame size's search, from its trials of frames (a stateful trial's search
    is drawn in connections: nsb.report.stateful_html)."""
    trials = [t for t in trials if not isinstance(t.get("sessions"), dict)]
    if not trials:
        return ""
    frames = list(dict.fromkeys(t.get("frame_size") for t in trials))
    return ("<h4>Search trajectory</h4>"
            '<p class="note">Rate offered by each trial (o passed, x failed or the '
            "generator fell short), the rate actually sent, and the search interval "
            "left after each trial.</p>"
            '<div class="charts">' + "".join(
                chart(charts.trajectory(trials, frame), f"{prefix}-trajectory-{frame}-chart",
                      "trajectory") for frame in frames) + "</div>")


def _nfvi(kpis: list[dict], trials: list[dict], prefix: str) -> str:
    out = ["<h4>NFVi KPIs</h4>"]
    processes = [k for k in kpis if k.get("source", "").startswith("nfvi:")]
    nodes = sorted({k["source"].removeprefix("node:") for k in kpis
                    if k.get("source", "").startswith("node:")})
    if not processes and not nodes:
        out.append('<p class="note">No NFVi samples (nfvi_interval is 0, or the run had no '
                   "processes to watch).</p>")
        return "\n".join(out)
    figures = []
    if processes:
        figures.append(chart(charts.process_cpu(kpis, trials, "CPU per process, mean per trial"),
                             f"{prefix}-cpu-chart", "cpu"))
    for k, node in enumerate(nodes, start=1):
        figures.append(chart(charts.core_utilisation(kpis, node), f"{prefix}-cores{k}-chart",
                             "cores"))
    out.append(f'<div class="charts">{"".join(figures)}</div>')
    if processes:
        out.append(tables.process_table(kpis, f"{prefix}-processes-table"))
    return "\n".join(out)


def write(tasks: list[TaskResults], path, labels: list[str] | None = None) -> None:
    from pathlib import Path

    Path(path).write_text(render(tasks, labels), encoding="utf-8")
