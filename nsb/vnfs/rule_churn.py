"""The ``rule_churn`` event (nsb.vnf_events) of a DUT that can install rules, change
them under load and count them (nftables' ACL set, Open vSwitch's OpenFlow flows): the
rules are installed once a run before the traffic, each event adds and removes them at
its rate, and after a churn the DUT's own count of them (``acl_entries``, as many as
installed once every rule added was removed) and the changes made (``acl_changes``) are
among its KPIs."""

from __future__ import annotations


class RuleChurn:
    """Mixed in before the VNF's base class; a DUT says how to install, churn and count."""

    _churn_ready = False
    _churn_changes = 0

    def install_rules(self, installed: int) -> None:
        raise NotImplementedError

    def churn_rules(self, installed: int, changes_per_s: float, churn_s: float) -> int:
        """Add and remove rules at ``changes_per_s`` for ``churn_s``; the changes made."""
        raise NotImplementedError

    def rules_now(self) -> int:
        """The churned rules the DUT holds now, by its own count."""
        raise NotImplementedError

    def prepare_event(self, event: dict) -> None:
        if event["type"] == "rule_churn" and not self._churn_ready:
            self.install_rules(event.get("rules_installed", 1000))
            self._churn_ready = True

    def perform_event(self, event: dict) -> None:
        if event["type"] != "rule_churn":
            super().perform_event(event)
            return
        self._churn_changes += self.churn_rules(
            event.get("rules_installed", 1000), float(event.get("changes_per_s", 100)),
            float(event.get("churn_s", 2)))

    def churn_kpis(self) -> dict[str, float]:
        """After a churn: the DUT's count of the rules and the changes made; else none."""
        if not self._churn_ready:
            return {}
        return {"acl_entries": float(self.rules_now()),
                "acl_changes": float(self._churn_changes)}
