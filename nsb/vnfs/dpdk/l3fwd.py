"""DPDK's l3fwd sample application as the system under test: an IPv4/IPv6 router
between its ports (LPM or exact-match lookup), the DUT of the Intel ONP report's
PHY-PHY test and of the China Telecom DPDK white paper.

Its ports are testpmd's (``nsb.vnfs.dpdk.eal``); nsb adds the ``--config`` map of
each port's receive queues to lcores, ``--eth-dest`` per port from the MAC of what
the port is cabled to, and route files when l3fwd's own table does not route the
addresses the generator sends to (``nsb.vnfs.dpdk.l3fwd_routes``).
"""

from __future__ import annotations

import logging

from nsb.nodes import platform
from nsb.task.values import cpu_list
from nsb.vnfs.dpdk import l3fwd_routes
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.dpdk.app import EAL_OPTIONS, LCORES, DpdkApp

LOG = logging.getLogger(__name__)


def config_map(queues: list[int], lcores: list[int]) -> list[tuple[int, int, int]]:
    """(port, queue, lcore) for every receive queue of every port (``queues[port]`` of
    them), dealt to the lcores in turn, as the Intel report's
    ``(0,0,2)(1,0,3)(2,0,2)(3,0,3)``."""
    pairs = [(port, queue) for port, count in enumerate(queues) for queue in range(count)]
    return [(port, queue, lcores[i % len(lcores)]) for i, (port, queue) in enumerate(pairs)]


def config_text(entries: list[tuple[int, int, int]]) -> str:
    return ",".join(f"({p},{q},{c})" for p, q, c in entries)


def port_mask(ports: int) -> str:
    return hex((1 << ports) - 1)


def lcore_list(text: str) -> list[int]:
    """The CPUs of an EAL lcore list in the order written ("1,0": CPU 1 first, so it
    gets the first queue of each port)."""
    return cpu_list(text)


def forwarding_lcores(options: dict) -> str:
    """The lcores that forward: ``lcores``, else ``cores`` of them from CPU 1 (CPU 0
    left to the node)."""
    cores = options["cores"]
    return options.get("lcores") or ("1" if cores == 1 else f"1-{cores}")


class L3fwdVnf(DpdkApp):
    """DPDK l3fwd routing between its ports (LPM or exact match)."""

    KIND = "l3fwd"
    PROGRAM = "l3fwd"
    PATH_OPTION = "l3fwd_path"
    INSTALL_HINT = (" to your build of DPDK's examples/l3fwd, or /opt/nsb_bin/dpdk-l3fwd: "
                    "the install_dpdk_apps role installs it (nsb ansible install)")
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "l3fwd_path": {"description": "the l3fwd binary (a name on PATH or a path)",
                           "type": "string", "default": "dpdk-l3fwd"},
            "cores": {"description": "forwarding lcores",
                      "type": "integer", "minimum": 1, "maximum": 64, "default": 1},
            "lcores": LCORES,
            "queues": {"description": "receive queues per port (--config)",
                       "type": "integer", "minimum": 1, "maximum": 64, "default": 1},
            "lookup": {"description": "route lookup: lpm (longest prefix match) or em (exact "
                                      "match)",
                       "enum": ["lpm", "em"], "default": "lpm"},
            "promiscuous": {"description": "ports in promiscuous mode (-P)",
                            "type": "boolean", "default": True},
            "parse_ptype": {"description": "parse packet types in software (--parse-ptype)",
                            "type": "boolean", "default": True},
            "routes": {"description": "route files: auto (the topology's subnets where l3fwd's own"
                                      " table does not fit), topology, or default (l3fwd's own)",
                       "enum": ["auto", "topology", "default"], "default": "auto"},
            "rule_ipv4": {"description": "your IPv4 route file (with rule_ipv6)",
                          "type": "string", "minLength": 1},
            "rule_ipv6": {"description": "your IPv6 route file (with rule_ipv4)",
                          "type": "string", "minLength": 1},
            "rxd": {"description": "receive descriptors per queue",
                    "type": "integer", "minimum": 32, "maximum": 16384, "default": 1024},
            "txd": {"description": "transmit descriptors per queue",
                    "type": "integer", "minimum": 32, "maximum": 16384, "default": 1024},
            "memory_mb": {"description": "hugepage memory for the EAL, in MB (default 512; 1024 "
                                         "with em)",
                          "type": "integer", "minimum": 64},
            "xstats": {"description": "DPDK extended port statistics (by name) added to its KPIs",
                       "type": "array", "items": {"type": "string"}, "default": []},
            "nfvi_enable": {"description": "NSB's; nsb samples NFVi KPIs anyway",
                            "type": "boolean"},
            **EAL_OPTIONS,
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        where = spec.options_where
        if ("rule_ipv4" in options) != ("rule_ipv6" in options):
            raise where.error("give both rule_ipv4 and rule_ipv6 (l3fwd ignores one alone "
                              "and uses its own table)", "rule_ipv4")
        if options.get("lcores") and not platform.cpu_set(options["lcores"]):
            raise where.error(f"'{options['lcores']}' names no CPU (write e.g. 1 or 0-1)",
                              "lcores")
        self.route_files = self._route_files(where)
        memif = [i.name for i in self.interfaces if i.is_memif]
        if memif and len(self.lcore_list()) > 1:
            raise where.error(
                f"l3fwd over memif ({', '.join(memif)}) forwards on one lcore: it sends from "
                f"each lcore on a queue of its own, and a memif port has only the queues its "
                f"peer opens (TRex: one; a queue it lacks is the first ring again): give one "
                f"lcore, or veth or NIC ports for {len(self.lcore_list())} lcores",
                "lcores" if options.get("lcores") else "cores")

    def _route_files(self, where) -> tuple[str, str] | None:
        """The (IPv4, IPv6) route files nsb writes, or None (the user's or l3fwd's own)."""
        o = self.options
        if "rule_ipv4" in o or o["routes"] == "default":
            return None
        if o["lookup"] == "em":
            if o["routes"] == "topology":
                raise where.error("exact match looks up whole 5-tuples, not subnets: with "
                                  "lookup em give rule_ipv4 and rule_ipv6", "routes")
            if not l3fwd_routes.defaults_fit(self.interfaces):
                LOG.warning("%s: lookup em uses l3fwd's own table (198.18.x flows): frames "
                            "it does not hold go back out of the port they came in on; give "
                            "rule_ipv4/rule_ipv6 for this topology's flows", self.name)
            return None
        if o["routes"] == "auto" and l3fwd_routes.defaults_fit(self.interfaces):
            return None
        problem = l3fwd_routes.clash(self.interfaces)
        if problem:
            raise where.error(f"cannot route by subnet: {problem}; give the ports different "
                              "subnets, or rule_ipv4 and rule_ipv6", "routes")
        return l3fwd_routes.rule_files(self.interfaces)

    @property
    def rule_paths(self) -> tuple[str, str] | None:
        if "rule_ipv4" in self.options:
            return self.options["rule_ipv4"], self.options["rule_ipv6"]
        if self.route_files is None:
            return None
        return f"{self.work_dir}/rule_ipv4.cfg", f"{self.work_dir}/rule_ipv6.cfg"

    def lcores(self) -> str:
        return forwarding_lcores(self.options)

    def lcore_list(self) -> list[int]:
        return lcore_list(self.lcores())

    def vdev_queues(self) -> int:
        """A vdev port needs a transmit queue per lcore (l3fwd gives each lcore its own),
        and every receive queue it has must be read: as many as the larger."""
        return max(self.options["queues"], len(self.lcore_list()))

    def memory_option(self) -> int:
        # exact match allocates a hash of 4M entries
        return self.options.get("memory_mb") or (1024 if self.options["lookup"] == "em"
                                                 else 512)

    def rx_queues(self) -> list[int]:
        return [self.options["queues"] if i.is_dpdk_port else self.vdev_queues()
                for i in self.interfaces]

    def app_args(self) -> list[str]:
        o = self.options
        argv = ["-p", port_mask(len(self.interfaces))]
        argv += ["-P"] if o["promiscuous"] else []
        argv += [f"--lookup={o['lookup']}"]
        argv += ["--parse-ptype"] if o["parse_ptype"] else []
        argv += [f"--config={config_text(config_map(self.rx_queues(), self.lcore_list()))}",
                 f"--rx-queue-size={o['rxd']}", f"--tx-queue-size={o['txd']}"]
        argv += [f"--eth-dest={port},{iface.peer_mac}"
                 for port, iface in enumerate(self.interfaces) if iface.peer_mac]
        if self.rule_paths:
            argv += [f"--rule_ipv4={self.rule_paths[0]}", f"--rule_ipv6={self.rule_paths[1]}"]
        return argv

    def describe(self) -> dict:
        info = super().describe()
        if self.route_files:
            info["rule_ipv4"], info["rule_ipv6"] = self.route_files
        return info

    def prepare(self) -> None:
        if self.route_files:
            for path, text in zip(self.rule_paths, self.route_files, strict=True):
                self.executor.write_file(path, text)

    def cleanup(self) -> None:
        if self.route_files:
            self.remove_work_dir()

    def collect_kpi(self) -> dict[str, float]:
        """Per port counters (and the ``xstats`` asked for), and NSB's VNF KPIs:
        packets_in and packets_fwd over all ports, packets_dropped the frames received
        and not sent plus those the ports missed."""
        ports = list(range(len(self.interfaces)))
        commands = [f"/ethdev/stats,{p}" for p in ports]
        if self.options["xstats"]:
            commands += [f"/ethdev/xstats,{p}" for p in ports]
        reply = dpdk_telemetry.query(self.executor, self.file_prefix, commands)
        kpis = dpdk_telemetry.port_stats_kpis(reply, ports)
        kpis.update(dpdk_telemetry.port_xstats_kpis(reply, ports, self.options["xstats"]))
        kpis.update(dpdk_telemetry.vnf_kpis(kpis, ports))
        return kpis
