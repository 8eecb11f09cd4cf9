"""NSB's Search runner: the traffic profile runs until it is done, within ``timeout``.

NSB's Search runner calls the scenario again and again (every ``interval`` s)
until the traffic profile reports that it is done, or ``timeout`` seconds have
passed. In nsb a profile runs until it is done in one call, so this is the
Duration runner with ``timeout`` as its budget. ``run_step`` (which of setup,
run, teardown NSB runs) is accepted; nsb always runs all three.
"""

from __future__ import annotations

from nsb.runners.base import Body
from nsb.runners.duration import DurationRunner


class SearchRunner(DurationRunner):
    """Search: run the traffic profile until it is done, for at most `timeout` seconds."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "timeout": {"description": "seconds the profile may run until it is done",
                        "type": "number", "exclusiveMinimum": 0, "default": 60},
            "interval": {"description": "NSB's seconds between calls; nsb's profile runs once",
                         "type": "number", "minimum": 0, "default": 1},
            "run_step": {"description": "NSB's steps to run; nsb always runs setup, run and "
                                        "teardown",
                         "type": "string", "default": "setup,run,teardown"},
        },
    }

    def execute(self, body: Body) -> None:
        self._budget(self.options["timeout"], repeat=False, interval=0, body=body)
