"""`nsb report html|table`: argparse wiring and handlers.

Heavy imports (plotly, rich) happen inside the handlers, so `nsb --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nsb.errors import NsbError
from nsb.events import TaskStatus
from nsb.report import results_shape
from nsb.report.terminal import print_tables, results_dir_of

FORMATS = ("text", "csv", "json", "markdown")


def register(subparsers) -> None:
    """Add `report` with its `html` and `table` actions to the CLI's subparsers."""
    report = subparsers.add_parser("report", help="summaries, comparisons and HTML reports "
                                   "of finished tasks")
    actions = report.add_subparsers(dest="report_command", metavar="ACTION")
    actions.required = True

    html = actions.add_parser(
        "html", help="one self-contained HTML file: summary, charts, search trajectory, "
        "platform, NFVi KPIs; with several tasks, a comparison (the first is the baseline)")
    _task_refs(html)
    html.add_argument("-o", "--output", metavar="FILE",
                      help="write here ('-' for stdout; default: nsb-report-ID[-vs-ID].html "
                           "in the current directory)")
    html.set_defaults(handler=cmd_report_html)

    table = actions.add_parser(
        "table", help="the summary table in the terminal or for scripts; with several "
        "tasks also their comparison (the first is the baseline)")
    _task_refs(table)
    table.add_argument("--format", choices=FORMATS, default="text",
                       help="text (default), csv (one row per result), json (summary and "
                            "comparison) or markdown")
    table.set_defaults(handler=cmd_report_table)

    from nsb.report import trend_command

    trend_command.register(actions)


def _task_refs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_ids", nargs="+", metavar="TASK_ID",
                        help="a task id (or a unique prefix) under the results directory, "
                             "or the path of a task's results directory or results.json")
    parser.add_argument("--results-dir", metavar="DIR",
                        help="where task ids are looked up (default: results_dir from the "
                             "configuration)")
    parser.add_argument("--label", action="append", metavar="NAME",
                        help="a name for each task in the order given, e.g. --label Gen9 "
                             "--label Gen10 (default: the task ids)")


def _load(args) -> tuple[list, list[str]]:
    from nsb.report import loading

    results_dir, where = results_dir_of(args)
    tasks = [loading.load(ref, results_dir, where) for ref in args.task_ids]
    labels = args.label or []
    if labels and len(labels) != len(tasks):
        raise NsbError(f"{len(labels)} --label for {len(tasks)} task(s): give one per task")
    return tasks, labels or [t.id for t in tasks]


@results_shape.guarded
def cmd_report_html(args) -> int:
    try:
        from nsb.report import html
    except ImportError as exc:
        from nsb.errors import PrerequisiteError

        raise PrerequisiteError(f"the HTML report needs plotly ({exc}): pip install plotly") \
            from None
    suite = _suite(args)
    if suite is not None:  # a suite run: its cases' tasks, one after the other
        from nsb.report import loading

        results_dir, where = results_dir_of(args)
        ran = [c for c in suite.cases if c.task_id]
        tasks = [loading.load(c.task_id, results_dir, where) for c in ran]
        page = html.render(tasks, [c.name for c in ran], suite=suite)
        args.output = args.output or f"nsb-report-suite-{suite.suite_id}.html"
    else:
        tasks, labels = _load(args)
        page = html.render(tasks, labels)
    if args.output == "-":
        sys.stdout.write(page)
        return 0
    path = Path(args.output or "nsb-report-" + "-vs-".join(t.id for t in tasks) + ".html")
    from nsb.task import input_file

    input_file.write_text(path, page)
    print(path)
    return 0


def _suite(args):
    """The suite run one TASK_ID names (None when it names a task)."""
    from nsb import suite_record

    if len(args.task_ids) != 1:
        return None
    results_dir = results_dir_of(args)[0]
    if not suite_record.exists(Path(results_dir), args.task_ids[0]):
        return None
    return suite_record.load(Path(results_dir), args.task_ids[0])


@results_shape.guarded
def cmd_report_table(args) -> int:
    """Exit 1 when a task did not finish cleanly: its table may be short or empty."""
    from nsb.report import formats

    tasks, labels = _load(args)
    if args.format != "text":
        sys.stdout.write(formats.render(tasks, args.format, labels))
    else:
        print_tables(formats.text_tables(tasks, labels))
    unclean = [t for t in tasks if t.status != TaskStatus.OK]
    for task in unclean:
        error = task.task.get("error") or ""
        print(f"nsb: task {task.id} did not finish cleanly (status {task.status})"
              + (f": {error}" if error else "") + "; its results are what was measured before",
              file=sys.stderr)
    return 1 if unclean else 0
