"""Any program as the DUT: an argument list with the VNF's ports, cores and names
filled in (``placeholders``), started detached on its node with its output in the
results' logs, ready when a TCP port answers or a command succeeds, its KPIs from
an optional stats command (``command_stats``), stopped with its whole process
group at teardown. ``dpdk: true`` makes its PCI ports DPDK ports nsb binds for the
run and adds the hugepages it needs, as for testpmd."""

from __future__ import annotations

import logging
import shlex
import time
from pathlib import PurePosixPath

from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import tail
from nsb.nodes import platform
from nsb.vnfs import hugepages
from nsb.vnfs.base import Vnf
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.generic import command_stats, placeholders
from nsb.vnfs.kernel_ports import SilencedPorts

LOG = logging.getLogger(__name__)

_ARGV = {"type": "array", "items": {"type": "string"}, "minItems": 1}


class CommandVnf(Vnf):
    """Any program given as an argument list, with its ports and cores filled in."""

    EVENTS = ("pause", "command", "link_flap")  # nsb.vnf_events

    ADDS_HUGEPAGES = True
    KEEPS_STATE = None  # what it holds, nsb can neither reset nor count
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["command"],
        "examples": [{"command": ["sleep", "600"], "ready_command": ["true"]}],
        "properties": {
            "command": _ARGV,
            "interfaces": {"description": "the node's interfaces it takes, in port order (default:"
                                          " all linked ones)",
                           "type": "array", "items": {"type": "string"}, "minItems": 1},
            "lcores": {"description": "CPUs for the {lcores} placeholder",
                       "type": "string", "pattern": r"^[0-9,\-]+$", "format": "nsb-cpu-list"},
            "ready_port": {"description": "ready when this TCP port on ready_host accepts (or "
                                          "ready_command)",
                           "type": "integer", "minimum": 1, "maximum": 65535},
            "ready_host": {"description": "where ready_port is asked",
                           "type": "string", "minLength": 1, "default": "127.0.0.1"},
            "ready_command": _ARGV,
            "ready_timeout_s": {"description": "seconds it may take to become ready (default: "
                                               "vnf_start_timeout)",
                                "type": "number", "exclusiveMinimum": 0},
            "stats_command": _ARGV,
            "stop_grace_s": {"description": "seconds it gets to stop at teardown before it is "
                                            "killed",
                             "type": "number", "minimum": 0, "default": 5},
            "dpdk": {"description": "bind its PCI ports to a DPDK driver and add hugepages",
                     "type": "boolean", "default": False},
            "hugepages_mb": {"description": "hugepages to add, in MB (with dpdk)",
                             "type": "integer", "minimum": 0, "default": 256},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        where = spec.options_where
        names = options.get("interfaces") or [i.name for i in node.interfaces.values() if i.peer]
        for index, name in enumerate(names):
            if name not in node.interfaces:
                raise where.error(f"node {node.name} has no interface '{name}'; it has: "
                                  f"{', '.join(node.interfaces)}", "interfaces", index)
        if "ready_port" not in options and "ready_command" not in options:
            raise where.error("say when the program is ready: ready_port (a TCP port that "
                              "answers once it is up) or ready_command (a command that "
                              "succeeds once it is up)")
        self.ports = [node.interfaces[n] for n in names]
        self.file_prefix = f"nsb-{run.task_id}-{spec.name}"
        values = placeholders.Values(self.ports, {
            "port_count": str(len(self.ports)), "lcores": options.get("lcores", ""),
            "file_prefix": self.file_prefix, "work_dir": self.work_dir, "node": node.name,
            "task_id": run.task_id})
        self.argv = {key: self._filled(key, values) for key in
                     ("command", "ready_command", "stats_command") if key in options}
        self._hugepages = 0
        self._silenced: SilencedPorts | None = None

    def _filled(self, key: str, values: placeholders.Values) -> list[str]:
        filled = []
        for index, arg in enumerate(self.options[key]):
            try:
                filled.append(placeholders.fill(arg, values))
            except ValueError as exc:
                raise self.spec.options_where.error(str(exc), key, index) from None
        return filled

    @property
    def program(self) -> str:
        return self.argv["command"][0]

    def required_binaries(self) -> list[str]:
        return [self.program]

    def dpdk_nics(self) -> list:
        return [p for p in self.ports if p.is_dpdk_port] if self.options["dpdk"] else []

    @property
    def _pages(self) -> int:
        megabytes = self.options["hugepages_mb"] if self.options["dpdk"] else 0
        return hugepages.pages_for(megabytes) + 16 if megabytes else 0

    def preflight(self, facts: dict) -> list[str]:
        problems = []
        if "lcores" in placeholders.used(self.options["command"]):
            online = platform.cpu_set(facts.get("online_cpus", ""))
            missing = platform.cpu_set(self.options["lcores"]) - online
            if online and missing:
                problems.append(f"lcores {self.options['lcores']}: the node has no CPU "
                                f"{','.join(map(str, sorted(missing)))} (online CPUs: "
                                f"{facts['online_cpus']})")
        if self._pages:
            problems += _hugepage_problems(self._pages, facts)
        return problems

    def describe(self) -> dict:
        info = super().describe()
        info["ports"] = {index: p.name for index, p in enumerate(self.ports)}
        info.update({key: shlex.join(argv) for key, argv in self.argv.items()})
        return info

    def instantiate(self) -> None:
        if not self.executor.which(self.program):
            raise PrerequisiteError(f"{self.node.name}: {self.program} not found (options."
                                    "command of " f"{self.name})")
        self.executor.run(["mkdir", "-p", self.work_dir])
        self.log = self.log_path(PurePosixPath(self.program).name)
        if self._pages:
            self._hugepages = hugepages.reserve(self.executor, self._pages, self.name,
                                                self.run.task_id)
        if self.options["dpdk"]:  # its af_packet ports belong to it, not to the node's stack
            self._silenced = SilencedPorts(self.executor, [
                p.name for p in self.ports if not (p.is_dpdk_port or p.is_vhostuser
                                                   or p.is_memif)])
            self._silenced.silence()
        argv = self.argv["command"]
        if self.executor.which("stdbuf"):  # a complete log for error messages
            argv = ["stdbuf", "-oL", "-eL", *argv]
        self.process = self.executor.start(argv, log_path=self.log)

    def wait_until_ready(self, timeout: float) -> None:
        """Ready when ``ready_port`` accepts a connection or ``ready_command`` exits 0."""
        timeout = self.options.get("ready_timeout_s", timeout)
        deadline = time.monotonic() + timeout
        last = ""
        while True:
            if self.process.poll() is not None:
                raise RunError(f"{self.name}: {self.program} exited with code "
                               f"{self.process.poll()} while starting; last lines of its "
                               f"log ({self.log}):\n{tail(self.log_text())}")
            last = self._not_ready()
            if not last:
                LOG.info("%s: %s ready on %s", self.name, self.program, self.node.name)
                return
            if time.monotonic() >= deadline:
                raise RunError(f"{self.name}: {self.program} not ready after {timeout:g} s "
                               f"({last}); last lines of its log ({self.log}):\n"
                               f"{tail(self.log_text())}")
            time.sleep(0.2)

    def _not_ready(self) -> str:
        """What readiness still waits for ('' once ready)."""
        if "ready_port" in self.options:
            host, port = self.options["ready_host"], self.options["ready_port"]
            try:
                self.executor.connect_tcp(port, host=host, timeout=2.0).close()
            except OSError as exc:
                return f"waited for TCP {host}:{port} to answer: {exc}"
            return ""
        command = self.argv["ready_command"]
        done = self.executor.run(command, timeout=30, check=False)
        if done.returncode == 0:
            return ""
        said = tail(done.stderr or done.stdout, 2).replace("\n", " / ")
        return (f"waited for '{' '.join(command)}' to succeed; last exit {done.returncode}"
                + (f": {said}" if said else ""))

    def collect_kpi(self) -> dict[str, float]:
        if "stats_command" not in self.argv or self.process is None:
            return {}
        command = self.argv["stats_command"]
        done = self.executor.run(command, timeout=30, check=False)
        if done.returncode != 0:
            raise RunError(f"{self.name}: stats command '{' '.join(command)}' failed (exit "
                           f"{done.returncode}): {tail(done.stderr or done.stdout, 3)}")
        return command_stats.parse(done.stdout)

    def terminate(self) -> None:
        if self.process is not None:
            code = self.process.stop(grace_s=float(self.options["stop_grace_s"]))
            LOG.info("%s: %s stopped (exit %s), log in %s", self.name, self.program, code,
                     self.log)
            self.process = None
        if self.node.executor is None:
            return
        if self.options["dpdk"] or self.file_prefix in " ".join(self.argv["command"]):
            dpdk_telemetry.remove_runtime_dir(self.executor, self.file_prefix)
        hugepages.release(self.executor, self._hugepages, self.run.task_id)
        self._hugepages = 0
        if self._silenced is not None:
            self._silenced.restore()
            self._silenced = None
        self.remove_work_dir()


def _hugepage_problems(pages: int, facts: dict) -> list[str]:
    """Memory for ``pages`` 2 MB hugepages on the node, or the line saying why not.

    No hugetlbfs mount is asked for: a DPDK program with --in-memory takes its
    hugepages through memfd, and whether the program does is its command's business.
    """
    free = facts.get("hugepages_free", 0)
    can = free + facts.get("mem_available_kb", 0) // 2048
    if "mem_available_kb" in facts and can < pages:
        return [f"needs {pages} hugepages of 2 MB (hugepages_mb); the node has {free} free "
                f"and memory for {can - free} more"]
    return []
