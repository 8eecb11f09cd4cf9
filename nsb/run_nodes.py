"""What a run's VNFs need of their nodes, made sure of before they start: pre-flight
checks (binaries, hugepages, NICs, what each VNF checks itself), their NICs on a
DPDK driver, and what killed runs left on the nodes given back first."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from nsb import leftovers
from nsb.errors import PrerequisiteError
from nsb.nodes import node_leftovers
from nsb.nodes import preflight as node_checks
from nsb.nodes.nic_binding import NicBinder
from nsb.nodes.node import Node
from nsb.vnfs.base import Vnf

LOG = logging.getLogger(__name__)


def preflight(vnfs: list[Vnf], facts: dict[str, dict]) -> None:
    """Every node that is up has what its VNFs need before any traffic; else one line
    per failure. ``facts`` are the platform facts just collected (nothing read twice).
    """
    vnfs = [vnf for vnf in vnfs if getattr(vnf.node, "executor", None) is not None]
    failed = []
    for node, binaries, nics, pool in _node_needs(vnfs).values():
        failed += node_checks.failures(node_checks.check_node(node, binaries, facts.get(node.name),
                                                          nics, pool))
    lines = [check.line() for check in failed]
    for vnf in vnfs:
        lines += [f"{vnf.node.name}: {vnf.name}: FAILED: {problem}"
                  for problem in vnf.preflight(facts.get(vnf.node.name) or {})]
    if lines:
        raise PrerequisiteError("pre-flight checks failed, no traffic was sent:\n"
                                + "\n".join(lines))


def _node_needs(vnfs: list[Vnf]) -> dict[str, tuple]:
    """Per node: (node, binaries, DPDK NICs, whether a VNF takes hugepages from the pool
    as it is rather than adding its own)."""
    needs: dict[str, tuple] = {}
    for vnf in vnfs:
        node, binaries, nics, pool = needs.get(vnf.node.name, (vnf.node, [], [], False))
        binaries += [b for b in vnf.required_binaries() if b not in binaries]
        own = vnf.dpdk_nics()
        nics += [i for i in own if i not in nics]
        pool = pool or bool(own and not vnf.ADDS_HUGEPAGES)
        needs[vnf.node.name] = (node, binaries, nics, pool)
    return needs


def bind_nics(vnfs: list[Vnf], binder: NicBinder) -> None:
    """The VNFs' NICs on a DPDK driver (pre-flight made sure nsb may bind them)."""
    vnfs = [vnf for vnf in vnfs if getattr(vnf.node, "executor", None) is not None]
    for node, _, nics, _ in _node_needs(vnfs).values():
        binder.bind(node, nics)


def sign_in(nodes: Iterable[Node], task_id: str) -> None:
    """What killed runs of this controller left on the nodes given back (processes,
    DPDK files, NICs, hugepages); then this run written down on each, for the next run
    to clean up after it should it be killed."""
    for node in nodes:
        if getattr(node, "executor", None) is not None:
            node_leftovers.give_back(node.executor, leftovers.run_alive)
            node_leftovers.sign_in(node.executor, task_id)


def sign_off(nodes: Iterable[Node], task_id: str) -> None:
    """The run ended cleanly on the nodes: its record goes."""
    for node in nodes:
        if getattr(node, "executor", None) is not None:
            try:
                node_leftovers.sign_off(node.executor, task_id)
            except Exception as exc:  # noqa: BLE001 - the next run cleans up after it
                LOG.warning("%s: could not sign off: %s", node.name, exc)
