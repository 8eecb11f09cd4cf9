"""NICs bound to a DPDK driver are DPDK ports: DPDK programs take them by PCI address."""

import yaml

from nsb.nodes.node import Interface
from nsb.vnfs.dpdk.testpmd import port_order
from tests.conftest import ROOT


def test_testpmd_on_a_pod_with_vfio_nics_takes_them_by_pci(nsb_main):
    code, out, err = nsb_main("task", "start", "--dry-run",
                              str(ROOT / "samples" / "trex" / "tc_trex_testpmd_rfc2544.yaml"))
    assert code == 0, err
    testpmd = yaml.safe_load(out)["scenarios"][0]["vnfs"]["vnf__0"]
    argv = testpmd["command"].split()
    assert "--no-pci" not in argv and "--no-huge" not in argv
    assert not any("af_packet" in a for a in argv)
    assert argv[argv.index("-a") + 1] == "0000:af:00.0"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-a"] == ["0000:af:00.0",
                                                                      "0000:af:00.1"]
    assert testpmd["ports"] == {0: "xe0", 1: "xe1"}


def test_dpdk_numbers_nics_in_pci_order_then_vdevs():
    ifaces = [Interface("veth9"), Interface("xe1", pci="0000:05:00.1", driver="vfio-pci"),
              Interface("xe0", pci="0000:05:00.0", driver="uio_pci_generic"),
              # on its kernel driver: still a DPDK port (bound for the run, as NSB does)
              Interface("k0", pci="0000:06:00.0", driver="ixgbe")]
    assert [i.name for i in port_order(ifaces)] == ["xe0", "xe1", "k0", "veth9"]
    assert ifaces[3].is_dpdk_port and ifaces[1].is_dpdk_port and not ifaces[0].is_dpdk_port


def test_a_nodes_ports_are_numbered_as_the_eal_numbers_them():
    """The EAL numbers the NICs it takes in PCI order, whatever dpdk_port_num says
    (NSB renumbers them the same way)."""
    from nsb.nodes.node import Node

    node = Node("sut", "vnf", {
        "xe0": Interface("xe0", pci="0000:05:00.1", dpdk_port=0),
        "xe1": Interface("xe1", pci="0000:05:00.0", dpdk_port=1)})
    assert {n: i.name for n, i in node.dpdk_ports().items()} == {0: "xe1", 1: "xe0"}
    lab = Node("tg", "tg", {"a": Interface("a", dpdk_port=1), "b": Interface("b", dpdk_port=0)})
    assert {n: i.name for n, i in lab.dpdk_ports().items()} == {0: "b", 1: "a"}


def test_prox_on_nics_takes_its_own_only(nsb_main):
    code, out, err = nsb_main("task", "start", "--dry-run",
                              str(ROOT / "samples" / "prox" / "tc_prox_l3fwd.yaml"))
    assert code == 0, err
    assert "eal=-a 0000:af:00.0 -a 0000:af:00.1 --huge-unlink --file-prefix" in out
    assert "no-pci" not in out
