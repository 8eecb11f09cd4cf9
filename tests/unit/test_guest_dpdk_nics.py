"""VMs whose data NICs are PCI devices for DPDK's virtio PMD (guest_nics): the guest's
kernel modules, the domain with a virtual IOMMU, the NICs' guest PCI addresses in the
plan and on the nodes. tests/functional/test_hw_pod.py boots such VMs for real."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from nsb import engine
from nsb.contexts import domain_xml, guest_image, guest_nics
from nsb.errors import TaskError
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import ROOT

SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_rfc2544.yaml"
OVS_SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_ovs_dpdk_pvp.yaml"
STANDALONE = ROOT / "samples" / "standalone" / "tc_testpmd_ovs_dpdk_pvp.yaml"


def _plan(task_file, args=None):
    task = loader.load(task_file, args or {})
    return engine.plan(task, RunInfo(task_id="261123-000000-abcdef", task=task,
                                     results_dir=task_file.parent / "r"))


def test_the_guest_loads_the_dpdk_drivers_after_what_they_need_and_skips_built_ins(tmp_path):
    """As the cloud kernel's modules.dep says (6.1.0-56): vfio-pci needs vfio-pci-core,
    vfio_virqfd, vfio and irqbypass; vfio_iommu_type1 is no symbol dependency of it."""
    (tmp_path / "modules.dep").write_text(
        "kernel/drivers/uio/uio.ko:\n"
        "kernel/drivers/uio/uio_pci_generic.ko: kernel/drivers/uio/uio.ko\n"
        "kernel/drivers/vfio/vfio.ko:\n"
        "kernel/drivers/vfio/vfio_virqfd.ko:\n"
        "kernel/drivers/vfio/vfio_iommu_type1.ko: kernel/drivers/vfio/vfio.ko\n"
        "kernel/drivers/vfio/pci/vfio-pci-core.ko: kernel/drivers/vfio/vfio_virqfd.ko "
        "kernel/drivers/vfio/vfio.ko kernel/virt/lib/irqbypass.ko\n"
        "kernel/drivers/vfio/pci/vfio-pci.ko: kernel/drivers/vfio/pci/vfio-pci-core.ko "
        "kernel/drivers/vfio/vfio_virqfd.ko kernel/drivers/vfio/vfio.ko "
        "kernel/virt/lib/irqbypass.ko\n"
        "kernel/virt/lib/irqbypass.ko:\n")
    (tmp_path / "modules.builtin").write_text("kernel/drivers/virtio/virtio_pci.ko\n")
    ordered = [m.rsplit("/", 1)[1] for m in guest_image._module_closure(
        tmp_path, ("virtio_pci", "uio_pci_generic", "vfio_iommu_type1", "vfio-pci"))]
    assert ordered == ["uio.ko", "uio_pci_generic.ko", "vfio.ko", "vfio_iommu_type1.ko",
                       "vfio_virqfd.ko", "irqbypass.ko", "vfio-pci-core.ko", "vfio-pci.ko"]
    assert {"uio_pci_generic", "vfio-pci", "vfio_iommu_type1"} <= set(guest_image.MODULES)


def test_a_virtual_iommu_is_q35_intel_iommu_with_nics_that_dma_through_it():
    """What vfio-pci in a TCG guest needs (measured with QEMU 7.2): intel-iommu with
    interrupt remapping and caching mode, intel_iommu=on, iommu_platform=on NICs."""
    vm = domain_xml.VmDefinition(
        name="v", vcpus=2, ram_mb=1024, console_log="/c", kernel="/k", initrd="/i",
        cmdline="console=ttyS0", machine="q35", viommu=True,
        nics=(domain_xml.Nic("02:00:00:00:00:01", "tapm"),
              domain_xml.Nic("02:00:00:00:00:02", "tap0", pci="0000:00:10.0", iommu=True)))
    root = ET.fromstring(domain_xml.render(vm))
    assert root.find("os/type").get("machine") == "q35"
    assert root.findtext("os/cmdline") == "console=ttyS0 intel_iommu=on"
    assert root.find("features/ioapic").get("driver") == "qemu"
    iommu = root.find("devices/iommu")
    assert iommu.get("model") == "intel"
    assert iommu.find("driver").attrib == {"intremap": "on", "caching_mode": "on"}
    mgmt, data = root.findall("devices/interface")
    assert mgmt.find("driver") is None and mgmt.find("model").get("type") == "virtio"
    assert data.find("driver").get("iommu") == "on"
    # QEMU refuses iommu_platform on a transitional virtio device on the root bus
    assert data.find("model").get("type") == "virtio-non-transitional"
    assert data.find("address").attrib == {"type": "pci", "domain": "0x0000", "bus": "0x00",
                                           "slot": "0x10", "function": "0x0"}
    with pytest.raises(ValueError, match="needs machine q35"):
        domain_xml.render(domain_xml.VmDefinition(name="v", vcpus=1, ram_mb=512,
                                                  console_log="/c", nics=(), viommu=True))


def test_a_vm_s_data_nics_are_pci_devices_for_uio_pci_generic_by_default():
    plan = _plan(SAMPLE)
    vnf = plan.context.nodes["vnf0"]
    xe0, xe1 = vnf.interfaces["xe0"], vnf.interfaces["xe1"]
    assert (xe0.pci, xe0.driver, xe0.dpdk_driver) == ("0000:00:10.0", "virtio-pci",
                                                      "uio_pci_generic")
    assert xe1.pci == "0000:00:11.0" and xe0.is_dpdk_port and xe1.is_dpdk_port
    vm = plan.describe()["context"]["contexts"][1]["vms"]["vnf0"]
    assert vm["nic_driver"] == "uio_pci_generic" and vm["machine"] == "pc"
    assert vm["guest_nics"]["xe1"].startswith("PCI 0000:00:11.0 (virtio-pci), bound to "
                                              "uio_pci_generic for the run")
    [testpmd] = plan.scenarios[0].vnfs
    assert "-a 0000:00:10.0 -a 0000:00:11.0" in testpmd.describe()["command"]


def test_vfio_pci_puts_the_vm_on_q35_behind_a_virtual_iommu():
    plan = _plan(SAMPLE, {"nic_driver": "vfio-pci"})
    context = plan.context.contexts[1]
    assert context.vms["vnf0"]["machine"] == "q35"
    assert context.nodes["vnf0"].interfaces["xe0"].dpdk_driver == "vfio-pci"
    assert "behind the virtual IOMMU" in plan.describe()["context"]["contexts"][1]["vms"][
        "vnf0"]["guest_nics"]["xe0"]


def test_nic_driver_kernel_keeps_the_guest_s_kernel_interfaces():
    plan = _plan(SAMPLE, {"nic_driver": "kernel"})
    xe0 = plan.context.nodes["vnf0"].interfaces["xe0"]
    assert (xe0.pci, xe0.dpdk_driver) == ("", "") and not xe0.is_dpdk_port
    assert plan.context.contexts[1].guest_pci == {}
    [testpmd] = plan.scenarios[0].vnfs
    assert "net_af_packet0,iface=xe0" in testpmd.describe()["command"]


def test_a_vhost_user_nic_is_a_pci_device_too_but_not_behind_an_iommu():
    plan = _plan(OVS_SAMPLE)
    xe0 = plan.context.nodes["vnf0"].interfaces["xe0"]
    assert (xe0.kind, xe0.pci, xe0.driver) == ("virtio", "0000:00:10.0", "virtio-pci")
    with pytest.raises(TaskError, match=r"vms\.vnf0\.nic_driver: nic_driver vfio-pci is not "
                                        "for vhostuser interfaces"):
        _plan(OVS_SAMPLE, {"nic_driver": "vfio-pci"})


def test_a_task_s_vpci_is_kept_and_the_others_take_the_free_slots(tmp_path):
    assert guest_nics.addresses({"a": "", "b": "0000:00:10.0", "c": ""}) == {
        "a": "0000:00:11.0", "b": "0000:00:10.0", "c": "0000:00:12.0"}
    with pytest.raises(ValueError, match="more data NICs than free guest PCI slots"):
        guest_nics.addresses({f"x{n}": "" for n in range(13)})
    task = tmp_path / "t.yaml"
    task.write_text(SAMPLE.read_text().replace(
        "        interfaces: {xe0: {}, xe1: {}}\n    links:",
        "        machine: pc-i440fx-7.2\n"
        "        interfaces: {xe0: {vpci: '0000:00:07.0'}, xe1: {}}\n    links:"))
    xe0 = _plan(task).context.nodes["vnf0"].interfaces["xe0"]
    assert xe0.pci == "0000:00:07.0"
    with pytest.raises(TaskError, match=r"vms\.vnf0\.machine: nic_driver vfio-pci needs "
                                        "machine q35"):
        _plan(task, {"nic_driver": "vfio-pci"})


class _Guest:
    """A node's executor that answers the read-back as nsb's guest does."""

    def __init__(self, answer: str):
        self.answer = answer

    def run(self, argv, check=True, timeout=60.0):
        return type("Done", (), {"stdout": self.answer})()


def test_what_the_guest_sees_is_the_nic_s_address():
    plan = _plan(SAMPLE)
    vnf = plan.context.nodes["vnf0"]
    vnf.executor = _Guest("xe0 0000:00:10.0\nxe1 0000:01:00.0\n")
    guest_nics.read_back(vnf)
    assert vnf.interfaces["xe1"].pci == "0000:01:00.0"
    vnf.executor = _Guest("xe0 0000:00:10.0\nxe1 virtio1\n")
    with pytest.raises(Exception, match="its guest has no PCI NIC xe1"):
        guest_nics.read_back(vnf)


def test_standalone_vms_run_the_virtio_pmd_on_nsb_s_vpci_or_keep_kernel_nics():
    context = _plan(STANDALONE).context.contexts[1]
    xe0 = context.nodes["vnf_0"].interfaces["xe0"]
    assert (xe0.pci, xe0.driver, xe0.dpdk_driver) == ("0000:00:0a.0", "virtio-pci",
                                                      "uio_pci_generic")
    context = _plan(STANDALONE, {"nic_driver": "kernel"}).context.contexts[1]
    xe0 = context.nodes["vnf_0"].interfaces["xe0"]
    assert (xe0.pci, xe0.kind, xe0.driver, xe0.dpdk_driver) == ("", "virtio", "virtio_net", "")
