"""What the report commands share at the terminal: where the history is, and tables."""

from __future__ import annotations

from pathlib import Path


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


def history_dir(args) -> tuple[Path, str]:
    """:func:`results_dir_of` for a command that reads all of it (the run list,
    trends), or one line saying why it cannot be read."""
    from nsb.task import input_file

    results_dir, where = results_dir_of(args)
    input_file.check_readable_dir(results_dir, f"the results directory ({where})")
    return Path(results_dir), where


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


def stdout_console():
    """rich's console on stdout; a pipe or file gets every table whole, however wide its
    numbers make it (a table wider than the console would cut its headers short)."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=1000)


def print_tables(tables: list) -> None:
    """rich tables on stdout; a pipe or file gets them whole."""
    console = stdout_console()
    for rendered in tables:
        console.print(rendered)
