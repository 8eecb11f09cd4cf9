"""2 MB hugepages a VNF needs, added to the node's pool while it runs and given back.

OVS-DPDK and a testpmd serving vhost-user sockets need hugepages (shared with
the other side of the socket). A VNF reserves what it needs on top of what the
node already has and returns exactly that at teardown, so a node configured with
hugepages keeps its own and a lab without any ends with none.
"""

from __future__ import annotations

import math
from pathlib import Path

from nsb.errors import PrerequisiteError
from nsb.executors.base import Executor
from nsb.executors.local import LocalExecutor

POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
PAGE_MB = 2


def pages_for(megabytes: int) -> int:
    return math.ceil(megabytes / PAGE_MB)


def hugetlbfs_mounted() -> bool:
    """Some hugetlbfs is mounted on this machine (libvirt backs VM memory with it)."""
    return any(line.split()[2:3] == ["hugetlbfs"]
               for line in Path("/proc/mounts").read_text().splitlines())


def _count(executor: Executor) -> int:
    return int(executor.run(["cat", POOL]).stdout.strip() or 0)


def reserve(executor: Executor, pages: int, who: str, task_id: str = "") -> int:
    """Add ``pages`` to the pool; returns how many were added (give them back with
    ``release``). Fewer than asked (memory too fragmented) is one clear line. Pages
    added on this machine are noted under ``task_id``: if the run is killed, the next
    one gives them back."""
    before = _count(executor)
    executor.run(["sh", "-c", f'echo {before + pages} > "{POOL}"'])
    added = _count(executor) - before
    _note(executor, task_id, added)
    if added < pages:
        release(executor, added, task_id)
        raise PrerequisiteError(f"{who}: could not add {pages} 2 MB hugepages on "
                                f"{executor.name} (got {added}; {POOL} was {before})")
    return added


def release(executor: Executor, pages: int, task_id: str = "") -> None:
    if pages <= 0:
        return
    now = _count(executor)
    executor.run(["sh", "-c", f'echo {max(0, now - pages)} > "{POOL}"'], check=False)
    _note(executor, task_id, -pages)


def _note(executor: Executor, task_id: str, pages: int) -> None:
    if task_id and pages and isinstance(executor, LocalExecutor):  # this machine's pool
        from nsb import leftovers

        leftovers.note_hugepages(task_id, pages)
