"""2 MB hugepages a VNF needs, added to the node's pool while it runs and given back.

OVS-DPDK and a testpmd serving vhost-user sockets need hugepages (shared with
the other side of the socket). A VNF reserves what it needs on top of what the
node already has and returns exactly that at teardown, so a node configured with
hugepages keeps its own and a lab without any ends with none.
"""

from __future__ import annotations

import math
from pathlib import Path

from nsb import leftovers
from nsb.errors import PrerequisiteError
from nsb.executors.base import Executor
from nsb.executors.local import LocalExecutor
from nsb.nodes import hugepage_pool, node_ledger
from nsb.nodes.hugepage_pool import PAGE_MB


def pages_for(megabytes: int) -> int:
    return math.ceil(megabytes / PAGE_MB)


def hugetlbfs_mounted() -> bool:
    """Some hugetlbfs is mounted on this machine (libvirt backs VM memory with it)."""
    return any(line.split()[2:3] == ["hugetlbfs"]
               for line in Path("/proc/mounts").read_text().splitlines())


def reserve(executor: Executor, pages: int, who: str, task_id: str = "",
            size: str = "2M") -> int:
    """Add ``pages`` to the pool (of 2 MB pages, or ``size`` 1G); returns how many were
    added (give them back with ``release``). Fewer than asked (memory too fragmented)
    is one clear line. Pages added are noted under ``task_id``: if the run is killed,
    the next one gives them back."""
    before, added = hugepage_pool.grow(executor, pages, size)
    _note(executor, task_id, added, size)
    if added < pages:
        release(executor, added, task_id, size)
        shown = "1 GB" if size == "1G" else "2 MB"
        raise PrerequisiteError(f"{who}: could not add {pages} {shown} hugepages on "
                                f"{executor.name} (got {added}; {hugepage_pool.path(size)} "
                                f"was {before})")
    return added


def release(executor: Executor, pages: int, task_id: str = "", size: str = "2M") -> None:
    if pages <= 0:
        return
    hugepage_pool.shrink(executor, pages, size)
    _note(executor, task_id, -pages, size)


def _note(executor: Executor, task_id: str, pages: int, size: str = "2M") -> None:
    if not (task_id and pages):
        return
    if isinstance(executor, LocalExecutor):  # this machine's pool: the run registry
        leftovers.note_hugepages(task_id, pages, size)
        return
    # a remote node's pool: its own ledger, for the next run if this one is killed
    records = [r for r in node_ledger.read_all(executor)
               if r.task_id == task_id and r.kind == "hugepages" and r.key == size]
    total = pages + sum(int(r.value) for r in records if r.value.isdigit())
    record = node_ledger.Record(task_id, "hugepages", size, str(total),
                                node_ledger.controller())
    if total > 0:
        node_ledger.write(executor, record)
    else:
        node_ledger.remove(executor, record)
