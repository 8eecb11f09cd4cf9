"""The hugepages of a SampleVNF: added to the node's pool for the run, mounted for
it alone, given back.

DPDK 17.05 (the SampleVNFs' DPDK) takes its memory as one physically contiguous
piece: 2 MB pages serve until the node's memory is fragmented, one 1 GB page
always does. So a 1 GB page is added when the node can, 2 MB pages otherwise.
The hugetlbfs of that page size is mounted in a mount namespace of the VNF's
own (``unshare -m``), where its EAL finds it: the mount and the files on it
end with the process, however it ends, and no other program sees them.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from nsb.errors import PrerequisiteError
from nsb.executors.base import Executor
from nsb.vnfs import hugepages

POOL_1G = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"


@dataclass
class Reserved:
    page: str  # "1G" or "2M": the mount's page size
    pages: int  # added to the node's pool of that size, to give back


def pages_1g(memory_mb: int) -> int:
    return math.ceil(memory_mb / 1024)


def pages_2m(memory_mb: int) -> int:
    """2 MB pages for ``memory_mb``, with room for the EAL's own (as testpmd asks)."""
    return hugepages.pages_for(memory_mb) + 16


def _count_1g(executor: Executor) -> int | None:
    shown = executor.run(["cat", POOL_1G], check=False)
    text = shown.stdout.strip()
    return int(text) if shown.returncode == 0 and text.isdigit() else None


def reserve(executor: Executor, memory_mb: int, who: str, task_id: str,
            page: str = "auto") -> Reserved:
    """Pages for ``memory_mb`` on the node: 1 GB ones when ``page`` allows and the node
    can add them (memory compacted first), else 2 MB ones (``hugepages.reserve``)."""
    if page in ("auto", "1G"):
        before = _count_1g(executor)
        wanted = pages_1g(memory_mb)
        if before is not None:
            executor.run(["sh", "-c", "echo 1 > /proc/sys/vm/compact_memory"], check=False)
            executor.run(["sh", "-c", f'echo {before + wanted} > "{POOL_1G}"'], check=False)
            added = (_count_1g(executor) or 0) - before
            if added >= wanted:
                return Reserved("1G", added)
            _shrink_1g(executor, max(0, added))
        if page == "1G":
            raise PrerequisiteError(f"{who}: could not add {wanted} 1 GB hugepage(s) on "
                                    f"{executor.name} (hugepage_size: auto takes 2 MB pages "
                                    "then)")
    return Reserved("2M", hugepages.reserve(executor, pages_2m(memory_mb), who, task_id))


def release(executor: Executor, reserved: Reserved | None, task_id: str) -> None:
    if reserved is None or reserved.pages <= 0:
        return
    if reserved.page == "1G":
        _shrink_1g(executor, reserved.pages)
    else:
        hugepages.release(executor, reserved.pages, task_id)
    reserved.pages = 0


def _shrink_1g(executor: Executor, pages: int) -> None:
    now = _count_1g(executor)
    if now is not None and pages > 0:
        executor.run(["sh", "-c", f'echo {max(0, now - pages)} > "{POOL_1G}"'], check=False)


def own_mount(directory: str, page: str) -> list[str]:
    """What to put before a command to run it in a mount namespace of its own, with a
    hugetlbfs of ``page`` size at ``directory``."""
    mount = (f"mount -t hugetlbfs -o pagesize={page} nodev {shlex.quote(directory)} "
             '&& exec "$@"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh"]
