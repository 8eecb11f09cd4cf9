"""What killed runs left on a node (a pod's server, a VM, this machine), given back.

The node's ledger (``node_ledger``) names the run that made each change; a run of
this controller that is no longer alive gets its NICs put back on their drivers
and its hugepages taken out of the pool again. Records of another controller are
left to it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from nsb.executors.base import Executor
from nsb.nodes import hugepage_pool, nic_binding, node_ledger

LOG = logging.getLogger(__name__)


def give_back(executor: Executor, alive: Callable[[str], bool]) -> list[str]:
    """Undo what dead runs of this controller left; one item per change undone."""
    done = []
    for record in node_ledger.read_all(executor):
        if alive(record.task_id):
            continue
        if record.controller and record.controller != node_ledger.controller():
            continue
        if record.kind == "nic":
            nic_binding.give_back(executor, record)
            done.append(f"NIC {record.key} back on {record.value}")
        elif record.kind == "hugepages":
            pages = int(record.value) if record.value.isdigit() else 0
            hugepage_pool.shrink(executor, pages)
            node_ledger.remove(executor, record)
            done.append(f"{pages} hugepages")
    if done:
        LOG.warning("%s: gave back what killed runs left: %s", executor.name, ", ".join(done))
    return done
