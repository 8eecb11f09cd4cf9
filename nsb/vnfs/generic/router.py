"""NSB's ``RouterVNF``: the node's own Linux kernel forwards IP between its ports.

Nothing is started: the router is configured over the node's executor (a netns
lab node, or a pod's server over SSH) and given back as it was at teardown; on a
pod's server the way back is first written in the node's ledger, so that the next
run gives it back when this one is killed.
Its KPIs are the kernel's interface counters of its ports since it was set up.
"""

from __future__ import annotations

import logging
import time

from nsb.dut_feed import CounterFeed
from nsb.errors import RunError
from nsb.executors.local import LocalExecutor
from nsb.nodes import link_counters, node_ledger, node_leftovers
from nsb.port_counts import PortCount
from nsb.vnfs.base import Vnf
from nsb.vnfs.generic import router_addresses
from nsb.vnfs.generic.router_state import LinuxRouter, kernel_names

LOG = logging.getLogger(__name__)

_ADDRESSES = {"type": "array", "items": {"type": "string", "minLength": 1}}


class RouterVnf(Vnf):
    """Linux IP forwarding between the node's ports (NSB's RouterVNF)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "interfaces": {"description": "the ports, in order (default: the node's linked "
                                          "interfaces)",
                           "type": "array", "items": {"type": "string"}, "minItems": 1},
            "generator_addresses": {"description": "generator addresses behind a port, besides its"
                                                   " peer's own address: addresses, ranges "
                                                   "'first-last' or networks 'address/prefix'",
                                    "type": "object", "additionalProperties": _ADDRESSES},
            "flow": {"description": "NSB's scenario flow (src_ip_<k>, dst_ip_<k>), which an NSB "
                                    "task gives its RouterVNF: pair k's sources behind port 2k, "
                                    "destinations behind 2k+1",
                     "type": "object", "additionalProperties": False,
                     "patternProperties": {"^(src|dst)_ip_[0-9]+$": {"type": "string"}}},
            "nfvi_enable": {"description": "NSB's; nsb samples NFVi KPIs anyway",
                            "type": "boolean"},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        where = spec.options_where
        names = options.get("interfaces") or [i.name for i in node.interfaces.values()
                                              if i.peer]
        for index, name in enumerate(names):
            if name not in node.interfaces:
                raise where.error(f"node {node.name} has no interface '{name}'; it has: "
                                  f"{', '.join(node.interfaces)}", "interfaces", index)
        if not names:
            raise where.error(f"node {node.name} has no linked interface to route between "
                              "(link its ports, or name them in 'interfaces')")
        self.interfaces = [node.interfaces[n] for n in names]
        wanted = router_addresses.flow_addresses(options.get("flow") or {}, names)
        for port, addresses in (options.get("generator_addresses") or {}).items():
            if port not in names:
                raise where.error(f"'{port}' is not one of the router's ports ({', '.join(names)})",
                                  "generator_addresses", port)
            wanted.setdefault(port, []).extend(addresses)
        self.plans = []
        for iface in self.interfaces:
            try:
                self.plans.append(router_addresses.port_plan(iface, wanted.get(iface.name, [])))
            except ValueError as exc:
                raise where.error(f"port {iface.name}: {exc}{_source(options, iface.name)}",
                                  *_key(options, iface.name)) from None
        self.router: LinuxRouter | None = None
        self._undo: node_ledger.Record | None = None  # in the node's ledger while applied
        self._base: dict = {}

    def required_binaries(self) -> list[str]:
        return ["ip", "sysctl"]

    def describe(self) -> dict:
        info = super().describe()
        info["ports"] = {plan.port: plan.described() for plan in self.plans}
        return info

    def instantiate(self) -> None:
        devices = kernel_names(self.executor, self.interfaces)
        self.router = LinuxRouter(self.executor, self.plans, devices)
        self.router.save()
        if not isinstance(self.executor, LocalExecutor):  # a lab node ends with its netns
            self._undo = node_leftovers.undo_record(self.run.task_id, self.name,
                                                    self.router.restore_script())
            node_ledger.write(self.executor, self._undo)
        self.router.apply()
        self._base = link_counters.read(self.executor)
        LOG.info("%s: Linux forwarding on %s between %s", self.name, self.node.name,
                 ", ".join(devices.values()))

    def wait_until_ready(self, timeout: float) -> None:
        """Ready once every port has its link up (a NIC may take seconds to train)."""
        deadline = time.monotonic() + timeout
        while True:
            down = self._ports_down()
            if not down:
                return
            if time.monotonic() >= deadline:
                raise RunError(f"{self.name}: on {self.node.name}, {', '.join(down)} still "
                               f"without link after {timeout:g} s (vnf_start_timeout in "
                               "nsb.conf): is the cable (or the peer) up?")
            time.sleep(0.2)

    def _ports_down(self) -> list[str]:
        down = []
        for device in self.router.devices.values():
            state = self.executor.run(["cat", f"/sys/class/net/{device}/operstate"],
                                      check=False).stdout.strip()
            if state not in ("up", "unknown"):
                down.append(f"{device} ({state or 'gone'})")
        return down

    def collect_kpi(self) -> dict[str, float]:
        """NSB's packets_in / packets_fwd / packets_dropped over the router's ports
        since it was set up (received, sent, and the difference), and per port the
        kernel's counters."""
        if self.router is None:
            return {}
        now = link_counters.read(self.executor)
        kpis: dict[str, float] = {}
        for port, device in self.router.devices.items():
            for key in ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped"):
                kpis[f"{port}.{key}"] = float(link_counters.delta(self._base, now, device, key))
        received = sum(kpis[f"{p}.rx_packets"] for p in self.router.devices)
        sent = sum(kpis[f"{p}.tx_packets"] for p in self.router.devices)
        kpis.update(packets_in=received, packets_fwd=sent,
                    packets_dropped=max(0.0, received - sent))
        return kpis

    def counter_feed(self) -> CounterFeed | None:
        """The kernel's counters of its ports, one ``ip -s -j link`` a reading."""
        return link_counters.feed(dict(self.router.devices)) if self.router else None

    def port_counts(self, kpis: dict[str, float]) -> dict[str, PortCount]:
        """The kernel's counters of its ports that are NICs (a PCI address: a pod's port
        on its kernel driver), as read after the trial: the reading at setup plus
        ``kpis``' counts since. The context counts the veths and taps itself."""
        if self.router is None:
            return {}
        counts = {}
        for iface in self.interfaces:
            device = self.router.devices.get(iface.name)
            if not iface.pci or device is None or f"{iface.name}.rx_packets" not in kpis:
                continue
            base = self._base.get(device, {})
            now = {key: int(base.get(key, 0) + kpis.get(f"{iface.name}.{key}", 0))
                   for key in ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped")}
            counts[iface.name] = PortCount(now["rx_packets"], now["tx_packets"],
                                           {"rx_dropped": now["rx_dropped"],
                                            "tx_dropped": now["tx_dropped"]})
        return counts

    def terminate(self) -> None:
        if self.router is not None:
            self.router.restore()
            self.router = None
        if self._undo is not None:
            node_ledger.remove(self.executor, self._undo)
            self._undo = None


def _key(options: dict, port: str) -> tuple:
    """Where a port's addresses are in the options, for errors."""
    return ("generator_addresses", port) if port in (options.get("generator_addresses") or {}) \
        else ()


def _source(options: dict, port: str) -> str:
    return " (with the addresses of the scenario's flow option)" if options.get("flow") and \
        port not in (options.get("generator_addresses") or {}) else ""
