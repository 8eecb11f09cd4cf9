"""What every plugin gets to know about the run it belongs to."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nsb.task import input_file
from nsb.task.model import Task


@dataclass(frozen=True)
class RunInfo:
    task_id: str
    task: Task
    results_dir: Path  # this task's own directory; logs go to results_dir / "logs"
    dry_run: bool = False
    vnf_start_timeout_s: float = 30.0
    nfvi_interval_s: float = 1.0
    # per output type, the options its nsb.conf section sets (task options override them)
    output_defaults: Mapping[str, Mapping] = field(default_factory=dict)
    # the outputs nsb.conf gives every task (``[DEFAULT] outputs``) besides the task's own
    conf_outputs: tuple[str, ...] = ()
    label: str = ""  # the user's name for this run (--label), shown in the run history

    def task_relative(self, path: str | Path) -> Path:
        """A file a task's option names, relative to the task file (as written); a
        loop or a bad name stays as written, for the reading to report it."""
        return input_file.resolve(Path(self.task.file).parent / path)

    @property
    def log_dir(self) -> Path:
        return self.results_dir / "logs"


def new_task_id(taken: Callable[[str], bool], now: float | None = None) -> str:
    """``YYMMDD-HHMMSS-xxxxxx`` (UTC, then 6 random hex digits): ids sort by start time
    and name the run's namespaces, DPDK prefixes and results; never one ``taken``."""
    stamp = time.strftime("%y%m%d-%H%M%S", time.gmtime(now))
    while True:
        task_id = f"{stamp}-{secrets.token_hex(3)}"
        if not taken(task_id):
            return task_id


def short_tag(task_id: str) -> str:
    """The random part of a task id (at most 8 characters), for names the kernel keeps
    short: veth names have 15 characters."""
    return task_id.rsplit("-", 1)[-1][:8]
