"""Pre-flight checks of nodes: what a run needs, checked before any traffic.

Per node: reachable, the binaries the task needs, hugepages, isolated CPUs, and
per NIC with a PCI address the driver it is bound to and its NUMA node. A
failed check is one line; the run does not start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from nsb.nodes import nic_binding, platform
from nsb.nodes.node import Interface, Node

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    node: str
    what: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{self.node}: {self.what}: {'ok' if self.ok else 'FAILED'}: {self.detail}"


def check_node(node: Node, binaries: list[str], facts: dict | None = None,
               dpdk_nics: list[Interface] | None = None,
               needs_free_hugepages: bool | None = None) -> list[Check]:
    """Checks of one node whose executor is connected.

    ``facts`` are the node's platform facts when the run already collected
    them (platform.collect); otherwise they are collected here. ``dpdk_nics`` are
    the NICs the run's DPDK programs take (default: every NIC with a PCI address);
    ``needs_free_hugepages``: a VNF uses the node's pool as it is (default: when the
    node has PCI NICs).
    """
    executor = node.executor
    checks = []
    try:
        # a VM under (nested) TCG may take longer than a server to start a command
        slow = node.ssh.connect_timeout if getattr(node, "ssh", None) else 0
        executor.run(["true"], timeout=max(15.0, slow))
    except Exception as exc:  # unreachable: nothing else can be checked
        return [Check(node.name, "reachable", False, str(exc))]
    checks.append(Check(node.name, "reachable", True, getattr(executor, "name", node.name)))
    for binary in binaries:
        found = executor.which(binary)
        checks.append(Check(node.name, f"binary {binary}", bool(found),
                            found or "not found (install it or set the VNF's path option)"))
    if facts is None:
        facts = platform.collect(executor, node)
    if dpdk_nics is None:
        dpdk_nics = [i for i in node.interfaces.values() if i.is_dpdk_port]
    if needs_free_hugepages is None:
        needs_free_hugepages = bool(dpdk_nics)
    total, free = facts.get("hugepages_total", 0), facts.get("hugepages_free", 0)
    checks.append(Check(node.name, "hugepages", free > 0 or not needs_free_hugepages,
                        f"{free} free of {total} ({facts.get('hugepagesize', 0)} kB each)"
                        + ("" if needs_free_hugepages else "; none needed from the pool")))
    checks.append(Check(node.name, "isolated CPUs", True, facts.get("isolated_cpus") or "none"))
    return checks + nic_checks(node, dpdk_nics, facts)


def nic_checks(node: Node, dpdk_nics: list[Interface], facts: dict) -> list[Check]:
    """Per DPDK NIC: the device exists and is on a DPDK driver, or nsb may bind it."""
    if not dpdk_nics:
        return []
    states = nic_binding.read_states(node.executor, [i.pci for i in dpdk_nics])
    checks = []
    for iface in dpdk_nics:
        state = states.get(iface.pci)
        problem = nic_binding.problem(node, iface, state)
        nic = facts.get("nics", {}).get(iface.name, {})
        if problem:
            checks.append(Check(node.name, f"NIC {iface.name}", False, problem))
            continue
        plan = "" if state.on_dpdk_driver else f", bound to {iface.dpdk_driver} for the run"
        checks.append(Check(node.name, f"NIC {iface.name}", True,
                            f"{iface.pci} driver {state.driver or 'none'}{plan}, NUMA node "
                            f"{nic.get('numa_node', '?')}"))
    return checks


def failures(checks: list[Check]) -> list[Check]:
    return [c for c in checks if not c.ok]
