"""Pre-flight checks: one line per failure, decided from what the node reports."""

from nsb.contexts.base import Interface, Node
from nsb.executors.base import CommandResult
from nsb.nodes import nic_binding, preflight

MEMINFO = "MemTotal: 1000 kB\nHugePages_Total: {total}\nHugePages_Free: {free}\n" \
          "Hugepagesize: 2048 kB\n"


class FakeNode:
    """Executor double for a lab server: binaries, hugepages and sysfs as given."""

    name = "fake"

    def __init__(self, binaries=(), total=0, free=0, drivers=None, reachable=True):
        self.binaries, self.total, self.free = set(binaries), total, free
        self.drivers = drivers or {}
        self.reachable = reachable

    def run(self, argv, **_):
        if not self.reachable:
            raise OSError("connection refused")
        text = " ".join(argv)
        if argv[:3] == ["sh", "-c", nic_binding._STATE]:  # the NICs' sysfs, one line each
            lines = [f"{pci} present {self.drivers[pci]} - -" if pci in self.drivers
                     else f"{pci} absent" for pci in argv[4:]]
            return CommandResult(argv, 0, "\n".join(lines) + "\n", "")
        if argv[0] == "cat" and argv[1] == "/proc/meminfo":
            return CommandResult(argv, 0, MEMINFO.format(total=self.total, free=self.free), "")
        for pci, driver in self.drivers.items():
            if f"{pci}/driver" in text:
                return CommandResult(argv, 0, f"/sys/bus/pci/drivers/{driver}", "")
            if f"{pci}/numa_node" in text:
                return CommandResult(argv, 0, "0", "")
        return CommandResult(argv, 1 if argv[0] != "true" else 0, "", "")

    def which(self, binary):
        return f"/usr/bin/{binary}" if binary in self.binaries else None


def node_with(executor, *pcis):
    interfaces = {f"xe{i}": Interface(f"xe{i}", mac=f"02:00:00:00:00:0{i}", pci=pci)
                  for i, pci in enumerate(pcis)}
    return Node("vnf_0", "VNF", interfaces, executor=executor)


def test_a_ready_lab_node_passes():
    executor = FakeNode({"prox"}, total=1024, free=512, drivers={"0000:05:00.0": "vfio-pci"})
    checks = preflight.check_node(node_with(executor, "0000:05:00.0"), ["prox"])
    assert preflight.failures(checks) == []
    assert {c.what for c in checks} == {"reachable", "binary prox", "hugepages", "isolated CPUs",
                                        "NIC xe0"}


def test_each_problem_is_one_failed_line():
    executor = FakeNode(set(), total=0, free=0, drivers={"0000:05:00.0": "i40e"})
    failed = preflight.failures(preflight.check_node(
        node_with(executor, "0000:05:00.0", "0000:05:00.1"), ["prox"]))
    lines = [c.line() for c in failed]
    assert lines[0] == ("vnf_0: binary prox: FAILED: not found (install it or set the VNF's "
                        "path option)")
    assert lines[1].startswith("vnf_0: hugepages: FAILED: 0 free of 0")
    assert "(0000:05:00.0) is bound to i40e" in lines[2] and "dpdk-devbind" in lines[2]
    assert "dpdk_driver: vfio-pci" in lines[2]  # or let nsb bind it
    assert "no PCI device 0000:05:00.1" in lines[3]
    assert len(lines) == 4


def test_hugepages_are_not_needed_without_pci_nics():
    checks = preflight.check_node(node_with(FakeNode({"trafgen"})), ["trafgen"])
    assert preflight.failures(checks) == []


def test_unreachable_node_is_the_only_check():
    checks = preflight.check_node(node_with(FakeNode(reachable=False)), ["prox"])
    assert [c.line() for c in checks] == ["vnf_0: reachable: FAILED: connection refused"]


def test_a_kernel_nic_the_pod_lets_nsb_bind_passes_and_says_so():
    executor = FakeNode({"prox"}, total=8, free=8, drivers={"0000:05:00.0": "virtio-pci"})
    node = node_with(executor, "0000:05:00.0")
    node.interfaces["xe0"].dpdk_driver = "uio_pci_generic"
    checks = preflight.check_node(node, ["prox"])
    assert preflight.failures(checks) == []
    assert "bound to uio_pci_generic for the run" in checks[-1].detail


def test_a_vnf_that_adds_its_own_hugepages_needs_none_free():
    executor = FakeNode({"dpdk-testpmd"}, drivers={"0000:05:00.0": "vfio-pci"})
    node = node_with(executor, "0000:05:00.0")
    checks = preflight.check_node(node, ["dpdk-testpmd"], needs_free_hugepages=False)
    assert preflight.failures(checks) == []
