"""What a run changed on a node, written down on that node until it is given back.

A run killed with SIGKILL cannot give back the NICs it bound or the hugepages it
added on a pod's servers. Each such change is a small file on the node,
``/run/nsb/ledger/<task_id>.<kind>.<key>`` (tmpfs: a reboot undoes the change and the
record alike), removed when the change is undone. The next run that reaches the
node gives back what runs no longer alive left there (see ``nic_binding`` and
``nsb.vnfs.hugepages``).
"""

from __future__ import annotations

import shlex
import socket
from dataclasses import dataclass

from nsb.executors.base import Executor

LEDGER_DIR = "/run/nsb/ledger"


@dataclass(frozen=True)
class Record:
    task_id: str
    kind: str  # "nic", "hugepages"
    key: str  # the PCI address of a NIC; "2M" for hugepages
    value: str  # what to give back (the NIC's driver before, the number of pages)
    controller: str  # the host nsb ran on

    @property
    def file_name(self) -> str:
        return f"{self.task_id}.{self.kind}.{self.key}"


def controller() -> str:
    return socket.gethostname()


def write(executor: Executor, record: Record) -> None:
    text = f"{record.value} {record.controller}"
    path = f"{LEDGER_DIR}/{record.file_name}"
    executor.run(["sh", "-c", f"mkdir -p {LEDGER_DIR} && printf '%s\\n' {shlex.quote(text)} "
                              f"> {shlex.quote(path)}"])


def remove(executor: Executor, record: Record) -> None:
    executor.run(["rm", "-f", f"{LEDGER_DIR}/{record.file_name}"], check=False)


def read_all(executor: Executor) -> list[Record]:
    """Every record on the node (none when the directory is missing)."""
    result = executor.run(["sh", "-c", f'cd {LEDGER_DIR} 2>/dev/null || exit 0; '
                                       f'for f in *.*.*; do [ -f "$f" ] && '
                                       f'echo "$f $(cat "$f")"; done'], check=False)
    records = []
    for line in result.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0].count(".") < 2:
            continue
        task_id, kind, key = parts[0].split(".", 2)
        records.append(Record(task_id, kind, key, parts[1],
                              parts[2] if len(parts) > 2 else ""))
    return records
