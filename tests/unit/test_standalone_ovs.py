"""StandaloneOvsDpdk's deployment as planned, without a host: the OVS-DPDK layout,
where the management NICs go, the far ends' addresses, the libvirt URI, the
guest's NICs and what a host with PCI NICs is checked for.
tests/functional/test_standalone_deploy.py brings it up for real."""

from __future__ import annotations

import ipaddress
import xml.etree.ElementTree as ET

import pytest

from nsb import engine
from nsb.contexts import domain_xml, standalone_ovs
from nsb.contexts.base import Endpoint
from nsb.errors import PrerequisiteError, TaskError
from nsb.executors.base import CommandResult
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import ROOT

SAMPLE = ROOT / "samples" / "standalone" / "tc_testpmd_ovs_dpdk_pvp.yaml"
TASK_ID = "261123-000000-abcdef"


def _context(args=None):
    task = loader.load(SAMPLE, args or {})
    plan = engine.plan(task, RunInfo(task_id=TASK_ID, task=task, results_dir=SAMPLE.parent))
    return plan, plan.context.contexts[1]


def test_the_lab_sample_s_ovs_dpdk_has_af_packet_ports_vhost_user_clients_and_flows():
    _, context = _context()
    layout = standalone_ovs.layout(context, context.work_dir())
    work = f"/tmp/nsb-{TASK_ID}/standalone"
    assert layout.ports["dpdk0"]["dpdk-devargs"] == "net_af_packet0,iface=nsbsa0"
    assert layout.ports["dpdk1"]["dpdk-devargs"] == "net_af_packet1,iface=nsbsa1"
    assert layout.ports["dpdkvhostuser1"] == {
        "type": "dpdkvhostuserclient", "network": "downlink_0", "vm": "vnf_0",
        "socket": f"{work}/vhost/vnf_0-xe1.sock"}
    assert layout.socket_of(Endpoint("vnf_0", "xe0")) == f"{work}/vhost/vnf_0-xe0.sock"
    assert layout.flows == ["in_port=dpdk0,actions=output:dpdkvhostuser0",
                            "in_port=dpdkvhostuser0,actions=output:dpdk0",
                            "in_port=dpdk1,actions=output:dpdkvhostuser1",
                            "in_port=dpdkvhostuser1,actions=output:dpdk1"]
    # no PCI NIC: DPDK does not scan the bus; socket memory per NUMA node of the host
    assert layout.other_config(1) == {
        "dpdk-init": "true", "dpdk-socket-mem": "256", "dpdk-socket-limit": "256",
        "pmd-cpu-mask": "0x2",
        "dpdk-extra": f"--file-prefix=nsb-{TASK_ID}-ovs --no-pci"}
    assert layout.other_config(2)["dpdk-socket-mem"] == "256,256"
    args = layout.vsctl_args()
    bridge = "nsbabcdefbr"  # NSB's br0, named after the run (found if the run is killed)
    assert args[:7] == ["add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev"]
    assert "options:vhost-server-path=" + layout.socket_of(Endpoint("vnf_0", "xe1")) in args


def test_an_idle_pmd_sleeps_only_when_asked(tmp_path):
    """ovs_properties.pmd_maxsleep_us is OVS's pmd-maxsleep; without it PMDs poll."""
    text = SAMPLE.read_text().replace("      queues: 1\n",
                                      "      queues: 1\n      pmd_maxsleep_us: 10000\n")
    task_file = tmp_path / SAMPLE.name
    task_file.write_text(text)
    (tmp_path / "host_lab.yaml").write_text((SAMPLE.parent / "host_lab.yaml").read_text())
    task = loader.load(task_file, {})
    plan = engine.plan(task, RunInfo(task_id=TASK_ID, task=task, results_dir=tmp_path))
    context = plan.context.contexts[1]
    assert standalone_ovs.layout(context, "/w").other_config(1)["pmd-maxsleep"] == "10000"
    _, lab = _context()
    assert "pmd-maxsleep" not in standalone_ovs.layout(lab, "/w").other_config(1)
    with pytest.raises(TaskError, match="pmd_maxsleep_us"):
        task_file.write_text(text.replace("10000", "20000"))
        engine.plan(loader.load(task_file, {}), RunInfo(task_id=TASK_ID, task=task,
                                                        results_dir=tmp_path))


def test_nsb_s_guest_with_kernel_nics_keeps_nsb_s_guest_pci_slots_in_its_domain():
    plan, context = _context({"nic_driver": "kernel"})
    xe0 = context.nodes["vnf_0"].interfaces["xe0"]
    # testpmd and PROX use af_packet on the guest's kernel NICs: nothing to bind
    assert (xe0.pci, xe0.kind, xe0.driver) == ("", "virtio", "virtio_net")
    assert context.guest_pci[Endpoint("vnf_0", "xe0")] == "0000:00:0a.0"
    nic = domain_xml.Nic(xe0.mac, vhost_socket="/s", pci=context.guest_pci[
        Endpoint("vnf_0", "xe1")])
    vm = domain_xml.VmDefinition(name="v", vcpus=2, ram_mb=1024, console_log="/c",
                                 nics=(nic,), kernel="/k", initrd="/i", cpuset="0-1")
    root = ET.fromstring(domain_xml.render(vm))
    assert root.find("vcpu").get("cpuset") == "0-1"
    address = root.find("devices/interface/address")
    assert (address.get("slot"), address.get("function")) == ("0x0b", "0x0")
    # the generator's ends get the networks' gateway_ip, in the VM NIC's subnet
    tg = plan.context.nodes["tg"].interfaces
    assert (tg["xe0"].ip, tg["xe1"].ip) == ("152.16.100.20/24", "152.16.40.20/24")


def test_a_flavor_image_keeps_nsb_s_pci_nics_for_the_vnf_to_bind(tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(SAMPLE.read_text().replace("ram: 1024", "ram: 1024\n      images: /i.qcow2")
                    .replace("host_lab.yaml", str(SAMPLE.parent / "host_lab.yaml")))
    loaded = loader.load(task, {})
    plan = engine.plan(loaded, RunInfo(task_id=TASK_ID, task=loaded, results_dir=tmp_path))
    xe0 = plan.context.contexts[1].nodes["vnf_0"].interfaces["xe0"]
    assert (xe0.pci, xe0.driver) == ("0000:00:0a.0", "virtio-pci")
    vm = plan.describe()["context"]["contexts"][1]["vms"]["vm_0"]
    assert vm["image"].startswith("overlay of /i.qcow2")


def test_management_nics_go_on_the_host_bridge_of_their_subnet_or_on_one_of_the_run():
    host = [("br-int", ipaddress.ip_interface("172.20.2.1/24")),
            ("eth0", ipaddress.ip_interface("192.168.1.5/24"))]
    plan = standalone_ovs.mgmt_plan({"a": "172.20.2.7/24", "b": "10.253.7.1/24",
                                     "c": "10.253.7.5/24"}, host)
    assert plan["a"] == ("br-int", None)  # NSB's br-int, used as it is
    # a bridge of the run gets the subnet's first address that no VM has
    assert plan["b"] == plan["c"] == (None, "10.253.7.2/24")


def test_libvirt_over_ssh_uses_the_host_file_s_key_and_says_so_without_one():
    _, context = _context()
    uri = context.libvirt_uri()
    assert uri.startswith("qemu+ssh://root@127.0.0.1:22/system?keyfile=/root/.ssh/id_ed25519")
    assert "no_tty=1" in uri
    context.host.ssh.key_filename = None
    with pytest.raises(PrerequisiteError, match="libvirt over SSH needs a key_filename in the "
                                                "host file"):
        context.libvirt_uri()


class _PciHost:
    """A host as a few commands answer on one with two PCI NICs, one bound to vfio-pci
    and one to its kernel driver; no hugetlbfs. It cannot show a real sysfs."""

    def run(self, argv, check=True, timeout=60.0):
        answers = {"readlink /sys/bus/pci/devices/0000:af:00.0/driver":
                   "../../../bus/pci/drivers/vfio-pci",
                   "readlink /sys/bus/pci/devices/0000:af:00.1/driver":
                   "../../../bus/pci/drivers/i40e"}
        command = " ".join(argv)
        if command.startswith("grep -qs hugetlbfs"):
            return CommandResult(argv, 1, "", "")
        return CommandResult(argv, 0, answers.get(command, ""), "")

    def which(self, binary):
        return binary


def test_a_pci_nic_not_bound_to_a_dpdk_driver_is_named_with_the_fix(tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(SAMPLE.read_text().replace("nsbsa0", '"0000:af:00.0"')
                    .replace("nsbsa1", '"0000:af:00.1"')
                    .replace("host_lab.yaml", str(SAMPLE.parent / "host_lab.yaml")))
    loaded = loader.load(task, {})
    plan = engine.plan(loaded, RunInfo(task_id=TASK_ID, task=loaded, results_dir=tmp_path))
    problems = plan.context.contexts[1].host_problems(_PciHost())
    assert problems == [
        "network downlink_0: 0000:af:00.1 is bound to i40e, not to one DPDK can use "
        "(vfio-pci, igb_uio, uio_pci_generic; dpdk-devbind.py -b vfio-pci 0000:af:00.1)",
        "no hugetlbfs mounted (mount -t hugetlbfs nodev /dev/hugepages): OVS-DPDK needs it"]
