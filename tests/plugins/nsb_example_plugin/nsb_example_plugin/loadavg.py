"""A VNF written from the plugin author's page alone: a node's load, read after trials."""

from __future__ import annotations

from nsb.errors import RunError
from nsb.vnfs.base import Vnf


class LoadAvgVnf(Vnf):
    """Example VNF: starts nothing; reports its node's load average after every trial."""

    OPTIONS_SCHEMA = {"type": "object", "additionalProperties": False, "properties": {}}

    def required_binaries(self) -> list[str]:
        return ["cat"]

    def instantiate(self) -> None:
        pass  # nothing to start: it watches the node

    def wait_until_ready(self, timeout: float) -> None:
        self.collect_kpi()  # the node answers, or the run stops here in one line

    def collect_kpi(self) -> dict[str, float]:
        done = self.executor.run(["cat", "/proc/loadavg"], check=False)
        if done.returncode != 0:
            raise RunError(f"{self.name}: cannot read /proc/loadavg on {self.node.name}")
        one, five, fifteen = (float(v) for v in done.stdout.split()[:3])
        return {"load_1m": one, "load_5m": five, "load_15m": fifteen}

    def terminate(self) -> None:
        pass
