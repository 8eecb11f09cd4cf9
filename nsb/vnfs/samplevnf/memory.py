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

from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import Executor
from nsb.vnfs import hugepages


@dataclass
class Reserved:
    page: str  # "1G" or "2M": the mount's page size
    pages: int  # added to the node's pool of that size, to give back


def pages_1g(memory_mb: int) -> int:
    return math.ceil(memory_mb / 1024)


def pages_2m(memory_mb: int) -> int:
    """2 MB pages for ``memory_mb``, with room for the EAL's own (as testpmd asks)."""
    return hugepages.pages_for(memory_mb) + 16


def reserve(executor: Executor, memory_mb: int, who: str, task_id: str,
            page: str = "auto") -> Reserved:
    """Pages for ``memory_mb`` on the node: 1 GB ones when ``page`` allows and the node
    can add them (memory compacted first), else 2 MB ones. Both are noted for the next
    run to give back should this one be killed."""
    if page in ("auto", "1G"):
        executor.run(["sh", "-c", "echo 1 > /proc/sys/vm/compact_memory"], check=False)
        try:
            return Reserved("1G", hugepages.reserve(executor, pages_1g(memory_mb), who,
                                                    task_id, size="1G"))
        except (PrerequisiteError, RunError, ValueError):
            if page == "1G":  # the one line of reserve, or a node without the pool
                raise PrerequisiteError(f"{who}: could not add {pages_1g(memory_mb)} 1 GB "
                                        f"hugepage(s) on {executor.name} (hugepage_size: "
                                        "auto takes 2 MB pages then)") from None
    return Reserved("2M", hugepages.reserve(executor, pages_2m(memory_mb), who, task_id))


def release(executor: Executor, reserved: Reserved | None, task_id: str) -> None:
    if reserved is None or reserved.pages <= 0:
        return
    hugepages.release(executor, reserved.pages, task_id, size=reserved.page)
    reserved.pages = 0


def own_mount(directory: str, page: str) -> list[str]:
    """What to put before a command to run it in a mount namespace of its own, with a
    hugetlbfs of ``page`` size at ``directory``."""
    mount = (f"mount -t hugetlbfs -o pagesize={page} nodev {shlex.quote(directory)} "
             '&& exec "$@"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh"]
