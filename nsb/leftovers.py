"""What a killed run left on this machine, found and removed by the next run.

Teardown cannot run after SIGKILL (or a power cut of the controller), so every
run registers itself: ``<state dir>/<task_id>.json`` says where its results
are, and an exclusive lock on it is held for as long as the run lives. Every
``nsb task start`` first looks at the registry: a file whose lock it can take
belongs to a run that is gone, and everything that run created here carries its
task id in its name: network namespaces and what runs in them, veth pairs,
processes (DPDK file prefixes, /tmp/nsb-<id> work dirs: testpmd, PROX, OVS),
DPDK runtime dirs and hugepage files. Those are removed, the 2 MB pages the
run added to this machine's pool (written down beside its entry) are given
back, and the run's results.json, left at "running", is marked "killed".

Remote nodes (pods over SSH) are not visited: that needs the pod, and the
processes nsb starts there end with their SSH session.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nsb.contexts.netns import netns_pids
from nsb.events import TaskStatus
from nsb.nodes import hugepage_pool
from nsb.outputs import atomic_file
from nsb.runinfo import short_tag

LOG = logging.getLogger(__name__)

def _state_dir() -> Path:
    """/run/nsb/runs for root; a user's own runtime (or cache) directory otherwise."""
    if os.environ.get("NSB_STATE_DIR"):
        return Path(os.environ["NSB_STATE_DIR"])
    if os.geteuid() == 0:
        return Path("/run/nsb/runs")
    runtime = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".cache")
    return Path(runtime) / "nsb" / "runs"


STATE_DIR = _state_dir()
HUGEPAGE_DIRS = (Path("/dev/hugepages"), Path("/mnt/huge"))
TREX_BIRD_DIR = Path("/tmp/trex-bird")  # TRex's launcher makes it at every start
_TASK_ID = re.compile(r"^[0-9a-z][0-9a-z-]{6,38}[0-9a-z]$")
_PLURAL = {"process": "processes"}


@dataclass
class Removed:
    """What was cleaned up after one killed run."""

    task_id: str
    items: list[str] = field(default_factory=list)
    hugepages: int = 0  # 2 MB pages taken out of the pool again

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for item in self.items:
            kind = item.split(" ", 1)[0]
            kinds[kind] = kinds.get(kind, 0) + 1
        parts = [f"{n} {kind if n == 1 else _PLURAL.get(kind, kind + 's')}"
                 for kind, n in kinds.items()]
        if self.hugepages:
            parts.append(f"{self.hugepages} hugepages given back")
        return ", ".join(parts)


_UNUSABLE: set[Path] = set()  # registries already warned about in this process


def _unusable(exc: OSError) -> None:
    """One warning per registry that cannot be read or written (another user's HOME,
    as ``sudo -u`` keeps it; a read-only /run): the run goes on without its net."""
    if STATE_DIR in _UNUSABLE:
        return
    _UNUSABLE.add(STATE_DIR)
    LOG.warning("cannot use the run registry %s (%s; set NSB_STATE_DIR to a directory of "
                "yours): if nsb is killed, the next run cannot clean up after this one",
                STATE_DIR, exc.strerror or exc)


def _ledger(task_id: str, size: str) -> Path:
    return STATE_DIR / (f"{task_id}.hugepages" if size == "2M" else f"{task_id}.hugepages-{size}")


def note_hugepages(task_id: str, pages: int, size: str = "2M") -> None:
    """Write down that run ``task_id`` added ``pages`` (negative: gave back) pages of
    ``size`` (2M, 1G) to this machine's pool, for the next run to give back if this
    one is killed."""
    path = _ledger(task_id, size)
    try:
        total = _pages_noted(path) + pages
        if total > 0:
            STATE_DIR.mkdir(parents=True, exist_ok=True)
            path.write_text(str(total))
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        _unusable(exc)


def _pages_noted(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def in_registry(task_id: str) -> bool:
    """Whether the registry holds ``task_id`` (a run alive or killed): a fresh task id
    is never one of them. A registry that cannot be read holds none (a warning)."""
    try:
        os.stat(STATE_DIR / f"{task_id}.json")
    except FileNotFoundError:
        return False
    except OSError as exc:
        _unusable(exc)
        return False
    return True


@contextlib.contextmanager
def registered(task_id: str, results_dir: Path, task_file: str) -> Iterator[None]:
    """Hold this run's registry entry while the body runs; removed when it ends."""
    try:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        path = STATE_DIR / f"{task_id}.json"
        handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:  # not root, read-only /run: the run goes on without a net
        _unusable(exc)
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        entry = {"task_id": task_id, "pid": os.getpid(), "started": time.time(),
                 "results_dir": str(results_dir), "task_file": task_file}
        os.write(handle, json.dumps(entry).encode())
        yield
    finally:
        if _give_back_hugepages(task_id):  # teardown could not: nothing uses them now
            LOG.warning("task %s: gave back the hugepages its teardown left", task_id)
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(handle)


def run_alive(task_id: str) -> bool:
    """A run of this machine is alive: its registry entry is there and locked (the
    entries of killed runs are gone once ``clean_killed_runs`` ran)."""
    path = STATE_DIR / f"{task_id}.json"
    try:
        handle = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:  # cannot tell (another user's registry): leave its things alone
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(handle)
    return False


def clean_killed_runs() -> list[Removed]:
    """Remove what runs that are gone left behind; one warning line per run."""
    try:
        names = sorted(os.listdir(STATE_DIR))
    except FileNotFoundError:
        return []
    except OSError as exc:
        _unusable(exc)
        return []
    cleaned = []
    for name in names:
        path = STATE_DIR / name
        task_id = path.stem
        if path.suffix != ".json" or not _TASK_ID.match(task_id):
            continue
        try:
            handle = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # that run is alive
            entry = _entry(path)
            removed = remove_traces(task_id)
            removed.hugepages = _give_back_hugepages(task_id)
            _mark_killed(entry.get("results_dir"), task_id)
            path.unlink()
        finally:
            os.close(handle)
        LOG.warning("task %s ended without cleaning up (nsb was killed?); removed what it "
                    "left: %s", task_id, removed.summary() or "nothing")
        cleaned.append(removed)
    return cleaned


def _give_back_hugepages(task_id: str) -> int:
    """The pages the run noted, out of the pool again (after its processes and files
    that held them are gone); how many."""
    from nsb.executors.local import LocalExecutor

    given = 0
    for size in ("2M", "1G"):
        ledger = _ledger(task_id, size)
        pages = _pages_noted(ledger)
        if pages > 0:
            hugepage_pool.shrink(LocalExecutor(), pages, size)
            given += pages
        ledger.unlink(missing_ok=True)
    return given


def _entry(path: Path) -> dict:
    try:
        entry = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return entry if isinstance(entry, dict) else {}


def remove_traces(task_id: str) -> Removed:
    """Everything on this machine named after ``task_id``: processes first (they hold
    namespaces, sockets and hugepages), then namespaces, links, files."""
    removed = Removed(task_id)
    from nsb.contexts.libvirt_host import remove_task_domains

    removed.items += [f"domain {name}" for name in remove_task_domains(task_id)]
    namespaces = [ns for ns in _netns_names() if ns.startswith(f"nsb-{task_id}-")]
    pids = set(_pids_naming(f"nsb-{task_id}"))
    for ns in namespaces:
        pids |= netns_pids(ns)
    switches = [pid for pid in pids if _comm(pid).startswith("ovs-vswitchd")]
    trex = any("t-rex-64" in _comm(pid) for pid in pids)
    for pid in sorted(pids):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            removed.items.append(f"process {pid}")
    _wait_gone(pids)
    if switches and not [p for p in _all_pids() if _comm(p).startswith("ovs-vswitchd")]:
        # a killed userspace OVS leaves its datapath's tap in this namespace
        if subprocess.run(["ip", "link", "delete", "ovs-netdev"],
                          capture_output=True).returncode == 0:
            removed.items.append("link ovs-netdev")
    for ns in namespaces:
        if subprocess.run(["ip", "netns", "delete", ns], capture_output=True).returncode == 0:
            removed.items.append(f"namespace {ns}")
    for link in _links(f"nsb{short_tag(task_id)}"):
        if subprocess.run(["ip", "link", "delete", link], capture_output=True).returncode == 0:
            removed.items.append(f"link {link}")
    paths = [Path(f"/tmp/nsb-{task_id}"), *Path("/tmp").glob(f"nsb-{task_id}-*"),
             *Path("/var/run/dpdk").glob(f"nsb-{task_id}-*"),
             *Path("/var/run").glob(f".nsb-{task_id}-*")]  # DPDK 17.05's (SampleVNFs)
    for directory in HUGEPAGE_DIRS:
        if directory.is_dir():
            paths += directory.glob(f"nsb-{task_id}-*")
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        if not path.exists():
            removed.items.append(f"path {path}")
    if trex and not any("t-rex-64" in _comm(pid) for pid in _all_pids()):
        with contextlib.suppress(OSError):  # a killed TRex's launcher's, if empty
            TREX_BIRD_DIR.rmdir()
            removed.items.append(f"path {TREX_BIRD_DIR}")
    return removed


def _mark_killed(results_dir: str | None, task_id: str) -> None:
    if not results_dir:
        return
    path = Path(results_dir) / "results.json"
    if not path.exists():
        return
    try:
        doc = json.loads(path.read_text())
        if doc.get("task", {}).get("status") != TaskStatus.RUNNING:
            return
        doc["task"].update(status=TaskStatus.KILLED, error="nsb was killed during the run; a "
                           "later run removed what it left")
        atomic_file.write(path, json.dumps(doc, indent=1))
    except (OSError, ValueError, AttributeError) as exc:
        LOG.warning("task %s: cannot mark %s as killed: %s", task_id, path, exc)


def _netns_names() -> list[str]:
    try:
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    except OSError:
        return []
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def _all_pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _pids_naming(marker: str) -> list[int]:
    """Processes whose command line contains ``marker`` (never this one)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found.append(int(entry.name))
    return found


def _links(prefix: str) -> list[str]:
    listed = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    names = [line.split(":")[1].strip().split("@")[0] for line in listed.splitlines()
             if ":" in line]
    return [name for name in names if name.startswith(prefix)]


def _wait_gone(pids: set[int], timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.05)
