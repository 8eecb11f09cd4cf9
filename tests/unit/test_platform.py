"""Platform facts of NICs: found by netdev, or by PCI address when bound to DPDK."""

from nsb.contexts.base import Interface
from nsb.executors.base import CommandResult
from nsb.nodes import platform


class FakeSysfs:
    """Executor double answering the sysfs reads of a DPDK-bound NIC."""

    def __init__(self, answers: dict[str, str]):
        self.answers = answers
        self.asked = []

    def run(self, argv, **_):
        self.asked.append(argv)
        for needle, answer in self.answers.items():
            if needle in " ".join(argv):
                return CommandResult(argv, 0, answer, "")
        return CommandResult(argv, 1, "", "no such file")


def test_dpdk_bound_nic_is_described_by_its_pci_address():
    sysfs = FakeSysfs({"0000:18:00.0/driver": "/sys/bus/pci/drivers/vfio-pci",
                       "0000:18:00.0/numa_node": "1"})
    iface = Interface("xe0", mac="3c:fd:fe:a0:00:00", pci="0000:18:00.0")
    facts = platform.nic_facts(sysfs, iface)
    assert facts == {"mac": "3c:fd:fe:a0:00:00", "pci": "0000:18:00.0", "driver": "vfio-pci",
                     "numa_node": 1}


def test_kernel_netdev_without_pci_reports_its_driver():
    sysfs = FakeSysfs({"s/^driver: //p": "veth"})  # veth has no firmware version
    facts = platform.nic_facts(sysfs, Interface("xe1", mac="02:00:00:00:00:01"))
    assert facts == {"mac": "02:00:00:00:00:01", "pci": "", "driver": "veth"}


def test_a_nic_firmware_version_is_reported_when_ethtool_knows_it():
    sysfs = FakeSysfs({"s/^driver: //p": "i40e",
                       "s/^firmware-version: //p": "8.30 0x8000a4ae 1.2926.0"})
    facts = platform.nic_facts(sysfs, Interface("ens1f0", mac="3c:fd:fe:a0:00:00"))
    assert facts["driver"] == "i40e" and facts["firmware"] == "8.30 0x8000a4ae 1.2926.0"
