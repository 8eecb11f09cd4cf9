"""DPDK's l2fwd sample application as the system under test: frames received on a
port go out of its pair (0 <-> 1, 2 <-> 3, ...), with or without its MAC rewriting.

Its ports are testpmd's (``nsb.vnfs.dpdk.eal``); each lcore receives on
``ports_per_core`` ports (l2fwd's ``-q``), one queue each.
"""

from __future__ import annotations

import math

from nsb.nodes import platform
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.dpdk.app import EAL_OPTIONS, LCORES, DpdkApp
from nsb.vnfs.dpdk.l3fwd import forwarding_lcores, port_mask


class L2fwdVnf(DpdkApp):
    """DPDK l2fwd forwarding between port pairs."""

    KIND = "l2fwd"
    PROGRAM = "l2fwd"
    PATH_OPTION = "l2fwd_path"
    INSTALL_HINT = (" to your build of DPDK's examples/l2fwd, or /opt/nsb_bin/dpdk-l2fwd: "
                    "the install_dpdk_apps role installs it (nsb ansible install)")
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "l2fwd_path": {"description": "the l2fwd binary (a name on PATH or a path)",
                           "type": "string", "default": "dpdk-l2fwd"},
            "cores": {"description": "forwarding lcores",
                      "type": "integer", "minimum": 1, "maximum": 64, "default": 1},
            "lcores": LCORES,
            "ports_per_core": {"description": "ports each lcore serves (-q; default: ports / "
                                              "lcores)",
                               "type": "integer", "minimum": 1, "maximum": 16},
            "mac_updating": {"description": "rewrite MAC addresses as l2fwd's --mac-updating does",
                             "type": "boolean", "default": False},
            "promiscuous": {"description": "ports in promiscuous mode",
                            "type": "boolean", "default": True},
            "memory_mb": {"description": "hugepage memory for the EAL, in MB",
                          "type": "integer", "minimum": 64, "default": 256},
            "nfvi_enable": {"description": "NSB's; nsb samples NFVi KPIs anyway",
                            "type": "boolean"},
            **EAL_OPTIONS,
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        if len(self.interfaces) % 2:
            raise spec.options_where.error(
                f"l2fwd forwards between port pairs; {len(self.interfaces)} ports "
                f"({', '.join(i.name for i in self.interfaces)}) leave one without a pair",
                "interfaces")
        if options.get("lcores") and not platform.cpu_set(options["lcores"]):
            raise spec.options_where.error(
                f"'{options['lcores']}' names no CPU (write e.g. 1 or 0-1)", "lcores")

    def lcores(self) -> str:
        return forwarding_lcores(self.options)

    def ports_per_core(self) -> int:
        cores = len(platform.cpu_set(self.lcores()))
        return self.options.get("ports_per_core") or math.ceil(len(self.interfaces) / cores)

    def app_args(self) -> list[str]:
        o = self.options
        argv = ["-p", port_mask(len(self.interfaces))]
        argv += ["-P"] if o["promiscuous"] else []
        # -T 0: no statistics on its terminal; nsb reads its telemetry
        argv += ["-q", str(self.ports_per_core()), "-T", "0"]
        return argv + ([] if o["mac_updating"] else ["--no-mac-updating"])

    def collect_kpi(self) -> dict[str, float]:
        ports = list(range(len(self.interfaces)))
        reply = dpdk_telemetry.query(self.executor, self.file_prefix,
                                     [f"/ethdev/stats,{p}" for p in ports])
        kpis = dpdk_telemetry.port_stats_kpis(reply, ports)
        kpis.update(dpdk_telemetry.vnf_kpis(kpis, ports))
        return kpis
