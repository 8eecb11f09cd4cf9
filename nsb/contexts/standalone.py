"""NSB's standalone contexts, StandaloneOvsDpdk and StandaloneSriov, in their own format.

A host file names the libvirt host (the node whose role is ``OvsDpdk`` or
``Sriov``, reached over SSH); ``servers`` are the VMs (``vm_<i>`` in libvirt,
nodes named by their key) with a management address and one NIC per network;
``networks`` give each NIC its physical port (``phy_port``, the host's PF), its
guest PCI address (``vpci``) and address (``cidr``). With OVS-DPDK each
network is a DPDK port and a vhost-user port on bridge br0, with flows between
them; with SR-IOV each network is a VF of its PF passed to the VM as a hostdev.
The plan shows all of it as NSB would set it up (the VMs, vCPU topology and
pinning, NICs, OVS settings, VFs). A run checks the host first (reachable, the
PFs, VFs, hugepages) and says in one line what it lacks; deploying the VMs on a
remote host is not done yet (the libvirt context runs VMs on this machine).
``vm_deploy: false`` uses the VMs already listed in the host file, over SSH.
"""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path

from nsb.contexts import topology
from nsb.contexts.baremetal import connect, disconnect
from nsb.contexts.base import Context, Interface, Link, Node, SshAccess
from nsb.contexts.combined import CrossLinking
from nsb.errors import PrerequisiteError
from nsb.nodes import platform
from nsb.task.pod_file import load_pod
from nsb.task.standalone_file import host_file, server_pod

LOG = logging.getLogger(__name__)

_NETWORK = {
    "type": "object",
    "required": ["phy_port", "vpci", "cidr"],
    "properties": {
        "phy_port": {"type": "string", "pattern": "^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:"
                     "[0-9a-fA-F]{2}\\.[0-7]$"},
        "vpci": {"type": "string", "pattern": "^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:"
                 "[0-9a-fA-F]{2}\\.[0-7]$"},
        "cidr": {"type": "string"},
        "gateway_ip": {"type": "string"},
        "phy_driver": {"type": "string"},
        "port_num": {"type": "integer", "minimum": 0},
    },
}
_SERVER = {
    "type": "object",
    "required": ["network_ports"],
    "properties": {"network_ports": {
        "type": "object", "required": ["mgmt"],
        "properties": {"mgmt": {"type": "object", "required": ["cidr"],
                                "properties": {"cidr": {"type": "string"}}}},
        "additionalProperties": {"type": "array", "minItems": 1,
                                 "items": {"type": "string"}},
    }},
}
_FLAVOR = {
    "type": "object",
    "properties": {
        "images": {"type": "string"},
        "ram": {"type": "integer", "minimum": 256, "default": 4096},
        "hw_socket": {"type": "integer", "minimum": 0},
        "user": {"type": "string"}, "password": {"type": "string"},
        "key_filename": {"type": "string"},
        "extra_specs": {"type": "object", "properties": {
            "hw:cpu_sockets": {"type": "integer", "minimum": 1},
            "hw:cpu_cores": {"type": "integer", "minimum": 1},
            "hw:cpu_threads": {"type": "integer", "minimum": 1},
            "hw_socket": {"type": "integer", "minimum": 0},
            "cputune": {"type": "string"},
        }},
    },
}
_OVS = {
    "type": "object",
    "properties": {
        "version": {"type": "object", "properties": {"ovs": {"type": ["string", "number"]},
                                                      "dpdk": {"type": ["string", "number"]}}},
        "pmd_threads": {"type": "integer", "minimum": 1},
        "pmd_cpu_mask": {"type": ["string", "integer"]},
        "lcore_mask": {"type": ["string", "integer"]},
        "ram": {"type": "object", "properties": {"socket_0": {"type": "integer"},
                                                  "socket_1": {"type": "integer"}}},
        "queues": {"type": "integer", "minimum": 1},
        "vpath": {"type": "string"},
    },
}


class StandaloneContext(Context, CrossLinking):
    """VMs on a libvirt host reached over SSH (NSB's standalone contexts)."""

    HOST_ROLE = ""
    KIND = ""
    OPTIONS_SCHEMA = {
        "type": "object",
        "required": ["file", "servers", "networks"],
        # keys NSB's standalone contexts do not read are ignored there; here too
        "additionalProperties": True,
        "properties": {
            "name": {"type": "string"},
            "file": {"type": "string", "minLength": 1},
            "vm_deploy": {"type": "boolean", "default": True},
            "flavor": _FLAVOR,
            "servers": {"type": "object", "minProperties": 1, "additionalProperties": _SERVER},
            "networks": {"type": "object", "minProperties": 1,
                         "additionalProperties": _NETWORK},
            "links": topology.LINKS_SCHEMA,
            "nfvi_type": {"type": "string"},
        },
    }

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
            _network_address(network["cidr"], where, ("networks", name, "cidr"))
        if options["vm_deploy"]:
            self.nodes = {name: self._vm_node(index, name, server)
                          for index, (name, server) in enumerate(options["servers"].items())}
        else:  # NSB: the VMs exist and are listed in the host file
            self.nodes = {n.name: n for n in host_nodes.values() if n is not self.host}
        self.links: list[Link] = []

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
        interfaces = {port: Interface(name=port, mac=entry["local_mac"],
                                      ip=f"{entry['local_ip']}/{entry['prefixlen']}",
                                      pci=entry["vpci"], driver=entry["driver"],
                                      dpdk_port=entry["dpdk_port_num"])
                      for port, entry in raw["interfaces"].items()}
        mgmt = _network_address(ports["mgmt"]["cidr"], where,
                                ("servers", name, "network_ports", "mgmt", "cidr"))
        ssh = SshAccess(host=str(mgmt.ip), user=self.flavor.get("user", "root"),
                        password=self.flavor.get("password"),
                        key_filename=self.flavor.get("key_filename"))
        return Node(name=name, role=name, interfaces=interfaces, ssh=ssh,
                    pod={**raw, "user": ssh.user})

    def link_across(self, others: dict) -> None:
        nodes = {**others, **self.nodes}
        self.links = topology.build_links(self.options.get("links", []), nodes, self.spec.where)
        self.connect_peers(nodes)

    # --- the plan --------------------------------------------------------------------------

    def vm_name(self, index: int) -> str:
        return f"vm_{index}"

    def describe(self) -> dict:
        described = super().describe()
        described["host"] = {"node": self.host.name, "role": self.host.role,
                             "ssh": self.host.ssh.describe()}
        described["vm_deploy"] = self.options["vm_deploy"]
        if not self.options["vm_deploy"]:
            return described
        described["vms"] = {}
        for index, (name, node) in enumerate(self.nodes.items()):
            described["vms"][self.vm_name(index)] = {
                "node": name,
                "image": f"/var/lib/libvirt/images/{index}.qcow2 (backing file "
                         f"{self.flavor.get('images', '<flavor.images missing>')})",
                "ram_mb": self.flavor.get("ram", 4096), "vcpus": self.vcpus,
                "cpu": {"mode": "host-passthrough", **self.topology},
                "cpu_pinning": f"every vCPU on the cores of host socket {self._socket()} "
                               "and their hyperthread siblings (read from the host)",
                "memory": "hugepages, shared (NUMA cell 0)",
                "machine": "pc",
                "mgmt": {"bridge": "br-int", "ip": node.ssh.host},
                "nics": {iface.name: self._describe_nic(name, iface)
                         for iface in node.interfaces.values()},
            }
        return described

    def _socket(self) -> int:
        specs = self.flavor.get("extra_specs") or {}
        return int(self.flavor.get("hw_socket", specs.get("hw_socket", 0)))

    def _network_of(self, vm: str, port: str) -> tuple[str, dict]:
        name = self.options["servers"][vm]["network_ports"][port][0]
        return name, self.options["networks"][name]

    def _describe_nic(self, vm: str, iface: Interface) -> dict:
        raise NotImplementedError

    # --- a run -----------------------------------------------------------------------------

    def deploy(self) -> None:
        if not self.options["vm_deploy"]:
            connect(self.nodes.values(), self.run.task_id)
            return
        connect([self.host], self.run.task_id)
        try:
            problems = self.host_problems(self.host.executor)
        finally:
            self.host.executor.close()
            self.host.executor = None
        if problems:
            raise PrerequisiteError(f"{self.KIND} host {self.host.name} "
                                    f"({self.host.ssh.host}): " + "; ".join(problems))
        raise PrerequisiteError(f"not supported yet: deploying {self.KIND} VMs on a remote "
                                f"libvirt host ({self.host.name}); the libvirt context runs "
                                "VMs on this machine")

    def host_problems(self, executor) -> list[str]:
        """What the host lacks for this context's networks, one phrase each."""
        problems = []
        for name, network in self.options["networks"].items():
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
    OPTIONS_SCHEMA = {**StandaloneContext.OPTIONS_SCHEMA, "properties": {
        **StandaloneContext.OPTIONS_SCHEMA["properties"], "ovs_properties": _OVS}}

    def ovs(self) -> dict:
        """OVS-DPDK as NSB sets it up on the host: settings, ports, flows."""
        props = self.options.get("ovs_properties") or {}
        ram = props.get("ram") or {}
        threads = props.get("pmd_threads", 2)
        mask = props.get("pmd_cpu_mask") or hex(((1 << threads) - 1) << 1)
        other_config = {"dpdk-init": "true",
                        "dpdk-socket-mem": f"{ram.get('socket_0', 2048)},"
                                           f"{ram.get('socket_1', 2048)}",
                        "pmd-cpu-mask": str(mask)}
        if props.get("lcore_mask"):
            other_config["dpdk-lcore-mask"] = str(props["lcore_mask"])
        networks = list(self.options["networks"].items())
        ports = {}
        for name, network in networks:
            number = network.get("port_num", 0)
            ports[f"dpdk{number}"] = {"type": "dpdk", "dpdk-devargs": network["phy_port"],
                                      "n_rxq": props.get("queues", 1), "network": name}
        for position, (name, _) in enumerate(networks):
            port, socket = self._vhost_port(position)
            ports[port] = {"type": "dpdkvhostuser", "network": name, "socket": socket}
        count = len(networks)
        flows = [rule for i in range(1, count + 1) for rule in (
            f"in_port={i},action=output:{count + i}", f"in_port={count + i},action=output:{i}")]
        version = props.get("version") or {}
        return {"version": {"ovs": str(version.get("ovs", "2.6.0")),
                            "dpdk": str(version.get("dpdk", "16.07.2"))},
                "vpath": self._vpath(), "bridge": "br0", "datapath_type": "netdev",
                "other_config": other_config, "pmd_threads": threads, "ports": ports,
                "flows": flows}

    def _vpath(self) -> str:
        return (self.options.get("ovs_properties") or {}).get("vpath", "/usr/local")

    def _vhost_port(self, position: int) -> tuple[str, str]:
        """NSB's vhost-user port of the ``position``-th network and its socket."""
        name = f"dpdkvhostuser{position}"
        return name, f"{self._vpath()}/var/run/openvswitch/{name}"

    def describe(self) -> dict:
        described = super().describe()
        described["ovs"] = self.ovs()
        return described

    def _describe_nic(self, vm: str, iface: Interface) -> dict:
        name, network = self._network_of(vm, iface.name)
        port, socket = self._vhost_port(list(self.options["networks"]).index(name))
        return {"network": name, "type": "vhostuser (client, virtio, 4 queues)",
                "socket": socket, "ovs_port": port, "phy_port": network["phy_port"],
                "guest_pci": iface.pci, "mac": iface.mac, "ip": iface.ip}

    def host_problems(self, executor) -> list[str]:
        problems = super().host_problems(executor)
        if not platform.memory(executor).get("hugepages_total"):
            problems.append("no hugepages (HugePages_Total 0): OVS-DPDK needs them")
        if not executor.which("ovs-vswitchd"):
            problems.append("no ovs-vswitchd (apt-get install openvswitch-switch-dpdk)")
        return problems


class StandaloneSriov(StandaloneContext):
    """NSB's StandaloneSriov: VMs with SR-IOV VFs of the host's NICs (hostdev)."""

    HOST_ROLE = "Sriov"
    KIND = "StandaloneSriov"
    def _describe_nic(self, vm: str, iface: Interface) -> dict:
        name, network = self._network_of(vm, iface.name)
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
                "guest_pci": iface.pci, "mac": iface.mac, "ip": iface.ip}

    def describe(self) -> dict:
        described = super().describe()
        described["vfs"] = [{"pf": network["phy_port"], "network": name, "numvfs": 1,
                             "vf": 0} for name, network in self.options["networks"].items()]
        return described

    def host_problems(self, executor) -> list[str]:
        problems = super().host_problems(executor)
        for name, network in self.options["networks"].items():
            device = f"/sys/bus/pci/devices/{network['phy_port']}"
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


def _network_address(cidr: str, where, at: tuple):
    try:
        return ipaddress.ip_interface(cidr)
    except ValueError:
        raise where.error(f"{cidr!r} is not an address with a prefix length (e.g. "
                          "152.16.100.10/24)", *at) from None
