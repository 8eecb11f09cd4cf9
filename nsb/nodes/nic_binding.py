"""NICs on a DPDK driver for a run: checked, bound where the pod allows it, given back.

DPDK programs take a NIC by its PCI address once it is on a DPDK driver. A NIC
already on one (the lab was prepared: ansible, dpdk-devbind) is used as it is.
A NIC on its kernel driver is bound for the run when the pod lets nsb rebind it
(``dpdk_driver``), through the kernel's ``driver_override``, and given back to the
driver it had at teardown; each binding is written in the node's ledger so that the
next run gives it back if this one was killed. Without that permission, or when
the device does not exist or carries the node's own SSH address, pre-flight says
so in one line and nothing starts.

``auto`` (and ``vfio-pci`` on a machine without an IOMMU) picks what works: vfio-pci
behind an IOMMU, else vfio's no-IOMMU mode where the kernel has it, else
uio_pci_generic, said in a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from nsb.errors import RunError
from nsb.executors.base import Executor
from nsb.nodes import node_ledger
from nsb.nodes.node import DPDK_DRIVERS, Interface, Node

LOG = logging.getLogger(__name__)

_STATE = r'''for p in "$@"; do d=/sys/bus/pci/devices/$p
if [ ! -e "$d" ]; then echo "$p absent"; continue; fi
drv=$(readlink "$d/driver" 2>/dev/null); drv=${drv##*/}
net=$(ls "$d/net" 2>/dev/null | head -n 1)
addrs=$( [ -n "$net" ] && ip -o addr show dev "$net" 2>/dev/null | awk '{print $4}' | tr '\n' ,)
echo "$p present ${drv:--} ${net:--} ${addrs:--}"; done'''

_BIND = r'''set -e; p=$1; drv=$2; d=/sys/bus/pci/devices/$p
[ -e "/sys/bus/pci/drivers/$drv" ] || modprobe "$drv"
if [ -e "$d/driver" ]; then echo "$p" > "$d/driver/unbind"; fi
echo "$drv" > "$d/driver_override"
echo "$p" > "/sys/bus/pci/drivers/$drv/bind" 2>/dev/null || echo "$p" > /sys/bus/pci/drivers_probe
now=$(readlink "$d/driver"); [ "${now##*/}" = "$drv" ]'''

_GIVE_BACK = r'''p=$1; orig=$2; d=/sys/bus/pci/devices/$p
[ -e "$d" ] || exit 0
if [ -e "$d/driver" ]; then echo "$p" > "$d/driver/unbind"; fi
echo > "$d/driver_override"
probe=/sys/bus/pci/drivers_probe
if [ "$orig" != "-" ] && [ -e "/sys/bus/pci/drivers/$orig" ]; then
  echo "$p" > "/sys/bus/pci/drivers/$orig/bind" 2>/dev/null || echo "$p" > $probe
else echo "$p" > $probe; fi'''

_IOMMU = r'''modprobe vfio-pci 2>/dev/null
if [ -n "$(ls /sys/kernel/iommu_groups 2>/dev/null)" ]; then echo iommu
elif [ -e /sys/module/vfio/parameters/enable_unsafe_noiommu_mode ]; then echo noiommu
else echo none; fi'''


@dataclass(frozen=True)
class NicState:
    pci: str
    present: bool
    driver: str = ""  # '' when no driver has it
    netdev: str = ""  # its kernel interface, while a kernel driver has it
    addresses: tuple[str, ...] = ()

    @property
    def on_dpdk_driver(self) -> bool:
        return self.driver in DPDK_DRIVERS


def read_states(executor: Executor, pcis: Iterable[str]) -> dict[str, NicState]:
    pcis = sorted(set(pcis))
    if not pcis:
        return {}
    out = executor.run(["sh", "-c", _STATE, "sh", *pcis], timeout=30).stdout
    states = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = NicState(parts[0], False)
        elif len(parts) == 5:
            pci, _, driver, netdev, addrs = parts
            states[pci] = NicState(pci, True, "" if driver == "-" else driver,
                                   "" if netdev == "-" else netdev,
                                   tuple(a for a in addrs.split(",") if a and a != "-"))
    return states


def problem(node: Node, iface: Interface, state: NicState | None) -> str:
    """Why ``iface`` cannot be a DPDK port of the run ('' if it can)."""
    where = f"{iface.name} ({iface.pci})"
    if state is None or not state.present:
        return (f"{where}: no PCI device {iface.pci} on {node.name} (vpci in the pod; "
                "`lspci -D` lists the node's devices)")
    if state.on_dpdk_driver:
        return ""
    bound = f"bound to {state.driver}" if state.driver else "bound to no driver"
    ssh_host = node.ssh.host if node.ssh else ""
    if ssh_host and any(a.split("/")[0] == ssh_host for a in state.addresses):
        return (f"{where} is {bound} and carries {ssh_host}, the address nsb reaches "
                f"{node.name} by: it cannot be a DPDK port (use another NIC)")
    if not iface.dpdk_driver:
        return (f"{where} is {bound}, not a DPDK driver ({', '.join(sorted(DPDK_DRIVERS))}), "
                f"and the pod does not let nsb rebind it: bind it (dpdk-devbind.py -b "
                f"vfio-pci {iface.pci}) or add `dpdk_driver: vfio-pci` (or uio_pci_generic, "
                "auto) to the interface or node in the pod")
    return ""


class NicBinder:
    """The NICs one run bound, to be given back in reverse order."""

    def __init__(self, task_id: str):
        self.task_id = task_id
        self._bound: list[tuple[Executor, node_ledger.Record]] = []
        self._fallback: dict[int, str] = {}  # id(executor) -> driver for auto/vfio-pci

    def bind(self, node: Node, nics: Iterable[Interface]) -> None:
        """Bind each of ``nics`` not on a DPDK driver to its ``dpdk_driver`` (pre-flight
        made sure that is allowed)."""
        executor = node.executor
        wanted = [i for i in nics if i.pci]
        states = read_states(executor, [i.pci for i in wanted])
        for iface in wanted:
            state = states.get(iface.pci)
            if state is None or state.on_dpdk_driver or not iface.dpdk_driver:
                continue
            driver = self._driver_for(node, iface.dpdk_driver)
            record = node_ledger.Record(self.task_id, "nic", iface.pci, state.driver or "-",
                                        node_ledger.controller())
            node_ledger.write(executor, record)
            self._bound.append((executor, record))
            result = executor.run(["sh", "-c", _BIND, "sh", iface.pci, driver], check=False,
                                  timeout=60)
            if result.returncode != 0:
                raise RunError(f"{node.name}: binding {iface.name} ({iface.pci}) to {driver} "
                               f"failed: {(result.stderr or result.stdout).strip()[-300:]}")
            LOG.info("%s: %s (%s) bound to %s for the run (was %s)", node.name, iface.name,
                     iface.pci, driver, state.driver or "no driver")

    def give_back(self) -> None:
        """Every NIC this run bound back on the driver it had; failures are logged and
        the others still given back."""
        while self._bound:
            executor, record = self._bound.pop()
            try:
                give_back(executor, record)
            except Exception as exc:  # noqa: BLE001 - the other NICs must still go back
                LOG.error("%s: giving %s back to %s failed: %s", executor.name, record.key,
                          record.value, exc)

    def _driver_for(self, node: Node, asked: str) -> str:
        if asked not in ("auto", "vfio-pci"):
            return asked
        key = id(node.executor)
        if key not in self._fallback:
            self._fallback[key] = _vfio_or_fallback(node, asked)
        return self._fallback[key]


def _vfio_or_fallback(node: Node, asked: str) -> str:
    executor = node.executor
    kind = executor.run(["sh", "-c", _IOMMU], check=False, timeout=30).stdout.strip()
    if kind == "iommu":
        return "vfio-pci"
    if kind == "noiommu":
        executor.run(["sh", "-c", "echo 1 > "
                      "/sys/module/vfio/parameters/enable_unsafe_noiommu_mode"])
        LOG.warning("%s: no IOMMU: vfio-pci in its no-IOMMU mode (no DMA isolation)",
                    node.name)
        return "vfio-pci"
    LOG.warning("%s: no IOMMU and a kernel without vfio's no-IOMMU mode: NICs bound to "
                "uio_pci_generic instead of %s", node.name, asked)
    return "uio_pci_generic"


def give_back(executor: Executor, record: node_ledger.Record) -> None:
    executor.run(["sh", "-c", _GIVE_BACK, "sh", record.key, record.value], timeout=60)
    node_ledger.remove(executor, record)
    LOG.info("%s: %s given back to %s", executor.name, record.key, record.value)
