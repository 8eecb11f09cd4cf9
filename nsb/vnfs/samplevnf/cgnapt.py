"""vCGNAPT (NSB's CgnaptApproxVnf): carrier-grade NAT between each port pair's
private (uplink) and public (downlink) side.

With ``napt: static`` (NSB's default) every private port's gateway (the pod's
``routing_table``, else the port's peer) gets a static translation to a public
address once the VNF answers (``p <pipeline> entry addm``), public addresses from
``public_ip`` on (else the scenario's ``flow.public_ip``, else NSB's
152.16.40.10; the next pair's in the next /24); other private hosts are
translated dynamically. vCGNAPT takes a static translation only for a public
address of its range and ports outside the range's dynamic ports, which NSB's
own (ports 1-65535 on the template's 4.4.0.0) are not: nsb gives the public
address's ports 1-4095 to the static translation (port for port; vCGNAPT must add
every entry within its message timeout, also on shared cores) and
4096-65535 to dynamic ones. With ``dynamic`` the whole range (ports 1-65535) is
dynamic, at the public address when the task gives one, else NSB's template's.
"""

from __future__ import annotations

import ipaddress
import logging
import time

from nsb.errors import RunError
from nsb.vnfs.samplevnf import options, pipeline_config, stats
from nsb.vnfs.samplevnf.pipeline_vnf import PipelineVnf
from nsb.vnfs.samplevnf.templates import TEMPLATES

LOG = logging.getLogger(__name__)
NSB_PUBLIC_IP = "152.16.40.10"  # NSB's CgnaptApproxVnf's first public address
TRIES = 5
NO_ANSWER = "failed, -5"  # vCGNAPT's front end got no answer from the pipeline in time
STATIC_PORTS = 4095  # a static translation's ports: 1 to this; dynamic ones above


class CgnaptApproxVnf(PipelineVnf):
    """SampleVNF vCGNAPT: network address and port translation (NSB's CgnaptApproxVnf)."""

    OPTIONS_SCHEMA = options.CGNAPT
    APP_NAME = "vCGNAPT"
    # its dynamic translations (a table per pipeline, aged by its own timer): nsb knows
    # no command of its CLI that clears or counts them, so a stateful trial would
    # inherit the last one's
    KEEPS_STATE = None
    VNF_TYPE = "CGNAPT"
    STATS_COMMAND = "p cgnapt stats"

    def __init__(self, spec, options, node, context, run):
        self.public_ip = options.get("public_ip") or _flow_public_ip(spec.scenario_options)
        super().__init__(spec, options, node, context, run)

    def template(self) -> dict:
        """NSB's template with the public address as the pipelines' public range, its
        ports above the static translations' when there are some."""
        template = dict(TEMPLATES["CGNAPT"])
        static = self.options["napt"] == "static"
        public = self.public_ip or (NSB_PUBLIC_IP if static else "")
        if public:
            first = STATIC_PORTS + 1 if static else 1
            address = int(ipaddress.IPv4Address(public))
            template["CGNAPT"] = tuple((k, f"{address:08x}:({first}, 65535)")
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
                # the private host's ports 1.. to the same public ports (one entry each)
                commands.append(f"p {pipeline} entry addm {gateway} 1 {public} 1 "
                                f"{up.number} 32 {STATIC_PORTS} {STATIC_PORTS} {STATIC_PORTS}")
                public += 256  # NSB's pool: the next /24
        return commands

    def after_ready(self) -> None:
        """The static translations, each asked again while the pipeline did not answer
        in time (``failed, -5``: the request stays queued and the same entries are
        added again, which changes nothing); any other refusal is an error."""
        for command in self.translations():
            for attempt in range(1, TRIES + 1):
                answer = " ".join(self.console.command(command).split())
                if "failed" not in answer:
                    LOG.info("%s: %s: %s", self.name, command, answer[:200])
                    break
                if NO_ANSWER not in answer or attempt == TRIES:
                    raise RunError(f"{self.name}: vCGNAPT refused '{command}': "
                                   f"{answer[-300:]}")
                LOG.info("%s: vCGNAPT's pipeline did not answer '%s' in time; again",
                         self.name, command)
                time.sleep(1.0)

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
