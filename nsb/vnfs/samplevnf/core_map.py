"""CPU numbers in the core notation of a SampleVNF's pipeline config (``s<socket>c<core>``,
``h`` for a core's second hyperthread), as its core map numbers the node's CPUs.

The SampleVNFs (DPDK 17.05's ip_pipeline, ``cpu_core_map_compute_linux``) read
``core = N`` as core N of socket 0, where a socket is a CPU's
``topology/physical_package_id`` and core N the Nth of that socket's distinct
``core_id``s, in order; a core's CPUs are its hyperthreads, in CPU order. NSB's
layout numbers are such cores. A CPU number is not one wherever core ids are
sparse (most Xeons), a second socket starts, or each CPU is a socket of one core
(QEMU's ``-smp 2``): there ``core = 1`` names no core and the VNF panics ("Cannot
create CPU core mask"). With ``cores`` (CPU numbers) nsb writes each CPU as the
core map names it.
"""

from __future__ import annotations

from collections.abc import Iterable

from nsb.errors import RunError

# per CPU with a topology (an online one): its number, socket and core id
TOPOLOGY_SCRIPT = (
    "cd /sys/devices/system/cpu && for c in cpu[0-9]*; do "
    "[ -r $c/topology/core_id ] || continue; "
    'echo "${c#cpu} $(cat $c/topology/physical_package_id) $(cat $c/topology/core_id)"; done')

Topology = dict[int, tuple[int, int]]  # CPU -> (socket, core id)


def read(executor) -> Topology:
    """The node's CPUs and where they are."""
    listed = executor.run(["sh", "-c", TOPOLOGY_SCRIPT]).stdout
    return parse(listed)


def parse(listed: str) -> Topology:
    topology = {}
    for line in listed.splitlines():
        fields = line.split()
        if len(fields) == 3 and all(f.isdigit() for f in fields):
            cpu, socket, core_id = map(int, fields)
            topology[cpu] = (socket, core_id)
    return topology


def notation(cpu: int, topology: Topology) -> str:
    """``cpu`` as the core map names it: ``s0c1``, or ``s0c0h`` for a second hyperthread."""
    if cpu not in topology:
        raise RunError(f"CPU {cpu} is not one of the node's ({_listed(topology)})")
    socket, core_id = topology[cpu]
    core_ids = sorted({c for s, c in topology.values() if s == socket})
    siblings = sorted(c for c, place in topology.items() if place == (socket, core_id))
    thread = siblings.index(cpu)
    if thread > 1:
        raise RunError(f"CPU {cpu} is hyperthread {thread} of its core; a SampleVNF's "
                       "config names only a core's first two")
    return f"s{socket}c{core_ids.index(core_id)}{'h' if thread else ''}"


def names(cpus: Iterable[int], topology: Topology) -> dict[str, str]:
    """Each CPU's number (as the config holds it) -> its notation."""
    return {str(cpu): notation(cpu, topology) for cpu in cpus}


def _listed(topology: Topology) -> str:
    return ", ".join(map(str, sorted(topology))) or "none found"
