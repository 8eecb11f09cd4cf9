"""Open vSwitch's OpenFlow rules changed under load (the ``rule_churn`` event: VSPerf's
flow addition under load, CSIT's reconfiguration tests): ``rules_installed`` flows of
nsb's cookie are on the bridge before the traffic; during the event ``changes_per_s``
flows are added and removed (each added flow removed by the next change), every
``TICK_S`` one ``ovs-ofctl add-flows`` with that tick's changes (a line's first word
says add or delete_strict). The flows match sources in 240.0.0.0/4 (reserved), so none
matches the traffic: what the traffic loses is the changes' cost. The flows of the
cookie counted on the bridge are the witness: as many as installed after a churn."""

from __future__ import annotations

import ipaddress
import math
import time

from nsb.vnfs.rule_churn import RuleChurn

COOKIE = "0x6e736263"  # "nsbc": the churn's flows, told apart from the forwarding ones
TICK_S = 0.1  # one ovs-ofctl a tick: a process per change would cost more than the change
FIRST = int(ipaddress.IPv4Address("240.0.0.1"))


def flow(index: int, delete: bool = False) -> str:
    """The churn's ``index``-th flow, or what deletes it strictly (its cookie masked,
    its priority and match, no actions)."""
    match = f"priority=10,ip,nw_src={ipaddress.IPv4Address(FIRST + index)}"
    if delete:
        return f"delete_strict cookie={COOKIE}/-1,{match}"
    return f"add cookie={COOKIE},{match},actions=drop"


def _add_flows(ofctl, lines: list[str]) -> None:
    ofctl("add-flows", "-", input="\n".join(lines) + "\n")


def install(ofctl, installed: int) -> None:
    """The ``installed`` flows (once a run), in one ovs-ofctl per 10,000."""
    for start in range(0, installed, 10000):
        _add_flows(ofctl, [flow(i) for i in range(start, min(installed, start + 10000))])


def churn(ofctl, installed: int, changes_per_s: float, churn_s: float) -> int:
    """Add and remove flows at ``changes_per_s`` for ``churn_s`` seconds, a tick's worth
    at a time; returns the changes made."""
    changes = int(changes_per_s * churn_s)
    ticks = max(1, math.ceil(churn_s / TICK_S))
    started, done = time.monotonic(), 0
    for tick in range(ticks):
        time.sleep(max(0.0, started + tick * TICK_S - time.monotonic()))
        due = changes if tick == ticks - 1 else min(changes, round((tick + 1) *
                                                                   changes_per_s * TICK_S))
        if due > done:
            _add_flows(ofctl, [flow(installed + change // 2, delete=change % 2 == 1)
                               for change in range(done, due)])
            done = due
    time.sleep(max(0.0, started + churn_s - time.monotonic()))  # the last tick's time
    return changes


def flows(ofctl) -> int:
    """The churn's flows on the bridge now."""
    listed = ofctl("dump-flows", f"cookie={COOKIE}/-1")
    return sum(1 for line in listed.splitlines() if f"cookie={COOKIE}" in line)


class FlowChurn(RuleChurn):
    """The ``rule_churn`` event of a switch whose flows its ``ofctl`` adds (OvsVnf)."""

    def install_rules(self, installed: int) -> None:
        install(self.ofctl, installed)

    def churn_rules(self, installed: int, changes_per_s: float, churn_s: float) -> int:
        return churn(self.ofctl, installed, changes_per_s, churn_s)

    def rules_now(self) -> int:
        return flows(self.ofctl)
