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

    trend = actions.add_parser(
        "trend", help="each test's answers over the run history, grouped with jumpavg: "
        "the newest run a regression, a progression or normal")
    trend.add_argument("--results-dir", metavar="DIR",
                       help="the history (default: results_dir from the configuration)")
    trend.add_argument("--test", metavar="TEXT",
                       help="only the tests whose name holds TEXT (task file, scenario, "
                            "frame size, chain)")
    trend.add_argument("--format", choices=("text", "json"), default="text")
    trend.add_argument("--html", metavar="FILE",
                       help="also write the trends as an HTML page: each test's answers "
                            "run by run, its groups and where they began")
    trend.set_defaults(handler=cmd_report_trend)


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


def results_dir_of(args) -> tuple[str, str]:
    """Where task ids are looked up (--results-dir, else nsb.conf) and how to say so."""
    if args.results_dir:
        return args.results_dir, "--results-dir"
    from nsb import config

    conf = config.load(getattr(args, "config_file", None))
    files = getattr(args, "config_file", None) or (
        [config.DEFAULT_CONFIG_FILE] if Path(config.DEFAULT_CONFIG_FILE).is_file() else [])
    return conf.results_dir, "results_dir from " + (
        ", ".join(files) if files else "the default configuration")


def plain_table(title: str, headers: list[str], rows: list[list[str]]):
    """A rich Table of text as it is: brackets in a task arg or a name are not markup."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title))
    for header in headers:
        table.add_column(escape(header))
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


def print_tables(tables: list) -> None:
    """rich tables on stdout; a pipe or file gets them whole (170 columns)."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=170)
    for rendered in tables:
        console.print(rendered)


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


def cmd_report_trend(args) -> int:
    """Exit 0; the classification is for reading (``task gate --trend`` acts on it)."""
    from nsb.report import trend

    found = [t for t in trend.trends(Path(results_dir_of(args)[0]))
             if not args.test or args.test in t.name]
    if args.html:
        from nsb.report import trend_html
        from nsb.task import input_file

        input_file.write_text(Path(args.html), trend_html.render(found))
    if args.format == "json":
        print(trend.as_json(found))
        return 0
    print_tables([plain_table("trends (jumpavg)", trend.HEADERS, trend.rows(found))])
    return 0
