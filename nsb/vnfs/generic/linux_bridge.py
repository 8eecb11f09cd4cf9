"""A Linux bridge as the system under test: the kernel's learning switch between the
ports of the links via its bridge (``{ends: [a:if, b:if], via: br0}``).

The bridge is made at setup with STP off (ports forward at once) and its ageing
time, and deleted at teardown, which gives its ports back; on a pod's server the
deletion is first written in the node's ledger, so the next run does it should this
one be killed. Its KPIs are its ports' kernel counters since setup; its table
(``bridge fdb``, the learned entries only) is the witness of RFC 2889's trials.
"""

from __future__ import annotations

import json
import logging

from nsb.dut_feed import CounterFeed
from nsb.errors import RunError
from nsb.executors.local import LocalExecutor
from nsb.nodes import link_counters, node_ledger, node_leftovers
from nsb.vnfs.base import Vnf
from nsb.vnfs.bridge_links import BRIDGE_OPTION, links_via

LOG = logging.getLogger(__name__)


class LinuxBridgeVnf(Vnf):
    """The Linux kernel bridge, learning source MACs and flooding unknown ones."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "bridge": BRIDGE_OPTION,
            "egress_rate_mbit": {"description": "a token bucket (tc tbf) on every port's "
                                                "egress: a DUT of known capacity (Mbit/s of "
                                                "frames without their FCS) and queue",
                                 "type": "number", "exclusiveMinimum": 0},
            "egress_queue_ms": {"description": "the token bucket's queue, in ms at its rate "
                                               "(tbf's latency)",
                                "type": "number", "exclusiveMinimum": 0, "default": 50},
            "ageing_time_s": {"description": "seconds a learned MAC is kept unused",
                              "type": "number", "minimum": 10, "maximum": 1000000,
                              "default": 300},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.bridge = options["bridge"]
        links = links_via(self.bridge, node, context, spec.options_where)
        self.ports = list(dict.fromkeys(p.interface for link in links
                                        for p in (link.switch_a, link.switch_b)))
        self._made = False
        self._undo: node_ledger.Record | None = None
        self._base: dict = {}

    def required_binaries(self) -> list[str]:
        return ["ip", "bridge", "tc"] if self.options.get("egress_rate_mbit") else ["ip", "bridge"]

    def describe(self) -> dict:
        return {**super().describe(), "bridge": self.bridge, "ports": self.ports}

    def instantiate(self) -> None:
        if not isinstance(self.executor, LocalExecutor):  # a lab node ends with its netns
            self._undo = node_leftovers.undo_record(
                self.run.task_id, self.name, f"ip link del {self.bridge} 2>/dev/null || true")
            node_ledger.write(self.executor, self._undo)
        ageing = round(self.options["ageing_time_s"] * 100)  # centiseconds
        done = self.executor.run(["ip", "link", "add", "name", self.bridge, "type", "bridge",
                                  "stp_state", "0", "ageing_time", str(ageing)], check=False)
        if done.returncode != 0:
            raise RunError(f"{self.name}: cannot make bridge {self.bridge} on "
                           f"{self.node.name}: {done.stderr.strip()}")
        self._made = True
        for port in self.ports:
            self.executor.run(["ip", "link", "set", port, "master", self.bridge, "up"])
        self.executor.run(["ip", "link", "set", self.bridge, "up"])
        for port in self.ports if self.options.get("egress_rate_mbit") else ():
            self.executor.run(["tc", "qdisc", "replace", "dev", port, "root",
                               *shaper(self.options["egress_rate_mbit"],
                                       self.options["egress_queue_ms"])])
        self._base = link_counters.read(self.executor)
        LOG.info("%s: Linux bridge %s on %s with %s", self.name, self.bridge,
                 self.node.name, ", ".join(self.ports))

    def wait_until_ready(self, timeout: float) -> None:
        """Ready once made: with STP off its ports forward at once."""

    def collect_kpi(self) -> dict[str, float]:
        """Per port the kernel's counters since setup."""
        if not self._made:
            return {}
        now = link_counters.read(self.executor)
        return {f"{port}.{key}": float(link_counters.delta(self._base, now, port, key))
                for port in self.ports
                for key in ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped")}

    def forwarding(self) -> dict[str, str]:
        return {}

    def counter_feed(self) -> CounterFeed | None:
        """The kernel's counters of its bridge's ports, one ``ip -s -j link`` a reading."""
        return link_counters.feed({port: port for port in self.ports}) if self._made else None

    def event_interfaces(self) -> list[str]:
        return list(self.ports)

    def learns_addresses(self) -> str:
        return ""

    def address_ageing_s(self) -> float | None:
        return float(self.options["ageing_time_s"])

    def flush_addresses(self) -> None:
        self.executor.run(["ip", "link", "set", self.bridge, "type", "bridge", "fdb_flush"])

    def address_table(self) -> tuple[list[str], int | None]:
        """The MACs it learned (not its ports' own, permanent ones); no maximum shown."""
        shown = self.executor.run(["bridge", "-j", "fdb", "show", "br", self.bridge]).stdout
        return learned(json.loads(shown or "[]")), None

    def terminate(self) -> None:
        if self._made:
            for port in self.ports if self.options.get("egress_rate_mbit") else ():
                self.executor.run(["tc", "qdisc", "del", "dev", port, "root"], check=False)
            self.executor.run(["ip", "link", "del", self.bridge], check=False)
            self._made = False
        if self._undo is not None:
            node_ledger.remove(self.executor, self._undo)
            self._undo = None


def learned(entries: list[dict]) -> list[str]:
    """The learned MACs of ``bridge -j fdb show`` entries: the bridge's, not permanent,
    not the devices' own (``self``)."""
    return [e["mac"].lower() for e in entries
            if e.get("master") and e.get("state") != "permanent"
            and "self" not in e.get("flags", [])]


def shaper(rate_mbit: float, queue_ms: float) -> list[str]:
    """tc's tbf arguments: ``rate_mbit``, a bucket of at least 10 ms of it (a timer
    tick's worth), a queue of ``queue_ms`` at the rate."""
    burst = max(15000, round(rate_mbit * 1e6 / 8 / 100))
    return ["tbf", "rate", f"{rate_mbit:g}mbit", "burst", str(burst), "latency",
            f"{queue_ms:g}ms"]
