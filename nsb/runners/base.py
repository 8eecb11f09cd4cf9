"""The runner interface: call the scenario body per iteration until done."""

from __future__ import annotations

import abc
from collections.abc import Callable

from nsb.plugin import Plugin

Body = Callable[[int, Callable[[], bool]], None]  # (iteration, should_stop)


class Runner(Plugin):
    """Runs a scenario's body once per iteration until its own condition ends it."""

    @abc.abstractmethod
    def execute(self, body: Body) -> None: ...
