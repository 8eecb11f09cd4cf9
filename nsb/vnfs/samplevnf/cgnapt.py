"""vCGNAPT (NSB's CgnaptApproxVnf): carrier-grade NAT between each port pair's
private (uplink) and public (downlink) side.

With ``napt: static`` (NSB's default) every private port's gateway (the pod's
``routing_table``, else the port's peer) gets a translation to a public address
once the VNF answers, as NSB adds it: ``p <pipeline> entry addm <private> 1
<public> 1 <port> 32 65535 65535 65535``, public addresses from ``public_ip``
on (NSB's 152.16.40.10, the next pair's in the next /24). With ``dynamic`` the
pipelines translate to the public range of the config (``public_ip`` when the
task gives one, else NSB's template's).
"""

from __future__ import annotations

import ipaddress
import logging

from nsb.vnfs.samplevnf import options, pipeline_config, stats
from nsb.vnfs.samplevnf.pipeline_vnf import PipelineVnf
from nsb.vnfs.samplevnf.templates import TEMPLATES

LOG = logging.getLogger(__name__)
NSB_PUBLIC_IP = "152.16.40.10"  # NSB's CgnaptApproxVnf's first public address


class CgnaptApproxVnf(PipelineVnf):
    """SampleVNF vCGNAPT: network address and port translation (NSB's CgnaptApproxVnf)."""

    OPTIONS_SCHEMA = options.CGNAPT
    APP_NAME = "vCGNAPT"
    VNF_TYPE = "CGNAPT"
    STATS_COMMAND = "p cgnapt stats"

    def __init__(self, spec, options, node, context, run):
        self.public_ip = options.get("public_ip") or _flow_public_ip(spec.scenario_options)
        super().__init__(spec, options, node, context, run)

    def template(self) -> dict:
        template = dict(TEMPLATES["CGNAPT"])
        if self.options["napt"] == "dynamic" and self.public_ip:
            address = int(ipaddress.IPv4Address(self.public_ip))
            template["CGNAPT"] = tuple((k, f"{address:08x}:(1, 65535)")
                                       if k == "public_ip_port_range" else (k, v)
                                       for k, v in template["CGNAPT"])
        return template

    def parse_stats(self, answer: str) -> dict[str, float] | None:
        return stats.cgnapt(answer)

    def translations(self) -> list[str]:
        """The static translations' commands (none with ``napt: dynamic``)."""
        if self.options["napt"] != "static":
            return []
        workers = [int(name.removeprefix("PIPELINE")) for name, values in self.sections
                   if dict(values).get("type") == "CGNAPT"]
        per_balancer = self.vnf_config.workers
        shares = pipeline_config.balancer_shares(self.layout.pairs, self.vnf_config.lb_count)
        routes = {r.get("if"): r.get("gateway") for r in self.node.pod.get("routing_table") or []
                  if isinstance(r, dict)}
        public = ipaddress.IPv4Address(self.public_ip or NSB_PUBLIC_IP)
        commands = []
        for index, share in enumerate(shares):
            pipeline = workers[index * per_balancer]
            for up, _ in share:
                gateway = routes.get(up.name) or up.peer_address
                commands.append(f"p {pipeline} entry addm {gateway} 1 {public} 1 "
                                f"{up.number} 32 65535 65535 65535")
                public += 256  # NSB's pool: the next /24
        return commands

    def after_ready(self) -> None:
        for command in self.translations():
            answer = self.console.command(command)
            LOG.info("%s: %s: %s", self.name, command, " ".join(answer.split())[:200])

    def describe(self) -> dict:
        info = super().describe()
        if self.translations():
            info["static translations"] = self.translations()
        return info


def _flow_public_ip(scenario_options) -> str:
    """The scenario's first ``flow.public_ip`` when it is one address."""
    flow = scenario_options.get("flow") if scenario_options else None
    addresses = flow.get("public_ip") if isinstance(flow, dict) else None
    first = addresses[0] if isinstance(addresses, list) and addresses else None
    try:
        return str(ipaddress.IPv4Address(str(first))) if first is not None else ""
    except ValueError:
        return ""
