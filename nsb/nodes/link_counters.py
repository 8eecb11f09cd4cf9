"""Interface packet counters of a node, read with one ``ip -s -j link`` call."""

from __future__ import annotations

import json

from nsb.errors import RunError
from nsb.executors.base import Executor
from nsb.port_counts import PortCount


def read(executor: Executor) -> dict[str, dict[str, int]]:
    """``{ifname: {"rx_packets", "tx_packets", "rx_dropped", "tx_dropped"}}``."""
    result = executor.run(["ip", "-s", "-j", "link", "show"], timeout=10)
    try:
        links = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise RunError(f"{executor.name}: cannot parse 'ip -s -j link' output") from None
    counters = {}
    for link in links:
        stats = link.get("stats64") or link.get("stats") or {}
        rx, tx = stats.get("rx", {}), stats.get("tx", {})
        counters[link["ifname"]] = {
            "rx_packets": rx.get("packets", 0), "tx_packets": tx.get("packets", 0),
            "rx_dropped": rx.get("dropped", 0), "tx_dropped": tx.get("dropped", 0),
        }
    return counters


def port_counts(executor: Executor, names: list[str]) -> dict[str, PortCount]:
    """The kernel's counters of interfaces ``names`` as port counts (received, sent,
    dropped either way); interfaces the node does not have are left out."""
    counters = read(executor)
    return {name: PortCount(c["rx_packets"], c["tx_packets"],
                            {"rx_dropped": c["rx_dropped"], "tx_dropped": c["tx_dropped"]})
            for name in names if (c := counters.get(name)) is not None}


def delta(before: dict, after: dict, ifname: str, key: str) -> int:
    return after.get(ifname, {}).get(key, 0) - before.get(ifname, {}).get(key, 0)
