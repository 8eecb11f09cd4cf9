"""DPDK testpmd as the system under test: a NIC bound to a DPDK driver by its PCI
address (``-a``, hugepages), an af_packet vdev per kernel interface, a
virtio_user vdev serving the vhost-user socket of a vhost-user interface (the
"container" path into OVS-DPDK, with hugepages it adds while it runs), a memif vdev
per memif interface (the lab's path on which a DPDK generator is not the limit)."""

from __future__ import annotations

import logging

from nsb.vnfs.dpdk.app import EAL_OPTIONS, LCORES, DpdkApp
from nsb.vnfs.dpdk.eal import port_order

LOG = logging.getLogger(__name__)

__all__ = ["TestpmdVnf", "port_order"]


class TestpmdVnf(DpdkApp):
    """DPDK testpmd forwarding between its ports (io, mac or macswap)."""

    KIND = "testpmd"
    MAIN_LCORE = True  # its lcores list the main lcore, which does not forward
    PROGRAM = "dpdk-testpmd"
    PATH_OPTION = "testpmd_path"
    INSTALL_HINT = "; on Debian: apt-get install dpdk-dev"
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "testpmd_path": {"description": "the testpmd binary (a name on PATH or a path)",
                             "type": "string", "default": "dpdk-testpmd"},
            "forward_mode": {"description": "testpmd's --forward-mode; mac rewrites the "
                                            "destination to the peer's MAC; noisy forwards as "
                                            "io after the per-frame memory work of "
                                            "noisy_lookups (a VNF's own work)",
                             "enum": ["io", "mac", "macswap", "5tswap", "csum", "noisy"],
                             "default": "io"},
            "noisy_lookups": {
                "description": "noisy forwarding's work per frame (testpmd's --noisy-lkup-*): "
                               "random reads and writes in memory_mb of its own memory",
                "type": "object", "additionalProperties": False,
                "properties": {"memory_mb": {"type": "integer", "minimum": 1, "default": 64},
                               "reads": {"type": "integer", "minimum": 0, "default": 0},
                               "writes": {"type": "integer", "minimum": 0, "default": 0},
                               "reads_writes": {"type": "integer", "minimum": 0,
                                                "default": 0}}},
            "cores": {"description": "forwarding cores (--nb-cores)",
                      "type": "integer", "minimum": 1, "maximum": 64, "default": 1},
            "lcores": LCORES,
            "burst": {"description": "packets per burst (--burst)",
                      "type": "integer", "minimum": 1, "maximum": 512, "default": 32},
            "rxd": {"description": "receive descriptors per queue (--rxd)",
                    "type": "integer", "minimum": 32, "maximum": 16384, "default": 1024},
            "txd": {"description": "transmit descriptors per queue (--txd)",
                    "type": "integer", "minimum": 32, "maximum": 16384, "default": 1024},
            "memory_mb": {"description": "hugepage memory for the EAL, in MB",
                          "type": "integer", "minimum": 64, "default": 256},
            "mbufs": {"description": "packet buffers in its pool (--total-num-mbufs)",
                      "type": "integer", "minimum": 1024, "default": 8192},
            **EAL_OPTIONS,
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        if len(self.interfaces) < 2 and options["forward_mode"] == "io":
            LOG.warning("%s: io forwarding with one port sends frames back out of it", self.name)

    def lcores(self) -> str:
        return self.options.get("lcores") or f"0-{self.options['cores']}"

    def app_args(self) -> list[str]:
        o = self.options
        argv = [f"--forward-mode={o['forward_mode']}", "--auto-start",
                f"--nb-cores={o['cores']}", f"--burst={o['burst']}", f"--rxd={o['rxd']}",
                f"--txd={o['txd']}", f"--total-num-mbufs={o['mbufs']}",
                "--stats-period=3600"]
        if o["forward_mode"] == "noisy":
            work = {"memory_mb": 64, "reads": 0, "writes": 0, "reads_writes": 0,
                    **(o.get("noisy_lookups") or {})}
            argv += [f"--noisy-lkup-memory={work['memory_mb']}",
                     f"--noisy-lkup-num-reads={work['reads']}",
                     f"--noisy-lkup-num-writes={work['writes']}",
                     f"--noisy-lkup-num-reads-writes={work['reads_writes']}"]
        if o["forward_mode"] == "mac":
            for port, iface in enumerate(self.interfaces):
                if iface.peer_mac:
                    argv.append(f"--eth-peer={port},{iface.peer_mac}")
        return argv
