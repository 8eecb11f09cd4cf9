"""A noisy neighbour: stress-ng on a node, pinned to the CPUs a task names, running
while some trials run (VSPerf's stress tests with noisy neighbours). What ran where is
read back from the node (the processes' CPU affinity as the kernel keeps it), and a CPU
the node does not have is one located line before any traffic."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from nsb.errors import RunError
from nsb.task import values

STRESSORS = ("cpu", "cache", "stream", "memrate", "vm", "matrix")

SCHEMA = {
    "description": "the neighbour: stress-ng's stressor (" + ", ".join(STRESSORS) + "), "
                   "its workers, the CPUs it is pinned to (a CPU list), the node it runs on "
                   "(default: the scenario's first VNF's) and, for cpu, the load per worker "
                   "in %",
    "type": "object",
    "additionalProperties": False,
    "required": ["cpus"],
    "properties": {
        "stressor": {"enum": list(STRESSORS), "default": "cpu"},
        "workers": {"type": "integer", "minimum": 1, "maximum": 1024, "default": 1},
        "cpus": {"type": "string", "format": "nsb-cpu-list"},
        "node": {"type": "string", "minLength": 1},
        "load_pct": {"type": "integer", "minimum": 1, "maximum": 100, "default": 100},
    },
}


@dataclass
class Neighbour:
    """stress-ng on ``executor``'s node; ``ran`` says what ran where once it started."""

    executor: object
    spec: dict
    task_id: str
    node: str
    process: object = None
    ran: dict = field(default_factory=dict)

    def argv(self) -> list[str]:
        s = self.spec
        argv = ["taskset", "-c", s["cpus"], "stress-ng", f"--{s.get('stressor', 'cpu')}",
                str(s.get("workers", 1)), "--timeout", "0", "--quiet",
                # the run's name in its command line: a killed run's neighbour is found
                "--log-file", f"/tmp/nsb-{self.task_id}-neighbour.log"]
        if s.get("stressor", "cpu") == "cpu":
            argv += ["--cpu-load", str(s.get("load_pct", 100))]
        return argv

    def __enter__(self) -> Neighbour:
        self.process = self.executor.start(self.argv())
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:  # its workers forked and pinned
            if self.process.poll() is not None:
                raise RunError(f"the neighbour ({' '.join(self.argv())}) on {self.node} "
                               f"exited with {self.process.poll()} at start")
            self.ran = self._read_back()
            if self.ran.get("workers", 0) >= self.spec.get("workers", 1):
                break
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            self.process.stop(grace_s=3.0)
        self.executor.run(["rm", "-f", f"/tmp/nsb-{self.task_id}-neighbour.log"], check=False)

    def _read_back(self) -> dict:
        """stress-ng's processes on the node (its workers rename themselves, so they are
        found as its children) and the CPUs the kernel lets each run on."""
        listed = self.executor.run(["python3", "-I", "-S", "-c", _READ_BACK,
                                    f"nsb-{self.task_id}"], check=False).stdout
        found = dict(line.split(" ", 1) for line in listed.splitlines() if " " in line.strip())
        workers = len(found) - 1 if found else 0
        where = getattr(self.executor, "where", None) or getattr(self.executor, "name", "")
        return {"node": self.node, "runs_in": str(where),
                "stressor": self.spec.get("stressor", "cpu"),
                "cpus": self.spec["cpus"], "load_pct": self.spec.get("load_pct", 100)
                if self.spec.get("stressor", "cpu") == "cpu" else None,
                "processes": len(found), "workers": max(0, workers),
                "cpus_allowed": sorted(set(found.values()))}


# "pid cpus-allowed" of each stress-ng process whose command line names the neighbour
# (argv[1] and "-neighbour": not a shell that started it, nor this script) and of each
# of its children, from /proc: nodes (a CNF's image too) may lack pgrep, never python3
# (nsb's feeds need it)
_READ_BACK = r"""
import os, sys
mark = sys.argv[1] + "-neighbour"
procs = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        ppid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
        allowed = [line.split(":", 1)[1].strip() for line in open(f"/proc/{pid}/status")
                   if line.startswith("Cpus_allowed_list")][0]
    except (OSError, IndexError, UnicodeDecodeError):
        continue
    procs[pid] = (cmd, ppid, allowed)
for top in [pid for pid, (cmd, _, _) in procs.items()
            if mark in cmd and os.path.basename(cmd.split(" ", 1)[0]) == "stress-ng"]:
    for pid, (cmd, ppid, allowed) in procs.items():
        if pid == top or ppid == top:
            print(pid, allowed)
"""


def missing_cpus(executor, cpus: str) -> list[int]:
    """The CPUs of ``cpus`` the node does not have (its online CPUs)."""
    online = executor.run(["cat", "/sys/devices/system/cpu/online"]).stdout.strip()
    have = set(values.cpu_list(online))
    return [cpu for cpu in values.cpu_list(cpus) if cpu not in have]
