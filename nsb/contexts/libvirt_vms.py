"""The libvirt context: lab nodes that are VMs on this machine (libvirt-python).

Each VM boots nsb's guest image (kernel + initramfs, see guest_image) or a disk
image, with a management NIC on a host bridge that has the VM's SSH address,
and one NIC per data interface on a bridge per link: a PCI device nsb binds to
a DPDK driver for a run, or a kernel interface (``nic_driver``, guest_nics). A
link from a VM to a node of a netns context (the generator, say) is a bridge
here with a veth into that node's namespace, named and addressed as the task
says. Once the VM
answers SSH it is a node like any other, reached through the SSH executor.
Teardown destroys and undefines every domain it defined and removes its
bridges, veths and files, also after errors and signals.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import subprocess
import time
import zlib
from pathlib import Path

from nsb.contexts import (
    cloud_seed,
    domain_xml,
    guest_image,
    guest_nics,
    libvirt_host,
    libvirt_schema,
    topology,
)
from nsb.contexts.baremetal import connect, disconnect
from nsb.contexts.base import Context, Endpoint, Link, Node, SshAccess, vhost_dir, vhost_socket
from nsb.contexts.combined import CrossLinking
from nsb.contexts.host_wires import HostWires
from nsb.contexts.netns import ip
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.local import LocalExecutor
from nsb.runinfo import short_tag
from nsb.vnfs import hugepages

LOG = logging.getLogger(__name__)

MGMT_NET = "10.254"  # 10.254.<n>.0/24 per run, the host is .1, VMs from .10

class LibvirtContext(Context, CrossLinking):
    """VMs on this machine's libvirt, linked to each other and to netns nodes."""

    OPTIONS_SCHEMA = libvirt_schema.OPTIONS

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.vms = {name: {**libvirt_schema.defaults(), **raw}
                    for name, raw in options["vms"].items()}
        self.nodes = topology.build_nodes({name: {"role": vm.get("role", "Sut"),
                                                  "interfaces": vm["interfaces"]}
                                           for name, vm in self.vms.items()})
        topology.check_macs(self.nodes, spec.where, "vms")
        self.guest_pci = {Endpoint(name, iface): pci for name, vm in self.vms.items()
                          for iface, pci in guest_nics.lay_out(
                              name, vm, self.nodes[name].interfaces, spec.where).items()}
        self.tag = short_tag(run.task_id)
        self.work_dir = Path(f"/tmp/nsb-{run.task_id}/libvirt")
        self._mgmt_subnet = f"{MGMT_NET}.{zlib.crc32(self.tag.encode()) % 250 + 1}"
        for index, node in enumerate(self.nodes.values()):
            node.ssh = SshAccess(host=f"{self._mgmt_subnet}.{10 + index}", user="root",
                                 key_filename=str(self.work_dir / "id_ed25519"),
                                 connect_timeout=libvirt_host.VM_CONNECT_TIMEOUT_S)
        self._foreign: dict[str, Node] = {}
        self.links: list[Link] = []  # once the other contexts' nodes are known (link_across)
        self._defined: list[str] = []
        self._waiting: list[Node] = []  # defined, booted once their switch runs
        self._hugepages = 0  # 2 MB pages added for the VMs' memory
        self.wires = HostWires(self.tag)
        self._conn = None

    # --- the task's links ------------------------------------------------------------

    def link_across(self, others: dict) -> None:
        self._foreign = dict(others)
        self.links = self._build_links(others)
        self.connect_peers({**others, **self.nodes})

    def _build_links(self, others: dict) -> list[Link]:
        nodes = {**others, **self.nodes}
        links = topology.build_links(self.options.get("links", []), nodes, self.spec.where)
        for index, link in enumerate(links):
            if link.a.node not in self.nodes and link.b.node not in self.nodes:
                raise self.spec.where.error(f"link {link} has no end on a VM of this context",
                                            "links", index)
            vhost = [str(end) for end in (link.a, link.b)
                     if nodes[end.node].interfaces[end.interface].is_vhostuser]
            if vhost and not link.via:
                raise self.spec.where.error(
                    f"{' and '.join(vhost)} is a vhostuser interface: it is cabled to a "
                    "switch, write the link as {ends: [...], via: <bridge>}", "links", index)
        topology.assign_addresses(nodes, links, first=200)  # apart from the netns links
        for node in self.nodes.values():  # the switch port keeps vhostuser (build_links)
            for iface in node.interfaces.values():
                if iface.is_vhostuser:  # in the guest it is a virtio NIC like any other
                    iface.kind = "virtio"
                    iface.driver = iface.driver or "virtio_net"
        return links

    # --- deploy ----------------------------------------------------------------------

    def domain_name(self, vm: str) -> str:
        return f"nsb-{self.run.task_id}-{vm}"

    def deploy(self) -> None:
        if os.geteuid() != 0:
            raise PrerequisiteError("the libvirt context needs root (bridges, veths, "
                                    "qemu:///system)")
        conn = self._conn = libvirt_host.connect(self.options["uri"])
        self._reserve_hugepages()
        image = guest_image.ensure()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.work_dir.parent, 0o755)
        key = self._ssh_key()
        mgmt = self.wires.bridge("m")
        ip("addr", "add", f"{self._mgmt_subnet}.1/24", "dev", mgmt)
        nics = self._cable()
        for node in self.nodes.values():
            vm = self.vms[node.name]
            node_nics = [domain_xml.Nic(_mgmt_mac(self.tag, node.name), self.wires.tap(mgmt))]
            for iface in node.interfaces.values():  # an interface without a link: a lone bridge
                nic = nics.get(Endpoint(node.name, iface.name)) or domain_xml.Nic(
                    iface.mac, self.wires.tap(self.wires.bridge(f"u{len(self.wires.bridges)}")))
                node_nics.append(dataclasses.replace(
                    nic, pci=self.guest_pci.get(Endpoint(node.name, iface.name), ""),
                    iommu=guest_nics.needs_viommu(vm["nic_driver"])))
            definition = self._definition(node, vm, image, key, node_nics)
            LOG.info("VM %s: defining %s (%d vCPU, %d MiB, %s)", node.name, definition.name,
                     vm["vcpus"], vm["ram_mb"], vm["domain_type"])
            conn.defineXML(domain_xml.render(definition))
            self._defined.append(definition.name)
            if definition.shares_memory:
                self._waiting.append(node)
        self._boot([node for node in self.nodes.values() if node not in self._waiting])

    def pending_nodes(self) -> list[str]:
        return [node.name for node in self._waiting]

    def deploy_pending(self) -> None:
        """Boot the VMs with vhost-user NICs: QEMU waits for their switch to connect."""
        waiting, self._waiting = self._waiting, []
        self._boot(waiting)

    def _boot(self, nodes: list[Node]) -> None:
        for node in nodes:
            try:
                failure = libvirt_host.start_domain(self._conn, self.domain_name(node.name),
                                                    self.options["switch_timeout_s"])
            except TimeoutError:
                sockets = [i.name for i in node.interfaces.values() if i.kind == "virtio"]
                raise RunError(
                    f"VM {node.name} did not start within switch_timeout_s "
                    f"({self.options['switch_timeout_s']:g} s): QEMU waits for a switch to "
                    f"connect to the vhost-user socket(s) of {', '.join(sockets)}; is a "
                    "vSwitch VNF with dpdk_init on their bridge in this scenario?") from None
            if failure:
                raise RunError(f"VM {node.name}: libvirt could not start "
                               f"{self.domain_name(node.name)}: {failure}")
        deadline = time.monotonic() + self.options["boot_timeout_s"]
        for node in nodes:
            self._wait_for_ssh(node, deadline)
        connect(nodes, self.run.task_id)
        for node in nodes:
            if self.vms[node.name].get("image"):
                _data_nics_up(node)
            guest_nics.read_back(node)

    def _reserve_hugepages(self) -> None:
        """The 2 MB pages of the VMs with ``hugepages``, added to this host's pool while
        they run (libvirt takes them from a hugetlbfs mount)."""
        megabytes = sum(vm["ram_mb"] for vm in self.vms.values() if vm["hugepages"])
        if not megabytes:
            return
        if not hugepages.hugetlbfs_mounted():
            raise PrerequisiteError(
                "VMs with hugepages: true need a hugetlbfs mount on this host (mount -t "
                "hugetlbfs nodev /dev/hugepages, then restart libvirtd so that it sees it)")
        self._hugepages = hugepages.reserve(LocalExecutor(), hugepages.pages_for(megabytes),
                                            f"{self.spec.type} context", self.run.task_id)

    def _ssh_key(self) -> str:
        path = self.work_dir / "id_ed25519"
        if not path.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C",
                            f"nsb-{self.run.task_id}", "-f", str(path)], check=True)
        return (self.work_dir / "id_ed25519.pub").read_text()

    def _definition(self, node: Node, vm: dict, image, key: str, nics) -> domain_xml.VmDefinition:
        common = {"name": self.domain_name(node.name), "vcpus": vm["vcpus"],
                  "ram_mb": vm["ram_mb"], "console_log": str(self.console_log(node.name)),
                  "nics": tuple(nics), "domain_type": vm["domain_type"],
                  "machine": vm["machine"], "cpu_mode": vm["cpu_mode"],
                  "viommu": guest_nics.needs_viommu(vm["nic_driver"]),
                  "cpu_pinning": tuple(vm.get("cpu_pinning", ())),
                  "emulator_cpus": vm.get("emulator_cpus", ""), "hugepages": vm["hugepages"]}
        if vm.get("image"):  # an overlay of it, configured by a cloud-init seed
            seed = cloud_seed.Seed(
                instance_id=self.domain_name(node.name), hostname=node.name,
                authorized_key=key, mgmt_mac=_mgmt_mac(self.tag, node.name),
                mgmt_address=f"{node.ssh.host}/24",
                nics=tuple((i.mac, i.name) for i in node.interfaces.values()))
            return domain_xml.VmDefinition(
                disk_image=self._overlay(node.name, vm["image"]), seed_iso=cloud_seed.write_iso(
                    LocalExecutor(), seed, str(self.work_dir / node.name)), **common)
        initrd = guest_image.vm_initrd(image, key, self.work_dir / f"{node.name}-initrd.gz",
                                       self.guest_binaries(), self.guest_files())
        names = ",".join([f"{_mgmt_mac(self.tag, node.name)}=mgmt"]
                         + [f"{i.mac}={i.name}" for i in node.interfaces.values()])
        cmdline = (f"console=ttyS0 quiet nsb.mgmt={node.ssh.host}/24 nsb.nics={names} "
                   f"nsb.hugepages={vm['guest_hugepages']}")
        if vm["domain_type"] == "qemu" and any(nic.vhost_socket for nic in nics):
            cmdline += " pci=nomsi"  # QEMU 7.2's TCG crashes on a vhost-user NIC's MSI-X
        return domain_xml.VmDefinition(kernel=str(image.kernel), initrd=str(initrd),
                                       cmdline=cmdline, **common)

    def _overlay(self, vm: str, image: str) -> str:
        """A qcow2 overlay of ``image`` for this run: the image itself is never written."""
        base = Path(image) if Path(image).is_absolute() else self.run.task_relative(image)
        if not base.is_file():
            raise self.spec.where.error(f"{image}: no image file there ({base})", "vms", vm,
                                        "image")
        local = LocalExecutor()
        if not local.which("qemu-img"):
            raise PrerequisiteError("a VM from a disk image runs on an overlay made by "
                                    "qemu-img (apt-get install qemu-utils)")
        info = json.loads(local.run(["qemu-img", "info", "--output=json", str(base)]).stdout)
        overlay = str(self.work_dir / f"{vm}.qcow2")
        local.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", info["format"], "-b",
                   str(base), overlay])
        return overlay

    def guest_binaries(self) -> tuple[str, ...]:
        return guest_image.host_binaries(self.options["guest_binaries"], self.run,
                                         self.spec.where)

    def guest_files(self) -> tuple[str, ...]:
        return guest_image.host_files(self.options["guest_files"], self.run, self.spec.where)

    def console_log(self, vm: str) -> Path:
        """Where the VM's serial console goes while it runs (kept in the results' logs)."""
        return self.work_dir / f"{vm}-console.log"

    def _cable(self) -> dict[Endpoint, domain_xml.Nic]:
        """Every wire of the links, made; the NIC each VM end gets."""
        nics = {}
        wires = [wire for link in self.links for wire in link.wires()]
        for index, ends in enumerate(wires):
            vms = [end for end in ends if end.node in self.nodes]
            if any(self._interface(end).is_vhostuser for end in ends):
                # the VM's NIC is the socket's server; the switch port connects to it
                self._netns_of(*[end for end in ends if end not in vms])
                self._socket_dir()
                nics.update({end: domain_xml.Nic(self._interface(end).mac, vhost_socket=(
                    vhost_socket(self.run.task_id, end))) for end in vms})
            elif not vms:  # two namespaces (the generator and a switch): a veth pair
                self.wires.veth_pair(index, [(self._netns_of(end), self._interface(end))
                                             for end in ends])
            else:  # a bridge as a wire: the VM's tap, a veth into a namespace
                bridge = self.wires.bridge(f"l{index}")
                nics.update({end: domain_xml.Nic(self._interface(end).mac, self.wires.tap(bridge))
                             for end in vms})
                for end in ends:
                    if end not in vms:
                        self.wires.veth_into(bridge, index, self._netns_of(end),
                                             self._interface(end))
        return nics

    def _socket_dir(self) -> None:
        """The vhost-user directory, writable by the user libvirt runs QEMU as (QEMU
        creates the sockets it serves)."""
        directory = vhost_dir(self.run.task_id)
        os.makedirs(directory, exist_ok=True)
        uid, gid = libvirt_host.qemu_user(self._conn,
                                          {vm["domain_type"] for vm in self.vms.values()})
        os.chown(directory, uid, gid)

    def _interface(self, end: Endpoint):
        nodes = self.nodes if end.node in self.nodes else self._foreign
        return nodes[end.node].interfaces[end.interface]

    def _netns_of(self, end: Endpoint) -> str:
        netns = getattr(self._foreign[end.node].executor, "netns", None)
        if netns is None:
            raise RunError(f"{end.node} is not in a netns context: a VM links to VMs and to "
                           "the nodes of a netns context on this machine")
        return netns

    def _wait_for_ssh(self, node: Node, deadline: float) -> None:
        """The VM is up when its sshd greets on the management address."""
        if libvirt_host.wait_for_ssh(node.ssh.host, deadline):
            LOG.info("VM %s: SSH up at %s", node.name, node.ssh.host)
            return
        console = _tail(self.console_log(node.name))
        raise RunError(f"VM {node.name} did not answer SSH on {node.ssh.host}:22 within "
                       f"boot_timeout_s ({self.options['boot_timeout_s']:g} s); last "
                       f"lines of its console:\n{console}")

    # --- teardown --------------------------------------------------------------------

    def undeploy(self) -> None:
        try:
            disconnect(self.nodes.values())
        finally:
            for name in reversed(self._defined):
                libvirt_host.remove_domain(self._conn, name)
            self._defined.clear()
            self._keep_consoles()
            self.wires.remove()
            hugepages.release(LocalExecutor(), self._hugepages, self.run.task_id)
            self._hugepages = 0
            shutil.rmtree(self.work_dir, ignore_errors=True)
            with contextlib.suppress(OSError):  # the task's directory, once nothing else uses it
                self.work_dir.parent.rmdir()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _keep_consoles(self) -> None:
        for vm in self.vms:
            if self.console_log(vm).is_file():
                self.run.log_dir.mkdir(parents=True, exist_ok=True)
                shutil.copy(self.console_log(vm), self.run.log_dir / f"{vm}-console.log")

    def describe(self) -> dict:
        described = super().describe()
        described["vms"] = {name: {key: vm[key] for key in (
            "vcpus", "ram_mb", "cpu_pinning", "emulator_cpus", "hugepages", "domain_type",
            "machine", "cpu_mode", "image", "nic_driver")
            if vm.get(key) not in (None, "", [])}
            for name, vm in self.vms.items()}
        for name, vm in described["vms"].items():
            if "image" in vm:
                vm["image"] = (f"overlay of {vm['image']}, configured by a cloud-init seed "
                               "(key, management address, NIC names)")
            vm.setdefault("image", "nsb guest (kernel + initramfs)")
            vm["domain"] = self.domain_name(name)
            vm["nics"] = {iface: self._nic_text(Endpoint(name, iface))
                          for iface in self.nodes[name].interfaces}
            vm["guest_nics"] = {iface.name: guest_nics.describe(iface, vm["nic_driver"])
                                for iface in self.nodes[name].interfaces.values()}
        return described

    def _nic_text(self, end: Endpoint) -> str:
        """What a VM NIC's host end is, for the plan."""
        for wire in (wire for link in self.links for wire in link.wires()):
            if end in wire:
                other = wire[1] if wire[0] == end else wire[0]
                if self._interface(other).is_vhostuser:
                    return (f"vhost-user {vhost_socket(self.run.task_id, end)} (QEMU serves, "
                            f"{other} connects)")
                return f"tap on a host bridge, wired to {other}"
        return "tap on a host bridge of its own (no link)"


def _data_nics_up(node: Node) -> None:
    """A disk image's data NICs up, as nsb's guest has them (cloud-init leaves a NIC
    without an address down), without IPv6 (no router solicitation in the test path)."""
    for name in node.interfaces:
        node.executor.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{name}.disable_ipv6=1"])
        node.executor.run(["ip", "link", "set", name, "up"])


def _mgmt_mac(tag: str, vm: str) -> str:
    return topology.stable_mac(tag, vm, "mgmt")


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no console log)"
