"""Pre-flight checks of nodes: what a run needs, checked before any traffic.

Per node: reachable, the binaries the task needs, hugepages, isolated CPUs, and
per NIC with a PCI address the driver it is bound to and its NUMA node. A
failed check is one line; the run does not start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from nsb import platform
from nsb.contexts.base import Node

LOG = logging.getLogger(__name__)

DPDK_DRIVERS = {"vfio-pci", "igb_uio", "uio_pci_generic", "mlx5_core", "mlx4_core"}


@dataclass(frozen=True)
class Check:
    node: str
    what: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{self.node}: {self.what}: {'ok' if self.ok else 'FAILED'}: {self.detail}"


def check_node(node: Node, binaries: list[str]) -> list[Check]:
    """Checks of one node whose executor is connected."""
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
    meminfo = dict(_meminfo(executor))
    total, free = meminfo.get("HugePages_Total", 0), meminfo.get("HugePages_Free", 0)
    needs_hugepages = any(i.pci for i in node.interfaces.values())
    checks.append(Check(node.name, "hugepages", free > 0 or not needs_hugepages,
                        f"{free} free of {total} ({meminfo.get('Hugepagesize', 0)} kB each)"
                        + ("" if needs_hugepages else "; not needed: no PCI NICs")))
    isolated = platform.command_output(executor, ["cat", "/sys/devices/system/cpu/isolated"])
    checks.append(Check(node.name, "isolated CPUs", True, isolated or "none"))
    for iface in node.interfaces.values():
        if not iface.pci:
            continue
        nic = platform.nic_facts(executor, iface)
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


def _meminfo(executor) -> list[tuple[str, int]]:
    pairs = []
    for line in platform.command_output(executor, ["cat", "/proc/meminfo"]).splitlines():
        name, _, value = line.partition(":")
        try:
            pairs.append((name, int(value.replace("kB", "").strip())))
        except ValueError:
            continue
    return pairs


def failures(checks: list[Check]) -> list[Check]:
    return [c for c in checks if not c.ok]
