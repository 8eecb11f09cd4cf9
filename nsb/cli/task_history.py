"""`nsb task list|show`: past runs as the results directory keeps them."""

from __future__ import annotations

import sys
from pathlib import Path

from nsb.report import results_shape


def cmd_task_list(args) -> int:
    from nsb.report import history, terminal

    if args.suite:
        return _suite_list(terminal.history_dir(args)[0], args.suite)
    lines = history.runs(terminal.history_dir(args)[0])
    print(history.render_list(lines[:args.limit] if args.limit > 0 else lines), end="")
    return 0


@results_shape.guarded
def cmd_task_show(args) -> int:
    """The run's details first, flushed so that they come before rich's tables."""
    from nsb.report import formats, history, loading, terminal

    task = loading.load(args.task_id, *terminal.results_dir_of(args))
    print(history.render_show(task), end="")
    sys.stdout.flush()
    terminal.print_tables(formats.text_tables([task], [task.id]))
    if getattr(args, "path", False):
        from nsb.report import paths

        print("\n".join(paths.lines(task)))
    return 0


def _suite_list(results_dir: Path, ref: str) -> int:
    """A suite run's cases in order."""
    from nsb import suite_record
    from nsb.report import terminal

    run = suite_record.load(results_dir, ref)
    terminal.print_tables([terminal.plain_table(
        f"suite {run.name} ({run.suite_id}, {run.status}): {run.file}", suite_record.HEADERS,
        suite_record.table_rows(run))])
    return 0
