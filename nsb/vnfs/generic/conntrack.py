"""What conntrack and nft say about a node's connection tracking, read as KPIs, and
the conntrack settings the ``nftables`` VNF takes (sysctls). A leaf module: text in,
numbers out.
"""

from __future__ import annotations

import json
import re

MAX_SYSCTL = "net.netfilter.nf_conntrack_max"
# option -> sysctl (seconds), each per network namespace
TIMEOUTS = {name: f"net.netfilter.nf_conntrack_{name}" for name in (
    "tcp_timeout_syn_sent", "tcp_timeout_syn_recv", "tcp_timeout_established",
    "tcp_timeout_fin_wait", "tcp_timeout_close_wait", "tcp_timeout_last_ack",
    "tcp_timeout_time_wait", "tcp_timeout_close", "tcp_timeout_max_retrans",
    "tcp_timeout_unacknowledged", "udp_timeout", "udp_timeout_stream", "icmp_timeout",
    "generic_timeout")}

_FIELD = re.compile(r"([a-z_]+)=(\d+)")


def stats_kpis(text: str) -> dict[str, float]:
    """``conntrack -S`` summed over CPUs: ``conntrack_<field>`` for every counter the
    installed conntrack prints (found, invalid, insert_failed, drop, early_drop, error,
    search_restart, ...), whatever their order or number."""
    kpis: dict[str, float] = {}
    for line in text.splitlines():
        for field, value in _FIELD.findall(line):
            if field != "cpu":
                key = f"conntrack_{field}"
                kpis[key] = kpis.get(key, 0.0) + float(value)
    return kpis


# the open sessions: TCP entries established and UDP entries, by the count conntrack
# prints after each listing (on stderr; the entries themselves are not wanted)
LIST_OPEN = ("conntrack -L -p tcp --state ESTABLISHED 2>&1 >/dev/null; "
             "conntrack -L -p udp 2>&1 >/dev/null")
_SHOWN = re.compile(r"(\d+) flow entries have been shown")


def shown(text: str) -> int:
    """The sum of conntrack's 'N flow entries have been shown' in ``text``."""
    counts = _SHOWN.findall(text)
    if not counts:
        raise ValueError(f"conntrack -L printed {text.strip()[:80]!r}, not its count")
    return sum(int(c) for c in counts)


def count(text: str) -> int:
    """``conntrack -C``: the entries in the table."""
    words = text.split()
    if len(words) != 1 or not words[0].isdigit():
        raise ValueError(f"'conntrack -C' printed {text.strip()[:80]!r}, not a count")
    return int(words[0])


def counter_kpis(text: str, own_table: str, tables: list[tuple[str, str]]) -> dict[str, float]:
    """The packets of the named counters in ``nft -j list counters`` output: nsb's
    own table's by their names (``new_packets``, ``rate_limit_dropped``, ...), the
    user's ``tables`` (family, name) as ``<table>.<counter>``."""
    try:
        listed = json.loads(text or "{}").get("nftables", [])
    except (json.JSONDecodeError, AttributeError):
        raise ValueError("cannot parse the output of 'nft -j list counters'") from None
    kpis: dict[str, float] = {}
    for item in listed:
        counter = item.get("counter") if isinstance(item, dict) else None
        if not isinstance(counter, dict):
            continue
        table, name = counter.get("table"), counter.get("name")
        packets = float(counter.get("packets", 0))
        if table == own_table and counter.get("family") == "inet":
            kpis[name] = packets
        elif (counter.get("family"), table) in tables:
            kpis[f"{table}.{name}"] = packets
    return kpis
