"""`nsb report table`: the summary (and the comparison) as text, CSV, JSON or Markdown."""

from __future__ import annotations

import csv
import io
import json

from nsb.report import compare, stateful_table, summary, table
from nsb.report.loading import TaskResults

TEXT_COLUMNS = {"Limited by", "Test", "Program", "Answer"}
NOT_COMPARABLE_TEXT = "not comparable"


def number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def signed_pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def summary_groups(task: TaskResults) -> list[tuple[str, list[dict]]]:
    """(title, result records) per scenario, per iteration when it ran several."""
    return [group for scenario in task.scenarios()
            for group in iteration_groups(scenario, task.results_of(scenario))]


def iteration_groups(scenario: str, results: list[dict]) -> list[tuple[str, list[dict]]]:
    """(title, result records) per iteration; the title names it when there are several."""
    iterations = sorted({r.get("iteration", 0) for r in results}) or [0]
    return [(scenario if len(iterations) <= 1 else f"{scenario}, iteration {iteration + 1}",
             [r for r in results if r.get("iteration", 0) == iteration])
            for iteration in iterations]


def scenario_tables(task_id: str, scenario: str, results: list[dict]) -> list:
    """The summary table of each iteration and, after several, their mean and spread."""
    groups = iteration_groups(scenario, results)
    tables = [table.render(group, title=f"{title} (task {task_id})") for title, group in groups]
    if len(groups) > 1:
        tables.append(table.render_means(results, title=f"{scenario}: mean of {len(groups)} "
                                         f"iterations (task {task_id})"))
    return tables


def comparison_table(labels: list[str], rows: list[compare.ComparisonRow],
                     metrics: list[str] | None = None) -> tuple[list[str], list[list[tuple]]]:
    """Headers and cells ``(text, verdict)`` of one comparison table: per frame size
    each task's values, then each later task's % difference from the first on
    the first metric (throughput pps), like the HPE/Intel report, and what limited
    each task; verdict is 'better', 'worse', 'same', 'not-comparable' (the
    generator limited either side) or '' for plain values."""
    chosen = [compare.BY_KEY[k] for k in (metrics or compare.table_keys(rows))]
    headers = [first_header(rows)]
    for label in labels:
        headers += [f"{label} {m.label}" for m in chosen] + [f"{label} limited by"]
    headers += [f"{label} vs {labels[0]} (%)" for label in labels[1:]]
    cells = []
    for row in rows:
        line = [(row_label(row), "")]
        for index in range(len(labels)):
            line += [(number(row.values[m.key][index], m.digits), "") for m in chosen]
            limits = row.limited_by[index] if index < len(row.limited_by) else ""
            line.append((limits or "-", "text"))
        lead = chosen[0]
        for other, diff in enumerate(row.diff_pct[lead.key], start=1):
            line.append(diff_cell(row, lead, other, diff))
        cells.append(line)
    return headers, cells


def first_header(rows: list[compare.ComparisonRow]) -> str:
    """What a comparison's rows are: frame sizes, or stateful answers."""
    return "Answer" if any(row.kind for row in rows) else "Frame (B)"


def row_label(row: compare.ComparisonRow) -> str:
    """A comparison row's name: its frame size, or its stateful answer's kind."""
    return row.kind or str(row.frame_size)


def diff_cell(row: compare.ComparisonRow, metric: compare.Metric, other: int,
              diff: float | None) -> tuple[str, str]:
    """``("+5.20", "better")``, or ``("+1.20 (within ±3.10)", "same")`` when the
    difference is inside the results' uncertainty: the reader sees why it is not
    marked; ``("not comparable", "not-comparable")`` when the generator limited
    either side."""
    bound = compare.within(row, metric, other)
    verdict = compare.verdict(metric, diff, bound, row.comparable(other))
    if verdict == compare.NOT_COMPARABLE:
        return NOT_COMPARABLE_TEXT, verdict
    text = signed_pct(diff)
    if diff is not None and bound is not None and verdict == "same" and abs(diff) >= 0.005:
        text += f" (within ±{bound:.2f})"
    return text, verdict


def render(tasks: list[TaskResults], fmt: str, labels: list[str] | None = None) -> str:
    """csv, json or markdown as a string (text: see ``text_tables``)."""
    labels = labels or [t.id for t in tasks]
    if fmt == "csv":
        return _csv(tasks)
    if fmt == "json":
        return _json(tasks)
    if fmt == "markdown":
        return _markdown(tasks, labels)
    raise ValueError(f"unknown format {fmt!r}")


def _csv(tasks: list[TaskResults]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=summary.COLUMNS, lineterminator="\n")
    writer.writeheader()
    for task in tasks:
        for record in summary.rows(task):
            writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
    return out.getvalue()


def _json(tasks: list[TaskResults]) -> str:
    ids = [t.id for t in tasks]
    comparison = []
    if len(tasks) > 1:
        for _, rows in compare.compare_all(tasks):
            comparison += [r.as_dict(ids) for r in rows]
    doc = {"tasks": [{"id": t.id, "description": t.task.get("description", ""),
                      "status": t.status, "results_file": str(t.path)} for t in tasks],
           "summary": [r for t in tasks for r in summary.rows(t)],
           "comparison": comparison}
    from nsb.report import sweep

    if sweeps := sweep.json_doc([t.results for t in tasks], ids):
        doc["sweeps"] = sweeps
    return json.dumps(doc, indent=1) + "\n"


def _markdown_table(headers: list[str], cells: list[list[str]]) -> list[str]:
    def line(values):
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    align = ["---" if h in TEXT_COLUMNS or h.endswith(" limited by") else "---:"
             for h in headers]
    return [line(headers), "|" + "|".join(align) + "|",
            *(line(row) for row in cells)]


def _markdown_results(results: list[dict]) -> list[str]:
    """The summary table of frame answers, and the stateful answers' own table."""
    stateful = [r for r in results if stateful_table.is_stateful(r)]
    packets = [r for r in results if not stateful_table.is_stateful(r)]
    lines = _markdown_table(table.HEADERS, table.rows(packets)) if packets else []
    if stateful:
        lines += [""] if lines else []
        lines += _markdown_table(stateful_table.HEADERS, stateful_table.rows(stateful))
    return lines


def _markdown(tasks: list[TaskResults], labels: list[str]) -> str:
    lines = []
    for task in tasks:
        for title, results in summary_groups(task):
            lines += [f"### {title} (task {task.id})", ""]
            lines += _markdown_results(results) if results else ["No results."]
            lines.append("")
    if len(tasks) > 1:
        for match, rows in compare.compare_all(tasks):
            headers, cells = comparison_table(labels, rows)
            lines += [f"### {match.label}: {' vs '.join(labels[1:])} vs {labels[0]}", ""]
            lines += _markdown_table(headers, [[text for text, _ in row] for row in cells])
            if apart := compare.not_comparable_lines(labels, rows):
                lines += ["", *(f"- {line}" for line in apart)]
            if note := compare.single_run_note(rows):
                lines += ["", f"Note: {note}."]
            lines.append("")
    from nsb.report import sweep

    lines += sweep.markdown([t.results for t in tasks], labels, [t.id for t in tasks])
    return "\n".join(lines)


def text_tables(tasks: list[TaskResults], labels: list[str] | None = None) -> list:
    """rich Tables for the terminal: the run's own summary table per scenario,
    then the comparisons."""
    from rich.markup import escape
    from rich.table import Table

    labels = labels or [t.id for t in tasks]
    tables = [rendered for task in tasks for scenario in task.scenarios()
              for rendered in scenario_tables(task.id, scenario, task.results_of(scenario))]
    if len(tasks) > 1:
        styles = {"better": "green", "worse": "red", compare.NOT_COMPARABLE: "yellow"}
        for match, rows in compare.compare_all(tasks):
            headers, cells = comparison_table(labels, rows)
            notes = compare.not_comparable_lines(labels, rows)
            if note := compare.single_run_note(rows):
                notes.append(f"Note: {note}")
            grid = Table(title=escape(f"{match.label}: {' vs '.join(labels[1:])} vs "
                                      f"{labels[0]}"),
                         caption=escape("\n".join(notes)) if notes else None)
            for header in headers:
                grid.add_column(escape(header), justify="right")
            for row in cells:
                grid.add_row(*(f"[{styles[v]}]{text}[/]" if v in styles else escape(text)
                               for text, v in row))
            tables.append(grid)
    from nsb.report import sweep

    tables += sweep.text_tables([t.results for t in tasks], labels, [t.id for t in tasks])
    return tables
