"""A StandaloneOvsDpdk context brought up on its libvirt host over SSH, as NSB does:
OVS-DPDK with a DPDK port per network and a vhost-user port per VM NIC, flows
between them, and the VMs defined on the host's libvirt (``qemu+ssh://``).

Everything runs on the host through its SSH executor and libvirt connection, so
the host may be this machine or another one. The VMs boot nsb's guest image
(copied to the host) or ``flavor.images`` (an overlay on the host; the image
configures itself, as NSB's does). Their management NICs go on the host bridge
that has an address in their ``mgmt`` subnet (NSB's br-int) or, if none has, on
a bridge of the run with the subnet's first free address. A network whose
``phy_port`` is an interface name rather than a PCI address is a DPDK af_packet
port on that interface; when the host is this machine and the interface does not
exist, the lab cables it: a veth whose other end is the linked netns node's port.
Teardown removes the domains, OVS, the bridge, taps, cables, hugepages and files.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import shutil
import subprocess
import time
from pathlib import Path

from nsb import leftovers
from nsb.contexts import cloud_seed, domain_xml, guest_image, libvirt_host, standalone_ovs
from nsb.contexts.base import Endpoint, Node
from nsb.contexts.host_wires import HostWires
from nsb.errors import PrerequisiteError, RunError
from nsb.runinfo import short_tag
from nsb.vnfs import hugepages
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.ovs import daemons as ovs_daemons

LOG = logging.getLogger(__name__)


class OvsDpdkHost:
    """What one run set up on a StandaloneOvsDpdk host, and how it is taken down."""

    def __init__(self, context, executor, foreign: dict[str, Node]):
        self.context = context
        self.host = executor
        self.foreign = foreign  # other contexts' nodes, for the lab's cables
        task_id = context.run.task_id
        self.tag = short_tag(task_id)
        self.work_dir = context.work_dir()
        self.local_dir = Path(f"/tmp/nsb-{task_id}/standalone-local")  # the guest's files
        self.layout = context.ovs_layout
        self.wires = HostWires(self.tag, executor)
        self.ovs: ovs_daemons.OvsDaemons | None = None
        self.conn = None
        self.defined: list[str] = []
        self.hugepages = 0
        self.this_machine = False  # the host is this machine (read at up)

    # --- up --------------------------------------------------------------------------

    def up(self) -> None:
        self.this_machine = _machine_id(self.host) == Path("/etc/machine-id").read_text()
        self.host.run(["mkdir", "-p", f"{self.work_dir}/vhost"])
        self.conn = libvirt_host.connect(self.context.libvirt_uri())
        self._cable()
        bridges = self._mgmt_bridges()
        self._start_ovs()
        for index, node in enumerate(self.context.nodes.values()):
            self._define(index, node, bridges[node.name])
        deadline = time.monotonic() + self.context.options["boot_timeout_s"]
        for name in self.defined:
            self._start(name)
        for index, node in enumerate(self.context.nodes.values()):
            self._wait_for_ssh(index, node, deadline)

    def _cable(self) -> None:
        """Each interface-name phy_port exists on the host, or is cabled by the lab."""
        for position, (name, network) in enumerate(self.context.options["networks"].items()):
            port = network["phy_port"]
            if standalone_ovs.is_pci(port) or self._exists(f"/sys/class/net/{port}"):
                continue
            far = self._linked_netns_end(name)
            if far is None or not self.this_machine:
                raise PrerequisiteError(
                    f"network {name}: no interface {port} on host {self.context.host.name}, "
                    "and the lab cables it only to a node of a netns context on this machine")
            netns, iface = far
            self.wires.cable(port, position, netns, iface)
            LOG.info("network %s: cabled %s on the host to %s", name, port, iface.name)

    def _linked_netns_end(self, network: str):
        for link in self.context.links:
            for vm_end, far_end in ((link.a, link.b), (link.b, link.a)):
                if vm_end.node not in self.context.nodes or far_end.node not in self.foreign:
                    continue
                if self.context.network_of(vm_end.node, vm_end.interface)[0] != network:
                    continue
                node = self.foreign[far_end.node]
                netns = getattr(node.executor, "netns", None)
                if netns:
                    return netns, node.interfaces[far_end.interface]
        return None

    def _exists(self, path: str) -> bool:
        return self.host.run(["test", "-e", path], check=False).returncode == 0

    def _mgmt_bridges(self) -> dict[str, str]:
        """Per VM the host bridge of its management NIC (see the module's docstring)."""
        shown = self.host.run(["ip", "-o", "-4", "addr", "show"]).stdout
        addresses = [(line.split()[1], ipaddress.ip_interface(line.split()[3]))
                     for line in shown.splitlines() if len(line.split()) > 3]
        plan = standalone_ovs.mgmt_plan(self.context.mgmt_addresses(), addresses)
        made: dict[str, str] = {}
        bridges = {}
        for vm, (bridge, gateway) in plan.items():
            if bridge is None:
                if gateway not in made:
                    made[gateway] = self.wires.bridge(f"m{len(made)}")
                    self.wires.ip("addr", "add", gateway, "dev", made[gateway])
                bridge = made[gateway]
            elif not self._exists(f"/sys/class/net/{bridge}/bridge"):
                raise PrerequisiteError(
                    f"VM {vm}: host {self.context.host.name} has its management subnet on "
                    f"{bridge}, which is not a bridge (the VM's NIC needs one, NSB's br-int)")
            bridges[vm] = bridge
        return bridges

    def _start_ovs(self) -> None:
        other_config = self.layout.other_config(self._numa_nodes())
        megabytes = sum(int(mb) for mb in other_config["dpdk-socket-mem"].split(","))
        self.hugepages = hugepages.reserve(self.host, hugepages.pages_for(megabytes),
                                           f"{self.context.KIND} OVS-DPDK",
                                           self.context.run.task_id)
        if self.this_machine:  # given back by the next run if this one is killed
            leftovers.note_hugepages(self.context.run.task_id, self.hugepages)
        self.context.run.log_dir.mkdir(parents=True, exist_ok=True)
        self.ovs = ovs_daemons.OvsDaemons(
            self.host, f"{self.work_dir}/ovs", self.layout.vswitchd,
            str(self.context.run.log_dir / "ovs-dpdk-host.log"), f"OVS-DPDK on "
            f"{self.context.host.name}")
        self.ovs.start(other_config)
        uid, gid = libvirt_host.qemu_user(self.conn, {self.context.domain_type()})
        self.host.run(["chown", f"{uid}:{gid}", f"{self.work_dir}/vhost"])
        self.ovs.vsctl(*self.layout.vsctl_args())
        self.ovs.ofctl(self.layout.bridge, "del-flows")
        for rule in self.layout.flows:
            self.ovs.ofctl(self.layout.bridge, "add-flow", rule)

    def _numa_nodes(self) -> int:
        shown = self.host.run(["sh", "-c", "ls -d /sys/devices/system/node/node[0-9]*"],
                              check=False).stdout.split()
        return max(1, len(shown))

    def _define(self, index: int, node: Node, mgmt_bridge: str) -> None:
        context = self.context
        nics = [domain_xml.Nic(context.mgmt_mac(node.name), self.wires.tap(mgmt_bridge))]
        for iface in node.interfaces.values():
            nics.append(domain_xml.Nic(iface.mac, vhost_socket=self.layout.socket_of(
                Endpoint(node.name, iface.name)), pci=context.guest_pci[Endpoint(node.name,
                                                                            iface.name)]))
        name = context.vm_name(index)
        definition = domain_xml.VmDefinition(
            name=context.domain_name(index), vcpus=context.vcpus,
            ram_mb=int(context.flavor.get("ram", 4096)), console_log=self._console(name),
            nics=tuple(nics), domain_type=context.domain_type(), machine="pc",
            cpu_mode="host-passthrough" if context.domain_type() == "kvm" else "maximum",
            cpuset=self._cpuset(), **self._boot_source(index, node, nics))
        LOG.info("VM %s (%s): defining %s on %s", name, node.name, definition.name,
                 context.host.name)
        self.conn.defineXML(domain_xml.render(definition))
        self.defined.append(definition.name)

    def _boot_source(self, index: int, node: Node, nics) -> dict:
        """nsb's guest (kernel, this VM's initramfs), or an overlay of flavor.images with
        a cloud-init seed; either way the VM takes the run's key."""
        name = self.context.vm_name(index)
        key = self._run_key()
        node.ssh.key_filename = str(key)
        images = self.context.flavor.get("images")
        if images:
            disk = f"{self.work_dir}/{name}.qcow2"
            self.host.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                           images, disk])
            seed = cloud_seed.Seed(
                instance_id=self.context.domain_name(index), hostname=name,
                authorized_key=Path(f"{key}.pub").read_text(), mgmt_mac=nics[0].mac,
                mgmt_address=self.context.mgmt_addresses()[node.name],
                nics=tuple(zip([nic.mac for nic in nics[1:]], node.interfaces, strict=True)),
                user=node.ssh.user, password=node.ssh.password)
            return {"disk_image": disk,
                    "seed_iso": cloud_seed.write_iso(self.host, seed, f"{self.work_dir}/{name}")}
        image = guest_image.ensure()
        initrd = guest_image.vm_initrd(image, Path(f"{key}.pub").read_text(),
                                       self.local_dir / f"{name}-initrd.gz",
                                       self.context.guest_binaries())
        self.host.put(str(image.kernel), f"{self.work_dir}/vmlinuz")
        self.host.put(str(initrd), f"{self.work_dir}/{name}-initrd.gz")
        node.ssh.user, node.ssh.password = "root", None
        names = ",".join(f"{nic.mac}={iface}" for nic, iface in zip(
            nics, ["mgmt", *node.interfaces], strict=True))
        cmdline = (f"console=ttyS0 quiet nsb.mgmt={self.context.mgmt_addresses()[node.name]} "
                   f"nsb.nics={names} nsb.hugepages={self.context.options['guest_hugepages']}")
        if self.context.domain_type() == "qemu":
            cmdline += " pci=nomsi"  # QEMU 7.2's TCG crashes on a vhost-user NIC's MSI-X
        return {"kernel": f"{self.work_dir}/vmlinuz", "initrd": f"{self.work_dir}/{name}-initrd.gz",
                "cmdline": cmdline}

    def _run_key(self) -> Path:
        """The run's SSH key for its VMs (made once, here)."""
        self.local_dir.mkdir(parents=True, exist_ok=True)
        key = self.local_dir / "id_ed25519"
        if not key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
                           check=True)
        return key

    def _cpuset(self) -> str:
        """NSB's pinning: every vCPU on the CPUs of host socket ``hw_socket``."""
        socket = self.context.socket()
        shown = self.host.run(["cat", f"/sys/devices/system/node/node{socket}/cpulist"],
                              check=False)
        if shown.returncode != 0:
            raise PrerequisiteError(f"flavor hw_socket {socket}: host "
                                    f"{self.context.host.name} has no NUMA node {socket}")
        return shown.stdout.strip()

    def _console(self, name: str) -> str:
        return f"{self.work_dir}/{name}-console.log"

    def _start(self, name: str) -> None:
        try:
            failure = libvirt_host.start_domain(self.conn, name,
                                                self.context.options["switch_timeout_s"])
        except TimeoutError:
            raise RunError(f"VM {name} did not start within switch_timeout_s: QEMU waits for "
                           "OVS-DPDK to connect to its vhost-user sockets; OVS's log:\n"
                           f"{self.ovs.log_text()[-2000:]}") from None
        if failure:
            raise RunError(f"{self.context.host.name}: libvirt could not start {name}: {failure}")

    def _wait_for_ssh(self, index: int, node: Node, deadline: float) -> None:
        if libvirt_host.wait_for_ssh(node.ssh.host, deadline):
            LOG.info("VM %s: SSH up at %s", node.name, node.ssh.host)
            return
        console = self._read(self._console(self.context.vm_name(index)))
        raise RunError(f"VM {node.name} did not answer SSH on {node.ssh.host}:22 within "
                       f"boot_timeout_s ({self.context.options['boot_timeout_s']:g} s); last "
                       "lines of its console:\n" + "\n".join(console.splitlines()[-15:]))

    def _read(self, path: str) -> str:
        try:
            return self.host.read_file(path)
        except Exception:  # noqa: BLE001 - only for a message
            return "(no console log)"

    # --- down ------------------------------------------------------------------------

    def down(self) -> None:
        """Everything ``up`` made, in reverse; one failing step does not skip the rest."""
        steps = [self._remove_domains, self._keep_logs, self._stop_ovs, self.wires.remove,
                 self._give_back_hugepages, self._remove_files]
        failure = None
        for step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - the first is raised at the end
                LOG.error("%s teardown: %s failed: %s", self.context.KIND, step.__name__, exc)
                failure = failure or exc
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if failure is not None:
            raise failure

    def _remove_domains(self) -> None:
        for name in reversed(self.defined):
            libvirt_host.remove_domain(self.conn, name)
        self.defined.clear()

    def _keep_logs(self) -> None:
        """The consoles and OVS-DPDK's PMD counters, into the results' logs."""
        log_dir = self.context.run.log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        for index in range(len(self.context.nodes)):
            name = self.context.vm_name(index)
            text = self._read(self._console(name))
            (log_dir / f"{name}-console.log").write_text(text)
        if self.ovs is not None and self.ovs.processes:  # as it was at the end
            stats = self.ovs.appctl("dpif-netdev/pmd-stats-show")
            (log_dir / "ovs-dpdk-host-pmd-stats.txt").write_text(stats)

    def _stop_ovs(self) -> None:
        if self.ovs is not None:
            try:
                self.ovs.stop(self.layout.bridge)
            finally:
                dpdk_telemetry.remove_runtime_dir(self.host, self.layout.file_prefix)

    def _give_back_hugepages(self) -> None:
        hugepages.release(self.host, self.hugepages, self.context.run.task_id)
        if self.this_machine:
            leftovers.note_hugepages(self.context.run.task_id, -self.hugepages)
        self.hugepages = 0

    def _remove_files(self) -> None:
        shutil.rmtree(self.local_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.local_dir.parent.rmdir()
        self.host.run(["rm", "-rf", self.work_dir], check=False)
        self.host.run(["rmdir", "--ignore-fail-on-non-empty",
                       f"/tmp/nsb-{self.context.run.task_id}"], check=False)


def _machine_id(executor) -> str:
    return executor.run(["cat", "/etc/machine-id"], check=False).stdout
