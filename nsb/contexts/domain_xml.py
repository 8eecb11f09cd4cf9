"""libvirt domain XML for one lab VM, from a typed description.

What runs on this machine (a nested guest without KVM) is the default: TCG
(``type='qemu'``), machine ``pc``, ``<cpu mode='maximum'>`` and ACPI (without it
the guest sees one CPU). ``kvm``, another machine or ``host-passthrough`` are
asked for per VM. ``viommu`` puts the VM's DMA behind a virtual Intel IOMMU, as
vfio-pci in the guest needs (the guest kernel has no vfio no-IOMMU mode): machine
q35, ``<iommu model='intel'>`` with interrupt remapping and caching mode, the
QEMU-emulated IOAPIC that interrupt remapping requires, ``intel_iommu=on`` on the
guest kernel's command line, and the NICs marked ``iommu`` with
``iommu_platform=on`` (``<driver iommu='on'/>``; modern-only virtio, as QEMU allows
that flag on no transitional device).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass(frozen=True)
class Nic:
    mac: str
    tap: str = ""  # a tap device on the host, made beforehand (managed='no')
    vhost_socket: str = ""  # or a vhost-user socket QEMU serves (a switch connects)
    pci: str = ""  # the guest PCI address (NSB's vpci), else libvirt picks one
    iommu: bool = False  # DMA through the VM's virtual IOMMU (viommu): iommu_platform=on


@dataclass(frozen=True)
class VmDefinition:
    name: str
    vcpus: int
    ram_mb: int
    console_log: str
    nics: tuple[Nic, ...]
    kernel: str = ""
    initrd: str = ""
    cmdline: str = ""
    disk_image: str = ""  # a qcow2/raw image instead of kernel + initrd
    seed_iso: str = ""  # a cloud-init seed on a CD-ROM (cloud_seed) for the disk image
    domain_type: str = "qemu"
    machine: str = "pc"
    cpu_mode: str = "maximum"
    cpu_pinning: tuple[int, ...] = ()  # host CPU of each vCPU
    cpuset: str = ""  # or host CPUs every vCPU may run on, e.g. "0-9,20-29" (NSB)
    emulator_cpus: str = ""  # e.g. "0"
    hugepages: bool = False
    viommu: bool = False  # a virtual Intel IOMMU (q35), for vfio-pci in the guest

    @property
    def shares_memory(self) -> bool:
        """A vhost-user NIC's switch reads and writes the guest's memory itself."""
        return any(nic.vhost_socket for nic in self.nics)


def render(vm: VmDefinition) -> str:
    if vm.viommu and "q35" not in vm.machine:
        raise ValueError(f"{vm.name}: a virtual IOMMU needs machine q35, not {vm.machine}")
    if any(nic.iommu for nic in vm.nics) and not vm.viommu:
        raise ValueError(f"{vm.name}: a NIC behind an IOMMU needs viommu")
    domain = ET.Element("domain", type=vm.domain_type)
    ET.SubElement(domain, "name").text = vm.name
    ET.SubElement(domain, "memory", unit="MiB").text = str(vm.ram_mb)
    _cpus_and_memory(domain, vm)
    os_element = ET.SubElement(domain, "os")
    ET.SubElement(os_element, "type", arch="x86_64", machine=vm.machine).text = "hvm"
    if vm.kernel:
        ET.SubElement(os_element, "kernel").text = vm.kernel
        ET.SubElement(os_element, "initrd").text = vm.initrd
        ET.SubElement(os_element, "cmdline").text = vm.cmdline + (
            " intel_iommu=on" if vm.viommu else "")
    else:
        ET.SubElement(os_element, "boot", dev="hd")
    features = ET.SubElement(domain, "features")
    ET.SubElement(features, "acpi")
    if vm.viommu:  # interrupt remapping needs the IOAPIC QEMU emulates, not KVM's
        ET.SubElement(features, "ioapic", driver="qemu")
    cpu = ET.SubElement(domain, "cpu", mode=vm.cpu_mode)
    # the vCPUs as cores of one socket, as a server's are (QEMU's default makes each a
    # socket of its own: a second socket that DPDK 17.05's apps put their memory on)
    ET.SubElement(cpu, "topology", sockets="1", cores=str(vm.vcpus), threads="1")
    ET.SubElement(domain, "on_poweroff").text = "destroy"
    ET.SubElement(domain, "on_crash").text = "destroy"
    devices = ET.SubElement(domain, "devices")
    _disks(devices, vm)
    for nic in vm.nics:
        _nic(devices, nic)
    for kind in ("serial", "console"):
        element = ET.SubElement(devices, kind, type="file")
        ET.SubElement(element, "source", path=vm.console_log)
    ET.SubElement(devices, "memballoon", model="none")
    if vm.viommu:
        iommu = ET.SubElement(devices, "iommu", model="intel")
        ET.SubElement(iommu, "driver", intremap="on", caching_mode="on")
    return ET.tostring(domain, encoding="unicode")


def _cpus_and_memory(domain: ET.Element, vm: VmDefinition) -> None:
    vcpu = ET.SubElement(domain, "vcpu", placement="static")
    vcpu.text = str(vm.vcpus)
    if vm.cpuset:
        vcpu.set("cpuset", vm.cpuset)
    if vm.cpu_pinning or vm.emulator_cpus:
        tune = ET.SubElement(domain, "cputune")
        for vcpu, cpu in enumerate(vm.cpu_pinning):
            ET.SubElement(tune, "vcpupin", vcpu=str(vcpu), cpuset=str(cpu))
        if vm.emulator_cpus:
            ET.SubElement(tune, "emulatorpin", cpuset=vm.emulator_cpus)
    if vm.hugepages or vm.shares_memory:
        backing = ET.SubElement(domain, "memoryBacking")
        if vm.hugepages:
            ET.SubElement(backing, "hugepages")
        else:  # shareable without hugepages
            ET.SubElement(backing, "source", type="memfd")
        ET.SubElement(backing, "access", mode="shared")


def _disks(devices: ET.Element, vm: VmDefinition) -> None:
    if vm.disk_image:
        disk = ET.SubElement(devices, "disk", type="file", device="disk")
        ET.SubElement(disk, "driver", name="qemu",
                      type="qcow2" if vm.disk_image.endswith(("qcow2", ".img")) else "raw")
        ET.SubElement(disk, "source", file=vm.disk_image)
        ET.SubElement(disk, "target", dev="vda", bus="virtio")
    if vm.seed_iso:
        cdrom = ET.SubElement(devices, "disk", type="file", device="cdrom")
        ET.SubElement(cdrom, "driver", name="qemu", type="raw")
        ET.SubElement(cdrom, "source", file=vm.seed_iso)
        # IDE on i440fx (Debian's cloud kernel has no AHCI driver); q35 has only SATA
        sata = "q35" in vm.machine
        ET.SubElement(cdrom, "target", dev="sda" if sata else "hdc", bus="sata" if sata
                      else "ide")
        ET.SubElement(cdrom, "readonly")


def _nic(devices: ET.Element, nic: Nic) -> None:
    if nic.vhost_socket:
        interface = ET.SubElement(devices, "interface", type="vhostuser")
        ET.SubElement(interface, "source", type="unix", path=nic.vhost_socket, mode="server")
    else:
        interface = ET.SubElement(devices, "interface", type="ethernet")
        ET.SubElement(interface, "target", dev=nic.tap, managed="no")
    ET.SubElement(interface, "mac", address=nic.mac)
    ET.SubElement(interface, "model", type="virtio-non-transitional" if nic.iommu
                  else "virtio")
    if nic.iommu:
        ET.SubElement(interface, "driver", iommu="on")
    if nic.pci:
        domain, bus, rest = nic.pci.split(":")
        slot, function = rest.split(".")
        ET.SubElement(interface, "address", type="pci", domain=f"0x{domain}", bus=f"0x{bus}",
                      slot=f"0x{slot}", function=f"0x{function}")
