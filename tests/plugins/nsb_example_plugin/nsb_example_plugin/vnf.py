"""A VNF: a long-running process on its node that nsb starts, watches and stops."""

from __future__ import annotations

import time

from nsb.errors import RunError
from nsb.vnfs.base import Vnf


class SleeperVnf(Vnf):
    """Example VNF: runs sleep on its node for the whole scenario."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"seconds": {"type": "integer", "minimum": 1, "default": 3600}},
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.process = None
        self.started = 0.0

    def required_binaries(self) -> list[str]:
        return ["sleep"]  # checked on the node before any traffic

    def instantiate(self) -> None:
        self.process = self.executor.start(["sleep", str(self.options["seconds"])],
                                           log_path=self.log_path("sleep"))
        self.started = time.monotonic()

    def wait_until_ready(self, timeout: float) -> None:
        if self.process.poll() is not None:
            raise RunError(f"{self.name}: sleep ended at once")  # one line, no traceback

    def processes(self) -> list:
        return [self.process]  # watched: nsb stops the run if it dies

    def collect_kpi(self) -> dict[str, float]:
        return {"uptime_s": time.monotonic() - self.started}

    def terminate(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None
