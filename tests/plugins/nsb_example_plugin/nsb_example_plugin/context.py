"""A context: every node is this machine, without isolation (no root needed)."""

from __future__ import annotations

from nsb.contexts import topology
from nsb.contexts.base import Context
from nsb.executors.local import LocalExecutor


class LocalContext(Context):
    """Example context: every node is this machine, no isolation (no root needed)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["nodes"],
        "properties": {"nodes": topology.NODES_SCHEMA, "links": topology.LINKS_SCHEMA},
        "examples": [{"nodes": {"here": {"interfaces": {"xe0": {}}}}}],
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
