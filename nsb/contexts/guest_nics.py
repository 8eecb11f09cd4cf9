"""How a VM's data NICs appear in its guest: ``nic_driver`` of a libvirt VM, and of
the standalone contexts' VMs.

- ``uio_pci_generic`` (the default): each data NIC is a virtio-net PCI device at a
  fixed guest PCI address; the node's interface carries that address (``pci``)
  and ``dpdk_driver``, so nsb binds the NIC to uio_pci_generic for a run and DPDK
  programs take it with DPDK's virtio PMD (``-a <pci>``). Machine pc or q35.
- ``vfio-pci``: the same behind a virtual Intel IOMMU (machine q35, the NICs with
  ``iommu_platform=on``, ``intel_iommu=on`` in the guest): vfio-pci needs an IOMMU,
  as the guest kernel has no vfio no-IOMMU mode. Not with vhost-user NICs (their
  switch would have to translate the guest's I/O addresses).
- ``kernel``: the guest kernel's virtio_net interfaces; DPDK programs use af_packet
  ports on them, and the node's interfaces have no PCI address.

A data NIC the task gives no ``vpci`` gets the next free slot from 0x10 on bus 0:
the PCI root bus of pc, the PCIe root complex of q35 (libvirt puts its own devices
in slots 0x01-0x02 and 0x1f and behind root ports, never in 0x10-0x1b), so the
guest sees the same address on both. The context reads back, once the VM is up,
which PCI device each interface is.
"""

from __future__ import annotations

import logging
import re

from nsb.errors import RunError

LOG = logging.getLogger(__name__)

NIC_DRIVERS = ("uio_pci_generic", "vfio-pci", "kernel")
DEFAULT = "uio_pci_generic"
KERNEL = "kernel"
GUEST_DRIVER = "virtio-pci"  # the guest kernel's driver of a data NIC before binding
SLOTS = range(0x10, 0x1c)
PCI = "^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$"
NIC_DRIVER_SCHEMA = {"enum": list(NIC_DRIVERS), "default": DEFAULT}


def is_dpdk(nic_driver: str) -> bool:
    return nic_driver != KERNEL


def needs_viommu(nic_driver: str) -> bool:
    return nic_driver == "vfio-pci"


def machine(nic_driver: str, asked: str) -> str:
    """The machine type: q35 for vfio-pci when the VM asks for the default pc."""
    if not needs_viommu(nic_driver) or "q35" in asked:
        return asked
    if asked != "pc":
        raise ValueError(f"nic_driver vfio-pci needs machine q35 (a virtual IOMMU), not "
                         f"{asked}")
    return "q35"


def addresses(given: dict[str, str]) -> dict[str, str]:
    """Per data NIC (name -> the task's vpci, '' for none) its guest PCI address: the
    task's, else the next free slot of bus 0 from 0x10 on."""
    taken = {address.lower() for address in given.values() if address}
    free = (f"0000:00:{slot:02x}.0" for slot in SLOTS if f"0000:00:{slot:02x}.0" not in taken)
    placed = {}
    for name, address in given.items():
        if address:
            placed[name] = address.lower()
            continue
        placed[name] = next(free, "")
        if not placed[name]:
            raise ValueError(f"more data NICs than free guest PCI slots "
                             f"({SLOTS.start:#x}-{SLOTS.stop - 1:#x}): give some a vpci")
    return placed


def lay_out(name: str, vm: dict, interfaces: dict, where) -> dict[str, str]:
    """VM ``name`` of a libvirt context (its options ``vm``, its node's ``interfaces``)
    as its guest will have it: its machine (in ``vm``), its interfaces' PCI addresses
    and driver; returns the guest PCI address of each NIC that has one in its domain."""
    driver = vm["nic_driver"]
    try:
        vm["machine"] = machine(driver, vm["machine"])
    except ValueError as exc:
        raise where.error(str(exc), "vms", name, "machine") from None
    given = {iface: (raw or {}).get("vpci", "") for iface, raw in vm["interfaces"].items()}
    try:
        pci = addresses(given)
    except ValueError as exc:
        raise where.error(str(exc), "vms", name, "interfaces") from None
    if needs_viommu(driver) and any(i.is_vhostuser for i in interfaces.values()):
        raise where.error("nic_driver vfio-pci is not for vhostuser interfaces (their switch "
                          "does not translate the guest's I/O addresses): use "
                          "uio_pci_generic", "vms", name, "nic_driver")
    apply(interfaces, driver, pci)
    return pci if is_dpdk(driver) else {iface: pci[iface] for iface in given if given[iface]}


def apply(interfaces: dict, nic_driver: str, pci: dict[str, str]) -> None:
    """The node's interfaces as nsb's guest has them: PCI devices nsb binds to
    ``nic_driver`` for a run, or (kernel) interfaces without a PCI address."""
    if not is_dpdk(nic_driver):
        return
    for name, iface in interfaces.items():
        iface.pci, iface.driver, iface.dpdk_driver = pci[name], GUEST_DRIVER, nic_driver


def describe(iface, nic_driver: str) -> str:
    """A data NIC in the guest, for the plan."""
    if iface.pci and not iface.dpdk_driver:
        return f"PCI {iface.pci} ({iface.driver}), as the guest has it"
    if not is_dpdk(nic_driver):
        return f"kernel interface {iface.name} (virtio_net; DPDK programs use af_packet)"
    behind = ", behind the virtual IOMMU" if needs_viommu(nic_driver) else ""
    return (f"PCI {iface.pci} ({GUEST_DRIVER}{behind}), bound to {nic_driver} for the run: "
            "DPDK's virtio PMD")


READ_BACK = ('for n in "$@"; do echo "$n $(basename "$(readlink -f '
             '/sys/class/net/$n/device/..)")"; done')


def read_back(node) -> None:
    """Which PCI device each data NIC of a running VM is, as its guest sees it: the
    interface's ``pci`` follows (a bus the guest numbered otherwise, say); a NIC
    the guest does not have is a RunError."""
    names = [i.name for i in node.interfaces.values() if i.pci and i.dpdk_driver]
    if not names:
        return
    shown = node.executor.run(["sh", "-c", READ_BACK, "sh", *names]).stdout
    seen = dict(line.split(" ", 1) for line in shown.splitlines() if " " in line)
    for name in names:
        iface, address = node.interfaces[name], seen.get(name, "").strip()
        if not re.match(PCI, address):
            raise RunError(f"VM {node.name}: its guest has no PCI NIC {name} (expected at "
                           f"{iface.pci}; /sys/class/net/{name} says {address or 'nothing'})")
        if address != iface.pci:
            LOG.warning("VM %s: %s is PCI %s in the guest, not %s", node.name, name, address,
                        iface.pci)
            iface.pci = address
