"""The output interface: receive every event in order; never call back into the run."""

from __future__ import annotations

from nsb.events import Event
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec


class Output:
    OPTIONS_SCHEMA: dict | None = None
    # the run's own record: when it cannot be written the run stops (other outputs
    # that fail are dropped and the run goes on)
    essential = False

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        self.spec = spec
        self.options = options
        self.run = run

    def describe(self) -> dict:
        return {"type": self.spec.type, **self.options}

    def open(self) -> None:
        """Called before the first event."""

    def handle(self, event: Event) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Called after the last event (TaskFinished), also when the run failed."""
