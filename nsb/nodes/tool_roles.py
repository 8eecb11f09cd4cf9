"""Which of ansible/'s roles puts a tool where nsb looks for it: what a pre-flight
line names when a node lacks the tool."""

from __future__ import annotations

ROLES = {"trex": "install_trex", "prox": "install_prox", "samplevnf": "install_samplevnf",
         "dpdk_apps": "install_dpdk_apps"}


def hint(tool: str) -> str:
    """``the install_trex role installs it (nsb ansible install POD --archives FILE)``."""
    return f"the {ROLES[tool]} role installs it (nsb ansible install POD --archives FILE)"
