"""The embedded lab: nodes are network namespaces, links are veth pairs."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess

from nsb.contexts import topology
from nsb.contexts.base import Context, vhost_dir
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.local import NetnsExecutor
from nsb.runinfo import short_tag
from nsb.task.pod_file import load_pod

LOG = logging.getLogger(__name__)

PREFIX = "nsb-"


class NetnsContext(Context):
    """Embedded lab on this machine: a network namespace per node, a veth pair per link."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "oneOf": [{"required": ["nodes"]}, {"required": ["file"]}],
        "additionalProperties": False,
        "properties": {
            "name": {"description": "the context's name",
                     "type": "string"},
            "nodes": topology.NODES_SCHEMA,
            "file": {"description": "an NSB pod file: its nodes, MACs and IPs (instead of nodes)",
                     "type": "string", "minLength": 1},
            "nfvi_type": {"description": "NSB's NFVi collector type",
                          "type": "string"},
            "links": topology.LINKS_SCHEMA,
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if "file" in options:  # an NSB pod: its MACs and IPs, no SSH
            self.nodes = load_pod(run.task_relative(options["file"]), spec.where)
            for node in self.nodes.values():
                node.ssh = None
                for iface in node.interfaces.values():  # veth here, whatever the lab has
                    iface.mac = iface.mac or topology.stable_mac(node.name, iface.name)
                    iface.pci, iface.driver = "", "veth"
        else:
            self.nodes = topology.build_nodes(options["nodes"])
            topology.check_macs(self.nodes, spec.where)
        self.links = topology.build_links(options.get("links", []), self.nodes, spec.where)
        topology.assign_addresses(self.nodes, self.links)
        topology.assign_memif_sockets(self.links, self.nodes, self.memif_dir, spec.where)
        self.connect_peers()
        self._created_netns: list[str] = []

    def _wires(self):
        return [wire for link in self.links for wire in link.wires()]

    def netns_name(self, node: str) -> str:
        return f"{PREFIX}{self.run.task_id}-{node}"

    def _veth_name(self, index: int, side: str) -> str:
        return f"nsb{short_tag(self.run.task_id)}{side}{index}"  # <= 15 characters

    def deploy(self) -> None:
        if os.geteuid() != 0:
            raise PrerequisiteError("the netns context needs root to create network namespaces "
                                    "and veth pairs: run nsb as root (or with sudo)")
        if not shutil.which("ip"):
            raise PrerequisiteError("the netns context needs the 'ip' command (apt-get install "
                                    "iproute2)")
        for node in self.nodes.values():
            ns = self.netns_name(node.name)
            self._created_netns.append(ns)
            ip("netns", "add", ns)
            node.executor = NetnsExecutor(ns)
            node.executor.run(["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                               "net.ipv6.conf.default.disable_ipv6=1"])
            ip("-n", ns, "link", "set", "lo", "up")
        if any(i.is_vhostuser for n in self.nodes.values() for i in n.interfaces.values()):
            os.makedirs(self.vhost_dir, exist_ok=True)
        if any(i.is_memif for n in self.nodes.values() for i in n.interfaces.values()):
            os.makedirs(self.memif_dir, exist_ok=True)
        for index, (left_end, right_end) in enumerate(self._wires()):
            if self._is_socket_wire(left_end, right_end):
                continue  # the two ends meet on a vhost-user or memif socket
            veth_pair(self._veth_name(index, "a"), self._veth_name(index, "b"),
                      [(self.netns_name(end.node), self.nodes[end.node].interfaces[end.interface])
                       for end in (left_end, right_end)])
        for node in self.nodes.values():  # interfaces without a link are dummies
            for iface in node.interfaces.values():
                if iface.peer is None and iface.kind == "veth":
                    ns = self.netns_name(node.name)
                    ip("-n", ns, "link", "add", iface.name, "type", "dummy")
                    configure(ns, iface)
        LOG.info("netns lab up: %s", ", ".join(self._created_netns))

    @property
    def vhost_dir(self) -> str:
        return vhost_dir(self.run.task_id)

    @property
    def memif_dir(self) -> str:
        """Where the task's memif sockets are (both ends' namespaces see /tmp)."""
        return f"/tmp/nsb-{self.run.task_id}/memif"

    def _is_socket_wire(self, *ends) -> bool:
        return any(self.nodes[e.node].interfaces[e.interface].kind in ("vhostuser", "memif")
                   for e in ends)

    def undeploy(self) -> None:
        for node in self.nodes.values():
            if node.executor:
                try:
                    node.executor.stop_all()
                except Exception as exc:  # the namespaces go anyway, with what runs there
                    LOG.error("node %s: stopping what nsb started failed: %s", node.name, exc)
        for ns in reversed(self._created_netns):
            kill_netns_processes(ns)
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        self._created_netns.clear()
        # veth pairs still in the root namespace after a failed deploy
        for index in range(len(self._wires())):
            subprocess.run(["ip", "link", "delete", self._veth_name(index, "a")],
                           capture_output=True)
        shutil.rmtree(self.vhost_dir, ignore_errors=True)
        shutil.rmtree(self.memif_dir, ignore_errors=True)
        with contextlib.suppress(OSError):  # the task's directory, if nothing else is in it
            os.rmdir(os.path.dirname(self.vhost_dir))


def veth_pair(left: str, right: str, ends: list[tuple[str, object]]) -> None:
    """A veth pair whose two ends become the (namespace, interface) ``ends``."""
    ip("link", "add", left, "type", "veth", "peer", "name", right)
    for temp, (ns, iface) in zip((left, right), ends, strict=True):
        move_into(temp, ns, iface)


def move_into(temp: str, ns: str, iface) -> None:
    """Link ``temp`` (in this namespace) becomes ``iface`` of namespace ``ns``."""
    ip("link", "set", temp, "netns", ns)
    ip("-n", ns, "link", "set", temp, "name", iface.name)
    configure(ns, iface)


def configure(ns: str, iface) -> None:
    """The task's MAC, MTU and address on ``iface`` in ``ns``, and up."""
    ip("-n", ns, "link", "set", iface.name, "address", iface.mac, "mtu", str(iface.mtu))
    if iface.ip:
        ip("-n", ns, "addr", "add", iface.ip, "dev", iface.name)
    ip("-n", ns, "link", "set", iface.name, "up")


def kill_netns_processes(ns: str) -> None:
    """SIGKILL whatever still runs in ``ns``: nothing a run started may outlive it."""
    for pid in netns_pids(ns):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def netns_pids(ns: str) -> set[int]:
    """The processes running in network namespace ``ns``."""
    listed = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
    return {int(pid) for pid in re.findall(r"\d+", listed)}


def ip(*args: str) -> None:
    """``ip`` with these arguments; a failure is a RunError quoting it."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RunError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")

