"""vFW and vACL (NSB's FWApproxVnf and AclApproxVnf)."""

from __future__ import annotations

from nsb.vnfs.samplevnf import options, stats
from nsb.vnfs.samplevnf.pipeline_vnf import FirewallVnf


class FwApproxVnf(FirewallVnf):
    """SampleVNF vFW: ACL rules plus connection tracking (NSB's FWApproxVnf)."""

    OPTIONS_SCHEMA = options.FIREWALL
    APP_NAME = "vFW"
    # its connection tracker: nsb knows no command of its CLI that clears or counts the
    # connections it holds
    KEEPS_STATE = None
    VNF_TYPE = "VFW"
    STATS_COMMAND = "p vfw stats"
    RULE_WORD = "vfw"
    FORWARD_ACTIONS = ("accept", "count", "conntrack")

    def parse_stats(self, answer: str) -> dict[str, float] | None:
        return stats.vfw(answer)


class AclApproxVnf(FirewallVnf):
    """SampleVNF vACL: ACL rules (NSB's AclApproxVnf)."""

    OPTIONS_SCHEMA = options.FIREWALL
    APP_NAME = "vACL"
    VNF_TYPE = "ACL"
    STATS_COMMAND = "p acl stats"
    RULE_WORD = "acl"
    FORWARD_ACTIONS = ("accept", "count")

    def parse_stats(self, answer: str) -> dict[str, float] | None:
        return stats.acl(answer)
