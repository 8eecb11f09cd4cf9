"""The libvirt context: lab nodes that are VMs on this machine (libvirt-python).

Each VM boots nsb's guest image (kernel + initramfs, see guest_image) or a disk
image, with a management NIC on a host bridge that has the VM's SSH address,
and one NIC per data interface on a bridge per link. A link from a VM to a
node of a netns context (the generator, say) is a bridge here with a veth into
that node's namespace, named and addressed as the task says. Once the VM
answers SSH it is a node like any other, reached through the SSH executor.
Teardown destroys and undefines every domain it defined and removes its
bridges, veths and files, also after errors and signals.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import time
import zlib
from pathlib import Path

from nsb.contexts import domain_xml, guest_image, topology
from nsb.contexts.baremetal import connect, disconnect
from nsb.contexts.base import Context, Endpoint, Link, Node, SshAccess
from nsb.contexts.combined import CrossLinking
from nsb.contexts.netns import ip, move_into
from nsb.errors import PrerequisiteError, RunError
from nsb.runinfo import short_tag

LOG = logging.getLogger(__name__)

MGMT_NET = "10.254"  # 10.254.<n>.0/24 per run, the host is .1, VMs from .10
DEFAULT_URI = "qemu:///system"

_VM = {
    "type": "object",
    "additionalProperties": False,
    "required": ["interfaces"],
    "properties": {
        "role": {"type": "string"},
        "vcpus": {"type": "integer", "minimum": 1, "maximum": 64, "default": 1},
        "ram_mb": {"type": "integer", "minimum": 256, "default": 1024},
        "cpu_pinning": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "emulator_cpus": {"type": "string"},
        "hugepages": {"type": "boolean", "default": False},
        "guest_hugepages": {"type": "integer", "minimum": 0, "default": 0},
        "domain_type": {"enum": ["qemu", "kvm"], "default": "qemu"},
        "machine": {"type": "string", "default": "pc"},
        "cpu_mode": {"enum": ["maximum", "host-passthrough", "host-model"],
                     "default": "maximum"},
        "image": {"type": "string", "description": "a disk image instead of nsb's guest"},
        "interfaces": topology.NODES_SCHEMA["additionalProperties"]["properties"]["interfaces"],
    },
}


class LibvirtContext(Context, CrossLinking):
    """VMs on this machine's libvirt, linked to each other and to netns nodes."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "required": ["vms"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string"},
            "uri": {"type": "string", "default": DEFAULT_URI},
            "boot_timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 120},
            "vms": {"type": "object", "minProperties": 1,
                    "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_-]{0,31}$"},
                    "additionalProperties": _VM},
            "links": topology.LINKS_SCHEMA,
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.vms = {name: {**_defaults(), **raw} for name, raw in options["vms"].items()}
        self.nodes = topology.build_nodes({name: {"role": vm.get("role", "Sut"),
                                                  "interfaces": vm["interfaces"]}
                                           for name, vm in self.vms.items()})
        for node in self.nodes.values():
            for iface in node.interfaces.values():
                if iface.is_vhostuser:
                    raise spec.where.error("not supported yet: a VM NIC of type vhostuser "
                                           "(its switch would have to start before the VM)",
                                           "vms", node.name, "interfaces", iface.name)
        self.tag = short_tag(run.task_id)
        self.work_dir = Path(f"/tmp/nsb-{run.task_id}/libvirt")
        self._mgmt_subnet = f"{MGMT_NET}.{zlib.crc32(self.tag.encode()) % 250 + 1}"
        for index, node in enumerate(self.nodes.values()):
            node.ssh = SshAccess(host=f"{self._mgmt_subnet}.{10 + index}", user="root",
                                 key_filename=str(self.work_dir / "id_ed25519"))
        self._foreign: dict[str, Node] = {}
        self.links: list[Link] = []  # once the other contexts' nodes are known (link_across)
        self._defined: list[str] = []
        self._bridges: list[str] = []
        self._veths: list[str] = []
        self._taps: list[str] = []
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
            if link.via:
                # QEMU opens a vhost-user NIC only once its switch answers, and the switch
                # (a VNF) starts after the contexts are deployed
                raise self.spec.where.error(
                    "not supported yet: a VM cabled via a switch bridge (vhost-user to "
                    "OVS-DPDK); cable VMs directly, or use a vhostuser container (testpmd "
                    "in a netns node) behind OVS-DPDK", "links", index)
            if link.a.node not in self.nodes and link.b.node not in self.nodes:
                raise self.spec.where.error(f"link {link} has no end on a VM of this context",
                                            "links", index)
        topology.assign_addresses(nodes, links, first=200)  # apart from the netns links
        return links

    # --- deploy ----------------------------------------------------------------------

    def domain_name(self, vm: str) -> str:
        return f"nsb-{self.run.task_id}-{vm}"

    def deploy(self) -> None:
        if os.geteuid() != 0:
            raise PrerequisiteError("the libvirt context needs root (bridges, veths, "
                                    "qemu:///system)")
        conn = self._connect()
        image = guest_image.ensure()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.work_dir.parent, 0o755)
        key = self._ssh_key()
        mgmt = self._bridge("m")
        ip("addr", "add", f"{self._mgmt_subnet}.1/24", "dev", mgmt)
        link_bridges = [self._wire(index, link) for index, link in enumerate(self.links)]
        for node in self.nodes.values():
            vm = self.vms[node.name]
            nics = [domain_xml.Nic(_mgmt_mac(self.tag, node.name), self._tap(mgmt))]
            for iface in node.interfaces.values():
                bridge = next((b for link, b in zip(self.links, link_bridges, strict=True)
                               if Endpoint(node.name, iface.name) in (link.a, link.b)), None)
                nics.append(domain_xml.Nic(iface.mac, self._tap(
                    bridge or self._bridge(f"u{len(self._bridges)}"))))
            definition = self._definition(node, vm, image, key, nics)
            LOG.info("VM %s: defining %s (%d vCPU, %d MiB, %s)", node.name, definition.name,
                     vm["vcpus"], vm["ram_mb"], vm["domain_type"])
            domain = conn.defineXML(domain_xml.render(definition))
            self._defined.append(definition.name)
            domain.create()
        deadline = time.monotonic() + self.options["boot_timeout_s"]
        for node in self.nodes.values():
            self._wait_for_ssh(node, deadline)
        connect(self.nodes.values(), self.run.task_id)

    def _connect(self):
        try:
            import libvirt
        except ImportError as exc:
            raise PrerequisiteError(f"the libvirt context needs libvirt-python ({exc}): "
                                    "pip install libvirt-python (apt-get install "
                                    "libvirt-dev pkg-config gcc)") from None
        libvirt.registerErrorHandler(lambda *_: None, None)  # errors come as exceptions
        try:
            self._conn = libvirt.open(self.options["uri"])
        except libvirt.libvirtError as exc:
            raise PrerequisiteError(
                f"cannot connect to libvirt at {self.options['uri']}: {exc.get_error_message()}"
                " (is libvirtd running? libvirtd -d, or systemctl start libvirtd)") from None
        return self._conn

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
                  "cpu_pinning": tuple(vm.get("cpu_pinning", ())),
                  "emulator_cpus": vm.get("emulator_cpus", ""), "hugepages": vm["hugepages"]}
        if vm.get("image"):
            return domain_xml.VmDefinition(disk_image=vm["image"], **common)
        initrd = guest_image.vm_initrd(image, key, self.work_dir / f"{node.name}-initrd.gz")
        names = ",".join([f"{_mgmt_mac(self.tag, node.name)}=mgmt"]
                         + [f"{i.mac}={i.name}" for i in node.interfaces.values()])
        cmdline = (f"console=ttyS0 quiet nsb.mgmt={node.ssh.host}/24 nsb.nics={names} "
                   f"nsb.hugepages={vm['guest_hugepages']}")
        return domain_xml.VmDefinition(kernel=str(image.kernel), initrd=str(initrd),
                                       cmdline=cmdline, **common)

    def console_log(self, vm: str) -> Path:
        """Where the VM's serial console goes while it runs (kept in the results' logs)."""
        return self.work_dir / f"{vm}-console.log"

    def _bridge(self, suffix: str) -> str:
        """A host bridge that acts as a wire: it learns no MACs (ageing 0), so a frame a
        VNF sends back out of the port it came in by is still delivered."""
        name = f"nsb{self.tag}{suffix}"
        ip("link", "add", name, "type", "bridge", "ageing_time", "0")
        self._bridges.append(name)
        _quiet(name)
        ip("link", "set", name, "up")
        return name

    def _tap(self, bridge: str) -> str:
        """A VM NIC's host end, made here so that the host sends nothing on it."""
        name = f"nsb{self.tag}t{len(self._taps)}"
        ip("tuntap", "add", "mode", "tap", "name", name)
        self._taps.append(name)
        _quiet(name)
        ip("link", "set", name, "master", bridge, "up")
        return name

    def _wire(self, index: int, link: Link) -> str:
        """The bridge a link's VM NIC(s) join; a netns end gets a veth into its namespace."""
        bridge = self._bridge(f"l{index}")
        for end in (link.a, link.b):
            if end.node in self.nodes:
                continue
            node = self._foreign[end.node]
            netns = getattr(node.executor, "netns", None)
            if netns is None:
                raise RunError(f"link {link}: {end.node} is not in a netns context; a VM "
                               "links to VMs and to netns nodes")
            outside, inside = f"nsb{self.tag}v{index}", f"nsb{self.tag}w{index}"
            ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            self._veths.append(outside)
            _quiet(outside)
            ip("link", "set", outside, "master", bridge, "up")
            move_into(inside, netns, node.interfaces[end.interface])
        return bridge

    def _wait_for_ssh(self, node: Node, deadline: float) -> None:
        """The VM is up when its sshd greets on the management address."""
        while True:
            try:
                with socket.create_connection((node.ssh.host, 22), timeout=2) as sock:
                    if sock.recv(8).startswith(b"SSH-"):
                        LOG.info("VM %s: SSH up at %s", node.name, node.ssh.host)
                        return
            except OSError:
                pass
            if time.monotonic() >= deadline:
                console = _tail(self.console_log(node.name))
                raise RunError(f"VM {node.name} did not answer SSH on {node.ssh.host}:22 within "
                               f"boot_timeout_s ({self.options['boot_timeout_s']:g} s); last "
                               f"lines of its console:\n{console}")
            time.sleep(0.5)

    # --- teardown --------------------------------------------------------------------

    def undeploy(self) -> None:
        try:
            disconnect(self.nodes.values())
        finally:
            for name in reversed(self._defined):
                remove_domain(self._conn, name)
            self._defined.clear()
            self._keep_consoles()
            for name in self._taps + self._veths + list(reversed(self._bridges)):
                subprocess.run(["ip", "link", "delete", name], capture_output=True)
            for names in (self._taps, self._veths, self._bridges):
                names.clear()
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
            "machine", "cpu_mode", "image") if vm.get(key) not in (None, "", [])}
            for name, vm in self.vms.items()}
        for name, vm in described["vms"].items():
            vm.setdefault("image", "nsb guest (kernel + initramfs)")
            vm["domain"] = self.domain_name(name)
        return described


def _defaults() -> dict:
    return {key: value["default"] for key, value in _VM["properties"].items()
            if "default" in value}


def _mgmt_mac(tag: str, vm: str) -> str:
    return topology.stable_mac(tag, vm, "mgmt")


def remove_domain(conn, name: str) -> bool:
    """Destroy (if running) and undefine ``name``; False if there was no such domain."""
    import libvirt

    try:
        domain = conn.lookupByName(name)
    except libvirt.libvirtError:
        return False
    try:
        if domain.isActive():
            domain.destroy()
    except libvirt.libvirtError as exc:
        LOG.warning("domain %s: destroy failed: %s", name, exc)
    try:
        domain.undefine()
    except libvirt.libvirtError as exc:
        LOG.warning("domain %s: undefine failed: %s", name, exc)
        return False
    return True


def remove_task_domains(task_id: str, uri: str = DEFAULT_URI) -> list[str]:
    """Every domain named after ``task_id`` (a killed run's VMs); [] without libvirt."""
    try:
        import libvirt

        libvirt.registerErrorHandler(lambda *_: None, None)
        conn = libvirt.open(uri)
    except Exception:  # no libvirt here: no VMs to remove
        return []
    try:
        names = [d.name() for d in conn.listAllDomains()
                 if d.name().startswith(f"nsb-{task_id}-")]
        return [name for name in names if remove_domain(conn, name)]
    finally:
        conn.close()


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no console log)"


def _quiet(ifname: str) -> None:
    """No IPv6 on a host end of a lab wire: its router solicitations would cross the
    VNF and be counted as received test frames."""
    Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")
