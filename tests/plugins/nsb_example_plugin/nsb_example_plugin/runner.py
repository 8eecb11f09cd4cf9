"""A runner: the scenario's body a given number of times."""

from __future__ import annotations

from nsb.runners.base import Body, Runner


class RepeatRunner(Runner):
    """Example runner: runs the scenario's traffic profile `times` times."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"times": {"type": "integer", "minimum": 1, "default": 2}},
    }

    def execute(self, body: Body) -> None:
        for iteration in range(self.options["times"]):
            body(iteration, lambda: False)  # a time limit would say True here
