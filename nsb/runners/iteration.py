"""Run the traffic profile a fixed number of times."""

from __future__ import annotations

import time

from nsb.runners.base import Body, Runner


class IterationRunner(Runner):
    """Iteration: run the traffic profile `iterations` times, `interval` seconds apart."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "iterations": {"description": "times the traffic profile runs",
                           "type": "integer", "minimum": 1, "default": 1},
            "interval": {"description": "seconds between iterations",
                         "type": "number", "minimum": 0, "default": 0},
        },
    }

    def execute(self, body: Body) -> None:
        for iteration in range(self.options["iterations"]):
            if iteration and self.options["interval"]:
                time.sleep(self.options["interval"])
            body(iteration, lambda: False)
