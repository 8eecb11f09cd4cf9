"""Lab servers from an NSB pod file, reached over SSH (NSB's ``Node`` context)."""

from __future__ import annotations

import logging

from nsb.contexts import topology
from nsb.contexts.base import Context
from nsb.errors import PrerequisiteError
from nsb.task.pod_file import load_pod

LOG = logging.getLogger(__name__)


class BaremetalContext(Context):
    """Bare-metal pod: nodes and NICs from an NSB pod file, commands over SSH."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "required": ["file"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "description": "the context's name"},
            "file": {"type": "string", "minLength": 1, "description": "an NSB pod file: SSH "
                     "access and NICs per node (relative to the task file)"},
            "nfvi_type": {"type": "string", "description": "NSB's NFVi collector type"},
            "links": {**topology.LINKS_SCHEMA, "description": "cables between node:interface "
                      "ends: [a:if, b:if], or {ends: [a:if, b:if], via: bridge}"},
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.nodes = load_pod(run.task_relative(options["file"]), spec.where)
        for node in self.nodes.values():
            if node.ssh is None:
                raise spec.where.error(f"node '{node.name}' of the pod has no 'ip': the "
                                       "baremetal context reaches nodes over SSH", "file")
        self.links = topology.build_links(options.get("links", []), self.nodes, spec.where)
        self.connect_peers()

    def deploy(self) -> None:
        connect(self.nodes.values(), self.run.task_id)

    def undeploy(self) -> None:
        disconnect(self.nodes.values())


def connect(nodes, run_id: str | None = None) -> None:
    """An SSH executor per node, connected (errors name the node); its run directory
    on the node is named after the task (/tmp/nsb-<task_id>-ssh-<node>)."""
    try:
        from nsb.executors.ssh import SshExecutor
    except ImportError as exc:
        raise PrerequisiteError(f"the baremetal context needs paramiko: {exc}") from None
    for node in nodes:
        ssh = node.ssh
        node.executor = SshExecutor(node.name, ssh.host, port=ssh.port, user=ssh.user,
                                    password=ssh.password, key_filename=ssh.key_filename,
                                    connect_timeout=ssh.connect_timeout, run_id=run_id)
        node.executor.connect()
        LOG.info("node %s: connected to %s@%s:%d", node.name, ssh.user, ssh.host, ssh.port)


def disconnect(nodes) -> None:
    """Stop what nsb started on each node and close the connections; a node that
    fails does not keep the others from being cleaned up (the first failure is
    raised once all were tried)."""
    failure = None
    for node in nodes:
        if node.executor:
            try:
                node.executor.stop_all()
            except Exception as exc:
                LOG.error("node %s: stopping what nsb started failed: %s", node.name, exc)
                failure = failure or exc
            finally:
                node.executor.close()
                node.executor = None
    if failure is not None:
        raise failure
