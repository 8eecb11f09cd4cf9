"""2 MB hugepages a VNF needs, added to the node's pool while it runs and given back.

OVS-DPDK and a testpmd serving vhost-user sockets need hugepages (shared with
the other side of the socket). A VNF reserves what it needs on top of what the
node already has and returns exactly that at teardown, so a node configured with
hugepages keeps its own and a lab without any ends with none.
"""

from __future__ import annotations

import math

from nsb.errors import PrerequisiteError
from nsb.executors.base import Executor

POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
PAGE_MB = 2


def pages_for(megabytes: int) -> int:
    return math.ceil(megabytes / PAGE_MB)


def _count(executor: Executor) -> int:
    return int(executor.run(["cat", POOL]).stdout.strip() or 0)


def reserve(executor: Executor, pages: int, who: str) -> int:
    """Add ``pages`` to the pool; returns how many were added (give them back with
    ``release``). Fewer than asked (memory too fragmented) is one clear line."""
    before = _count(executor)
    executor.run(["sh", "-c", f'echo {before + pages} > "{POOL}"'])
    added = _count(executor) - before
    if added < pages:
        release(executor, added)
        raise PrerequisiteError(f"{who}: could not add {pages} 2 MB hugepages on "
                                f"{executor.name} (got {added}; {POOL} was {before})")
    return added


def release(executor: Executor, pages: int) -> None:
    if pages <= 0:
        return
    now = _count(executor)
    executor.run(["sh", "-c", f'echo {max(0, now - pages)} > "{POOL}"'], check=False)
