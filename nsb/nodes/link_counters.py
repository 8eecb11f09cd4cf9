"""Interface packet counters of a node, read with one ``ip -s -j link`` call."""

from __future__ import annotations

import json

from nsb.dut_feed import CounterFeed
from nsb.errors import RunError
from nsb.executors.base import Executor
from nsb.port_counts import PortCount

COMMAND = ["ip", "-s", "-j", "link", "show"]


def read(executor: Executor) -> dict[str, dict[str, int]]:
    """``{ifname: {"rx_packets", "tx_packets", "rx_dropped", "tx_dropped"}}``."""
    result = executor.run(COMMAND, timeout=10)
    try:
        return parse(result.stdout)
    except json.JSONDecodeError:
        raise RunError(f"{executor.name}: cannot parse 'ip -s -j link' output") from None


def parse(text: str) -> dict[str, dict[str, int]]:
    """``ip -s -j link show``'s output as read() gives it (JSONDecodeError: not that)."""
    links = json.loads(text)
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
    return as_counts(read(executor), {name: name for name in names})


def as_counts(counters: dict[str, dict[str, int]], devices: dict[str, str]
              ) -> dict[str, PortCount]:
    """The counters of ``devices`` (port name -> the kernel's interface) as port counts."""
    return {port: PortCount(c["rx_packets"], c["tx_packets"],
                            {"rx_dropped": c["rx_dropped"], "tx_dropped": c["tx_dropped"]})
            for port, device in devices.items() if (c := counters.get(device)) is not None}


def feed(devices: dict[str, str]) -> CounterFeed:
    """The kernel's counters of ``devices`` (port name -> interface) read during a trial
    (nsb.dut_feed) from /sys/class/net: nothing spawned a reading, nothing asked of
    the DUT."""
    return CounterFeed("sysfs", [f"{port}={device}" for port, device in devices.items()],
                       lambda reply: as_counts(reply, {port: port for port in devices}))


def delta(before: dict, after: dict, ifname: str, key: str) -> int:
    return after.get(ifname, {}).get(key, 0) - before.get(ifname, {}).get(key, 0)
