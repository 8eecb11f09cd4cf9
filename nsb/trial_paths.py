"""Each trial's paths and where their frames died, from the counters the run reads
after every trial anyway (the VNFs' KPIs) and the kernel's counters of the linked
interfaces, differenced with the reading before the trial.

Every port is counted by what owns it: the generator (its own per-trial counts), the
VNF that takes it (``Vnf.port_counts``: DPDK's ethdev counters, OVS's port counters),
and the context, whose kernel interfaces (veths, taps) count frames on the wire's
ends. Where a program's port is also a kernel interface (af_packet on a veth), the
kernel's count of frames arriving and leaving tells the program's own socket drops
from the wire's.
"""

from __future__ import annotations

from nsb.contexts.base import Context
from nsb.loss_budget import TrialPaths, budget
from nsb.nodes.node import Endpoint
from nsb.paths import pairs_forwarding, walk
from nsb.port_counts import PortCount, difference
from nsb.trial import TrialResult
from nsb.vnfs.base import TrafficGen, Vnf


class PathCounter:
    """Reads a scenario's ports after each trial and lays the trial's loss along its
    paths; the first reading (before the first trial) is the baseline."""

    def __init__(self, generator: TrafficGen, vnfs: list[Vnf], context: Context):
        self.generator, self.vnfs, self.context = generator, vnfs, context
        self.nodes = sorted({vnf.node.name for vnf in [*vnfs, generator]})
        self._before: dict[Endpoint, PortCount] | None = None
        self._forward = forwarding(vnfs, context)
        self._owners = {}
        for vnf in vnfs:
            self._owners.setdefault(vnf.node.name, vnf.name)

    @property
    def has_baseline(self) -> bool:
        return self._before is not None

    def baseline(self, kpis: dict[str, dict]) -> None:
        """The counters before the first trial; ``kpis``: each VNF's (by name)."""
        self._before = self._read(kpis)

    def trial(self, kpis: dict[str, dict], result: TrialResult) -> TrialPaths:
        """The trial's budgets: the counters now less those after the previous trial,
        the generator's own counts of this trial at its ports."""
        after = self._read(kpis)
        before = self._before or {}
        counts = {end: difference(count, before.get(end)) for end, count in after.items()}
        self._before = after
        node = self.generator.node.name
        for iface, counted in result.ports.items():
            end = Endpoint(node, iface)
            own = PortCount(counted.get("rx_packets"), counted.get("tx_packets"),
                            {"generator_rx": counted.get("rx_missed", 0)})
            # the generator's kernel port (veth, tap) counts what really left and arrived
            counts[end] = merged(counts.get(end), own, refused="refused")
        links = self.context.links
        sending = [iface for iface, counted in result.ports.items()
                   if counted.get("tx_packets", 0) > 0]
        return TrialPaths(tuple(budget(walk(Endpoint(node, iface), links, self._forward),
                                       counts, self._owners) for iface in sending))

    def _read(self, kpis: dict[str, dict]) -> dict[Endpoint, PortCount]:
        kernel = self.context.port_counts(self.nodes)
        counts = dict(kernel)
        for vnf in self.vnfs:
            for iface, counted in vnf.port_counts(kpis.get(vnf.name) or {}).items():
                end = Endpoint(vnf.node.name, iface)
                counts[end] = merged(kernel.get(end), counted)
        return counts


def forwarding(vnfs: list[Vnf], context: Context):
    """Where each VNF sends what comes in by a port (an Endpoint to an Endpoint, None
    where nothing says); a node without a VNF that says, its linked interfaces in pairs
    (a switch's ports of links via its bridge aside)."""
    forward: dict[Endpoint, Endpoint] = {}
    # a switch's ports of links via its bridge: the links say where their frames cross
    # (or, on a shared network's port, nothing does), never the ports' order
    switched = {port for link in context.links if link.via
                for port in (link.switch_a, link.switch_b)}
    for node in context.nodes.values():
        linked = [i.name for i in node.interfaces.values()
                  if i.peer and Endpoint(node.name, i.name) not in switched]
        forward.update({Endpoint(node.name, a): Endpoint(node.name, b)
                        for a, b in pairs_forwarding(linked).items()})
    for vnf in vnfs:
        node = vnf.node.name
        forward.update({Endpoint(node, a): Endpoint(node, b)
                        for a, b in vnf.forwarding().items()})
    return forward.get


def nodes_crossed(start: Endpoint, links: list, forward) -> list[str]:
    """The nodes frames sent from the generator's port ``start`` cross, in order
    (``forward``: the scenario's ``forwarding``)."""
    path = walk(start, links, forward)
    return list(dict.fromkeys(end.node for end in path.ends[1:-1]))


def merged(kernel: PortCount | None, program: PortCount,
           refused: str = "tx_dropped") -> PortCount:
    """A program's counts of a port that is also a kernel interface: what it took in
    and handed on, with the frames the kernel saw arrive that it never took in
    (rx_dropped: its socket's ring overflowed) and those it handed on that never
    left (``refused``: tx_dropped for a VNF; for the generator, whose count is the
    trial's frames sent, ``refused``, laid before the wire)."""
    if kernel is None or kernel.rx is None or program.rx is None:
        return program
    drops = dict(program.drops)
    missed = kernel.arrived - program.arrived
    if missed > 0:
        drops["rx_dropped"] = drops.get("rx_dropped", 0) + missed
    tx = program.tx
    if kernel.tx is not None and program.tx is not None and kernel.tx < program.tx:
        never_left = program.tx - kernel.tx
        # what the port's driver dropped (the other end did not take it) is tx_dropped
        # either way; the rest never reached the driver: ``refused``
        dropped = min(never_left, kernel.drops.get("tx_dropped", 0))
        for kind, frames in (("tx_dropped", dropped), (refused, never_left - dropped)):
            if frames > 0:
                drops[kind] = drops.get(kind, 0) + frames
        tx = kernel.tx
    return PortCount(program.rx, tx, drops)
