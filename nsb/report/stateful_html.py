"""The report's stateful section of a scenario: its answers in connections (a table:
kind, program, answer, connections a second offered and established, loss, the DUT's
own count, what failed by reason, what limited it), the trials at fractions of a
CPS answer, and the charts of its trials (nsb.report.stateful_charts).

Element ids: ``{prefix}-stateful-table``, ``{prefix}-cps-at-table``,
``{prefix}-cps-chart``, ``{prefix}-sessions-chart``, ``{prefix}-failed-chart``.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from nsb import stateful_kpis
from nsb.report import stateful_charts, stateful_table
from nsb.report.formats import number
from nsb.report.html_tables import grid

HEADERS = ["Test", "Program", "Answer", "Offered (connections/s)",
           "Established (connections/s)", "Loss (%)", "DUT sessions", "Failed by reason",
           "Never attempted", "Retransmitted", "Limited by"]
AT_HEADERS = ["% of the answer", "Asked (connections/s)", "Established (connections/s)",
              "Loss (%)", "DUT sessions", "Latency avg (us)", "Latency p99 (us)",
              "Latency max (us)", "Verdict"]


def _reasons(counts: dict) -> str:
    failed = counts.get("failed") or {}
    return ", ".join(f"{name.replace('_', ' ')} {count:,}"
                     for name, count in sorted(failed.items())) or "none"


def _row(result: dict) -> list[tuple[str, str]]:
    s = result["stateful"]
    counts = s.get("counts") or {}
    limited = str(result.get("limited_by") or "-")
    if result.get("warnings"):
        limited += " (unconfirmed)"
    cells = [(s.get("kind", "-"), "text"),
             (str(s.get("program", "-")).rsplit("/", 1)[-1], "text"),
             (stateful_table.answer(s), "text"), (number(s.get("cps"), 0), ""),
             (number(s.get("established_cps"), 0), ""),
             (number(counts.get("loss_pct"), 4), ""), (number(s.get("dut_sessions"), 0), ""),
             (_reasons(counts) if counts else "-", "text"),
             (number(counts.get("never_attempted"), 0), ""),
             (number(counts.get("retransmitted"), 0), ""), (limited, "text")]
    return [(escape(text), css) for text, css in cells]


def answers_table(results: list[dict], table_id: str) -> str:
    """One row per stateful answer."""
    rows = [_row(r) for r in results if stateful_kpis.of(r)]
    return grid(HEADERS, rows, table_id, "summary numbers") if rows else ""


def at_fractions_table(results: list[dict], table_id: str) -> str:
    """The trials at fractions of a CPS answer (its ``cps_at_pct``); '' without any."""
    rows = []
    for result in results:
        for pct, point in (result.get("cps_at_pct") or {}).items():
            counts = point.get("counts") or {}
            rows.append([(escape(str(pct)), ""), (escape(number(point.get("cps"), 0)), ""),
                         (escape(number(counts.get("cps"), 0)), ""),
                         (escape(number(counts.get("loss_pct"), 4)), ""),
                         (escape(number(counts.get("dut_sessions"), 0)), ""),
                         *_latency_cells(point.get("latency") or {}),
                         (escape(str(point.get("verdict", "-"))), "text")])
    return grid(AT_HEADERS, rows, table_id, "summary numbers") if rows else ""


def _latency_cells(latency: dict) -> list[tuple[str, str]]:
    """A point's latency: average, 99th percentile, max (us); '-' without probes."""
    return [(escape(number(latency.get(key), 0)), "") for key in ("avg_us", "p99_us", "max_us")]


def _notes(results: list[dict]) -> str:
    lines = stateful_table.lines([r for r in results if stateful_kpis.of(r)])
    return "".join(f'<p class="note">{escape(line)}.</p>' for line in lines)


def _kind(results: list[dict], profile_type: str) -> str:
    """The scenario's stateful kind: its answers', else its profile's."""
    found = [stateful_kpis.kind(r) for r in results if stateful_kpis.kind(r)]
    return found[0] if found else profile_type


def section(results: list[dict], trials: list[dict], profile_type: str, prefix: str,
            chart: Callable) -> str:
    """The HTML of a scenario's stateful answers and trials ('' when it had none);
    ``chart`` renders a figure with its id and kind."""
    stateful_trials = stateful_charts.stateful_trials(trials)
    answers = [r for r in results if stateful_kpis.of(r)]
    if not answers and not stateful_trials:
        return ""
    out = ["<h4>Connections and sessions</h4>",
           '<p class="note">A stateful answer in its own unit: connections a second (the '
           "rate the generator offered in the trial that backs it, by its own counters) or "
           "sessions held; its loss is the connections intended and not established, over "
           "those intended.</p>"]
    if answers:
        out.append(f'<div class="scroll">{answers_table(answers, f"{prefix}-stateful-table")}'
                   f"</div>{_notes(answers)}")
    if at := at_fractions_table(answers, f"{prefix}-cps-at-table"):
        out.append(f'<h4>At fractions of the answer</h4><div class="scroll">{at}</div>')
    if stateful_trials:
        answer = stateful_kpis.of(answers[0]) if answers else None
        kind = _kind(answers, profile_type)
        # the levels of a cps answer (a sessions answer's rate is only how it opened them)
        figures = [chart(stateful_charts.cps(stateful_trials,
                                             answer if kind == stateful_kpis.CPS else None),
                         f"{prefix}-cps-chart", "cps")]
        if kind == stateful_kpis.SESSIONS:
            figures = [chart(stateful_charts.sessions(stateful_trials, answer),
                             f"{prefix}-sessions-chart", "sessions"), *figures]
        if (lost := stateful_charts.failed(stateful_trials)) is not None:
            figures.append(chart(lost, f"{prefix}-failed-chart", "failed"))
        out.append(f'<div class="charts">{"".join(figures)}</div>')
    return "\n".join(out)
