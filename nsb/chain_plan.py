"""A scenario's service chains at plan time: which of the generator's ports each chain
is, and the VNFs and nodes its frames cross (for its rows, its neighbour, its hops)."""

from __future__ import annotations

from dataclasses import replace

from nsb import chains
from nsb.nodes.node import Endpoint
from nsb.paths import MAX_NODES, switch_crossings, wire_peers
from nsb.trial_paths import forwarding, nodes_crossed


def service_chains(scenario, generator, vnfs: list, context) -> tuple:
    """The scenario's service chains over the generator's port pairs (or on its one
    network), each with the VNFs its frames cross: () where the task does not speak
    of chains (one chain given is measured as one: a density sweep's first point)."""
    if scenario.chains_where is None:
        return ()
    pairs = generator.port_pairs()
    forward = forwarding(vnfs, context)
    destinations = generator.chain_destinations()
    if destinations:
        if len(destinations) != scenario.chains:
            raise scenario.chains_where.error(
                f"{scenario.chains} chains, but the generator tells {len(destinations)} "
                "apart on its port pair (options.chain_destinations: one per chain)")
        made = chains.on_one_network(pairs[0], scenario.chains)
        crossed = [nodes_from(Endpoint(*d.split(":", 1)), context.links, forward,
                              generator.node.name) for d in destinations]
    else:
        problem = chains.problem(pairs, scenario.chains)
        if problem:
            raise scenario.chains_where.error(problem)
        made = chains.split(pairs, scenario.chains)
        crossed = [list(dict.fromkeys(
            node for port in chain.ports
            for node in nodes_crossed(Endpoint(generator.node.name, port), context.links,
                                      forward)))
            for chain in made]
    placed = []
    for chain, nodes in zip(made, crossed, strict=True):
        others = {node for other in crossed if other is not nodes for node in other}
        placed.append(replace(chain, vnfs=tuple(v.name for v in vnfs if v.node.name in nodes),
                              nodes=tuple(n for n in nodes if n not in others)))
    return tuple(placed)


def nodes_from(start: Endpoint, links: list, forward, generator_node: str) -> list[str]:
    """The nodes frames cross from the port ``start`` they are sent to (a chain's first
    port on a shared network) until they are back at the generator's node."""
    peers, switches = wire_peers(links), switch_crossings(links)
    nodes: list[str] = []
    into: Endpoint | None = start
    for _ in range(MAX_NODES):
        if into is None or into.node == generator_node:
            break
        nodes.append(into.node)
        out = switches.get(into) or forward(into)
        into = peers.get(out) if out is not None else None
    return list(dict.fromkeys(nodes))
