"""A time budget for the traffic profile (NSB's Duration runner).

As in NSB, ``duration`` caps the run: the profile stops between trials once it
is spent. With ``repeat: true`` the profile runs again and again until then
(a soak test).
"""

from __future__ import annotations

import logging
import time

from nsb.runners.base import Body, Runner

LOG = logging.getLogger(__name__)


class DurationRunner(Runner):
    """Duration: run the traffic profile for at most `duration` seconds (repeat: true loops)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "duration": {"description": "seconds the profile may run (a cap, as in NSB)",
                         "type": "number", "exclusiveMinimum": 0, "default": 60},
            "repeat": {"description": "run the profile again until duration is spent",
                       "type": "boolean", "default": False},
            "interval": {"description": "seconds between repeats",
                         "type": "number", "minimum": 0, "default": 0},
        },
    }

    def execute(self, body: Body) -> None:
        o = self.options
        self._budget(o["duration"], o["repeat"], o["interval"], body)

    @staticmethod
    def _budget(duration: float, repeat: bool, interval: float, body: Body) -> None:
        """Run ``body`` once (again and again with ``repeat``) within ``duration`` s."""
        deadline = time.monotonic() + duration

        def expired() -> bool:
            return time.monotonic() >= deadline

        iteration = 0
        while not expired():
            body(iteration, expired)
            iteration += 1
            if not repeat:
                break
            if interval and not expired():
                time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        if expired():
            LOG.info("runner: %g s budget spent after %d iteration(s)", duration, iteration)
