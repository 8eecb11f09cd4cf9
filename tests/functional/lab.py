"""Helpers for functional tests: run the sample, find what a task left behind."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from nsb.runinfo import short_tag
from tests import results_schema
from tests.conftest import NSB, ROOT, SAMPLE


def start(results_conf, task_args: dict, *extra, task=SAMPLE, **popen):
    argv = NSB + ["--config-file", str(results_conf), "task", "start", str(task),
                  "--task-args", json.dumps(task_args), *extra]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)


def results_of(results_dir: Path) -> tuple[str, dict]:
    """The task id and results of the one task under ``results_dir``, checked
    against docs/results.schema.json."""
    (path,) = results_dir.glob("*/results.json")
    return path.parent.name, results_schema.check(json.loads(path.read_text()), str(path))


def leftovers(task_id: str) -> list[str]:
    """Namespaces, processes, DPDK runtime dirs and temp dirs named after ``task_id``."""
    found = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found += [f"netns {line.split()[0]}" for line in netns.splitlines() if task_id in line]
    procs = subprocess.run(["pgrep", "-af", task_id], capture_output=True, text=True).stdout
    found += [f"process {line}" for line in procs.splitlines() if "pgrep" not in line]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found += [f"link {line}" for line in links.splitlines()
              if f"nsb{short_tag(task_id)}" in line]
    found += [f"path {p}" for p in Path("/var/run/dpdk").glob(f"nsb-{task_id}-*")]
    found += [f"path {p}" for p in Path("/tmp").glob(f"nsb-{task_id}*")]
    return found


LEFTOVER_PROCESSES = ("dpdk-testpmd", "trafgen", "prox", "ovs-vswitchd", "ovsdb-server",
                      "qemu-system", "latency_probe")


def _runs_a_leftover(args: str) -> bool:
    """Whether a command line runs one of LEFTOVER_PROCESSES (a word of it is that
    program, by path or name, or that Python script): a compiler's line that only
    names a package such as .../util/proxy is not one."""
    names = {os.path.basename(word).removesuffix(".py") for word in args.split()}
    return any(name in names or (name == "qemu-system" and any(
        n.startswith(name) for n in names)) for name in LEFTOVER_PROCESSES)


def libvirt_domains() -> list[str]:
    """Every domain libvirt knows (running or not); [] where libvirtd does not run."""
    if not Path("/var/run/libvirt/libvirt-sock").exists() or not shutil.which("virsh"):
        return []
    listed = subprocess.run(["virsh", "-c", "qemu:///system", "list", "--all", "--name"],
                            capture_output=True, text=True, timeout=30).stdout
    return [name.strip() for name in listed.splitlines() if name.strip()]


def snapshot() -> set[str]:
    """Everything a run could leave on this machine, whatever its task id.

    Namespaces, links and /tmp entries named nsb*, DPDK runtime dirs, the
    processes nsb starts, and files in the working directory and the checkout
    (PROX writes ./prox.log unless told otherwise).
    """
    found = set()
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found |= {f"netns {line.split()[0]}" for line in netns.splitlines() if "nsb" in line}
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found |= {f"link {line.split(':')[1].strip()}" for line in links.splitlines()
              if "nsb" in line}
    procs = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    for line in procs.splitlines():
        pid, _, args = line.strip().partition(" ")
        if _runs_a_leftover(args):
            found.add(f"process {pid} {args[:120]}")
    dpdk = Path("/var/run/dpdk")
    found |= {f"path {p}" for p in dpdk.iterdir()} if dpdk.is_dir() else set()
    found |= {f"path {p}" for p in Path("/tmp").glob("nsb*")}
    found |= {f"path {p}" for p in Path("/tmp").glob("trex-bird")}  # TRex's launcher
    found |= {f"domain {name}" for name in libvirt_domains() if "nsb" in name}
    for folder in {Path.cwd(), ROOT}:
        found |= {f"path {p}" for p in folder.iterdir() if not p.name.startswith(".pytest")}
    return found
