"""Open vSwitch as the system under test: its own ovsdb and vswitchd per task.

Each link ``via`` this switch's bridge has two ports on its node: made for it in
the lab, the NICs cabled to its ends on a pod. The bridge gets those ports (a NIC
with a PCI address as an OVS-DPDK ``dpdk`` port, a vhost-user end as a
``dpdkvhostuserclient``, any other as the kernel interface) and, per link,
port-to-port flows both ways (match on in_port only, or also on the destination
MAC or IP), or one NORMAL flow.
Nothing is shared with a system OVS: the database, sockets, pid files and
logs live in a run directory of the task, removed at teardown.
"""

from __future__ import annotations

import logging

from nsb import port_counts
from nsb.contexts.base import vhost_socket
from nsb.dut_feed import CounterFeed
from nsb.nodes import link_counters
from nsb.port_counts import PortCount
from nsb.vnfs import hugepages
from nsb.vnfs.base import Vnf
from nsb.vnfs.bridge_links import BRIDGE_OPTION, links_via
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.ovs import daemons as ovs_daemons
from nsb.vnfs.ovs import fdb as ovs_fdb
from nsb.vnfs.ovs import stats as ovs_stats
from nsb.vnfs.ovs import vxlan as ovs_vxlan
from nsb.vnfs.ovs.flow_churn import FlowChurn

LOG = logging.getLogger(__name__)

DEFAULT_SOCKET_MEM = "256"  # MB per NUMA node


class OvsVnf(FlowChurn, Vnf):
    """Open vSwitch bridge (userspace datapath by default) switching the links via it."""

    EVENTS = ("pause", "command", "restart", "link_flap", "rule_churn")  # rule_churn: flow_churn

    ADDS_HUGEPAGES = True
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "bridge": BRIDGE_OPTION,
            "datapath": {"description": "netdev (userspace) or system (kernel)",
                         "enum": ["netdev", "system"], "default": "netdev"},
            "flows": {"description": "rules per link: port (in_port only), l2 (and destination "
                                     "MAC), l3 (and destination IP), or normal (a learning switch)",
                      "enum": ["port", "l2", "l3", "normal"], "default": "port"},
            "dpdk_init": {"description": "start OVS with DPDK (other_config:dpdk-init)",
                          "type": "boolean", "default": False},
            "dpdk_socket_mem": {"description": "MB of hugepages per NUMA node for OVS-DPDK "
                                               "(default 256 with DPDK)",
                                "type": "string", "pattern": "^[0-9]+(,[0-9]+)*$"},
            "dpdk_extra": {"description": "more EAL arguments for OVS-DPDK (default --no-pci "
                                          "without PCI NICs)",
                           "type": "string"},
            "vswitchd_path": {"description": "the vswitchd to run: Debian's DPDK build when "
                                             "dpdk_init, else the system one",
                              "type": "string"},
            "dpdk_lcore_mask": {"description": "CPU mask of OVS-DPDK's non-PMD threads",
                                "type": "string", "pattern": "^(0x)?[0-9a-fA-F]+$"},
            "pmd_cpu_mask": {"description": "CPU mask of the PMD threads",
                             "type": "string", "pattern": "^(0x)?[0-9a-fA-F]+$"},
            "max_idle": {"description": "ms a datapath flow may stay idle (other_config:max-idle)",
                         "type": "integer", "minimum": 0},
            "n_rxq": {"description": "receive queues per DPDK port",
                      "type": "integer", "minimum": 1},
            "pmd_rxq_affinity": {"description": "per port: queue:core pairs (e.g. 0:3,1:7)",
                                 "type": "object",
                                 "additionalProperties": {"type": "string",
                                                          "pattern": r"^\d+:\d+(,\d+:\d+)*$"}},
            "vxlan": ovs_vxlan.SCHEMA,
            "dpdk_af_packet": {"description": "with dpdk_init: its kernel ports (veth in the "
                                              "lab) as DPDK af_packet ports its PMD threads "
                                              "poll, instead of kernel ports; they drop what "
                                              "a stopped OVS cannot take, as a NIC does",
                               "type": "boolean", "default": False},
            "mac_table_size": {"description": "the most MACs the bridge learns (its "
                                              "other_config:mac-table-size; OVS's default "
                                              "2048, and no fewer than 10)",
                               "type": "integer", "minimum": 1},
            "mac_aging_time": {"description": "seconds a learned MAC is kept unused (its "
                                              "other_config:mac-aging-time; default 300)",
                               "type": "integer", "minimum": 1},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.bridge = options["bridge"]
        self.links = links_via(self.bridge, node, context, spec.options_where)
        self._check_ports(spec.options_where)
        self.overlay = self._overlay(spec.options_where)
        self.log = ""
        self.daemons: ovs_daemons.OvsDaemons | None = None  # once instantiated
        self._hugepages = 0
        # its own DPDK file prefix: the runtime dir is named after the task
        self.file_prefix = f"nsb-{run.task_id}-{spec.name}"

    def _check_ports(self, where) -> None:
        """Ports OVS can only take with DPDK (vhost-user sockets, NICs by PCI address)
        need OVS-DPDK on the userspace datapath, with the NICs visible to DPDK."""
        vhost = [p for p in self._port_names() if self.node.interfaces[p].is_vhostuser]
        nics = [f"{i.name} ({i.pci})" for i in self.dpdk_nics()]
        needs = ([f"ports {', '.join(vhost)} are vhost-user"] if vhost else []) + (
            [f"ports {', '.join(nics)} are NICs by PCI address"] if nics else [])
        if self.options["dpdk_af_packet"]:
            needs.append("dpdk_af_packet makes its ports DPDK's")
        if needs and not self.options["dpdk_init"]:
            raise where.error(f"{' and '.join(needs)}: they need OVS-DPDK (dpdk_init: true)",
                              "dpdk_init")
        if needs and self.options["datapath"] != "netdev":
            raise where.error(f"{' and '.join(needs)}: OVS-DPDK ports need the userspace "
                              "datapath (datapath: netdev)", "datapath")
        if nics and "--no-pci" in (self.options.get("dpdk_extra") or "").split():
            raise where.error(f"--no-pci would hide the NICs of ports {', '.join(nics)} from "
                              "DPDK; leave it out (it is the default only without PCI NICs)",
                              "dpdk_extra")

    def _overlay(self, where) -> ovs_vxlan.Overlay | None:
        """The VXLAN overlay asked for: OVS's userspace tunnelling, so the netdev datapath."""
        if not self.options.get("vxlan"):
            return None
        if self.options["datapath"] != "netdev":
            raise where.error("OVS terminates VXLAN in userspace here: vxlan needs the "
                              "userspace datapath (datapath: netdev)", "datapath")
        return ovs_vxlan.overlay(self.options["vxlan"], self.links, self.context.nodes, where)

    def dpdk_nics(self) -> list:
        """The NICs by PCI address among the bridge's ports: OVS-DPDK's ``dpdk`` ports."""
        return [self.node.interfaces[p] for p in self._port_names()
                if self.node.interfaces[p].is_dpdk_port]

    # --- commands --------------------------------------------------------

    def vsctl(self, *args: str) -> str:
        return self.daemons.vsctl(*args)

    def ofctl(self, *args: str, input: str | None = None) -> str:  # noqa: A002
        return self.daemons.ofctl(self.bridge, *args, input=input)

    def appctl(self, *args: str) -> str:
        return self.daemons.appctl(*args)

    def required_binaries(self) -> list[str]:
        return [*ovs_daemons.BINARIES, self.vswitchd()]

    def vswitchd(self) -> str:
        if self.options.get("vswitchd_path"):
            return self.options["vswitchd_path"]
        return ovs_daemons.DPDK_VSWITCHD if self.options["dpdk_init"] else "ovs-vswitchd"

    def _link_ports(self) -> list[str]:
        """The switch ports of its links, link by link (a shared network's port once
        for each of its links)."""
        return [p for link in self.links for p in (link.switch_a.interface,
                                                     link.switch_b.interface)]

    def _port_names(self) -> list[str]:
        """Each switch port once."""
        return list(dict.fromkeys(self._link_ports()))

    def _vhost_socket(self, port: str) -> str:
        """The socket of the VNF interface this switch port is cabled to."""
        for link in self.links:
            for switch_end, far_end in ((link.switch_a, link.a), (link.switch_b, link.b)):
                if switch_end.interface == port:
                    return vhost_socket(self.run.task_id, far_end)
        raise KeyError(port)

    def socket_mem_mb(self) -> int:
        return sum(int(mb) for mb in (self.options.get("dpdk_socket_mem") or
                                      DEFAULT_SOCKET_MEM).split(","))

    def processes(self) -> list:
        return list(self.daemons.processes) if self.daemons else []

    def describe(self) -> dict:
        described = super().describe()
        described["ports"] = {f"{link.a} -> {link.b}": [link.switch_a.interface,
                                                          link.switch_b.interface]
                              for link in self.links}
        described["flows"] = self.flow_rules()
        if self.overlay:
            described["vxlan"] = {**ovs_vxlan.describe(self.overlay), "phy_bridge_flows":
                                  ovs_vxlan.flows(self.overlay)[self.overlay.phy_bridge]}
        described["switching_operations"] = len(self.links)
        described["kpi_ports"] = {f"port{k}": p for k, p in enumerate(self._kpi_ports())}
        described["vswitchd"] = self.vswitchd()
        # the one ovs-vsctl transaction, a line for the bridge and one per port
        lines = [" ".join(ovs_daemons.transaction(group)) for group in self.vsctl_commands()]
        described["ovs_vsctl"] = [f"ovs-vsctl {lines[0]}"] + [f"-- {line}" for line in lines[1:]]
        if self.dpdk_nics():
            described["dpdk_ports"] = {i.name: i.pci for i in self.dpdk_nics()}
        if self.options["dpdk_init"]:
            described["other_config"] = self._other_config()
            described["vhost_user_ports"] = {p: self._vhost_socket(p) for p in self._port_names()
                                             if self.node.interfaces[p].is_vhostuser}
            described["hugepages"] = f"{hugepages.pages_for(self.socket_mem_mb())} x 2 MB, " \
                                      "added while it runs"
        return described

    # --- flows -----------------------------------------------------------

    def flow_rules(self) -> list[str]:
        """The OpenFlow rules: per link both directions, or NORMAL; with VXLAN the
        tunnel's to and from the VM."""
        if self.overlay:
            return ovs_vxlan.flows(self.overlay)[""]
        if self.options["flows"] == "normal":
            return ["priority=0,actions=NORMAL"]
        rules = []
        ports = self._link_ports()
        shared = {p for p in ports if ports.count(p) > 1}  # frames leave it by their MAC
        for link in self.links:
            a_end = self.node.interfaces[link.switch_a.interface]
            b_end = self.node.interfaces[link.switch_b.interface]
            a = self.context.nodes[link.a.node].interfaces[link.a.interface]
            b = self.context.nodes[link.b.node].interfaces[link.b.interface]
            for into, out, towards in ((a_end, b_end, b), (b_end, a_end, a)):
                match = f"in_port={into.name}"
                if self.options["flows"] == "l2" or into.name in shared:
                    match += f",dl_dst={towards.mac}"
                elif self.options["flows"] == "l3" and towards.ip:
                    match += f",ip,nw_dst={towards.address}"
                rules.append(f"priority=100,{match},actions=output:{out.name}")
        return rules

    # --- lifecycle -------------------------------------------------------

    def instantiate(self) -> None:
        self.log = self.log_path("ovs")
        self.daemons = ovs_daemons.OvsDaemons(self.executor, self.work_dir, self.vswitchd(),
                                              self.log, self.name)
        if self.options["dpdk_init"]:
            self._hugepages = hugepages.reserve(
                self.executor, hugepages.pages_for(self.socket_mem_mb()), self.name,
                self.run.task_id)
        self.daemons.start(self._other_config())
        self.vsctl(*ovs_daemons.transaction([c for group in self.vsctl_commands()
                                             for c in group]))
        if self.overlay:  # br-phy's LOCAL port exists once the transaction is done
            for command in ovs_vxlan.address_commands(self.overlay):
                self.executor.run(command)
            for command in ovs_vxlan.appctl_commands(self.overlay):
                self.appctl(*command)

    def vsctl_commands(self) -> list[list[list[str]]]:
        """The commands of the one ovs-vsctl transaction that makes the bridge and its
        ports: the bridge's, then each port's with its type, options and affinity."""
        groups = [ovs_daemons.bridge_commands(self.bridge, self.options["datapath"])]
        learning = {key: self.options.get(option) for key, option in
                    (("mac-table-size", "mac_table_size"), ("mac-aging-time", "mac_aging_time"))}
        groups[0] += [["set", "Bridge", self.bridge, f"other_config:{key}={value}"]
                      for key, value in learning.items() if value is not None]
        if self.overlay:
            groups.append(ovs_vxlan.bridge_commands(self.overlay, self.options["datapath"]))
        for port in self._port_names():
            iface = self.node.interfaces[port]
            kind, options = "", {}
            if iface.is_vhostuser:
                kind, options = "dpdkvhostuserclient", {
                    "vhost-server-path": self._vhost_socket(port)}
            elif iface.is_dpdk_port:
                kind, options = "dpdk", {"dpdk-devargs": iface.pci}
            elif self.options["dpdk_af_packet"]:
                kind, options = "dpdk", {
                    "dpdk-devargs": f"net_af_packet{self._port_names().index(port)},iface={port}"}
            if self.options.get("n_rxq"):
                options["n_rxq"] = self.options["n_rxq"]
            group = ovs_daemons.port_commands(
                ovs_vxlan.bridge_of(self.overlay, port, self.bridge), port, kind, options)
            affinity = self.options.get("pmd_rxq_affinity", {}).get(port)
            if affinity:
                group.append(["set", "Interface", port,
                              f"other_config:pmd-rxq-affinity={affinity}"])
            groups.append(group)
        if self.overlay:
            groups.append(ovs_vxlan.port_commands(self.overlay, self.bridge))
        return groups

    def _other_config(self) -> dict[str, str]:
        dpdk = self.options["dpdk_init"]
        extra = ovs_daemons.dpdk_extra(self.file_prefix, [i.pci for i in self.dpdk_nics()],
                                       self.options.get("dpdk_extra"))
        memory = (self.options.get("dpdk_socket_mem") or DEFAULT_SOCKET_MEM) if dpdk else None
        # the limit keeps OVS's heap to the pages reserved for it: its shared mempool takes
        # the most mbufs that fit, and grown into free pages it left none for the vhost
        # devices connecting later ("failed to allocate memory for new device")
        pairs = {"dpdk-init": "true" if dpdk else None,
                 "dpdk-socket-mem": memory, "dpdk-socket-limit": memory,
                 "dpdk-extra": extra if dpdk else None,
                 "dpdk-lcore-mask": self.options.get("dpdk_lcore_mask"),
                 "pmd-cpu-mask": self.options.get("pmd_cpu_mask"),
                 "max-idle": self.options.get("max_idle")}
        return {k: str(v) for k, v in pairs.items() if v is not None}

    def wait_until_ready(self, timeout: float) -> None:
        """Ready when every port has an OpenFlow number and the flows are installed."""
        self.ofctl("del-flows")
        for rule in self.flow_rules():
            self.ofctl("add-flow", rule)
        if self.overlay:
            for rule in ovs_vxlan.flows(self.overlay)[self.overlay.phy_bridge]:
                self.daemons.ofctl(self.overlay.phy_bridge, "add-flow", rule)
        ports = self._port_names()
        self.daemons.wait_for_ports(self.bridge, ports, timeout)
        LOG.info("%s: bridge %s (%s) with %d ports, %d flows; Open_vSwitch other_config %s",
                 self.name, self.bridge, self.options["datapath"], len(ports),
                 len(self.flow_rules()), self.vsctl("get", "Open_vSwitch", ".",
                                                    "other_config").strip())

    def collect_kpi(self) -> dict[str, float]:
        """PMD statistics (summed over threads), the datapath flow count, the bridge's
        port counters (``port<k>_ipackets``... in the order of its ports), a churn's."""
        if not self.daemons:
            return {}
        bridges = [self.bridge] + ([self.overlay.phy_bridge] if self.overlay else [])
        return {**self.daemons.pmd_kpis(), **self.churn_kpis(),
                **self.daemons.port_kpis(bridges, self._kpi_ports())}

    OPENFLOW_READING_S = 0.2  # OVS-DPDK's OpenFlow statistics at most this often

    def counter_feed(self) -> CounterFeed | None:
        """Ports that are kernel interfaces (the userspace datapath's, OVS-DPDK's
        af_packet veths): their kernel counters, which OVS does no work to answer.
        Asked for OpenFlow statistics 20 times a second here, the userspace datapath
        (which forwards in the thread that answers) lost 0.2 % of its frames, and
        OVS-DPDK on a loaded machine lost some a second after a pause it had recovered
        from (every frame back after 0.6 to 1.9 s instead of 0.3 s). Other OVS-DPDK
        ports (vhost-user, NICs): OpenFlow's, at most every OPENFLOW_READING_S. An
        overlay's two bridges: after each trial only."""
        if self.overlay:
            return None
        ports = self._port_names()
        if not self.options.get("dpdk_init") or self.options["dpdk_af_packet"]:
            return link_counters.feed({port: port for port in ports})
        return CounterFeed("command", ["ovs-ofctl", "-O", "OpenFlow13", "--names",
                                       "dump-ports", f"unix:{self.work_dir}/{self.bridge}.mgmt"],
                           lambda text: self.port_counts(ovs_stats.port_kpis(
                               ovs_stats.port_counters(text), ports)),
                           min_interval_s=self.OPENFLOW_READING_S)

    def forwarding(self) -> dict[str, str]:
        """None of its own: frames of a link cross the bridge between its two ports of
        that link (the path's walk knows the links)."""
        return {}

    def port_counts(self, kpis: dict[str, float]) -> dict[str, PortCount]:
        """Each bridge port's OpenFlow counters: received, sent, and dropped either way
        (a vhost-user port's tx drops: the guest did not drain its ring)."""
        return {port: port_counts.from_kpis(kpis, f"port{index}_", ovs_stats.COUNTER_KINDS)
                for index, port in enumerate(self._kpi_ports())
                if f"port{index}_ipackets" in kpis}

    def _kpi_ports(self) -> list[str]:
        return self._port_names() + ([ovs_vxlan.PORT] if self.overlay else [])

    def result_kpis(self, frame_size: int, throughput_pps: float) -> dict:
        """Intel's switching performance: throughput x switching operations in the path."""
        ops = len(self.links)
        sizes = ovs_vxlan.frame_sizes(frame_size) if self.overlay else {}
        return {"switching_operations": ops, "switched_throughput_pps": throughput_pps * ops,
                **sizes}

    def event_interfaces(self) -> list[str]:
        return self._port_names()

    def learns_addresses(self) -> str:
        return "" if self.options["flows"] == "normal" else (
            f"its flows are '{self.options['flows']}' rules; with flows: normal it learns")

    def address_ageing_s(self) -> float | None:
        return float(self.options.get("mac_aging_time") or 300)  # OVS's default

    def flush_addresses(self) -> None:
        """Its table emptied and its datapath's cached flows purged: a flow cached from
        the last trial forwards without the slow path, which is where OVS learns (seen
        here: after fdb/flush alone the next trial's addresses were never learned)."""
        self.appctl("fdb/flush", self.bridge)
        self.appctl("revalidator/purge")

    def address_table(self) -> tuple[list[str], int | None]:
        return (ovs_fdb.macs(self.appctl("fdb/show", self.bridge)),
                ovs_fdb.maximum(self.appctl("fdb/stats-show", self.bridge)))

    def terminate(self) -> None:
        if self.daemons is None:  # never instantiated
            return
        self.daemons.stop(self.bridge, *([self.overlay.phy_bridge] if self.overlay else []))
        if self.options["dpdk_init"]:
            dpdk_telemetry.remove_runtime_dir(self.executor, self.file_prefix)
        hugepages.release(self.executor, self._hugepages, self.run.task_id)
        self._hugepages = 0
        self.remove_work_dir()

