"""What killed runs left on a node (a pod's server, a VM, this machine), given back.

The node's ledger (``node_ledger``) names the run that made each change; a run of
this controller that is no longer alive gets its processes stopped (the ones nsb
starts over SSH run detached and outlive it), its DPDK runtime dirs, hugepage
files and work dirs removed, its NICs put back on their drivers, its hugepages
taken out of the pool again and the undo scripts it left run (a VNF that changed
the node's own configuration, such as Linux forwarding, writes one before it changes
anything). Records of another controller are left to it.
"""

from __future__ import annotations

import base64
import logging
import shlex
from collections.abc import Callable

from nsb.executors.base import Executor
from nsb.nodes import hugepage_pool, nic_binding, node_ledger

LOG = logging.getLogger(__name__)


# everything nsb names after a run: DPDK file prefixes and work dirs (nsb-<task_id>-...),
# the SSH executor's run dir (through /proc: a guest's busybox may have no pkill)
_STOP_RUN = r'''id=$1
for d in /proc/[0-9]*; do pid=${d#/proc/}
  [ "$pid" = "$$" ] && continue
  case "$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)" in *nsb-$id*) kill -9 "$pid" 2>/dev/null;; esac
done; sleep 0.5
rm -rf /var/run/dpdk/nsb-$id-* /var/run/.nsb-$id-* /dev/hugepages/nsb-$id-* \
  /mnt/huge/nsb-$id-* /tmp/nsb-$id /tmp/nsb-$id-*'''


def sign_in(executor: Executor, task_id: str) -> None:
    """Write down that run ``task_id`` works on the node (``sign_off`` when it ends)."""
    node_ledger.write(executor, _run_record(task_id))


def sign_off(executor: Executor, task_id: str) -> None:
    node_ledger.remove(executor, _run_record(task_id))


def undo_record(task_id: str, key: str, script: str) -> node_ledger.Record:
    """A ledger record whose script gives back what ``key`` (e.g. a VNF) changed on the
    node, run by the next run's ``give_back`` should this one be killed."""
    value = base64.b64encode(script.encode()).decode()
    return node_ledger.Record(task_id, "undo", key, value, node_ledger.controller())


def _run_record(task_id: str) -> node_ledger.Record:
    return node_ledger.Record(task_id, "run", "nsb", "-", node_ledger.controller())


def give_back(executor: Executor, alive: Callable[[str], bool]) -> list[str]:
    """Undo what dead runs of this controller left; one item per change undone."""
    done = []
    records = [r for r in node_ledger.read_all(executor) if not alive(r.task_id)
               and (not r.controller or r.controller == node_ledger.controller())]
    for task_id in sorted({r.task_id for r in records}):  # its processes first
        executor.run(["sh", "-c", _STOP_RUN, "sh", task_id], check=False, timeout=60)
    for record in sorted(records, key=lambda r: r.kind == "run"):
        if record.kind == "run":
            node_ledger.remove(executor, record)
            done.append(f"what run {record.task_id} started")
        elif record.kind == "nic":
            nic_binding.give_back(executor, record)
            done.append(f"NIC {record.key} back on {record.value}")
        elif record.kind == "undo":
            executor.run(["sh", "-c", f"echo {shlex.quote(record.value)} | base64 -d | sh"],
                         check=False, timeout=60)
            node_ledger.remove(executor, record)
            done.append(f"what {record.key} changed")
        elif record.kind == "hugepages":
            pages = int(record.value) if record.value.isdigit() else 0
            hugepage_pool.shrink(executor, pages, record.key)  # key: 2M or 1G
            node_ledger.remove(executor, record)
            done.append(f"{pages} hugepages" + (" of 1 GB" if record.key == "1G" else ""))
    if done:
        LOG.warning("%s: gave back what killed runs left: %s", executor.name, ", ".join(done))
    return done
