"""One Open vSwitch of a run on a node: its own ovsdb-server and vswitchd, with the
database, sockets and pid files in a run directory, nothing shared with a system OVS.
The ovs VNF and the StandaloneOvsDpdk context's host both run one, and build their
bridge, ports and DPDK arguments with the same helpers."""

from __future__ import annotations

import logging
import time

from nsb.errors import RunError
from nsb.executors.base import Executor, tail
from nsb.vnfs.ovs import stats as ovs_stats

SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
DPDK_VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"  # Debian's DPDK build
LOG = logging.getLogger(__name__)

BINARIES = ["ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ovsdb-tool"]


def bridge_commands(bridge: str, datapath: str = "netdev") -> list[list[str]]:
    """The ovs-vsctl commands making ``bridge``: no flows but the run's (fail_mode)."""
    return [["add-br", bridge],
            ["set", "bridge", bridge, f"datapath_type={datapath}", "fail_mode=secure"]]


def port_commands(bridge: str, name: str, kind: str = "",
                  options: dict | None = None) -> list[list[str]]:
    """The ovs-vsctl commands adding port ``name`` to ``bridge`` with its interface type
    (``dpdk``, ``dpdkvhostuserclient``; none: a kernel interface) and ``options``."""
    settings = [f"type={kind}"] if kind else []
    settings += [f"options:{key}={value}" for key, value in (options or {}).items()]
    return [["add-port", bridge, name]] + ([["set", "Interface", name, *settings]]
                                          if settings else [])


def transaction(commands: list[list[str]]) -> list[str]:
    """ovs-vsctl's arguments running ``commands`` as one transaction."""
    args: list[str] = []
    for command in commands:
        args += (["--"] if args else []) + command
    return args


def dpdk_extra(file_prefix: str, pcis: list[str], extra: str | None = None) -> str:
    """OVS-DPDK's other EAL arguments: its own file prefix, ``-a`` for each NIC of its
    ``dpdk`` ports (``pcis``: DPDK probes those and leaves the node's other NICs alone,
    a virtio management NIC among them), then ``extra``; by default ``--no-pci`` when
    no port is a NIC by PCI address."""
    if extra is None:
        extra = "" if pcis else "--no-pci"
    allowed = " ".join(f"-a {pci}" for pci in pcis)
    return " ".join(part for part in (f"--file-prefix={file_prefix}", allowed, extra) if part)


class OvsDaemons:
    """ovsdb-server and ``vswitchd`` in ``work_dir`` on ``executor``; output to ``log``."""

    def __init__(self, executor: Executor, work_dir: str, vswitchd: str, log: str, name: str):
        self.executor = executor
        self.work_dir = work_dir
        self.vswitchd = vswitchd
        self.log = log
        self.name = name  # who runs it, in messages
        self.processes: list = []

    def _env(self) -> list[str]:
        return ["env", f"OVS_RUNDIR={self.work_dir}", f"OVS_LOGDIR={self.work_dir}",
                f"OVS_DBDIR={self.work_dir}"]

    def vsctl(self, *args: str) -> str:
        """ovs-vsctl waiting up to a minute for vswitchd: adding DPDK ports probes their
        devices, which took over 10 s in a TCG guest on a busy host."""
        return self.executor.run([*self._env(), "ovs-vsctl", f"--db=unix:{self.work_dir}/db.sock",
                                  "--timeout=60", *args], timeout=75).stdout

    def ofctl(self, bridge: str, *args: str, input: str | None = None) -> str:  # noqa: A002
        return self.executor.run(["ovs-ofctl", "-O", "OpenFlow13", *args[:1],
                                  f"unix:{self.work_dir}/{bridge}.mgmt", *args[1:]],
                                 timeout=20, input=input).stdout

    def appctl(self, *args: str) -> str:
        return self.executor.run(["ovs-appctl", "-t", f"{self.work_dir}/ovs-vswitchd.ctl", *args],
                                 timeout=20).stdout

    def pmd_kpis(self) -> dict[str, float]:
        """PMD statistics (summed over threads) and the datapath flow count; {} when
        it does not run."""
        if not self.processes:
            return {}
        kpis = ovs_stats.pmd_stats(self.appctl("dpif-netdev/pmd-stats-show"))
        kpis["datapath_flows"] = float(ovs_stats.flow_count(self.appctl("dpctl/dump-flows")))
        return kpis

    def port_kpis(self, bridges: str | list[str], ports: list[str]) -> dict[str, float]:
        """The OpenFlow port counters of ``ports`` on ``bridges`` (read from the datapath
        when asked: the database's statistics lag by seconds); {} when it does not run."""
        if not self.processes:
            return {}
        counters: dict = {}
        for bridge in [bridges] if isinstance(bridges, str) else bridges:
            text = self.executor.run(["ovs-ofctl", "-O", "OpenFlow13", "--names", "dump-ports",
                                      f"unix:{self.work_dir}/{bridge}.mgmt"], timeout=20).stdout
            counters.update(ovs_stats.port_counters(text))
        return ovs_stats.port_kpis(counters, ports)

    def start(self, other_config: dict[str, str]) -> None:
        """A new database with ``other_config`` set, then both daemons, answering."""
        self.executor.run(["mkdir", "-p", self.work_dir])
        self.executor.run(["ovsdb-tool", "create", f"{self.work_dir}/conf.db", SCHEMA])
        self.processes.append(self.executor.start(
            [*self._env(), "ovsdb-server", f"{self.work_dir}/conf.db",
             f"--remote=punix:{self.work_dir}/db.sock",
             f"--pidfile={self.work_dir}/ovsdb-server.pid",
             f"--unixctl={self.work_dir}/ovsdb-server.ctl", "-vconsole:info"], log_path=self.log))
        self._wait_for(f"{self.work_dir}/db.sock", "ovsdb-server")
        self.vsctl("--no-wait", "init")
        settings = [f'other_config:{k}="{v}"' for k, v in other_config.items()]
        if settings:
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".", *settings)
        self.processes.append(self.executor.start(
            [*self._env(), self.vswitchd, f"unix:{self.work_dir}/db.sock",
             f"--pidfile={self.work_dir}/ovs-vswitchd.pid",
             f"--unixctl={self.work_dir}/ovs-vswitchd.ctl", "-vconsole:info"], log_path=self.log))
        self._wait_for(f"{self.work_dir}/ovs-vswitchd.ctl", "ovs-vswitchd")

    def log_text(self) -> str:
        try:
            return self.executor.read_file(self.log)
        except OSError:
            return ""

    def _wait_for(self, path: str, what: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.executor.run(["test", "-S", path], check=False).returncode != 0:
            dead = [p for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RunError(f"{self.name}: {what} did not start ({path} missing); last lines "
                               f"of its log:\n{tail(self.log_text())}")
            time.sleep(0.05)

    def wait_for_ports(self, bridge: str, ports: list[str], timeout: float) -> None:
        """Until every port of ``bridge`` has an OpenFlow number."""
        deadline = time.monotonic() + timeout
        while True:
            numbers = [self.vsctl("get", "Interface", port, "ofport").strip() for port in ports]
            if all(n.isdigit() and int(n) > 0 for n in numbers):
                return
            if time.monotonic() > deadline:
                raise RunError(f"{self.name}: ports {ports} not up in bridge {bridge} after "
                               f"{timeout:g} s (ofport {numbers}):\n{tail(self.log_text())}")
            time.sleep(0.1)

    def stop(self, *bridges: str) -> None:
        """The bridges removed (their netdev taps go with them), then both daemons stopped."""
        if not self.processes:
            return
        for bridge in bridges:
            try:
                self.vsctl("--if-exists", "del-br", bridge)
            except Exception as exc:  # the bridge goes with the database anyway
                LOG.warning("%s: removing bridge %s failed: %s", self.name, bridge, exc)
        for process in reversed(self.processes):
            process.stop(grace_s=5.0)
        self.processes.clear()
