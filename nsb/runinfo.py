"""What every plugin gets to know about the run it belongs to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nsb.task.model import Task


@dataclass(frozen=True)
class RunInfo:
    task_id: str
    task: Task
    results_dir: Path  # this task's own directory; logs go to results_dir / "logs"
    dry_run: bool = False
    vnf_start_timeout_s: float = 30.0
    nfvi_interval_s: float = 1.0
    # per output type, its defaults from nsb.conf (task options override them)
    output_defaults: Mapping[str, Mapping] = field(default_factory=dict)

    @property
    def log_dir(self) -> Path:
        return self.results_dir / "logs"
