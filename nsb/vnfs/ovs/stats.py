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


# ``ovs-ofctl --names dump-ports``: a port's rx line, then its tx line ("?": not counted)
_PORT = re.compile(r'^\s*port\s+"?([^":\s]+)"?:\s+rx pkts=(\d+|\?), bytes=\S+ drop=(\d+|\?),'
                   r'.*\n\s+tx pkts=(\d+|\?), bytes=\S+ drop=(\d+|\?),', re.MULTILINE)


def port_counters(text: str) -> dict[str, dict[str, float]]:
    """Per port of ``ovs-ofctl --names dump-ports`` its rx and tx packets and drops
    (a counter the port does not keep is 0)."""
    def number(value: str) -> float:
        return 0.0 if value == "?" else float(value)

    return {name: {"rx": number(rx), "rx_drop": number(rx_drop), "tx": number(tx),
                   "tx_drop": number(tx_drop)}
            for name, rx, rx_drop, tx, tx_drop in _PORT.findall(text)}


def port_kpis(counters: dict[str, dict[str, float]], ports: list[str]) -> dict[str, float]:
    """``ports`` as ``port<k>_ipackets``, ``port<k>_opackets``, ``port<k>_rx_dropped``
    and ``port<k>_tx_dropped`` in their order, and ``packets_dropped``, their drops
    summed."""
    kpis = {}
    for index, port in enumerate(ports):
        counted = counters.get(port, {})
        kpis[f"port{index}_ipackets"] = counted.get("rx", 0.0)
        kpis[f"port{index}_opackets"] = counted.get("tx", 0.0)
        kpis[f"port{index}_rx_dropped"] = counted.get("rx_drop", 0.0)
        kpis[f"port{index}_tx_dropped"] = counted.get("tx_drop", 0.0)
    kpis["packets_dropped"] = sum(counters.get(p, {}).get(k, 0.0) for p in ports
                                  for k in ("rx_drop", "tx_drop"))
    return kpis


# a port's KPIs as its counts (nsb.port_counts)
COUNTER_KINDS = {"ipackets": "rx", "opackets": "tx", "rx_dropped": "rx_dropped",
                 "tx_dropped": "tx_dropped"}
