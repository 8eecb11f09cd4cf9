"""The runner interface: call the scenario body per iteration until done."""

from __future__ import annotations

import abc
from collections.abc import Callable

from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec

Body = Callable[[int, Callable[[], bool]], None]  # (iteration, should_stop)


class Runner(abc.ABC):
    OPTIONS_SCHEMA: dict | None = None

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        self.spec = spec
        self.options = options
        self.run = run

    def describe(self) -> dict:
        return {"type": self.spec.type, **self.options}

    @abc.abstractmethod
    def execute(self, body: Body) -> None: ...
