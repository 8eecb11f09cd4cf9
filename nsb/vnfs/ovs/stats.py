"""Parse ``ovs-appctl`` statistics into KPIs."""

from __future__ import annotations

import re

# pmd-stats-show line -> KPI name; counters are summed over threads
PMD_COUNTERS = {
    "packets received": "packets_received",
    "simple match hits": "simple_match_hits",
    "emc hits": "emc_hits",
    "smc hits": "smc_hits",
    "megaflow hits": "megaflow_hits",
    "miss with success upcall": "upcalls",
    "miss with failed upcall": "failed_upcalls",
    "idle cycles": "idle_cycles",
    "processing cycles": "processing_cycles",
}


def pmd_stats(text: str) -> dict[str, float]:
    """``dpif-netdev/pmd-stats-show``: counters summed over the main and PMD threads.

    Cycles per packet is recomputed from the sums (processing cycles / packets).
    """
    kpis = {name: 0.0 for name in PMD_COUNTERS.values()}
    threads = 0
    for line in text.splitlines():
        if line.rstrip().endswith(":") and not line.startswith(" "):
            threads += 1
            continue
        key, _, value = line.strip().partition(":")
        if key in PMD_COUNTERS:
            number = re.match(r"\s*(\d+)", value)
            if number:
                kpis[PMD_COUNTERS[key]] += float(number.group(1))
    kpis["pmd_threads"] = float(threads)
    if kpis["packets_received"] and kpis["processing_cycles"]:
        kpis["cycles_per_packet"] = kpis["processing_cycles"] / kpis["packets_received"]
    return kpis


def flow_count(text: str) -> int:
    """Datapath flows in ``dpctl/dump-flows`` (one per line, headers excluded)."""
    return sum(1 for line in text.splitlines()
               if line.strip() and not line.startswith("flow-dump from"))
