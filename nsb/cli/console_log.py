"""Log lines on the terminal: warnings, or everything with --debug."""

from __future__ import annotations

import logging
import sys

_console_log: logging.Handler | None = None


class CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record comes: while the live progress
    line runs, rich redirects stderr so that log lines print above it, not into it."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def setup_logging(debug: bool) -> None:
    """Warnings (everything with --debug) to stderr; the task log file gets it all."""
    global _console_log
    root = logging.getLogger()
    if _console_log is not None:
        root.removeHandler(_console_log)
    _console_log = CurrentStderrHandler()
    _console_log.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _console_log.setLevel(logging.DEBUG if debug else logging.WARNING)
    root.addHandler(_console_log)
    root.setLevel(logging.DEBUG)
