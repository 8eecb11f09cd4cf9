"""The output interface: receive every event in order; never call back into the run."""

from __future__ import annotations

import abc
from typing import ClassVar

from nsb.events import Event
from nsb.plugin import Plugin


class Output(Plugin):
    """Receives every event of a run, in order."""

    # the run's own record: when it cannot be written the run stops (other outputs
    # that fail are dropped and the run goes on)
    essential: ClassVar[bool] = False
    # oslo.config options this output reads from nsb.conf, in the section named after
    # its type (``[influxdb]``); the run hands those nsb.conf sets as ``conf_defaults``
    CONF_OPTS: ClassVar[tuple] = ()

    @property
    def conf_defaults(self) -> dict:
        """The options nsb.conf sets in this output's section (the task's options
        override them; one it leaves out is not here, so the output's own default
        applies only when neither sets it)."""
        return dict(self.run.output_defaults.get(self.spec.type) or {})

    def open(self) -> None:
        """Called before the first event."""

    @abc.abstractmethod
    def handle(self, event: Event) -> None:
        """One event; raising drops this output (or stops the run if it is essential)."""

    def close(self) -> None:
        """Called after the last event (TaskFinished), also when the run failed."""
