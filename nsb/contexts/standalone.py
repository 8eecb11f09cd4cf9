"""NSB's standalone contexts, StandaloneOvsDpdk and StandaloneSriov, in their own format.

A host file names the libvirt host (the node whose role is ``OvsDpdk`` or
``Sriov``, reached over SSH); ``servers`` are the VMs (``vm_<i>`` in libvirt,
nodes named by their key) with a management address and one NIC per network;
``networks`` give each NIC its physical port (``phy_port``, the host's PF), its
guest PCI address (``vpci``) and address (``cidr``). With OVS-DPDK each
network is a DPDK port and each VM NIC a vhost-user port on one bridge, with
flows between them; with SR-IOV each network is a VF of its PF passed to the VM
as a hostdev. The plan shows all of it (the VMs, vCPU topology and pinning,
NICs, OVS settings, VFs). A run checks the host first (reachable, the PFs, VFs,
hugepages) and says in one line what it lacks; StandaloneOvsDpdk then brings
OVS-DPDK and the VMs up on the host (standalone_host). ``vm_deploy: false``
uses the VMs already listed in the host file, over SSH.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from nsb.contexts import (
    base,
    guest_image,
    guest_nics,
    libvirt_host,
    standalone_ovs,
    standalone_schema,
    topology,
)
from nsb.contexts.baremetal import connect, disconnect
from nsb.contexts.base import Context, Endpoint, Interface, Link, Node, SshAccess
from nsb.contexts.combined import CrossLinking
from nsb.contexts.standalone_host import OvsDpdkHost
from nsb.errors import PrerequisiteError
from nsb.nodes.node import stable_mac
from nsb.task.pod_file import load_pod
from nsb.task.standalone_file import host_file, server_pod
from nsb.vnfs.ovs import daemons as ovs_daemons

LOG = logging.getLogger(__name__)

DPDK_DRIVERS = ("vfio-pci", "igb_uio", "uio_pci_generic")


class StandaloneContext(Context, CrossLinking):
    """VMs on a libvirt host reached over SSH (NSB's standalone contexts)."""

    HOST_ROLE = ""
    KIND = ""
    OPTIONS_SCHEMA = standalone_schema.OPTIONS
    MEMORY = ""  # how the VMs' memory is backed, for the plan

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        where = spec.where
        host_nodes = load_pod(host_file(options["file"], Path(run.task.file)), where)
        hosts = [n for n in host_nodes.values() if n.role == self.HOST_ROLE]
        if not hosts:
            raise where.error(f"the host file has no node with role '{self.HOST_ROLE}' (the "
                              f"libvirt host); roles: "
                              f"{', '.join(n.role or '-' for n in host_nodes.values())}", "file")
        self.host = hosts[0]
        if self.host.ssh is None:
            raise where.error(f"host '{self.host.name}' has no 'ip'", "file")
        flavor = options.get("flavor") or {}
        specs = flavor.get("extra_specs") or {}
        self.topology = {"sockets": specs.get("hw:cpu_sockets", 1),
                         "cores": specs.get("hw:cpu_cores", 2),
                         "threads": specs.get("hw:cpu_threads", 2)}
        self.vcpus = self.topology["cores"] * self.topology["threads"]
        self.flavor = flavor
        for name, network in options["networks"].items():
            standalone_schema.network_address(network["cidr"], where, ("networks", name, "cidr"))
        self.guest_pci: dict[Endpoint, str] = {}  # NSB's vpci of each VM NIC
        if options["vm_deploy"]:
            self.nodes = {name: self._vm_node(index, name, server)
                          for index, (name, server) in enumerate(options["servers"].items())}
        else:  # NSB: the VMs exist and are listed in the host file
            self.nodes = {n.name: n for n in host_nodes.values() if n is not self.host}
        self.links: list[Link] = []
        self._foreign: dict[str, Node] = {}
        self.deployment = None  # what a run set up on the host

    # --- the VMs as nodes ----------------------------------------------------------------

    def _vm_node(self, index: int, name: str, server: dict) -> Node:
        where = self.spec.where
        ports = server["network_ports"]
        for port, networks in ports.items():
            if port != "mgmt" and networks[0] not in self.options["networks"]:
                raise where.error(f"network '{networks[0]}' is not in 'networks' (it has: "
                                  f"{', '.join(self.options['networks'])})",
                                  "servers", name, "network_ports", port, 0)
        raw = server_pod(self.KIND, index, name, server, self.options["networks"])
        kernel = self.guest_has_kernel_nics()
        interfaces = {}
        for port, entry in raw["interfaces"].items():
            self.guest_pci[Endpoint(name, port)] = entry["vpci"]
            interfaces[port] = Interface(
                name=port, mac=entry["local_mac"], dpdk_port=entry["dpdk_port_num"],
                ip=f"{entry['local_ip']}/{entry['prefixlen']}",
                # nic_driver kernel: nsb's guest's kernel NICs (named by MAC), no PCI device
                pci="" if kernel else entry["vpci"],
                driver="virtio_net" if kernel else entry["driver"],
                dpdk_driver="" if kernel else self.guest_dpdk_driver(),
                kind="virtio" if kernel else "veth")
        mgmt = standalone_schema.network_address(
            ports["mgmt"]["cidr"], where, ("servers", name, "network_ports", "mgmt", "cidr"))
        ssh = SshAccess(host=str(mgmt.ip), user=self.flavor.get("user", "root"),
                        password=self.flavor.get("password"),
                        key_filename=self.flavor.get("key_filename"),
                        connect_timeout=libvirt_host.VM_CONNECT_TIMEOUT_S)
        return Node(name=name, role=name, interfaces=interfaces, ssh=ssh,
                    pod={**raw, "user": ssh.user})

    def guest_has_kernel_nics(self) -> bool:
        """The VMs boot nsb's guest with nic_driver kernel: their NICs stay kernel
        interfaces (DPDK programs use af_packet on them)."""
        return False

    def guest_dpdk_driver(self) -> str:
        """The driver nsb binds the VMs' PCI NICs to for a run ('' = not nsb's to bind)."""
        return ""

    def link_across(self, others: dict) -> None:
        self._foreign = dict(others)
        nodes = {**others, **self.nodes}
        self.links = topology.build_links(self.options.get("links", []), nodes, self.spec.where)
        for link in self.links:  # the far end of a VM NIC: the network's gateway_ip
            for vm_end, far_end in ((link.a, link.b), (link.b, link.a)):
                far = nodes[far_end.node].interfaces[far_end.interface]
                if vm_end.node in self.nodes and far_end.node not in self.nodes and not far.ip:
                    network = self.network_of(vm_end.node, vm_end.interface)[1]
                    far.ip = standalone_schema.gateway(network)
        self.connect_peers(nodes)

    # --- the plan --------------------------------------------------------------------------

    def vm_name(self, index: int) -> str:
        return f"vm_{index}"

    def domain_name(self, index: int) -> str:
        """The libvirt domain: NSB's vm_<i>, named after the run (a killed run's VMs
        are found by it)."""
        return f"nsb-{self.run.task_id}-{self.vm_name(index)}"

    def domain_type(self) -> str:
        return self.options["domain_type"]

    def libvirt_uri(self) -> str:
        """The host's libvirt over SSH, with the host file's key (libvirt cannot ask for
        a password)."""
        if self.options.get("libvirt_uri"):
            return self.options["libvirt_uri"]
        ssh = self.host.ssh
        if not ssh.key_filename:
            raise PrerequisiteError(f"host {self.host.name}: libvirt over SSH needs a "
                                    "key_filename in the host file (it cannot use a password)")
        return (f"qemu+ssh://{ssh.user}@{ssh.host}:{ssh.port}/system?keyfile="
                f"{ssh.key_filename}&no_verify=1&no_tty=1")

    def mgmt_addresses(self) -> dict[str, str]:
        """Per VM its management address with prefix length (servers' mgmt cidr)."""
        return {name: server["network_ports"]["mgmt"]["cidr"]
                for name, server in self.options["servers"].items()}

    def mgmt_mac(self, vm: str) -> str:
        return stable_mac(self.run.task_id, vm, "mgmt")

    def guest_binaries(self) -> tuple[str, ...]:
        return guest_image.host_binaries(self.options["guest_binaries"], self.run,
                                         self.spec.where)

    def describe(self) -> dict:
        described = super().describe()
        described["host"] = {"node": self.host.name, "role": self.host.role,
                             "ssh": self.host.ssh.describe()}
        described["vm_deploy"] = self.options["vm_deploy"]
        if not self.options["vm_deploy"]:
            return described
        described["vms"] = {}
        gateways = standalone_ovs.mgmt_plan(self.mgmt_addresses(), [])
        kvm = self.domain_type() == "kvm"
        for index, (name, node) in enumerate(self.nodes.items()):
            images = self.flavor.get("images")
            described["vms"][self.vm_name(index)] = {
                "node": name, "domain": self.domain_name(index),
                "image": f"overlay of {images}, configured by a cloud-init seed (the run's "
                         "key for flavor.user, the mgmt address, NIC names)"
                         if images else "nsb guest (kernel + initramfs, copied to the host)",
                "ram_mb": self.flavor.get("ram", 4096), "vcpus": self.vcpus,
                "domain_type": self.domain_type(),
                "cpu": {"mode": "host-passthrough" if kvm else "maximum", **self.topology},
                "cpu_pinning": f"every vCPU on the CPUs of host NUMA node {self.socket()} "
                               "(read from the host)",
                "memory": self.MEMORY,
                "machine": "pc",
                "mgmt": {"ip": node.ssh.host, "bridge": "the host bridge with an address in "
                         f"its subnet (NSB's br-int), else a bridge of the run with "
                         f"{gateways[name][1]}"},
                "nics": {iface.name: self._describe_nic(name, iface)
                         for iface in node.interfaces.values()},
            }
        return described

    def socket(self) -> int:
        specs = self.flavor.get("extra_specs") or {}
        return int(self.flavor.get("hw_socket", specs.get("hw_socket", 0)))

    def network_of(self, vm: str, port: str) -> tuple[str, dict]:
        name = self.options["servers"][vm]["network_ports"][port][0]
        return name, self.options["networks"][name]

    def _describe_nic(self, vm: str, iface: Interface) -> dict:
        raise NotImplementedError

    # --- a run -----------------------------------------------------------------------------

    def deploy(self) -> None:
        """The VMs of the host file (vm_deploy: false), or the host checked (its
        connection stays open for the deployment)."""
        if not self.options["vm_deploy"]:
            connect(self.nodes.values(), self.run.task_id)
            return
        connect([self.host], self.run.task_id)
        problems = self.host_problems(self.host.executor)
        if problems:
            raise PrerequisiteError(f"{self.KIND} host {self.host.name} "
                                    f"({self.host.ssh.host}): " + "; ".join(problems))

    def host_problems(self, executor) -> list[str]:
        """What the host lacks for this context's networks, one phrase each."""
        problems = []
        for name, network in self.options["networks"].items():
            if not standalone_ovs.is_pci(network["phy_port"]):
                continue  # an interface: there, or cabled by the lab (standalone_host)
            device = f"/sys/bus/pci/devices/{network['phy_port']}"
            if executor.run(["test", "-e", device], check=False).returncode != 0:
                problems.append(f"network {name}: no PCI device {network['phy_port']} "
                                f"({device} missing)")
        return problems

    def undeploy(self) -> None:
        disconnect([n for n in [self.host, *self.nodes.values()] if n.executor])


class StandaloneOvsDpdk(StandaloneContext):
    """NSB's StandaloneOvsDpdk: VMs behind OVS-DPDK (vhost-user) on a libvirt host."""

    HOST_ROLE = "OvsDpdk"
    KIND = "StandaloneOvsDpdk"
    OPTIONS_SCHEMA = standalone_schema.OVS_DPDK_OPTIONS
    MEMORY = "shared (memfd): OVS-DPDK reads and writes it through vhost-user"

    def guest_has_kernel_nics(self) -> bool:
        return not self.flavor.get("images") and not guest_nics.is_dpdk(
            self.options["nic_driver"])

    def guest_dpdk_driver(self) -> str:
        """nic_driver (guest_nics): nsb's guest runs DPDK's virtio PMD on its NICs."""
        driver = self.options["nic_driver"]
        return driver if guest_nics.is_dpdk(driver) else ""

    def work_dir(self) -> str:
        """The run's directory on the host (OVS, sockets, the guest's files)."""
        return f"/tmp/nsb-{self.run.task_id}/standalone"

    @functools.cached_property
    def ovs_layout(self) -> standalone_ovs.OvsLayout:
        """The host's OVS-DPDK, once: the plan and the deployment use the same."""
        return standalone_ovs.layout(self, self.work_dir())

    def describe(self) -> dict:
        described = super().describe()
        layout = self.ovs_layout
        props = self.options.get("ovs_properties") or {}
        described["ovs"] = {
            "vswitchd": layout.vswitchd, "bridge": layout.bridge, "datapath_type": "netdev",
            "other_config": layout.other_config(), "pmd_threads": layout.settings["pmd_threads"],
            "ports": layout.ports, "flows": layout.flows,
            "as_nsb_asks": {"version": props.get("version") or {}, "vpath": props.get("vpath")},
            "note": "the host's own OVS-DPDK build runs (ovs_properties.version is not "
                    "built); dpdk-socket-mem is cut to the host's NUMA nodes"}
        return described

    def _describe_nic(self, vm: str, iface: Interface) -> dict:
        name, network = self.network_of(vm, iface.name)
        socket = self.ovs_layout.socket_of(Endpoint(vm, iface.name))
        port = next(p for p, o in self.ovs_layout.ports.items() if o.get("socket") == socket)
        return {"network": name, "type": "vhostuser (QEMU serves the socket, OVS connects)",
                "socket": socket, "ovs_port": port, "phy_port": network["phy_port"],
                "guest_pci": self.guest_pci[Endpoint(vm, iface.name)], "mac": iface.mac,
                "ip": iface.ip, "in_guest": guest_nics.describe(iface, self.options["nic_driver"])}

    def host_problems(self, executor) -> list[str]:
        problems = super().host_problems(executor)
        for name, network in self.options["networks"].items():
            port = network["phy_port"]
            if not standalone_ovs.is_pci(port) or any(port in p for p in problems):
                continue
            driver = executor.run(["readlink", f"/sys/bus/pci/devices/{port}/driver"],
                                  check=False).stdout.strip().rsplit("/", 1)[-1]
            if driver not in DPDK_DRIVERS:
                problems.append(f"network {name}: {port} is bound to {driver or 'no driver'}, "
                                f"not to one DPDK can use ({', '.join(DPDK_DRIVERS)}; "
                                "dpdk-devbind.py -b vfio-pci " + port + ")")
        if executor.run(["grep", "-qs", "hugetlbfs", "/proc/mounts"], check=False).returncode:
            problems.append("no hugetlbfs mounted (mount -t hugetlbfs nodev /dev/hugepages): "
                            "OVS-DPDK needs it")
        needed = [(ovs_daemons.DPDK_VSWITCHD, "openvswitch-switch-dpdk")]
        if self.flavor.get("images"):  # an overlay of it, with a cloud-init seed
            needed += [("qemu-img", "qemu-utils"), ("genisoimage", "genisoimage")]
        for binary, package in needed:
            if not executor.which(binary):
                problems.append(f"no {binary} (apt-get install {package})")
        return problems

    def collect_kpi(self) -> list[base.ContextKpis]:
        """The host's OVS-DPDK: PMD packets and cycles, datapath flows (cumulative)."""
        ovs = self.deployment.ovs if self.deployment is not None else None
        kpis = ovs.pmd_kpis() if ovs is not None else {}
        return [base.ContextKpis("ovs_dpdk", self.host.name, kpis)] if kpis else []

    def deploy(self) -> None:
        super().deploy()
        if not self.options["vm_deploy"]:
            return
        self.deployment = OvsDpdkHost(self, self.host.executor, self._foreign)
        self.deployment.up()
        connect(self.nodes.values(), self.run.task_id)

    def undeploy(self) -> None:
        try:
            disconnect([n for n in self.nodes.values() if n.executor])
        finally:
            try:
                if self.deployment is not None:
                    self.deployment.down()
                    self.deployment = None
            finally:
                disconnect([self.host] if self.host.executor else [])


class StandaloneSriov(StandaloneContext):
    """NSB's StandaloneSriov: VMs with SR-IOV VFs of the host's NICs (hostdev)."""

    HOST_ROLE = "Sriov"
    KIND = "StandaloneSriov"
    MEMORY = "hugepages, shared (NUMA cell 0), as NSB"

    def deploy(self) -> None:
        super().deploy()
        if self.options["vm_deploy"]:
            raise PrerequisiteError(f"not supported yet: deploying {self.KIND} VMs (hostdev "
                                    f"VFs) on {self.host.name}; StandaloneOvsDpdk deploys")

    def _describe_nic(self, vm: str, iface: Interface) -> dict:
        name, network = self.network_of(vm, iface.name)
        domain, bus, rest = iface.pci.split(":")
        slot, function = rest.split(".")
        guest = (f"<address type='pci' domain='0x{domain}' bus='0x{bus}' slot='0x{slot}' "
                 f"function='0x{function}'/>")
        return {"network": name, "type": "hostdev (managed)",
                "vf": f"VF 0 of PF {network['phy_port']} (sriov_numvfs 1, spoofchk off, "
                      f"MAC {iface.mac})",
                "domain_xml": f"<interface type='hostdev' managed='yes'><mac address="
                              f"'{iface.mac}'/><source><address type='pci' (the PCI address "
                              f"of {network['phy_port']}'s virtfn0, read on the host)/>"
                              f"</source>{guest}</interface>",
                "guest_pci": self.guest_pci[Endpoint(vm, iface.name)], "mac": iface.mac,
                "ip": iface.ip}

    def describe(self) -> dict:
        described = super().describe()
        described["vfs"] = [{"pf": network["phy_port"], "network": name, "numvfs": 1,
                             "vf": 0} for name, network in self.options["networks"].items()]
        return described

    def host_problems(self, executor) -> list[str]:
        problems = super().host_problems(executor)
        for name, network in self.options["networks"].items():
            device = f"/sys/bus/pci/devices/{network['phy_port']}"
            if not standalone_ovs.is_pci(network["phy_port"]):
                problems.append(f"network {name}: phy_port {network['phy_port']} is not a PCI "
                                "address (SR-IOV needs the PF's)")
                continue
            if any(network["phy_port"] in p for p in problems):
                continue
            total = executor.run(["cat", f"{device}/sriov_totalvfs"], check=False)
            if total.returncode != 0 or not total.stdout.strip().isdigit() or \
                    int(total.stdout) < 1:
                problems.append(f"network {name}: {network['phy_port']} has no SR-IOV virtual "
                                f"functions ({device}/sriov_totalvfs missing or 0)")
        if executor.run(["sh", "-c", "ls /sys/kernel/iommu_groups/ | grep -q ."],
                        check=False).returncode != 0:
            problems.append("no IOMMU groups (/sys/kernel/iommu_groups is empty): VFs cannot be "
                            "passed to a VM (intel_iommu=on iommu=pt on the kernel command line)")
        return problems
