"""Run one of ansible/'s playbooks against a pod and say, per node, what happened.

ansible-playbook's own output is long; nsb writes the inventory from the pod file
(nsb.nodes.inventory), records every task result through a small callback plugin,
and turns them into one line per node: what it got (the roles' "Say what the node
got" messages), how many tasks changed something, or the one failure or
unreachability that stopped it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from nsb.errors import PrerequisiteError

# records every task result, one JSON line each: the short fields nsb reads and the
# whole result (what tests assert on); a failure ansible was told to ignore is 'ignored'
CALLBACK = '''
import json, os
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "nsb_events"
    CALLBACK_NEEDS_ENABLED = True

    def _write(self, status, result):
        task = result._task
        record = {"status": status, "host": result._host.get_name(), "task": task.name,
                  "role": task._role.get_name() if task._role else None,
                  "changed": bool(result._result.get("changed")),
                  "msg": str(result._result.get("msg") or result._result.get("stderr") or ""),
                  "result": result._result}
        with open(os.environ["NSB_ANSIBLE_EVENTS"], "a") as out:
            out.write(json.dumps(record, default=str) + "\\n")

    def v2_runner_on_ok(self, result):
        self._write("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._write("ignored" if ignore_errors else "failed", result)

    def v2_runner_on_skipped(self, result):
        self._write("skipped", result)

    def v2_runner_on_unreachable(self, result):
        self._write("unreachable", result)
'''
GOT_TASK = "Say what the node got"


@dataclass
class NodeOutcome:
    host: str
    changed: int = 0
    got: list[str] = field(default_factory=list)
    failed: str = ""  # the role and message that stopped it
    unreachable: str = ""
    ran: int = 0  # task results seen

    @property
    def ok(self) -> bool:
        return not self.failed and not self.unreachable

    def line(self) -> str:
        if self.unreachable:
            return f"{self.host}: UNREACHABLE: {self.unreachable}"
        if self.failed:
            return f"{self.host}: FAILED: {self.failed}"
        got = "; ".join(self.got) or "nothing to install"
        return f"{self.host}: ok, {self.changed} change(s): {got}"


def ansible_playbook() -> str:
    """ansible-playbook beside this Python (nsb's virtualenv), else on PATH."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    found = str(beside) if beside.exists() else shutil.which("ansible-playbook")
    if not found:
        raise PrerequisiteError("ansible-playbook not found: pip install 'ansible-core>=2.19'")
    return found


def run(pod: Path, playbook: Path, variables: dict, check: bool = False,
        timeout_s: float = 3600.0) -> list[NodeOutcome]:
    """One outcome per host of the pod, in the pod's order."""
    from nsb.nodes.inventory import inventory_from_pod

    inventory = inventory_from_pod(pod)
    hosts = [host for group in inventory["all"]["children"].values()
             for host in group["hosts"]]
    with tempfile.TemporaryDirectory(prefix="nsb-ansible-") as work:
        work_dir = Path(work)
        (work_dir / "inventory.json").write_text(json.dumps(inventory))
        (work_dir / "vars.json").write_text(json.dumps(variables))
        (work_dir / "callbacks").mkdir()
        (work_dir / "callbacks" / "nsb_events.py").write_text(CALLBACK)
        events = work_dir / "events.jsonl"
        argv = [ansible_playbook(), "-i", str(work_dir / "inventory.json"), str(playbook),
                "-e", f"@{work_dir / 'vars.json'}", *(["--check"] if check else [])]
        env = {**os.environ, "ANSIBLE_CALLBACK_PLUGINS": str(work_dir / "callbacks"),
               "ANSIBLE_CALLBACKS_ENABLED": "nsb_events", "NSB_ANSIBLE_EVENTS": str(events),
               "ANSIBLE_HOST_KEY_CHECKING": os.environ.get("ANSIBLE_HOST_KEY_CHECKING",
                                                           "False"),
               "ANSIBLE_RETRY_FILES_ENABLED": "False", "ANSIBLE_NOCOLOR": "1"}
        done = subprocess.run(argv, capture_output=True, text=True, env=env,
                              timeout=timeout_s, check=False)
        records = [json.loads(line) for line in events.read_text().splitlines()] \
            if events.exists() else []
    outcomes = outcomes_of(hosts, records)
    for outcome in outcomes:
        if done.returncode and outcome.ok and not outcome.ran:
            outcome.failed = f"not run: ansible-playbook stopped first (exit {done.returncode})"
    if done.returncode and all(o.ok for o in outcomes):  # a syntax or inventory error
        tail = " ".join((done.stderr or done.stdout).split())[-300:]
        raise PrerequisiteError(f"ansible-playbook {playbook.name} failed: {tail}")
    return outcomes


def outcomes_of(hosts: list[str], records: list[dict]) -> list[NodeOutcome]:
    by_host = {host: NodeOutcome(host) for host in hosts}
    for record in records:
        outcome = by_host.setdefault(record["host"], NodeOutcome(record["host"]))
        outcome.ran += 1
        message = " ".join(record.get("msg", "").split())
        if record["status"] == "unreachable":
            outcome.unreachable = outcome.unreachable or message
        elif record["status"] == "failed":
            where = record.get("role") or "playbook"
            outcome.failed = outcome.failed or f"{where}: {record['task']}: {message}"
        elif record["status"] == "ok" and record["task"] == GOT_TASK and message:
            outcome.got.append(message)
        if record.get("changed") and record["status"] == "ok":
            outcome.changed += 1
    return list(by_host.values())
