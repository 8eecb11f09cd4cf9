"""The DUT's own port counters read while a trial runs: a program on the VNF's node
(through its executor, so the same in a namespace, a VM or over SSH) reads them every
interval from the source the VNF owns (a DPDK application's telemetry socket, held
open; OVS's OpenFlow port statistics) and prints one JSON line per reading with the
node's clock. A reading the DUT does not answer (stopped, restarting) says so; a
counter that went back (a restarted DUT) starts its count again.

The feed is stopped by a line on its standard input (it answers within one interval),
so its output is complete when it ends; nothing waits on a log."""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from nsb.executors.base import Executor, Process
from nsb.intervals import IntervalSample
from nsb.port_counts import PortCount

LOG = logging.getLogger(__name__)

# python3 -I -S: no site packages, the fastest start; one reading per interval until a
# line (or the end) on stdin, then a last one (what the DUT counted up to the stop)
_FEED = r"""
import json, select, socket, subprocess, sys, time
mode, interval, args = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
held = []
def telemetry():
    if not held:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(5)
        s.connect(args[0])
        held.append((s, json.loads(s.recv(1024)).get("max_output_len", 16384)))
    s, size = held[0]
    out = {}
    for command in args[1:]:
        s.send(command.encode())
        reply = json.loads(s.recv(size))
        out[command] = next(iter(reply.values()), None) if isinstance(reply, dict) else reply
    return out
def command():
    return subprocess.run(args, capture_output=True, text=True, timeout=5,
                          check=True).stdout
def sysfs():
    out = {}
    for pair in args:
        port, _, device = pair.partition("=")
        base = "/sys/class/net/" + device + "/statistics/"
        out[port] = {}
        for key in ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped"):
            with open(base + key) as handle:
                out[port][key] = int(handle.read())
    return out
read = {"telemetry": telemetry, "command": command, "sysfs": sysfs}[mode]
due, stop = time.monotonic(), False
while True:
    try:
        reply, error = read(), ""
    except Exception as exc:
        reply, error = None, str(exc) or type(exc).__name__
        while held:
            held.pop()[0].close()
    print(json.dumps({"t": time.time(), "reply": reply, "error": error}), flush=True)
    if stop:
        break
    due = max(due + interval, time.monotonic())
    stop = bool(select.select([sys.stdin], [], [], max(0.0, due - time.monotonic()))[0])
"""


@dataclass(frozen=True)
class CounterFeed:
    """How a VNF's port counters are read during a trial: the feed's ``mode``
    ('telemetry': a DPDK telemetry socket and its commands; 'command': a command whose
    output is read each time; 'sysfs': ``port=device`` pairs whose kernel counters are
    read from /sys/class/net, nothing spawned), how a reading's reply becomes its
    ports' counts, and how often it may be read at most."""

    mode: str
    args: list[str]
    counts: Callable[[object], dict[str, PortCount]]
    # the shortest time between readings: a DUT that works to answer them (OVS-DPDK's
    # main thread, a process spawned each time) is not asked more often
    min_interval_s: float = 0.0

    def argv(self, interval_s: float) -> list[str]:
        return ["python3", "-I", "-S", "-c", _FEED, self.mode,
                f"{max(interval_s, self.min_interval_s):g}", *self.args]


@dataclass(frozen=True)
class Reading:
    """One reading: the node's wall clock when it was answered, and the ports' cumulative
    counts (None: the DUT did not answer, ``error`` says why)."""

    at: float
    counts: dict[str, PortCount] | None
    error: str = ""


def readings(text: str, feed: CounterFeed) -> list[Reading]:
    """The feed's output as readings (a line cut off by the feed's end is left out)."""
    found = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        counts = None
        if raw.get("reply") is not None:
            try:
                counts = feed.counts(raw["reply"])
            except (KeyError, TypeError, ValueError) as exc:
                raw["error"] = f"unreadable reply: {exc}"
        found.append(Reading(float(raw["t"]), counts, raw.get("error") or ""))
    return found


def intervals(found: list[Reading], started_at: float) -> list[IntervalSample]:
    """The DUT's timeline: per answered reading, the frames that arrived at its ports
    (``tx_packets``: sent to the DUT) and the frames it sent (``rx_packets``) since the
    reading before, over the seconds since ``started_at`` (the traffic's start on the
    node's clock). A reading not answered adds its time to the next answered one; a
    counter lower than before (the DUT restarted) counts from zero."""
    answered = [r for r in found if r.counts is not None]
    samples: list[IntervalSample] = []
    for before, after in itertools.pairwise(answered):
        arrived = sum(_moved(after.counts, before.counts, p, "arrived") for p in after.counts)
        sent = sum(_moved(after.counts, before.counts, p, "tx") for p in after.counts)
        samples.append(IntervalSample(len(samples), before.at - started_at,
                                      after.at - started_at, arrived, sent))
    return samples


def _moved(after: dict[str, PortCount], before: dict[str, PortCount], port: str,
           what: str) -> int:
    now = getattr(after[port], what) or 0
    then = (getattr(before[port], what) or 0) if port in before else 0
    return now - then if now >= then else now  # lower: counting again from zero


class DutWatch:
    """The feeds of the VNFs that have one, around a trial: started on entering (a
    reading before the traffic), stopped on leaving (a reading after it drained)."""

    def __init__(self, feeds: list[tuple[str, Executor, CounterFeed]], interval_s: float):
        self.feeds, self.interval_s = feeds, interval_s
        self._running: list[tuple[str, CounterFeed, Process]] = []
        self._first: dict[str, str] = {}
        self.found: dict[str, list[Reading]] = {}
        # this machine's wall clock less its monotonic one: the traffic's start
        # (monotonic) on the nodes' clocks, which are this machine's in the lab and
        # kept by NTP on a pod
        self._wall_offset = 0.0

    def __enter__(self) -> DutWatch:
        self.found = {}
        self._wall_offset = time.time() - time.monotonic()
        started = []
        for name, executor, feed in self.feeds:
            try:
                started.append((name, feed, executor.start(feed.argv(self.interval_s),
                                                           pipes=True)))
            except Exception as exc:  # noqa: BLE001  (a view of the trial, not its end)
                LOG.warning("%s: its counters cannot be read during the trial: %s",
                            name, exc)
        for name, feed, process in started:  # each feed's first reading, before traffic
            try:
                self._first[name] = process.read_line(timeout=30)
            except (subprocess.TimeoutExpired, EOFError) as exc:
                LOG.warning("%s: its counter feed did not answer: %s", name, exc)
                process.stop(grace_s=1)
                continue
            self._running.append((name, feed, process))
        return self

    def __exit__(self, *exc) -> None:
        running, self._running = self._running, []
        for name, _, process in running:
            if process.poll() is not None:
                LOG.warning("%s: its counter feed ended during the trial (exit %s): its "
                            "timeline stops at its last reading", name, process.poll())
            try:
                process.write_line("stop")
            except (OSError, ValueError):
                pass  # it ended already: what it printed is read below
        for name, feed, process in running:
            try:
                text = process.read_all(timeout=10 + 2 * self.interval_s)
            except (subprocess.TimeoutExpired, EOFError) as exc:
                LOG.warning("%s: its counter feed did not end: %s", name, exc)
                process.stop(grace_s=1)
                continue
            self.found[name] = readings(self._first.pop(name, "") + "\n" + text, feed)

    def timelines(self, traffic_started: float | None) -> dict[str, list[IntervalSample]]:
        """Each watched VNF's timeline, seconds since ``traffic_started`` (monotonic)."""
        if traffic_started is None:
            return {}
        start = traffic_started + self._wall_offset
        return {name: intervals(found, start) for name, found in self.found.items()}

