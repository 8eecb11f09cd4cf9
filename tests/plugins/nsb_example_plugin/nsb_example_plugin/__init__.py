"""A third-party plugin package: a context and a generator, declared as entry points.

It shows the whole plugin contract: a class with a docstring, an OPTIONS_SCHEMA,
and the base class's methods. Nothing here is imported by nsb itself.
"""

from __future__ import annotations

from nsb.contexts import topology
from nsb.contexts.base import Context
from nsb.executors.local import LocalExecutor
from nsb.trial import TrialResult
from nsb.vnfs.base import TrafficGen


class LocalContext(Context):
    """Example context: every node is this machine, no isolation (no root needed)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["nodes"],
        "properties": {"nodes": topology.NODES_SCHEMA, "links": topology.LINKS_SCHEMA},
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.nodes = topology.build_nodes(options["nodes"])
        self.links = topology.build_links(options.get("links", []), self.nodes, spec.where)
        self.connect_peers()

    def deploy(self) -> None:
        for node in self.nodes.values():
            node.executor = LocalExecutor(node.name)

    def undeploy(self) -> None:
        for node in self.nodes.values():
            if node.executor:
                node.executor.stop_all()


class SimulatedGenerator(TrafficGen):
    """Example generator: a simulated DUT that forwards up to capacity_pps."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["capacity_pps"],
        "properties": {"capacity_pps": {"type": "number", "exclusiveMinimum": 0},
                       "ports": {"type": "integer", "minimum": 1, "default": 1}},
    }

    @property
    def tx_port_count(self) -> int:
        return self.options["ports"]

    def instantiate(self) -> None:
        self.executor.run(["true"])  # the node's executor works

    def wait_until_ready(self, timeout: float) -> None:
        return None

    def terminate(self) -> None:
        return None

    def run_trial(self, trial):
        sent = round(trial.rate_pps * trial.duration_s)
        received = min(sent, round(self.options["capacity_pps"] * trial.duration_s))
        return TrialResult(trial=trial, tx_packets=sent, rx_packets=received,
                           elapsed_s=trial.duration_s)
