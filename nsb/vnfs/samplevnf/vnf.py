"""What every SampleVNF plugin does: its ports, its binary, hugepages of its own, a
CLI on a pseudo-terminal that answers when it is ready, KPIs from its stats
command, and everything given back at terminate."""

from __future__ import annotations

import logging
import signal
import time
from dataclasses import dataclass, field

from nsb.dut_feed import CounterFeed
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import Executor
from nsb.nodes import link_counters, platform, tool_roles
from nsb.vnfs.base import Vnf
from nsb.vnfs.kernel_ports import SilencedPorts
from nsb.vnfs.samplevnf import eal, memory, options, ports
from nsb.vnfs.samplevnf.console import Console

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pid:
    """The VNF program's own process (under ``script``): NFVi samples it, events signal
    it (``script`` and the pseudo-terminal stay)."""

    pid: int
    executor: Executor = field(compare=False, repr=False)

    def signal(self, signum: int) -> None:
        self.executor.run(["kill", f"-{int(signum)}", str(self.pid)], check=False)

    def poll(self) -> int | None:
        """None while it runs (``kill -0``), else 0."""
        alive = self.executor.run(["kill", "-0", str(self.pid)], check=False).returncode == 0
        return None if alive else 0


class SampleVnf(Vnf):
    """A SampleVNF binary on its node's ports (subclasses: which binary, how)."""

    EVENTS = ("pause", "command", "restart", "link_flap")  # nsb.vnf_events

    ADDS_HUGEPAGES = True
    OPTIONS_SCHEMA = options.COMMON
    APP_NAME = ""  # the binary's name in bin_path
    PROMPT = "pipeline>"
    STATS_COMMAND = ""

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.layout = ports.layout(node, spec.networks)
        self._check_ports()
        self.file_prefix = f"nsb-{run.task_id}-{spec.name}"
        self.huge_dir = f"{self.work_dir}/hugepages"
        self.console: Console | None = None
        self._reserved: memory.Reserved | None = None
        self._silenced: SilencedPorts | None = None
        self._pid: Pid | None = None

    def _check_ports(self) -> None:
        if not self.layout.ports:
            raise self.spec.where.error(
                f"{self.APP_NAME} on node {self.node.name}: none of its interfaces is "
                f"linked (it has: {', '.join(self.node.interfaces)})")
        for port in self.layout.ports:
            if port.iface.is_memif or port.iface.is_vhostuser:
                raise self.spec.where.error(
                    f"{self.APP_NAME} on {self.node.name}:{port.name}: not supported yet: "
                    f"{port.iface.kind} ports (the SampleVNFs' DPDK 17.05 takes NICs and "
                    "kernel interfaces)")

    # what subclasses say

    def files(self) -> dict[str, str]:
        """Files the program reads, by name in its work dir."""
        return {}

    def command(self) -> list[str]:
        raise NotImplementedError

    def parse_stats(self, answer: str) -> dict[str, float] | None:
        raise NotImplementedError

    def cores(self) -> list[int]:
        """The CPUs the program runs on (after ``cores`` placed NSB's numbers)."""
        raise NotImplementedError

    def after_ready(self) -> None:
        """Commands once the CLI answers (vCGNAPT's static translations)."""

    # plan

    def dpdk_nics(self) -> list:
        """Its ports that are NICs: the EAL takes them by PCI address (``-w``)."""
        return [p.iface for p in self.layout.ports if p.iface.is_dpdk_port]

    @property
    def binary(self) -> str:
        return self.options.get("vnf_path") or f"{self.options['bin_path']}/{self.APP_NAME}"

    @property
    def memory(self) -> eal.Memory:
        return eal.Memory(self.huge_dir, self.options["memory_mb"], self.file_prefix)

    def required_binaries(self) -> list[str]:
        return ["script", "unshare"]  # util-linux: the pseudo-terminal, the private mount

    def preflight(self, facts: dict) -> list[str]:
        problems = []
        if not self.executor.which(self.binary):
            problems.append(self._missing_binary())
        online = platform.cpu_set(facts.get("online_cpus", ""))
        missing = sorted(set(self.cores()) - online) if online else []
        if missing:
            problems.append(f"{self.APP_NAME} runs on CPUs {_ranges(self.cores())} (NSB's "
                            f"layout); the node has no CPU {_ranges(missing)} (online: "
                            f"{facts['online_cpus']}): set options.cores, e.g. "
                            f"[{', '.join(map(str, sorted(online)[:2]))}]")
        available = facts.get("mem_available_kb")
        if available is not None and available < self.options["memory_mb"] * 1024:
            problems.append(f"needs {self.options['memory_mb']} MB for hugepages "
                            f"(memory_mb); the node has {available // 1024} MB available")
        return problems

    def _missing_binary(self) -> str:
        where = "options.vnf_path" if self.options.get("vnf_path") else \
            "options.bin_path (NSB's /opt/nsb_bin by default) or options.vnf_path"
        return f"{self.APP_NAME} not found at {self.binary} on {self.node.name}: set " \
               f"{where}; {tool_roles.hint('samplevnf')}"

    def describe(self) -> dict:
        info = super().describe()
        info["ports"] = {p.number: f"{p.name} ({_kind(p)})" for p in self.layout.ports}
        info["command"] = " ".join(self.command())
        info.update(self.files())
        return info

    # run

    def instantiate(self) -> None:
        if not self.executor.which(self.binary):
            raise PrerequisiteError(self._missing_binary())
        self.executor.run(["mkdir", "-p", self.huge_dir])
        for name, text in self.files().items():
            self.executor.write_file(f"{self.work_dir}/{name}", text)
        self._reserved = memory.reserve(self.executor, self.options["memory_mb"], self.name,
                                        self.run.task_id, self.options["hugepage_size"])
        LOG.info("%s: %d hugepage(s) of %s added for %s", self.name, self._reserved.pages,
                 self._reserved.page, self.APP_NAME)
        # its af_packet ports belong to the VNF: the node's IP stack must not answer on them
        self._silenced = SilencedPorts(self.executor, [p.name for p in self.layout.ports
                                                       if not p.iface.is_dpdk_port])
        self._silenced.silence()
        self.log = self.log_path(self.APP_NAME)
        self.console = Console(self.executor, self.command(), self.PROMPT, self.log, self.name,
                               memory.own_mount(self.huge_dir, self._reserved.page))
        self.process = self.console.start()

    def wait_until_ready(self, timeout: float) -> None:
        """Ready when the CLI answered the stats command: the start script (links,
        routes, ARP, rules) ran before it, the pipelines answer."""
        deadline = time.monotonic() + timeout
        self.console.wait_prompt(timeout)
        answer = self.console.command(self.STATS_COMMAND,
                                      max(1.0, deadline - time.monotonic()))
        if self.parse_stats(answer) is None:
            raise RunError(f"{self.name}: '{self.STATS_COMMAND}' answered no totals:\n"
                           f"{answer[-2000:]}")
        self.after_ready()
        self._pid = self._find_pid()
        LOG.info("%s: %s ready on %s", self.name, self.APP_NAME, self.node.name)

    def _find_pid(self) -> Pid | None:
        wanted = " ".join(self.command())
        listed = self.executor.run(["ps", "-eo", "pid=,args="], check=False).stdout
        for line in listed.splitlines():
            pid, _, args = line.strip().partition(" ")
            if args.strip() == wanted and pid.isdigit():
                return Pid(int(pid), self.executor)
        return None

    def counter_feed(self) -> CounterFeed | None:
        """Its af_packet ports' kernel counters (what arrived at them, what it sent on
        them), which the program does no work to answer; NIC ports: its stats command
        after each trial only (the CLI shares the pipelines' cores)."""
        kernel = [p.name for p in self.layout.ports if not p.iface.is_dpdk_port]
        if self.console is None or not kernel:
            return None
        return link_counters.feed({name: name for name in kernel})

    def pause(self, seconds: float) -> None:
        """The program stopped and continued; ``script`` stops itself when its child
        stops (and continues it when continued), so it is continued too, or the CLI
        would answer no more."""
        try:
            super().pause(seconds)
        finally:
            if self.console is not None and self.console.process is not None:
                self.console.process.signal(signal.SIGCONT)

    def processes(self) -> list:
        return [self._pid] if self._pid and self.console else super().processes()

    def log_text(self) -> str:
        return self.console.tail(40) if self.console else super().log_text()

    def collect_kpi(self) -> dict[str, float]:
        if self.console is None:
            return {}
        answer = self.console.command(self.STATS_COMMAND)
        kpis = self.parse_stats(answer)
        if kpis is None:
            LOG.warning("%s: '%s' answered no totals: %s", self.name, self.STATS_COMMAND,
                        answer[-500:])
        return kpis or {}

    def terminate(self) -> None:
        if self.executor is None:  # its node never came up: nothing was started
            return
        if self.console is not None:
            code = self.console.quit()
            LOG.info("%s: %s stopped (exit %s), log in %s", self.name, self.APP_NAME, code,
                     self.log)
            self.console = self.process = self._pid = None
        self.executor.run(["rm", "-rf", *eal.runtime_files(self.file_prefix)], check=False)
        memory.release(self.executor, self._reserved, self.run.task_id)
        self._reserved = None
        if self._silenced is not None:
            self._silenced.restore()
            self._silenced = None
        self.remove_work_dir()


def _kind(port: ports.Port) -> str:
    return f"NIC {port.iface.pci}" if port.iface.is_dpdk_port else "af_packet"


def _ranges(cpus) -> str:
    return ",".join(map(str, sorted(cpus)))
