"""A DPDK application as the system under test: started with its EAL options
(``nsb.vnfs.dpdk.eal``), ready and measured through its DPDK telemetry socket, and
gone at teardown with its runtime directory, hugepages and files.

testpmd, l3fwd and l2fwd differ only in their own options after ``--``.
"""

from __future__ import annotations

import abc
import logging
import time

from nsb import port_counts
from nsb.dut_feed import CounterFeed
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import tail
from nsb.paths import pairs_forwarding
from nsb.port_counts import PortCount
from nsb.vnfs import hugepages, memif_servers
from nsb.vnfs.base import Vnf
from nsb.vnfs.dpdk import eal
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.kernel_ports import SilencedPorts

LOG = logging.getLogger(__name__)

# options every DPDK application takes (its OPTIONS_SCHEMA adds its own)
EAL_OPTIONS = {
    "socket_mem": {"description": "EAL: memory per NUMA node instead of memory_mb (NICs on one "
                                  "socket), and the memory channels (-n) of the node's CPUs",
                   "type": "string", "pattern": "^[0-9]+(,[0-9]+)*$"},
    "memory_channels": {"description": "EAL's memory channels (-n) of the node's CPUs",
                        "type": "integer", "minimum": 1, "maximum": 16},
    "interfaces": {"description": "the node's interfaces it takes, in port order (default: all "
                                  "linked ones)",
                   "type": "array", "items": {"type": "string"}, "minItems": 1},
    "af_packet_framecnt": {"description": "receive ring of a kernel (af_packet) port, in frames",
                           "type": "integer", "minimum": 64, "default": 4096},
    "extra_args": {"description": "more arguments for the program, appended as given",
                   "type": "array", "items": {"type": "string"}, "default": []},
}
# what DPDK's EAL prints when a virtio-user port's vhost-user negotiation failed
VDEV_PROBE_FAILED = "virtio_user_dev_init fails"
LCORES = {"description": "the CPUs its lcores run on (e.g. 1-2); default CPUs 1 to cores",
          "type": "string", "pattern": r"^[0-9,\-]+$", "format": "nsb-cpu-list"}


class DpdkApp(Vnf):
    """A DPDK program forwarding between its ports."""

    EVENTS = ("pause", "command", "restart", "link_flap")  # nsb.vnf_events

    ADDS_HUGEPAGES = True
    KIND = ""  # its short name: logs are <vnf>-<KIND>.log
    MAIN_LCORE = False  # whether its lcores list a main lcore that does not forward
    PROGRAM = ""  # the program's usual name, for messages
    PATH_OPTION = ""  # the option that names its binary
    INSTALL_HINT = ""  # how to get it, after "not found"
    DEFAULT_MEMORY_MB = 256

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        names = options.get("interfaces") or [i.name for i in node.interfaces.values() if i.peer]
        for name in names:
            if name not in node.interfaces:
                raise spec.options_where.error(
                    f"node {node.name} has no interface '{name}'; it has: "
                    f"{', '.join(node.interfaces)}", "interfaces")
        self.interfaces = eal.port_order([node.interfaces[n] for n in names])
        self.file_prefix = f"nsb-{run.task_id}-{spec.name}"
        self.process = None
        self._hugepages = 0
        self._silenced: SilencedPorts | None = None
        self._restarted = False  # started once more after a vhost-user port was lost

    # --- what the subclass says --------------------------------------------------------

    @abc.abstractmethod
    def lcores(self) -> str:
        """The EAL's -l."""

    @abc.abstractmethod
    def app_args(self) -> list[str]:
        """The program's own options, after ``--``."""

    def vdev_queues(self) -> int:
        """Queue pairs each vdev port offers."""
        return 1

    def prepare(self) -> None:
        """Write what the program reads before it starts (on its node)."""

    def cleanup(self) -> None:
        """Remove what ``prepare`` wrote."""

    # --- shared ----------------------------------------------------------------------

    @property
    def vhost_user(self) -> bool:
        """Some port is a vhost-user socket: its memory must be shared hugepages."""
        return any(i.is_vhostuser for i in self.interfaces)

    @property
    def needs_hugepages(self) -> bool:
        return eal.needs_hugepages(self.interfaces)

    @property
    def binary(self) -> str:
        return self.options[self.PATH_OPTION]

    def required_binaries(self) -> list[str]:
        return [self.binary]

    def dpdk_nics(self) -> list:
        return [i for i in self.interfaces if i.is_dpdk_port]

    def memory_option(self) -> int:
        """-m in MB (also without hugepages)."""
        return self.options.get("memory_mb") or self.DEFAULT_MEMORY_MB

    def memory_mb(self) -> int:
        """The memory it takes from hugepages."""
        socket_mem = self.options.get("socket_mem")
        return sum(map(int, socket_mem.split(","))) if socket_mem else self.memory_option()

    def preflight(self, facts: dict) -> list[str]:
        """Lcores the node has; for hugepages, the memory to add them."""
        return eal.preflight(facts, self.lcores(), self.memory_mb() if self.needs_hugepages
                             else 0, self.executor.hugepages_given_mb)

    def eal(self) -> eal.Eal:
        o = self.options
        return eal.Eal(self.interfaces, self.lcores(), self.file_prefix, self.run.task_id,
                       self.node.name, self.memory_option(), o.get("socket_mem", ""),
                       o.get("memory_channels", 0), o["af_packet_framecnt"],
                       self.vdev_queues())

    def command(self) -> list[str]:
        """The command line: the binary, EAL options and vdevs, ``--``, its own options."""
        return [self.binary, *self.eal().args(), "--", *self.app_args(),
                *self.options["extra_args"]]

    def describe(self) -> dict:
        info = super().describe()
        info["ports"] = {port: i.name for port, i in enumerate(self.interfaces)}
        info["command"] = " ".join(self.command())
        return info

    def instantiate(self) -> None:
        if not self.executor.which(self.binary):
            raise PrerequisiteError(f"{self.node.name}: {self.binary} not found (set "
                                    f"options.{self.PATH_OPTION}{self.INSTALL_HINT})")
        self.log = self.log_path(self.KIND)
        if self.needs_hugepages and self.executor.hugepages_given_mb is None:
            self._hugepages = hugepages.reserve(
                self.executor, hugepages.pages_for(self.memory_mb()) + 16, self.name,
                self.run.task_id)
        # its af_packet ports belong to the program: the node's own IP stack must not
        # send on them (IPv6 neighbour discovery, ARP), or the generator counts its frames
        self._silenced = SilencedPorts(self.executor, [i.name for i in self.interfaces
                                                       if eal.is_kernel_port(i)])
        self._silenced.silence()
        self.prepare()
        self._start()

    def _start(self) -> None:
        argv = self.command()
        if self.executor.which("stdbuf"):  # a complete log for error messages, not readiness
            argv = ["stdbuf", "-oL", *argv]
        self.process = self.executor.start(argv, log_path=self.log)

    def wait_until_ready(self, timeout: float) -> None:
        """Ready when DPDK telemetry shows every port started with its link up.

        The program's stdout goes to a file, so a log line is no signal; its
        telemetry socket answers as soon as the EAL is up. With every port started
        and linked, its link check returns and it starts forwarding.
        """
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RunError(f"{self.name}: {self.PROGRAM} exited with code "
                               f"{self.process.poll()} while starting:\n{tail(self.log_text())}")
            waiting_for = self._ports_not_ready(max(5.0, deadline - time.monotonic()))
            if not waiting_for:
                LOG.info("%s: %s forwarding on %d ports", self.name, self.KIND,
                         len(self.interfaces))
                return
            if self._vhost_port_lost(waiting_for):
                deadline = time.monotonic() + timeout
                continue
            if time.monotonic() >= deadline:
                raise RunError(
                    f"{self.name}: {self.PROGRAM} not ready after {timeout:g} s "
                    f"(vnf_start_timeout in nsb.conf): waited for DPDK telemetry "
                    f"({dpdk_telemetry.socket_path(self.file_prefix)}) to show every port "
                    f"started with its link up; still waiting for: {waiting_for}; last lines "
                    f"of its log:\n{tail(self.log_text())}")
            time.sleep(0.2)

    def wait_serving(self, sockets: list[str], deadline: float) -> bool:
        """DPDK's memif server answers a client from its port's start on (before, "ID
        not found"): until telemetry shows each port serving one of ``sockets`` started."""
        ports = [n for n, i in enumerate(self.interfaces) if i.is_memif and i.socket in sockets]

        def started() -> bool:
            if self.process is None or self.process.poll() is not None:
                return True  # it died: its readiness says why
            try:
                reply = dpdk_telemetry.query(self.executor, self.file_prefix,
                                             [f"/ethdev/info,{p}" for p in ports],
                                             timeout_s=max(5.0, deadline - time.monotonic()))
            except RunError:
                return False  # its telemetry socket is not up yet
            return all((reply.get(f"/ethdev/info,{p}") or {}).get("dev_started") for p in ports)

        return not ports or memif_servers.poll_until(started, deadline)

    def _vhost_port_lost(self, waiting_for: str) -> bool:
        """A vhost-user port that never came to exist because the switch reset the
        connection while DPDK's virtio-user negotiated it (seen with OVS-DPDK, whose
        vhost client reconnects while ports are added): the program is started once
        more, the switch connects again; True when it was."""
        if self._restarted or not self.vhost_user or "to exist" not in waiting_for:
            return False
        if VDEV_PROBE_FAILED not in self.log_text():  # DPDK's EAL says so on stderr
            return False
        self._restarted = True
        LOG.warning("%s: a vhost-user port failed to come up (%s): starting %s once more",
                    self.name, waiting_for, self.PROGRAM)
        self._stop()
        self._start()
        return True

    def _stop(self) -> int | None:
        """Stops the program and removes its DPDK runtime dir; its exit code."""
        code = self.process.stop(grace_s=5.0)
        self.process = None
        dpdk_telemetry.remove_runtime_dir(self.executor, self.file_prefix)
        return code

    def _ports_not_ready(self, timeout_s: float) -> str:
        """What telemetry says is missing ('' once every port forwards)."""
        ports = range(len(self.interfaces))
        commands = [c for p in ports for c in (f"/ethdev/info,{p}", f"/ethdev/link_status,{p}")]
        try:
            reply = dpdk_telemetry.query(self.executor, self.file_prefix, commands,
                                         timeout_s=timeout_s)
        except RunError as exc:
            return f"an answer on the telemetry socket ({exc})"
        return dpdk_telemetry.ports_not_forwarding(reply, {p: self.interfaces[p].name
                                                           for p in ports})

    def software_versions(self) -> dict[str, str]:
        reply = dpdk_telemetry.query(self.executor, self.file_prefix, ["/info"])
        info = reply.get("/info") or {}
        version = info.get("version") if isinstance(info, dict) else None
        return {f"{self.name}: DPDK": str(version)} if version else {}

    def collect_kpi(self) -> dict[str, float]:
        ports = list(range(len(self.interfaces)))
        reply = dpdk_telemetry.query(self.executor, self.file_prefix,
                                     [f"/ethdev/stats,{p}" for p in ports])
        return dpdk_telemetry.port_stats_kpis(reply, ports)

    def counter_feed(self) -> CounterFeed:
        """Its ethdev counters through one telemetry connection held for the trial."""
        ports = list(range(len(self.interfaces)))
        return CounterFeed("telemetry", [dpdk_telemetry.socket_path(self.file_prefix),
                                         *(f"/ethdev/stats,{p}" for p in ports)],
                           lambda reply: self.port_counts(
                               dpdk_telemetry.port_stats_kpis(reply, ports)))

    def forwarding(self) -> dict[str, str]:
        """Its ports in pairs, in the EAL's order: 0 <-> 1, 2 <-> 3, ..."""
        return pairs_forwarding([i.name for i in self.interfaces])

    def port_counts(self, kpis: dict[str, float]) -> dict[str, PortCount]:
        """Each port's ethdev counters (DPDK telemetry): ipackets, opackets, and the
        frames it missed (imissed: its ring overflowed), could not buffer (rx_nombuf),
        received in error or failed to send."""
        return {iface.name: port_counts.from_kpis(kpis, f"port{number}_",
                                                  dpdk_telemetry.COUNTER_KINDS)
                for number, iface in enumerate(self.interfaces)
                if f"port{number}_ipackets" in kpis}

    def terminate(self) -> None:
        if self.process is not None:
            code = self._stop()
            LOG.info("%s: %s stopped (exit %s), log in %s", self.name, self.KIND, code,
                     self.log)
            # the memif sockets it served outlive it, and stop the next server (the
            # next scenario's) from creating them
            served = [i.socket for i in self.interfaces if i.is_memif and i.serves_socket]
            if served:
                self.executor.run(["rm", "-f", *served], check=False)
        self.cleanup()
        hugepages.release(self.executor, self._hugepages, self.run.task_id)
        self._hugepages = 0
        if self._silenced is not None:
            self._silenced.restore()
            self._silenced = None
