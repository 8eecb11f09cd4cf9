"""The base every plugin kind extends (context, VNF, traffic profile, runner, output).

A plugin is named in a task by a spec, configured by options checked against its
``OPTIONS_SCHEMA`` (defaults filled in) and belongs to one run; ``describe()`` is
what the dry-run plan and the results show of it.
"""

from __future__ import annotations

import abc
from typing import ClassVar

from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec


class Plugin(abc.ABC):  # noqa: B024  (each plugin kind declares its abstract methods)
    """Named by ``spec``, configured by ``options``, part of ``run``."""

    # JSON schema of the options (with additionalProperties set); None takes none
    OPTIONS_SCHEMA: ClassVar[dict | None] = None

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        self.spec = spec
        self.options = options
        self.run = run

    def describe(self) -> dict:
        """What the dry-run plan prints and the results record of this plugin."""
        return {"type": self.spec.type, **self.options}
