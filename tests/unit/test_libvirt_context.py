"""The libvirt context without libvirt: domain XML, the plan, and what is refused."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from nsb import engine
from nsb.contexts import domain_xml
from nsb.errors import TaskError
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import ROOT

SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_rfc2544.yaml"


def test_domain_xml_is_what_runs_without_kvm_and_carries_pinning_and_hugepages():
    vm = domain_xml.VmDefinition(
        name="nsb-t-vm0", vcpus=2, ram_mb=1024, console_log="/tmp/c.log",
        nics=(domain_xml.Nic("02:00:00:00:00:01", "nsbtapm"),
              domain_xml.Nic("02:00:00:00:00:02", "nsbtap0")),
        kernel="/k", initrd="/i", cmdline="console=ttyS0", cpu_pinning=(2, 3),
        emulator_cpus="0", hugepages=True)
    root = ET.fromstring(domain_xml.render(vm))
    assert root.get("type") == "qemu" and root.findtext("name") == "nsb-t-vm0"
    assert root.find("os/type").get("machine") == "pc"
    assert root.find("cpu").get("mode") == "maximum" and root.find("features/acpi") is not None
    assert [(p.get("vcpu"), p.get("cpuset")) for p in root.iter("vcpupin")] == [("0", "2"),
                                                                              ("1", "3")]
    assert root.find("cputune/emulatorpin").get("cpuset") == "0"
    assert root.find("memoryBacking/hugepages") is not None
    assert root.find("memoryBacking/access").get("mode") == "shared"
    assert (root.findtext("os/kernel"), root.findtext("os/initrd")) == ("/k", "/i")
    nics = root.findall("devices/interface")
    assert [n.get("type") for n in nics] == ["ethernet", "ethernet"]
    assert [n.find("target").get("dev") for n in nics] == ["nsbtapm", "nsbtap0"]
    assert all(n.find("target").get("managed") == "no" for n in nics)
    assert [n.find("model").get("type") for n in nics] == ["virtio", "virtio"]


def test_a_disk_image_boots_from_disk():
    vm = domain_xml.VmDefinition(name="v", vcpus=1, ram_mb=512, console_log="/c", nics=(),
                                 disk_image="/var/lib/libvirt/images/nsb.qcow2")
    root = ET.fromstring(domain_xml.render(vm))
    assert root.find("os/kernel") is None and root.find("os/boot").get("dev") == "hd"
    assert root.find("devices/disk/source").get("file") == "/var/lib/libvirt/images/nsb.qcow2"
    assert root.find("devices/disk/driver").get("type") == "qcow2"


def _plan(task_file, args=None):
    task = loader.load(task_file, args or {})
    return engine.plan(task, RunInfo(task_id="261123-000000-abcdef", task=task,
                                     results_dir=task_file.parent / "r"))


def test_the_plan_joins_two_contexts_and_links_across_them():
    plan = _plan(SAMPLE, {"vcpus": 3})
    described = plan.describe()["context"]
    assert described["type"] == "netns+libvirt"
    assert described["links"] == ["tg:xe0 <-> vnf0:xe0", "vnf0:xe1 <-> tg:xe1"]
    vm = described["contexts"][1]["vms"]["vnf0"]
    assert vm["vcpus"] == 3 and vm["domain"] == "nsb-261123-000000-abcdef-vnf0"
    tg, vnf = plan.context.nodes["tg"], plan.context.nodes["vnf0"]
    assert tg.interfaces["xe0"].peer_mac == vnf.interfaces["xe0"].mac
    assert vnf.interfaces["xe1"].peer_mac == tg.interfaces["xe1"].mac
    assert vnf.ssh.user == "root" and vnf.ssh.host.startswith("10.254.")


def _with(tmp_path, old: str, new: str):
    task_file = tmp_path / "t.yaml"
    task_file.write_text(SAMPLE.read_text().replace(old, new))
    return task_file


def test_node_names_are_unique_across_contexts(tmp_path):
    task_file = _with(tmp_path, "      vnf0:\n        role: Sut", "      tg:\n        role: Sut")
    with pytest.raises(TaskError, match="node 'tg' is also in an earlier context"):
        _plan(task_file)


def test_a_link_needs_a_vm_end_and_a_known_node(tmp_path):
    task_file = _with(tmp_path, "      - [vnf0:xe1, tg:xe1]", "      - [vnf0:xe1, nosuch:xe1]")
    with pytest.raises(TaskError, match="link to undefined node 'nosuch'"):
        _plan(task_file)


def test_vhost_user_vm_nics_are_not_supported_yet(tmp_path):
    task_file = _with(tmp_path, "        interfaces: {xe0: {}, xe1: {}}\n    links:",
                      "        interfaces: {xe0: {type: vhostuser}, xe1: {}}\n    links:")
    with pytest.raises(TaskError, match="not supported yet: a VM NIC of type vhostuser"):
        _plan(task_file)
