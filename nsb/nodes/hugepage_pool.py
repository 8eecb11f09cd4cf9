"""A node's pool of 2 MB hugepages: how many it has, and shrinking it again.

The primitive under the VNFs' reservations and the clean-up of killed runs; it
keeps no books (the run registry does).
"""

from __future__ import annotations

from nsb.executors.base import Executor

POOL = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
PAGE_MB = 2


def count(executor: Executor) -> int:
    return int(executor.run(["cat", POOL]).stdout.strip() or 0)


def grow(executor: Executor, pages: int) -> tuple[int, int]:
    """Ask for ``pages`` more; (pages before, pages added: fewer when memory is too
    fragmented)."""
    before = count(executor)
    executor.run(["sh", "-c", f'echo {before + pages} > "{POOL}"'])
    return before, count(executor) - before


def shrink(executor: Executor, pages: int) -> None:
    """Take ``pages`` out of the pool (pages in use stay until they are freed)."""
    if pages <= 0:
        return
    now = count(executor)
    executor.run(["sh", "-c", f'echo {max(0, now - pages)} > "{POOL}"'], check=False)
