"""A node's pool of hugepages (2 MB ones, or the 1 GB pool): how many it has, and
shrinking it again.

The primitive under the VNFs' reservations and the clean-up of killed runs; it
keeps no books (the run registry does).
"""

from __future__ import annotations

from nsb.executors.base import Executor

POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
PAGE_MB = 2
POOL_1G = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"


def path(size: str = "2M") -> str:
    """The pool of pages of ``size`` (2M or 1G)."""
    return POOL_1G if size == "1G" else POOL


def count(executor: Executor, size: str = "2M") -> int:
    return int(executor.run(["cat", path(size)]).stdout.strip() or 0)


def grow(executor: Executor, pages: int, size: str = "2M") -> tuple[int, int]:
    """Ask for ``pages`` more; (pages before, pages added: fewer when memory is too
    fragmented)."""
    before = count(executor, size)
    executor.run(["sh", "-c", f'echo {before + pages} > "{path(size)}"'])
    return before, count(executor, size) - before


def shrink(executor: Executor, pages: int, size: str = "2M") -> None:
    """Take ``pages`` out of the pool (pages in use stay until they are freed)."""
    if pages <= 0:
        return
    now = count(executor, size)
    executor.run(["sh", "-c", f'echo {max(0, now - pages)} > "{path(size)}"'], check=False)
