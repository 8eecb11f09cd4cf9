"""The libvirt context without libvirt: domain XML, the plan, and what is refused."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from nsb import engine
from nsb.contexts import domain_xml, libvirt_host
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
    # one socket of two cores, as a server's: DPDK 17.05's apps allocate on a core's socket
    assert root.find("cpu/topology").attrib == {"sockets": "1", "cores": "2", "threads": "1"}
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


OVS_VM_SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_ovs_dpdk_pvp.yaml"


def test_a_vhost_user_nic_is_served_by_qemu_in_shared_memory():
    """What QEMU 7.2 under TCG needs for a vhost-user NIC (measured): the socket in
    server mode, the guest memory shareable (memfd without hugepages)."""
    vm = domain_xml.VmDefinition(
        name="v", vcpus=1, ram_mb=512, console_log="/c", kernel="/k", initrd="/i",
        nics=(domain_xml.Nic("02:00:00:00:00:01", "nsbtapm"),
              domain_xml.Nic("02:00:00:00:00:02", vhost_socket="/tmp/nsb-x/vhost/v-xe0.sock")))
    assert vm.shares_memory
    root = ET.fromstring(domain_xml.render(vm))
    assert root.find("memoryBacking/source").get("type") == "memfd"
    assert root.find("memoryBacking/hugepages") is None
    assert root.find("memoryBacking/access").get("mode") == "shared"
    tap, vhost = root.findall("devices/interface")
    assert tap.get("type") == "ethernet"
    assert vhost.get("type") == "vhostuser" and vhost.find("target") is None
    source = vhost.find("source")
    assert (source.get("type"), source.get("mode"), source.get("path")) == (
        "unix", "server", "/tmp/nsb-x/vhost/v-xe0.sock")
    assert vhost.find("model").get("type") == "virtio"
    assert not domain_xml.VmDefinition(name="v", vcpus=1, ram_mb=512, console_log="/c",
                                       nics=vm.nics[:1]).shares_memory


def test_a_vm_behind_ovs_dpdk_is_planned_with_its_sockets_and_waits_for_its_switch():
    plan = _plan(OVS_VM_SAMPLE)
    context = plan.context
    described = plan.describe()["context"]
    assert described["links"] == ["tg:xe0 <-> vnf0:xe0 via host:br0",
                                  "vnf0:xe1 <-> tg:xe1 via host:br0"]
    sockets = "/tmp/nsb-261123-000000-abcdef/vhost/vnf0-{}.sock"
    assert described["contexts"][1]["vms"]["vnf0"]["nics"] == {
        "xe0": "vhost-user " + sockets.format("xe0") + " (QEMU serves, host:br0-0b connects)",
        "xe1": "vhost-user " + sockets.format("xe1") + " (QEMU serves, host:br0-1a connects)"}
    host, vnf = context.nodes["host"], context.nodes["vnf0"]
    # the switch ports are vhost-user (OVS-DPDK's dpdkvhostuserclient), the guest's are
    # plain virtio NICs to the VNF in it
    assert [host.interfaces[p].kind for p in ("br0-0a", "br0-0b", "br0-1a", "br0-1b")] == [
        "veth", "vhostuser", "vhostuser", "veth"]
    assert {i.kind for i in vnf.interfaces.values()} == {"virtio"}
    assert vnf.interfaces["xe0"].peer_mac == context.nodes["tg"].interfaces["xe0"].mac
    [scenario] = plan.scenarios
    ovs = scenario.vnfs[0]
    assert ovs.describe()["vhost_user_ports"] == {"br0-0b": sockets.format("xe0"),
                                                  "br0-1a": sockets.format("xe1")}
    assert context.pending_nodes() == []  # nothing deployed: nothing defined yet


def test_a_vhost_user_vm_nic_must_be_cabled_via_a_switch(tmp_path):
    task_file = _with(tmp_path, "        interfaces: {xe0: {}, xe1: {}}\n    links:",
                      "        interfaces: {xe0: {type: vhostuser}, xe1: {}}\n    links:")
    with pytest.raises(TaskError, match=r"contexts\[1\]\.links\[0\]: vnf0:xe0 is a vhostuser "
                                        "interface: it is cabled to a switch"):
        _plan(task_file)


class _Capabilities:
    """libvirt's getCapabilities() as libvirt 9.0 answers it here (secmodel part)."""

    def __init__(self, secmodels: str):
        self.xml = f"<capabilities><host>{secmodels}</host></capabilities>"

    def getCapabilities(self):  # noqa: N802 - libvirt's name
        return self.xml


def test_qemu_runs_as_the_user_of_libvirt_s_dac_label():
    conn = _Capabilities("<secmodel><model>none</model><doi>0</doi></secmodel>"
                         "<secmodel><model>dac</model><doi>0</doi>"
                         "<baselabel type='kvm'>+64055:+64055</baselabel>"
                         "<baselabel type='qemu'>+64055:+108</baselabel></secmodel>")
    assert libvirt_host.qemu_user(conn, {"qemu"}) == (64055, 108)
    assert libvirt_host.qemu_user(_Capabilities(""), {"qemu"}) == (0, 0)


def test_a_guest_binary_that_is_not_an_executable_file_is_one_line():
    plan = _plan(ROOT / "samples" / "libvirt" / "tc_prox_vm_ovs_dpdk_l2fwd.yaml",
                 {"prox_path": "/nonexistent/prox"})
    libvirt_context = plan.context.contexts[1]
    with pytest.raises(TaskError, match=r"tc_prox_vm_ovs_dpdk_l2fwd.yaml:\d+: contexts\[1\]"
                                        r"\.guest_binaries\[0\]: /nonexistent/prox: no "
                                        "executable file there"):
        libvirt_context.guest_binaries()


def test_guest_files_are_absolute_and_one_that_is_not_there_is_one_line(tmp_path):
    (tmp_path / "share").mkdir()
    task_file = _with(tmp_path, "  - type: libvirt\n",
                      "  - type: libvirt\n    guest_files: [/etc/hostname, share]\n")
    assert _plan(task_file).context.contexts[1].guest_files() == (
        "/etc/hostname", str(tmp_path / "share"))  # relative: from the task file
    task_file = _with(tmp_path, "  - type: libvirt\n",
                      "  - type: libvirt\n    guest_files: [share, no/such/file]\n")
    with pytest.raises(TaskError, match=r"t.yaml:\d+: contexts\[1\]\.guest_files\[1\]: "
                                        r"no/such/file: no file or directory there \("
                                        + str(tmp_path)):
        _plan(task_file).context.contexts[1].guest_files()


class _BlockedDomain:
    """A domain whose start blocks as QEMU's does while no switch has connected to its
    vhost-user socket (measured with libvirt 9.0 / QEMU 7.2), until destroyed. It
    cannot show libvirt's own behaviour; the functional test does, for real."""

    def __init__(self):
        import threading

        self.destroyed = threading.Event()

    def create(self):
        import libvirt

        self.destroyed.wait(10)
        raise libvirt.libvirtError("domain is not running")

    def destroy(self):
        self.destroyed.set()


def test_a_domain_that_does_not_start_in_time_is_destroyed_not_waited_for():
    domain = _BlockedDomain()
    conn = type("Conn", (), {"lookupByName": lambda self, name: domain})()
    with pytest.raises(TimeoutError):
        libvirt_host.start_domain(conn, "nsb-x-vnf0", timeout_s=0.2)
    assert domain.destroyed.is_set()


def _slow_sshd(delay_s: float):
    """A listener on 127.0.0.1 whose every connection gets an SSH greeting after
    ``delay_s``, counting the connections it accepted."""
    import socket
    import threading
    import time

    server = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            threading.Timer(delay_s, lambda c=conn: _greet(c)).start()

    def _greet(conn) -> None:
        try:
            conn.sendall(b"SSH-2.0-slow\r\n")
        except OSError:
            pass
        time.sleep(0.1)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return server, accepted


def test_a_slow_sshd_s_greeting_is_awaited_on_the_connection_it_accepted(monkeypatch):
    """A guest under nested TCG greets seconds after accepting: waiting on that
    connection finds it, where reconnecting every 2 s would never see a greeting."""
    import time

    server, accepted = _slow_sshd(3.0)
    port = server.getsockname()[1]
    real = libvirt_host.socket.create_connection
    monkeypatch.setattr(libvirt_host.socket, "create_connection",
                        lambda address, timeout: real(("127.0.0.1", port), timeout))
    try:
        assert libvirt_host.wait_for_ssh("127.0.0.1", time.monotonic() + 30)
        assert len(accepted) == 1
    finally:
        server.close()
