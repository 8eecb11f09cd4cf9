"""Where a trial's frames died: the loss of one direction laid along its path.

Along a path the frames present can only fall: sent by the generator, arrived at
the next port (the rest was lost on the link), taken in by it (the rest its
receive side dropped: imissed, rx_nombuf...), handed to the port it leaves by (the
rest died inside the node), sent by that port (the rest its transmit side dropped),
and so on to the generator's receiving port. Each fall is a loss of a kind at a hop;
where a port keeps no counter, the fall from the last counted point to the next is
one loss over the whole stretch, said to be blind. The losses add up to what the
generator sent less what it received; a remainder (counters that do not match,
frames that were never the trial's) is shown as unaccounted, never hidden.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from nsb.nodes.node import Endpoint
from nsb.paths import Path
from nsb.port_counts import WORDS, PortCount


@dataclass(frozen=True)
class Loss:
    hop: str  # where, in words: "link tg:xe0 -> sut:xe0", "sut:xe0 rx", ...
    kind: str  # a key of nsb.port_counts.WORDS
    frames: int

    @property
    def words(self) -> str:
        return f"{self.hop}: {WORDS.get(self.kind, self.kind)}"


@dataclass(frozen=True)
class Point:
    """A place along the path and the frames counted there (None: no counter)."""

    place: str
    frames: int | None


@dataclass(frozen=True)
class Budget:
    path: str
    sent: int | None
    received: int | None
    points: tuple[Point, ...]
    losses: tuple[Loss, ...]
    blind: tuple[str, ...] = ()
    complete: bool = True  # False: the path could not be followed to its end
    sender: str = ""  # the generator's interface the direction's frames left by

    @property
    def lost(self) -> int | None:
        if self.sent is None or self.received is None:
            return None
        return self.sent - self.received

    @property
    def unaccounted(self) -> int:
        return (self.lost or 0) - sum(loss.frames for loss in self.losses)

    def worst(self) -> Loss | None:
        """The hop and kind that lost the most (None when nothing was lost)."""
        lossy = [loss for loss in self.losses if loss.frames > 0]
        return max(lossy, key=lambda loss: loss.frames, default=None)


@dataclass(frozen=True)
class TrialPaths:
    """One trial's loss budget per direction."""

    budgets: tuple[Budget, ...]

    def worst(self, senders: tuple[str, ...] | None = None) -> Loss | None:
        """The hop and kind that lost the most in any direction (or in those sent by the
        generator's interfaces ``senders``: a service chain's)."""
        found = [b.worst() for b in self.budgets if b.worst() is not None
                 and (senders is None or b.sender in senders)]
        return max(found, key=lambda loss: loss.frames, default=None)


@dataclass
class _Walker:
    """Points and losses as the path is followed, counting only falls between
    counted points."""

    points: list[Point] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    blind: list[str] = field(default_factory=list)
    last: int | None = None  # frames at the last counted point
    since: str = ""  # the last counted point, for a blind stretch's name
    skipped: bool = False  # a point without counter since the last counted one

    def point(self, place: str, frames: int | None, hop: str, kind: str) -> None:
        """Frames counted at ``place``; the fall since the last counted point is ``kind``
        at ``hop`` (or, across uncounted points, unaccounted on the blind stretch)."""
        self.points.append(Point(place, frames))
        if frames is None:
            self.blind.append(place)
            self.skipped = True
            return
        if self.last is not None and self.last != frames:
            if self.skipped:
                hop, kind = f"{self.since} .. {place}", "unaccounted"
            if self.last > frames:
                self.losses.append(Loss(hop, kind, self.last - frames))
        self.last, self.since, self.skipped = frames, place, False

    def drops(self, where: str, port: PortCount | None, drops: Mapping[str, int],
              counted: int | None) -> None:
        """Drops by kind at ``where`` between two points; ``counted`` the later point."""
        for kind, frames in sorted(drops.items()):
            self.losses.append(Loss(where, kind, frames))
        if self.last is not None and counted is not None:
            self.last -= sum(drops.values())  # the drops are the fall to the next point
        self.points.append(Point(f"{where} ({', '.join(drops)})" if drops else where, counted))
        if counted is not None:
            self.last = counted


def budget(path: Path, counts: Mapping[Endpoint, PortCount],
           owners: Mapping[str, str] | None = None) -> Budget:
    """The loss budget of one direction: ``counts`` per port for the trial (the
    generator's sending and receiving ports among them), ``owners`` the plugin that
    forwards on each node (for the hops' names)."""
    owners = owners or {}
    walker = _Walker()
    first, last_end = path.ends[0], path.ends[-1]
    start = _count(counts, first)
    refused = start.tx_drops()
    sent = None if start.tx is None else start.tx + sum(refused.values())
    walker.point(f"{first} tx", sent, "", "")
    if refused:  # the generator counted them sent; its own port never sent them
        walker.drops(f"{first} tx", start, refused, start.tx)
    for out, into in path.wires():
        port = counts.get(into)
        arrived, rx_drops = _arrivals(port, walker.last)
        walker.point(f"{into} arrived", arrived, f"link {out} -> {into}", "link")
        if port is not None and port.rx is not None:
            walker.drops(f"{into} rx", port, rx_drops, port.rx)
        if into == last_end and path.complete:
            break
        crossing = _next_out(path, into)
        if crossing is None:
            break
        out_port = counts.get(crossing)
        handed = None if out_port is None or out_port.tx is None else \
            out_port.tx + sum(out_port.tx_drops().values())
        owner = f" ({owners[into.node]})" if into.node in owners else ""
        walker.point(f"{crossing} handed", handed,
                     f"{into.node}{owner} {into.interface} -> {crossing.interface}",
                     "forwarding")
        if out_port is not None and out_port.tx is not None:
            walker.drops(f"{crossing} tx", out_port, out_port.tx_drops(), out_port.tx)
    received = _count(counts, last_end).rx if path.complete else None
    return Budget(path.name, sent, received, tuple(walker.points), tuple(walker.losses),
                  tuple(dict.fromkeys(walker.blind)), path.complete, first.interface)


def _arrivals(port: PortCount | None, present: int | None) -> tuple[int | None, dict]:
    """The frames that arrived at ``port`` and those its receive side dropped, no more
    than the ``present`` frames that could have: a veth counts a frame its peer could
    not take (over its MTU) as the sender's tx drop and again as the receiver's rx drop,
    and a drop of frames that were never the trial's is none of its loss."""
    if port is None or port.rx is None:
        return (port.arrived if port else None), {}
    drops = port.rx_drops()
    excess = port.arrived - present if present is not None else 0
    for kind in sorted(drops, key=lambda k: k != "rx_dropped"):  # the kernel's first
        if excess <= 0:
            break
        taken = min(excess, drops[kind])
        drops[kind] -= taken
        excess -= taken
    drops = {kind: frames for kind, frames in drops.items() if frames}
    return port.rx + sum(drops.values()), drops


def _count(counts: Mapping[Endpoint, PortCount], end: Endpoint) -> PortCount:
    return counts.get(end) or PortCount()


def _next_out(path: Path, into: Endpoint) -> Endpoint | None:
    index = path.ends.index(into)
    return path.ends[index + 1] if index + 1 < len(path.ends) else None


def record(paths: TrialPaths | None) -> dict | None:
    """A trial's paths as results hold them: per direction the frames counted at each
    point, the losses by hop and kind, what is blind and unaccounted; the worst hop."""
    if paths is None:
        return None
    worst = paths.worst()
    return {
        "directions": [{
            "path": b.path, "sent": b.sent, "received": b.received, "lost": b.lost,
            "points": [{"place": p.place, "frames": p.frames} for p in b.points],
            "losses": [{"hop": loss.hop, "kind": loss.kind, "frames": loss.frames}
                       for loss in b.losses],
            "unaccounted": b.unaccounted, "blind": list(b.blind), "complete": b.complete,
        } for b in paths.budgets],
        "worst": None if worst is None else {"hop": worst.hop, "kind": worst.kind,
                                             "frames": worst.frames, "words": worst.words},
    }
