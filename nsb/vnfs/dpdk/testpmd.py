"""DPDK testpmd as the system under test: a NIC bound to a DPDK driver by its PCI
address (``-a``, hugepages), an af_packet vdev per kernel interface, a
virtio_user vdev serving the vhost-user socket of a vhost-user interface (the
"container" path into OVS-DPDK, with hugepages it adds while it runs), a memif vdev
per memif interface (the lab's path on which a DPDK generator is not the limit)."""

from __future__ import annotations

import logging
import time

from nsb.contexts.base import Endpoint, vhost_socket
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import tail
from nsb.nodes import platform
from nsb.vnfs import hugepages
from nsb.vnfs.base import Vnf
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.kernel_ports import SilencedPorts

LOG = logging.getLogger(__name__)


class TestpmdVnf(Vnf):
    """DPDK testpmd forwarding between its ports (io, mac or macswap)."""

    ADDS_HUGEPAGES = True
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "testpmd_path": {"type": "string", "default": "dpdk-testpmd"},
            "forward_mode": {"enum": ["io", "mac", "macswap", "5tswap", "csum"], "default": "io"},
            "cores": {"type": "integer", "minimum": 1, "maximum": 64, "default": 1},
            "lcores": {"type": "string", "pattern": r"^[0-9,\-]+$"},
            "burst": {"type": "integer", "minimum": 1, "maximum": 512, "default": 32},
            "rxd": {"type": "integer", "minimum": 32, "maximum": 16384, "default": 1024},
            "txd": {"type": "integer", "minimum": 32, "maximum": 16384, "default": 1024},
            "memory_mb": {"type": "integer", "minimum": 64, "default": 256},
            # EAL: memory per NUMA node instead of memory_mb (NICs on one socket), and
            # the memory channels (-n) of the node's CPUs
            "socket_mem": {"type": "string", "pattern": "^[0-9]+(,[0-9]+)*$"},
            "memory_channels": {"type": "integer", "minimum": 1, "maximum": 16},
            "mbufs": {"type": "integer", "minimum": 1024, "default": 8192},
            "interfaces": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "af_packet_framecnt": {"type": "integer", "minimum": 64, "default": 4096},
            "extra_args": {"type": "array", "items": {"type": "string"}, "default": []},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        names = options.get("interfaces") or [i.name for i in node.interfaces.values() if i.peer]
        for name in names:
            if name not in node.interfaces:
                raise spec.options_where.error(
                    f"node {node.name} has no interface '{name}'; it has: "
                    f"{', '.join(node.interfaces)}", "interfaces")
        if len(names) < 2 and options["forward_mode"] == "io":
            LOG.warning("%s: io forwarding with one port sends frames back out of it", self.name)
        self.interfaces = port_order([node.interfaces[n] for n in names])
        self.file_prefix = f"nsb-{run.task_id}-{spec.name}"
        self.process = None
        self._hugepages = 0
        self._silenced: SilencedPorts | None = None

    @property
    def vhost_user(self) -> bool:
        """Some port is a vhost-user socket: its memory must be shared hugepages."""
        return any(i.is_vhostuser for i in self.interfaces)

    @property
    def needs_hugepages(self) -> bool:
        """NICs (DMA) and vhost-user (shared memory) need hugepages; the rest runs
        on ordinary memory (--no-huge)."""
        return self.vhost_user or any(i.is_dpdk_port for i in self.interfaces)

    def required_binaries(self) -> list[str]:
        return [self.options["testpmd_path"]]

    def dpdk_nics(self) -> list:
        return [i for i in self.interfaces if i.is_dpdk_port]

    def memory_mb(self) -> int:
        socket_mem = self.options.get("socket_mem")
        return sum(map(int, socket_mem.split(","))) if socket_mem else self.options["memory_mb"]

    def preflight(self, facts: dict) -> list[str]:
        """Lcores the node has; for hugepages, the memory to add them."""
        problems = []
        online = platform.cpu_set(facts.get("online_cpus", ""))
        wanted = platform.cpu_set(self._lcores())
        if not wanted:
            problems.append(f"lcores '{self._lcores()}' name no CPU (write e.g. 0-2 or 0,2)")
        elif online and not wanted <= online:
            problems.append(f"lcores {self._lcores()}: the node has no CPU "
                            f"{','.join(map(str, sorted(wanted - online)))} (online CPUs: "
                            f"{facts['online_cpus']})")
        if not self.needs_hugepages:
            return problems
        # no hugetlbfs mount needed: --in-memory takes its pages through memfd
        needed = hugepages.pages_for(self.memory_mb()) + 16
        can = facts.get("hugepages_free", 0) + facts.get("mem_available_kb", 0) // 2048
        if "mem_available_kb" in facts and can < needed:
            problems.append(f"needs {needed} hugepages of 2 MB (memory_mb/socket_mem); the "
                            f"node has {facts.get('hugepages_free', 0)} free and memory for "
                            f"{can - facts.get('hugepages_free', 0)} more")
        return problems

    def _lcores(self) -> str:
        return self.options.get("lcores") or f"0-{self.options['cores']}"

    def command(self) -> list[str]:
        """The testpmd command line: EAL options, one af_packet vdev per port, app options."""
        o = self.options
        # vhost-user shares the memory with the switch and NICs DMA into it: hugepages
        memory = ["--in-memory", "--single-file-segments"] if self.needs_hugepages \
            else ["--no-huge"]
        nics = [i.pci for i in self.interfaces if i.is_dpdk_port]
        devices = [a for pci in nics for a in ("-a", pci)] if nics else ["--no-pci"]
        size = ["--socket-mem", o["socket_mem"]] if o.get("socket_mem") and \
            self.needs_hugepages else ["-m", str(o["memory_mb"])]
        channels = ["-n", str(o["memory_channels"])] if o.get("memory_channels") else []
        argv = [o["testpmd_path"], *memory, *devices, *size, *channels, "-l", self._lcores(),
                "--file-prefix", self.file_prefix, "--log-level", "*:notice"]
        for port, iface in enumerate(self.interfaces):
            if iface.is_dpdk_port:
                continue  # its port number is its place in PCI order, before the vdevs
            if iface.is_vhostuser:
                socket = vhost_socket(self.run.task_id, Endpoint(self.node.name, iface.name))
                argv += ["--vdev", f"net_virtio_user{port},path={socket},server=1,queues=1,"
                         f"mac={iface.mac}"]
                continue
            if iface.is_memif:
                role = "server" if iface.serves_socket else "client"
                argv += ["--vdev", f"net_memif{port},role={role},id=0,socket={iface.socket},"
                         f"socket-abstract=no,mac={iface.mac}"]
                continue
            argv += ["--vdev", f"net_af_packet{port},iface={iface.name},blocksz=4096,"
                     f"framesz=2048,framecnt={o['af_packet_framecnt']},qdisc_bypass=1"]
        argv += ["--", f"--forward-mode={o['forward_mode']}", "--auto-start",
                 f"--nb-cores={o['cores']}", f"--burst={o['burst']}", f"--rxd={o['rxd']}",
                 f"--txd={o['txd']}", f"--total-num-mbufs={o['mbufs']}",
                 "--stats-period=3600"]
        if o["forward_mode"] == "mac":
            for port, iface in enumerate(self.interfaces):
                if iface.peer_mac:
                    argv.append(f"--eth-peer={port},{iface.peer_mac}")
        return argv + list(o["extra_args"])

    def describe(self) -> dict:
        info = super().describe()
        info["ports"] = {port: i.name for port, i in enumerate(self.interfaces)}
        info["command"] = " ".join(self.command())
        return info

    def instantiate(self) -> None:
        binary = self.options["testpmd_path"]
        if not self.executor.which(binary):
            raise PrerequisiteError(
                f"{self.node.name}: {binary} not found (set options.testpmd_path; on Debian: "
                "apt-get install dpdk-dev)")
        self.log = self.log_path("testpmd")
        if self.needs_hugepages:
            self._hugepages = hugepages.reserve(
                self.executor, hugepages.pages_for(self.memory_mb()) + 16, self.name,
                self.run.task_id)
        # its af_packet ports belong to testpmd: the node's own IP stack must not send
        # on them (IPv6 neighbour discovery, ARP), or the generator counts its frames
        self._silenced = SilencedPorts(self.executor, [i.name for i in self.interfaces
                                                       if self._is_kernel_port(i)])
        self._silenced.silence()
        argv = self.command()
        if self.executor.which("stdbuf"):  # a complete log for error messages, not readiness
            argv = ["stdbuf", "-oL", *argv]
        self.process = self.executor.start(argv, log_path=self.log)

    def wait_until_ready(self, timeout: float) -> None:
        """Ready when DPDK telemetry shows every port started with its link up.

        testpmd's stdout goes to a file through a block buffer, so a log line is
        no signal; its telemetry socket answers as soon as the EAL is up. With
        every port started and linked, testpmd's link check returns and it
        starts forwarding.
        """
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RunError(f"{self.name}: dpdk-testpmd exited with code "
                               f"{self.process.poll()} while starting:\n{tail(self.log_text())}")
            waiting_for = self._ports_not_ready()
            if not waiting_for:
                LOG.info("%s: testpmd forwarding on %d ports", self.name, len(self.interfaces))
                return
            if time.monotonic() >= deadline:
                raise RunError(
                    f"{self.name}: dpdk-testpmd not ready after {timeout:g} s (vnf_start_timeout "
                    f"in nsb.conf): waited for DPDK telemetry "
                    f"({dpdk_telemetry.socket_path(self.file_prefix)}) to show every port "
                    f"started with its link up; still waiting for: {waiting_for}; last lines "
                    f"of its log:\n{tail(self.log_text())}")
            time.sleep(0.2)

    def _ports_not_ready(self) -> str:
        """What telemetry says is missing ('' once every port forwards)."""
        ports = range(len(self.interfaces))
        commands = [c for p in ports for c in (f"/ethdev/info,{p}", f"/ethdev/link_status,{p}")]
        try:
            reply = dpdk_telemetry.query(self.executor, self.file_prefix, commands, timeout_s=5)
        except RunError as exc:
            return f"an answer on the telemetry socket ({exc})"
        return dpdk_telemetry.ports_not_forwarding(reply, {p: self.interfaces[p].name
                                                           for p in ports})

    def software_versions(self) -> dict[str, str]:
        reply = dpdk_telemetry.query(self.executor, self.file_prefix, ["/info"], timeout_s=5)
        info = reply.get("/info") or {}
        version = info.get("version") if isinstance(info, dict) else None
        return {f"{self.name}: DPDK": str(version)} if version else {}

    def collect_kpi(self) -> dict[str, float]:
        ports = list(range(len(self.interfaces)))
        reply = dpdk_telemetry.query(self.executor, self.file_prefix,
                                     [f"/ethdev/stats,{p}" for p in ports])
        return dpdk_telemetry.port_stats_kpis(reply, ports)

    def terminate(self) -> None:
        if self.process is not None:
            code = self.process.stop(grace_s=5.0)
            LOG.info("%s: testpmd stopped (exit %s), log in %s", self.name, code, self.log)
            self.process = None
            dpdk_telemetry.remove_runtime_dir(self.executor, self.file_prefix)
        hugepages.release(self.executor, self._hugepages, self.run.task_id)
        self._hugepages = 0
        if self._silenced is not None:
            self._silenced.restore()
            self._silenced = None

    @staticmethod
    def _is_kernel_port(iface) -> bool:
        return not (iface.is_dpdk_port or iface.is_vhostuser or iface.is_memif)


def port_order(interfaces: list) -> list:
    """The interfaces in the order DPDK numbers its ports: NICs first, in PCI address
    order (the EAL probes the PCI bus before virtual devices), then the vdevs in the
    order given."""
    nics = sorted((i for i in interfaces if i.is_dpdk_port), key=lambda i: i.pci)
    return nics + [i for i in interfaces if not i.is_dpdk_port]
