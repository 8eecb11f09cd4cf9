"""An nftables DUT's rules changed under load (the ``rule_churn`` event, CSIT's
reconfiguration tests): an ACL of ``rules_installed`` entries (an nftables set in nsb's
table, which the forward chain drops by) is there before the traffic; during the event
``changes_per_s`` entries are added and removed, one change per nft transaction, through
one ``nft -i`` process on the node. The entries are addresses of 240.0.0.0/4 (reserved),
so none matches the traffic: what the traffic loses is the changes' cost."""

from __future__ import annotations

import contextlib
import ipaddress
import subprocess
import time

SET = "nsb_churn"
FIRST = int(ipaddress.IPv4Address("240.0.0.1"))


def entry(index: int) -> str:
    return str(ipaddress.IPv4Address(FIRST + index))


def install(executor, table: str, installed: int) -> None:
    """The set, its ``installed`` entries and the rule that drops by it (once a run)."""
    lines = [f"add set inet {table} {SET} {{ type ipv4_addr; size 1048576; }}",
             f"add rule inet {table} forward ip saddr @{SET} counter drop"]
    for start in range(0, installed, 1000):
        chunk = ", ".join(entry(i) for i in range(start, min(installed, start + 1000)))
        lines.append(f"add element inet {table} {SET} {{ {chunk} }}")
    executor.run(["nft", "-f", "-"], input="\n".join(lines) + "\n", timeout=120)


def churn(executor, table: str, installed: int, changes_per_s: float,
          churn_s: float) -> int:
    """Add and remove entries at ``changes_per_s`` for ``churn_s`` seconds (an entry
    added, then removed by the next change); returns the changes made."""
    process = executor.start(["nft", "-i"], pipes=True)
    changes = int(changes_per_s * churn_s)
    started = time.monotonic()
    try:
        for change in range(changes):
            time.sleep(max(0.0, started + change / changes_per_s - time.monotonic()))
            verb = "add" if change % 2 == 0 else "delete"
            process.write_line(f"{verb} element inet {table} {SET} "
                               f"{{ {entry(installed + change // 2)} }}")
        process.write_line("quit")  # after every change: nft ends once it made them
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
    finally:
        process.stop(grace_s=5.0)
    return changes


def entries(executor, table: str) -> int:
    """The set's entries now (its witness: as many as installed after a churn)."""
    listed = executor.run(["nft", "list", "set", "inet", table, SET]).stdout
    inside = listed.split("elements = {", 1)
    return 0 if len(inside) < 2 else inside[1].split("}", 1)[0].count(",") + 1
