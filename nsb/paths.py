"""The paths a trial's frames take: for every direction, the ports they cross in order,
from the generator's sending port back to its receiving port, laid along the task's
topology.

A path alternates the two ways frames move: over a wire (a direct link, or a link
through a switch's bridge: into its port on one side, out of its port on the other)
and through a node (into one of its ports, out of another: the forwarding of the VNF
there, or of the switch between its two ports of a link). Which port a VNF sends a
frame out of is the VNF's own answer (``Vnf.forwarding``); the walk never guesses by
a VNF's type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nsb.nodes.node import Endpoint

if TYPE_CHECKING:
    from nsb.contexts.base import Link

MAX_NODES = 32  # a path through more nodes than this is a loop in the topology


@dataclass(frozen=True)
class Path:
    """``ends``: the sending port, then per node crossed the port frames come in by and
    the port they leave by, then the receiving port; ``complete`` is False when the walk
    met a node that does not say where it sends frames (the rest is blind)."""

    ends: tuple[Endpoint, ...]
    complete: bool = True

    @property
    def name(self) -> str:
        return f"{self.ends[0]} -> {self.ends[-1]}"

    def wires(self) -> list[tuple[Endpoint, Endpoint]]:
        """(out of, into) per wire crossed."""
        return [(self.ends[i], self.ends[i + 1]) for i in range(0, len(self.ends) - 1, 2)]

    def crossings(self) -> list[tuple[Endpoint, Endpoint]]:
        """(into, out of) per node crossed."""
        return [(self.ends[i], self.ends[i + 1]) for i in range(1, len(self.ends) - 1, 2)]


# where a node sends a frame that came in by a port (None: it does not say)
Forwarding = Callable[[Endpoint], Endpoint | None]


def wire_peers(links: Iterable[Link]) -> dict[Endpoint, Endpoint]:
    """Each port's other end of its wire (a link through a bridge is two wires)."""
    peers = {}
    for link in links:
        for a, b in link.wires():
            peers[a], peers[b] = b, a
    return peers


def switch_crossings(links: Iterable[Link]) -> dict[Endpoint, Endpoint]:
    """A switch's port of a link to its other port of that link (frames of the link
    cross the switch between them). A port of several links (a shared network's) is
    none: which link a frame takes there is the switch's choice, so a walk stops."""
    crossing: dict[Endpoint, Endpoint | None] = {}
    for link in links:
        if link.via:
            for port, other in ((link.switch_a, link.switch_b), (link.switch_b, link.switch_a)):
                crossing[port] = None if port in crossing else other
    return {port: other for port, other in crossing.items() if other is not None}


def walk(start: Endpoint, links: list[Link], forward: Forwarding) -> Path:
    """The path from the generator's port ``start`` until it comes back to the
    generator's node."""
    peers, switches = wire_peers(links), switch_crossings(links)
    ends, current = [start], start
    for _ in range(MAX_NODES):
        into = peers.get(current)
        if into is None:
            return Path(tuple(ends), complete=False)
        ends.append(into)
        if into.node == start.node:
            return Path(tuple(ends))
        out = switches.get(into) or forward(into)
        if out is None:
            return Path(tuple(ends), complete=False)
        ends.append(out)
        current = out
    return Path(tuple(ends), complete=False)


def pairs_forwarding(interfaces: list[str]) -> dict[str, str]:
    """The usual DUT's forwarding: its ports in pairs, each to the other (0 <-> 1,
    2 <-> 3, ...)."""
    out = {}
    for a, b in zip(interfaces[0::2], interfaces[1::2], strict=False):
        out[a], out[b] = b, a
    return out
