"""Pre-flight checks of nodes: what a run needs, checked before any traffic.

Per node: reachable, the binaries the task needs, hugepages, isolated CPUs, and
per NIC with a PCI address the driver it is bound to and its NUMA node. A
failed check is one line; the run does not start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from nsb.nodes import platform
from nsb.nodes.node import DPDK_DRIVERS, Node

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    node: str
    what: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{self.node}: {self.what}: {'ok' if self.ok else 'FAILED'}: {self.detail}"


def check_node(node: Node, binaries: list[str], facts: dict | None = None) -> list[Check]:
    """Checks of one node whose executor is connected.

    ``facts`` are the node's platform facts when the run already collected
    them (platform.collect); otherwise they are collected here.
    """
    executor = node.executor
    checks = []
    try:
        executor.run(["true"], timeout=15)
    except Exception as exc:  # unreachable: nothing else can be checked
        return [Check(node.name, "reachable", False, str(exc))]
    checks.append(Check(node.name, "reachable", True, getattr(executor, "name", node.name)))
    for binary in binaries:
        found = executor.which(binary)
        checks.append(Check(node.name, f"binary {binary}", bool(found),
                            found or "not found (install it or set the VNF's path option)"))
    if facts is None:
        facts = platform.collect(executor, node)
    total, free = facts.get("hugepages_total", 0), facts.get("hugepages_free", 0)
    needs_hugepages = any(i.pci for i in node.interfaces.values())
    checks.append(Check(node.name, "hugepages", free > 0 or not needs_hugepages,
                        f"{free} free of {total} ({facts.get('hugepagesize', 0)} kB each)"
                        + ("" if needs_hugepages else "; not needed: no PCI NICs")))
    checks.append(Check(node.name, "isolated CPUs", True, facts.get("isolated_cpus") or "none"))
    for iface in node.interfaces.values():
        if not iface.pci:
            continue
        nic = facts.get("nics", {}).get(iface.name, {})
        driver = nic.get("driver", "")
        if not driver:
            checks.append(Check(node.name, f"NIC {iface.name}", False,
                                f"no device at PCI {iface.pci} (check vpci in the pod)"))
            continue
        bound = driver in DPDK_DRIVERS
        checks.append(Check(
            node.name, f"NIC {iface.name}", bound,
            f"{iface.pci} driver {driver}, NUMA node {nic.get('numa_node', '?')}"
            + ("" if bound else f"; bind it to a DPDK driver ({', '.join(sorted(DPDK_DRIVERS))})"
               " with dpdk-devbind.py")))
    return checks


def failures(checks: list[Check]) -> list[Check]:
    return [c for c in checks if not c.ok]
