"""The VNF and traffic generator interfaces."""

from __future__ import annotations

import abc
import signal
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from nsb.contexts.base import Context, Node
from nsb.frames import Frame
from nsb.intervals import IntervalSample
from nsb.paths import pairs_forwarding
from nsb.plugin import Plugin
from nsb.port_counts import PortCount
from nsb.runinfo import RunInfo
from nsb.task.model import VnfSpec
from nsb.trial import Trial, TrialResult
from nsb.vnfs import memif_servers

if TYPE_CHECKING:
    from nsb.dut_feed import CounterFeed
    from nsb.executors.base import Process


class Vnf(Plugin):
    """Something that runs on a node: started before traffic, stopped at teardown."""

    spec: VnfSpec
    # the VNF's long-running process (None before instantiate and after terminate)
    # and the file its output goes to on its node ('' before it started)
    process: Process | None = None
    log: str = ""
    # adds the hugepages it needs to the node's pool while it runs (else a DPDK VNF
    # takes them from the pool as the node has it)
    ADDS_HUGEPAGES = False

    def __init__(self, spec: VnfSpec, options: dict, node: Node, context: Context,
                 run: RunInfo):
        super().__init__(spec, options, run)
        self.name = spec.name
        self.node = node
        self.context = context

    @property
    def executor(self):
        return self.node.executor

    @property
    def work_dir(self) -> str:
        """This VNF's directory on its node (configs, sockets, scripts); gone at teardown."""
        return f"/tmp/nsb-{self.run.task_id}/{self.name}"

    def remove_work_dir(self) -> None:
        """Remove ``work_dir``, and the task's directory once no other VNF uses it."""
        self.executor.run(["rm", "-rf", self.work_dir], check=False)
        self.executor.run(["rmdir", "--ignore-fail-on-non-empty",
                           f"/tmp/nsb-{self.run.task_id}"], check=False)

    def log_path(self, what: str) -> str:
        """Where this VNF keeps the output of ``what`` in the results directory."""
        self.run.log_dir.mkdir(parents=True, exist_ok=True)
        return str(self.run.log_dir / f"{self.name}-{what}.log")

    def log_text(self) -> str:
        """What the VNF wrote to ``self.log`` so far ('' before it started)."""
        if not self.log:
            return ""
        try:
            return self.executor.read_file(self.log)
        except OSError:
            return ""

    def processes(self) -> list:
        """The long-running processes to sample NFVi KPIs of (pid on the node)."""
        process = self.process
        return [process] if process is not None and getattr(process, "pid", None) else []

    def required_binaries(self) -> list[str]:
        return []

    def dpdk_nics(self) -> list:
        """The node's NICs this VNF's DPDK program takes by PCI address: nsb binds them
        to a DPDK driver for the run where the pod allows it, and gives them back."""
        return []

    def software_versions(self) -> dict[str, str]:
        """Versions the running VNF reports itself (not what a package manager says),
        e.g. {"testpmd0: DPDK": "DPDK 22.11.5"}; read once it is ready."""
        return {}

    def preflight(self, facts: dict) -> list[str]:
        """Problems with the node (its platform ``facts``) that stop this VNF from
        running, one line each; checked before any VNF starts."""
        return []

    def describe(self) -> dict:
        """What the dry-run plan prints for this VNF."""
        return {"type": self.spec.type, "node": self.node.name, "options": self.options}

    @abc.abstractmethod
    def instantiate(self) -> None:
        """Start the VNF's processes."""

    @abc.abstractmethod
    def wait_until_ready(self, timeout: float) -> None:
        """Return once the VNF forwards; raise RunError with its log tail if it died."""

    def wait_serving(self, sockets: list[str], deadline: float) -> bool:
        """Whether the memif ``sockets`` it serves accept clients by ``deadline``
        (time.monotonic()); by default once they exist (a program that answers
        clients as soon as its socket is there)."""
        return memif_servers.poll_until(
            lambda: memif_servers.sockets_exist(self.executor, sockets), deadline)

    def collect_kpi(self) -> dict[str, float]:
        return {}

    def forwarding(self) -> dict[str, str]:
        """Where this VNF sends a frame that came in by one of its node's interfaces
        (interface name to interface name): by default its node's linked interfaces in
        pairs, each to the other, as a DUT between port pairs forwards."""
        return pairs_forwarding([i.name for i in self.node.interfaces.values() if i.peer])

    def port_counts(self, kpis: dict[str, float]) -> dict[str, PortCount]:
        """Its ports' cumulative counters (by interface name) from ``kpis``, what its
        ``collect_kpi`` read after a trial: what it received, sent and dropped there.
        None by default: its ports are blind, unless the node's kernel counts them."""
        return {}

    def counter_feed(self) -> CounterFeed | None:
        """How its port counters are read while a trial runs (nsb.dut_feed), every
        interval of a timed trial; None: only after each trial."""
        return None

    def result_kpis(self, frame_size: Frame, throughput_pps: float) -> dict:
        """Figures this VNF adds to each frame size's result (e.g. switching operations)."""
        return {}

    # a DUT that keeps state (a firewall's connections, a NAT's bindings) says so and
    # owns its state: stateful trials reset it before each trial and count it after;
    # None: it may keep state nsb can neither reset nor count (a box nsb does not run)
    KEEPS_STATE: ClassVar[bool | None] = False

    def reset_state(self) -> None:
        """Forget every session it holds (before a stateful trial: the conntrack table
        flushed, a NAT's table cleared). Only a DUT that keeps state is asked."""
        raise NotImplementedError(f"{type(self).__name__} keeps no state to reset")

    def session_count(self, open_only: bool = False) -> int:
        """The sessions it holds now, by its own count (the witness of a stateful trial:
        conntrack's table, a NAT's bindings); ``open_only``: those still open, not the
        closed ones it keeps a while. Only a DUT that keeps state is asked."""
        raise NotImplementedError(f"{type(self).__name__} keeps no state to count")

    def learns_addresses(self) -> str:
        """'' when it is a learning switch (RFC 2889's DUT: it learns source MACs and
        floods unknown destinations), else why it is not, in words."""
        return f"{self.spec.type} forwards by its own rules; it does not learn addresses"

    def address_ageing_s(self) -> float | None:
        """Seconds it keeps a learned address unused (None: it does not say)."""
        return None

    def flush_addresses(self) -> None:
        """Forget every learned address (before each address-learning trial)."""
        raise NotImplementedError(f"{type(self).__name__} learns no addresses")

    def address_table(self) -> tuple[list[str], int | None]:
        """The MACs its table holds now, by its own count, and the most it holds (None:
        it does not say): the witness of an address-learning trial."""
        raise NotImplementedError(f"{type(self).__name__} learns no addresses")

    # the events it can perform while a trial's traffic runs (nsb.vnf_events)
    EVENTS: ClassVar[tuple[str, ...]] = ("command", "link_flap")

    def event_interfaces(self) -> list[str]:
        """The interfaces of its node a link flap may set down (its linked ones)."""
        return [i.name for i in self.node.interfaces.values() if i.peer]

    def run_event_command(self, command: str) -> None:
        """A command event: ``command`` run on its node (in its namespace) to its end."""
        from nsb.errors import RunError

        done = self.executor.run(["sh", "-c", command], check=False, timeout=600)
        if done.returncode != 0:
            raise RunError(f"'{command}' exited with {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-300:]}")

    def prepare_event(self, event: dict) -> None:
        """What an event of its own needs before the trial's traffic starts."""

    def perform_event(self, event: dict) -> None:
        """``event`` (one of EVENTS) now, returning when it is over: pause and command
        here, a VNF's own events in its override."""
        if event["type"] == "pause":
            self.pause(float(event.get("pause_ms", 500)) / 1000.0)
        elif event["type"] == "restart":
            self.restart(signal.Signals[f"SIG{event.get('signal', 'TERM')}"])
        elif event["type"] == "command":
            self.run_event_command(event["command"])
        elif event["type"] == "link_flap":
            self.link_flap(event.get("interface") or self.event_interfaces()[0],
                           float(event.get("down_ms", 500)) / 1000.0)
        else:
            raise NotImplementedError(f"{self.name} performs no '{event['type']}' event")

    def link_flap(self, interface: str, seconds: float) -> None:
        """``interface`` of its node down for ``seconds``, then up again."""
        self.executor.run(["ip", "link", "set", "dev", interface, "down"])
        try:
            time.sleep(seconds)
        finally:
            self.executor.run(["ip", "link", "set", "dev", interface, "up"])

    def pause(self, seconds: float) -> None:
        """Stop its processes (SIGSTOP) for ``seconds``, then continue them (SIGCONT): an
        outage of known length, nothing restarted or lost of its state."""
        from nsb.errors import RunError

        processes = self.processes()
        if not processes:
            raise RunError(f"{self.name}: no process of it runs to pause")
        for process in processes:
            process.signal(signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            for process in processes:
                process.signal(signal.SIGCONT)

    def restart(self, sig: signal.Signals) -> None:
        """Its processes ended by ``sig`` (SIGTERM: planned, SIGKILL: a crash), what they
        leave given back, then everything started again as at setup; returns once it
        is ready again (or raises what a start raises)."""
        from nsb.errors import RunError

        processes = self.processes()
        if not processes:
            raise RunError(f"{self.name}: no process of it runs to restart")
        for process in processes:
            process.signal(sig)
        deadline = time.monotonic() + 10.0
        while any(p.poll() is None for p in processes) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.terminate()
        self.instantiate()
        self.wait_until_ready(self.run.vnf_start_timeout_s)

    @abc.abstractmethod
    def terminate(self) -> None:
        """Stop everything instantiate started; safe to call more than once."""


class TrafficGen(Vnf):
    """A VNF that offers trials and measures what came back."""

    # when the traffic of the trial sent by run_sampled started (time.monotonic()), None
    # before: events during a trial are timed from it
    traffic_started: float | None = None

    # can send a frame mix (IMIX: Trial.frame_size a FrameMix) in one stream
    SENDS_FRAME_MIX = False
    # why an instance of a generator that sends mixes cannot on its ports ('' if it can)
    no_frame_mix_reason = ""
    # can send an exact burst (Trial.burst_frames frames at the rate, then stop)
    SENDS_BURSTS = False
    # it opens connections: stateful trials (Trial.sessions), for the profiles that
    # open connections (NEEDS_SESSIONS)
    SENDS_SESSIONS = False
    # it sends address-learning trials (Trial.addresses: RFC 2889's learning, test and
    # monitor ports), for the mac_learning profile
    SENDS_ADDRESSES = False
    # why this generator cannot send exact bursts, in words ('' if it can)
    no_burst_reason = ""

    @property
    @abc.abstractmethod
    def tx_port_count(self) -> int:
        """How many ports transmit: the line rate of a trial is this many ports' worth."""

    def check_sessions(self, load) -> str:
        """Why this generator cannot run a stateful trial's ``load`` ('' when it can):
        asked at plan time of a generator that opens connections (SENDS_SESSIONS)."""
        return ""

    @abc.abstractmethod
    def run_trial(self, trial: Trial) -> TrialResult:
        """Send ``trial``; counters must be read after in-flight frames drained."""

    def port_pairs(self) -> list[tuple[str, str]]:
        """Its ports by pair (interface names; a pair's frames leave one and come back
        on the other): what service chains are made of. [] where it has no pairs."""
        return []

    def chain_destinations(self) -> list[str]:
        """The service chains it tells apart on its one port pair by their own streams:
        each chain's first port ("node:interface"), whose MAC its frames are sent to;
        [] where it does not."""
        return []

    # reads its counters while a trial's traffic runs (``run_sampled``); a generator
    # that cannot says why in ``no_interval_reason``, and soaks run it in pieces
    SAMPLES_INTERVALS = False
    no_interval_reason = "it reads its counters only once a trial's traffic stopped"

    def scale_rate(self, factor: float) -> None:
        """While a sampled trial's traffic runs, send ``factor`` times its rate from now
        on (1: the trial's own rate again): an overload in the middle of a trial."""
        raise NotImplementedError(f"{self.name} cannot change its rate while it sends")

    def run_sampled(self, trial: Trial, interval_s: float,
                    on_interval: Callable[[IntervalSample], None]) -> TrialResult:
        """Send ``trial`` as one continuous stream and hand ``on_interval`` the counts of
        every ``interval_s`` while it runs; the intervals sum to the result's counts."""
        raise NotImplementedError(f"{self.name}: {self.no_interval_reason}")
