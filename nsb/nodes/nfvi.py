"""NFVi KPIs while traffic runs: CPU, memory and context switches of the VNFs.

Like VSPerf's pidstat section and NSB's collectd: during each trial, every
``interval_s`` seconds, each node's /proc is read once (through its executor,
so it works the same over SSH) and turned into rates since the previous read:
per VNF process user/system CPU %, RSS and context switches per second, and
per core utilisation of the node. Each sample is a KpiSample event tagged with
the trial it belongs to.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from nsb.errors import NsbError
from nsb.executors.base import Executor

LOG = logging.getLogger(__name__)

CLOCK_TICKS = 100  # USER_HZ on Linux
MIN_LAST_S = 0.2  # the shortest stretch the sample at a trial's end covers
# /proc/stat; per watched process a line "=== PID DESCENDANTS..." (a VNF's started
# process is often a wrapper: env, sh -c, TRex's launcher; the work is in its
# children); then /proc/PID/stat and status of each of those processes
_SCRIPT = ('cat /proc/stat; '
           'kids() { for c in $(cat /proc/$1/task/*/children 2>/dev/null); do '
           'echo $c; kids $c; done; }; '
           'all=""; for p in "$@"; do k=$(kids $p | tr "\\n" " "); echo "=== $p $k"; '
           'all="$all $p $k"; done; '
           'for p in $all; do echo "== $p"; '
           'cat /proc/$p/stat /proc/$p/status 2>/dev/null; done')


@dataclass(frozen=True)
class ProcessSample:
    utime: int  # clock ticks
    stime: int
    rss_kb: int
    voluntary: int
    nonvoluntary: int


@dataclass(frozen=True)
class Snapshot:
    at: float
    cores: dict[str, tuple[int, int]]  # cpuN -> (busy ticks, total ticks)
    processes: dict[int, ProcessSample]
    # a watched process and its descendants (just itself when not read as a tree)
    trees: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def tree(self, pid: int) -> tuple[int, ...]:
        return self.trees.get(pid, (pid,))


def read_snapshot(executor: Executor, pids: list[int]) -> Snapshot:
    out = executor.run(["sh", "-c", _SCRIPT, "sh", *map(str, pids)], timeout=10,
                       check=False).stdout
    return parse_snapshot(out, time.monotonic())


def parse_snapshot(text: str, at: float) -> Snapshot:
    """/proc/stat, then per pid '== PID', /proc/PID/stat and /proc/PID/status."""
    cores, processes, trees = {}, {}, {}
    blocks = text.split("\n== ")
    for line in blocks[0].splitlines():
        fields = line.split()
        if fields and fields[0] == "===":
            pids = tuple(int(pid) for pid in fields[1:] if pid.isdigit())
            if pids:
                trees[pids[0]] = pids
        elif fields and fields[0].startswith("cpu") and fields[0] != "cpu":
            ticks = [int(v) for v in fields[1:]]
            idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
            cores[fields[0]] = (sum(ticks[:8]) - idle, sum(ticks[:8]))
    for block in blocks[1:]:
        head, _, body = block.partition("\n")
        if not body.strip():
            continue  # the process is gone
        stat_line, _, status = body.partition("\n")
        after_name = stat_line.rsplit(")", 1)[-1].split()
        values = {}
        for line in status.splitlines():
            name, _, value = line.partition(":")
            values[name] = value.split()[0] if value.split() else "0"
        try:
            processes[int(head.strip())] = ProcessSample(
                utime=int(after_name[11]), stime=int(after_name[12]),
                rss_kb=int(values.get("VmRSS", 0)),
                voluntary=int(values.get("voluntary_ctxt_switches", 0)),
                nonvoluntary=int(values.get("nonvoluntary_ctxt_switches", 0)))
        except (IndexError, ValueError):
            LOG.debug("unreadable /proc entry for %s", head)
    return Snapshot(at, cores, processes, trees)


def process_kpis(before: ProcessSample, after: ProcessSample, seconds: float) -> dict:
    ticks = CLOCK_TICKS * seconds
    return {
        "cpu_user_pct": 100.0 * (after.utime - before.utime) / ticks,
        "cpu_system_pct": 100.0 * (after.stime - before.stime) / ticks,
        "rss_kb": float(after.rss_kb),
        "ctx_switches_voluntary_per_s": (after.voluntary - before.voluntary) / seconds,
        "ctx_switches_nonvoluntary_per_s": (after.nonvoluntary - before.nonvoluntary) / seconds,
    }


def core_kpis(before: Snapshot, after: Snapshot) -> dict:
    kpis = {}
    for core, (busy, total) in after.cores.items():
        if core in before.cores and total > before.cores[core][1]:
            old_busy, old_total = before.cores[core]
            kpis[f"{core}_util_pct"] = 100.0 * (busy - old_busy) / (total - old_total)
    return kpis


@dataclass(frozen=True)
class Watched:
    """A process to sample: which VNF it belongs to and where it runs."""

    source: str
    node: str
    pid: int


Emit = Callable[[str, str, dict, int], None]  # source, node, kpis, trial index


class NfviSampler:
    """Samples while a trial runs; ``start(trial)`` / ``stop()`` around each trial."""

    def __init__(self, executors: dict[str, Executor], watched: list[Watched],
                 interval_s: float, emit: Emit):
        self.executors = executors
        self.watched = watched
        self.interval_s = interval_s
        self.emit = emit
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # what stopped the run while it sampled (the results could not be written): the
        # trial's own thread raises it, an exception here would end this thread alone
        self.failure: NsbError | None = None

    def start(self, trial_index: int) -> None:
        if self.interval_s <= 0 or not self.executors:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, args=(trial_index,),
                                        name="nfvi-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=15)
            self._thread = None

    def _loop(self, trial_index: int) -> None:
        """A sample every interval, and one more when the trial ends for the time since
        the last: a trial shorter than the interval, or nodes slow to answer (TCG
        guests over SSH took over a second), still have their NFVi KPIs."""
        previous, read_at = self._read_all(), time.monotonic()
        stopped, emitted = False, False
        while not stopped:
            stopped = self._stop.wait(self.interval_s)
            if stopped and emitted and time.monotonic() - read_at < MIN_LAST_S:
                break  # too short a stretch to add anything to the trial's samples
            current, read_at = self._read_all(), time.monotonic()
            try:
                self._emit_deltas(previous, current, trial_index)
            except NsbError as exc:
                self.failure = exc
                return
            previous, emitted = current, True

    def _read_all(self) -> dict[str, Snapshot]:
        snapshots = {}
        for node, executor in self.executors.items():
            pids = [w.pid for w in self.watched if w.node == node]
            try:
                snapshots[node] = read_snapshot(executor, pids)
            except Exception as exc:  # a missed sample must not end the run
                LOG.debug("NFVi sample on %s failed: %s", node, exc)
        return snapshots

    def _emit_deltas(self, before: dict[str, Snapshot], after: dict[str, Snapshot],
                     trial_index: int) -> None:
        for node, now in after.items():
            then = before.get(node)
            if then is None:
                continue
            seconds = now.at - then.at
            cores = core_kpis(then, now)
            if cores:
                self.emit(f"node:{node}", node, cores, trial_index)
            for watched in self.watched:
                if watched.node != node or seconds <= 0:
                    continue
                kpis = tree_kpis(then, now, watched.pid, seconds)
                if kpis is not None:
                    self.emit(f"nfvi:{watched.source}", node, kpis, trial_index)


def tree_kpis(then: Snapshot, now: Snapshot, pid: int, seconds: float) -> dict | None:
    """A watched process's KPIs with its descendants' summed in (the real program under
    a wrapper): CPU and context switches of the processes alive at both reads, the
    memory of those alive now; None when the process is gone."""
    pids = [p for p in now.tree(pid) if p in now.processes]
    both = [p for p in pids if p in then.processes]
    if pid not in both:
        return None
    parts = [process_kpis(then.processes[p], now.processes[p], seconds) for p in both]
    kpis = {key: sum(part[key] for part in parts) for key in parts[0]}
    kpis["rss_kb"] = float(sum(now.processes[p].rss_kb for p in pids))
    kpis["pid"] = float(pid)
    kpis["processes"] = float(len(pids))
    return kpis
