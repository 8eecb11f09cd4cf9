"""The OVS-DPDK of a StandaloneOvsDpdk host, as one layout the plan shows and the
deployment sets up: a netdev bridge (NSB's br0, named after the run), a DPDK port
per network (``dpdk<port_num>`` on the PCI NIC ``phy_port``, or an af_packet port
when ``phy_port`` names an interface), a vhost-user client port per VM NIC (QEMU
serves the socket, so a VM and its switch can start in either order), and flows
between each network's DPDK port and the VM NIC on it, both ways. Also where
each VM's management NIC goes."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from nsb.contexts.base import Endpoint
from nsb.runinfo import short_tag
from nsb.vnfs.ovs import daemons as ovs_daemons

PCI = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def is_pci(port: str) -> bool:
    return bool(PCI.match(port))


@dataclass
class OvsLayout:
    bridge: str
    file_prefix: str
    vswitchd: str
    settings: dict  # ovs_properties with NSB's defaults
    ports: dict[str, dict] = field(default_factory=dict)  # name -> type and options
    sockets: dict[Endpoint, str] = field(default_factory=dict)  # VM NIC -> vhost socket
    flows: list[str] = field(default_factory=list)

    def other_config(self, numa_nodes: int = 2) -> dict[str, str]:
        """Open_vSwitch other_config; socket memory only for the host's NUMA nodes."""
        ram = self.settings["ram"]
        memory = [ram.get(f"socket_{n}", 2048) for n in range(max(1, numa_nodes))]
        pci = [p["dpdk-devargs"] for p in self.ports.values()
               if p["type"] == "dpdk" and is_pci(p["dpdk-devargs"])]
        # the limit keeps OVS to its own pages (its mempool takes all it can get)
        config = {"dpdk-init": "true", "dpdk-socket-mem": ",".join(map(str, memory)),
                  "dpdk-socket-limit": ",".join(map(str, memory)),
                  "dpdk-extra": ovs_daemons.dpdk_extra(self.file_prefix, pci),
                  "pmd-cpu-mask": str(self.settings["pmd_cpu_mask"])}
        if self.settings.get("lcore_mask"):
            config["dpdk-lcore-mask"] = str(self.settings["lcore_mask"])
        if self.settings.get("pmd_maxsleep_us"):
            config["pmd-maxsleep"] = str(self.settings["pmd_maxsleep_us"])
        return config

    def vsctl_args(self) -> list[str]:
        """One ovs-vsctl transaction: the bridge and every port with its options."""
        commands = ovs_daemons.bridge_commands(self.bridge)
        for name, port in self.ports.items():
            options = ({"dpdk-devargs": port["dpdk-devargs"], "n_rxq": port["n_rxq"]}
                       if port["type"] == "dpdk" else {"vhost-server-path": port["socket"]})
            commands += ovs_daemons.port_commands(self.bridge, name, port["type"], options)
        return ovs_daemons.transaction(commands)

    def socket_of(self, end: Endpoint) -> str:
        return self.sockets[end]


def layout(context, work_dir: str) -> OvsLayout:
    """The OVS-DPDK of ``context`` (a StandaloneOvsDpdk) with its files in ``work_dir``."""
    props = context.options.get("ovs_properties") or {}
    threads = props.get("pmd_threads", 2)
    settings = {"ram": props.get("ram") or {}, "pmd_threads": threads,
                "pmd_cpu_mask": props.get("pmd_cpu_mask") or hex(((1 << threads) - 1) << 1),
                "lcore_mask": props.get("lcore_mask"), "queues": props.get("queues", 1),
                "pmd_maxsleep_us": props.get("pmd_maxsleep_us", 0)}
    # NSB's br0, named after the run: what a killed run leaves is found by its name
    result = OvsLayout(f"nsb{short_tag(context.run.task_id)}br",
                       f"nsb-{context.run.task_id}-ovs", ovs_daemons.DPDK_VSWITCHD, settings)
    dpdk_of = {}
    for name, network in context.options["networks"].items():
        number = network.get("port_num", len(dpdk_of))
        port = f"dpdk{number}"
        phy = network["phy_port"]
        devargs = phy if is_pci(phy) else f"net_af_packet{number},iface={phy}"
        result.ports[port] = {"type": "dpdk", "dpdk-devargs": devargs,
                              "n_rxq": settings["queues"], "network": name}
        dpdk_of[name] = port
    vhost_of: dict[str, str] = {}
    for vm, node in context.nodes.items():
        for iface in node.interfaces:
            network = context.network_of(vm, iface)[0]
            port = f"dpdkvhostuser{len(result.sockets)}"
            socket = f"{work_dir}/vhost/{vm}-{iface}.sock"
            result.ports[port] = {"type": "dpdkvhostuserclient", "network": network,
                                  "vm": vm, "socket": socket}
            result.sockets[Endpoint(vm, iface)] = socket
            vhost_of.setdefault(network, port)
    for network, phy in dpdk_of.items():
        if network in vhost_of:
            vhost = vhost_of[network]
            result.flows += [f"in_port={phy},actions=output:{vhost}",
                             f"in_port={vhost},actions=output:{phy}"]
    return result


def mgmt_plan(vms: dict[str, str], host: list[tuple[str, object]]) -> dict[str, tuple]:
    """Per VM (name -> its management address/prefix) the host interface that has an
    address in its subnet and no gateway, or no interface and the gateway address a
    bridge of the run gets: the subnet's first address no VM has."""
    taken = {ipaddress.ip_interface(address).ip for address in vms.values()}
    plan = {}
    for vm, address in vms.items():
        network = ipaddress.ip_interface(address).network
        existing = [name for name, host_address in host if host_address.ip in network]
        if existing:
            plan[vm] = (existing[0], None)
            continue
        gateway = next(ip for ip in network.hosts() if ip not in taken)
        plan[vm] = (None, f"{gateway}/{network.prefixlen}")
    return plan
