"""OVS's MAC learning table read by its own commands: ``fdb/show`` (one line a learned
address: port, VLAN, MAC, age) and ``fdb/stats-show`` (its entries and maximum), the
witness of an address-learning trial; ``fdb/flush`` empties it between trials."""

from __future__ import annotations

import re

MAC = re.compile(r"^\s*\S+\s+\d+\s+([0-9a-f]{2}(?::[0-9a-f]{2}){5})\s", re.IGNORECASE)
MAXIMUM = re.compile(r"Current/maximum MAC entries in the table:\s*(\d+)/(\d+)")


def macs(shown: str) -> list[str]:
    """The learned MACs in ``ovs-appctl fdb/show`` output (its header skipped)."""
    return [m.group(1).lower() for line in shown.splitlines() if (m := MAC.match(line))]


def maximum(stats: str) -> int | None:
    """The table's maximum in ``ovs-appctl fdb/stats-show`` output (None: not shown)."""
    found = MAXIMUM.search(stats)
    return int(found.group(2)) if found else None
