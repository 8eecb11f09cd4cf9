"""PROX as a system under test (``prox``) and as a traffic generator (``prox_tg``).

Options are NSB's: ``prox_path``, ``prox_config``, ``prox_args``, ``prox_files``
and ``prox_generate_parameter``. The config is filled from the topology when
the plan is made (so ``--dry-run`` shows it and a placeholder without a value
is a task error before anything starts), copied with its files to a run
directory on the node, and PROX is started with ``-o cli`` (its counters only
advance in that mode). Control goes through PROX's TCP socket.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from nsb.dut_feed import CounterFeed
from nsb.errors import NsbError, PrerequisiteError, RunError, TaskError
from nsb.executors.base import tail
from nsb.nodes import link_counters, platform, tool_roles
from nsb.port_counts import PortCount
from nsb.task import input_file, render
from nsb.vnfs.base import Vnf
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.prox import config as prox_config
from nsb.vnfs.prox import log as prox_log
from nsb.vnfs.prox.client import PROX_PORT, PortTotals, ProxClient

LOG = logging.getLogger(__name__)

TEMPLATE_SUFFIX = ".j2"  # a prox_config rendered with Jinja2 first (config_template_values)

PROX_OPTIONS = {
    "prox_path": {"description": "the PROX binary on the node",
                  "type": "string", "minLength": 1, "default": "/opt/nsb_bin/prox"},
    "prox_config": {"description": "PROX's config file, filled from the topology (a .j2 file "
                                   "is a Jinja2 template given ports and port_pairs first)",
                    "type": "string", "minLength": 1},
    "prox_args": {"description": "PROX command-line options: option -> value (null: a flag)",
                  "type": "object",
                  "additionalProperties": {"type": ["string", "number", "null"]},
                  "default": {}},
    "prox_files": {"description": "files the config reads, copied with it to the node",
                   "anyOf": [{"type": "object"}, {"type": "string"},
                             {"type": "array", "items": {"type": "string"}}],
                   "default": {}},
    "prox_generate_parameter": {"description": "the topology as Lua globals for the config's route"
                                               " tables",
                                "type": "boolean", "default": False},
    "af_packet": {"description": "ports as af_packet vdevs on kernel interfaces; auto: when the "
                                 "node's interfaces have no PCI address",
                  "enum": ["auto", True, False], "default": "auto"},
    "af_packet_frame_size": {"description": "frame size of an af_packet port's ring",
                             "type": "integer", "enum": [1024, 2048, 4096], "default": 1024},
    "collectd": {"description": "NSB's NFVi collector: accepted, nsb samples itself",
                 "type": "object"},
}


class ProxVnf(Vnf):
    """PROX as the system under test (routing, swap, nop ... as its config says)."""

    EVENTS = ("pause", "command", "restart", "link_flap")  # nsb.vnf_events

    OPTIONS_SCHEMA = {
        "type": "object",
        "required": ["prox_config"],
        "additionalProperties": False,
        "properties": dict(PROX_OPTIONS),
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.files = self._prox_files()
        self.config = self._render_config()
        self.process = None
        self.client: ProxClient | None = None
        self.log = ""
        if "collectd" in options:
            LOG.info("%s: option 'collectd' is not used; nsb samples NFVi KPIs itself",
                     self.name)

    # --- plan time: files and config --------------------------------------

    def _local(self, path: str) -> Path:
        return self.run.task_relative(path)

    def _prox_files(self) -> dict[str, tuple[str, str]]:
        """name -> (text, path on the node) for every ``prox_files`` entry, read now so
        that a file that cannot be read is a task error before anything starts."""
        raw = self.options["prox_files"]
        names = [raw] if isinstance(raw, str) else list(raw)
        files = {}
        for name in names:
            local = self._local(input_file.check_path_text(
                name, lambda message: self.spec.options_where.error(message, "prox_files")))
            files[local.name] = (self._option_file(local, "prox_files"),
                                 f"{self.work_dir}/{local.name}")
        return files

    def _option_file(self, local: Path, key: str) -> str:
        """The text of a file an option names; one line at that option when it cannot be read."""
        try:
            return input_file.read_text(local)
        except TaskError as exc:
            raise self.spec.options_where.error(str(exc), key) from None

    def _files_beside(self, config: prox_config.ProxConfig, folder: Path) -> None:
        """A ``dofile("x")`` that prox_files does not name, found beside the config, is
        copied too (NSB would point PROX at a file it never copied)."""
        for name in config.dofile_names():
            if name not in self.files and (folder / name).is_file() and \
                    name != "parameters.lua":
                LOG.info("%s: %s is not in prox_files; copying it from beside the config",
                         self.name, name)
                self.files[name] = (input_file.read_text(folder / name),
                                    f"{self.work_dir}/{name}")

    def port_addresses(self) -> dict[int, prox_config.PortAddresses]:
        return {number: prox_config.PortAddresses(iface.name, iface.mac, iface.ip,
                                                  iface.peer_mac, iface.peer_ip)
                for number, iface in self.node.dpdk_ports().items()}

    def _render_config(self) -> prox_config.ProxConfig:
        local = self._local(input_file.check_path_text(
            self.options["prox_config"],
            lambda message: self.spec.options_where.error(message, "prox_config")))
        text = self._option_file(local, "prox_config")
        if local.suffix == TEMPLATE_SUFFIX:
            text = render.render(text, str(local), self.config_template_values())
        config = prox_config.ProxConfig.parse(text, str(local))
        self._files_beside(config, local.parent)
        remote = {name: path for name, (_, path) in self.files.items()}
        if self.options["prox_generate_parameter"]:
            remote["parameters.lua"] = f"{self.work_dir}/parameters.lua"
        config.fill(self.port_addresses(), remote, self.node.name)
        prefix = f"nsb-{self.run.task_id}-{self.name}"
        if self._af_packet():
            config.use_af_packet(self.interface_names(), prefix,
                                 self.options["af_packet_frame_size"])
        else:  # its NICs only, whatever else the node has on a DPDK driver
            config.use_pci_devices([i.pci for i in self.dpdk_nics()])
            config.unlink_hugepages()
        self.file_prefix = config.use_file_prefix(prefix)
        return config

    def config_template_values(self) -> dict:
        """What a config template (a ``.j2`` prox_config) is given: ``ports``, PROX's
        port numbers, and ``port_pairs``, the generator's pairs as [tx, rx] numbers."""
        number = {name: n for n, name in self.interface_names().items()}
        pairs = [[number.get(tx), number.get(rx)]
                 for tx, rx in self.options.get("port_pairs", [])]
        return {"ports": sorted(number.values()), "port_pairs": pairs}

    def _af_packet(self) -> bool:
        """Embedded-lab nodes have kernel interfaces (no PCI address): use af_packet vdevs."""
        choice = self.options["af_packet"]
        if choice == "auto":
            return not any(i.pci for i in self.node.interfaces.values())
        return bool(choice)

    def required_binaries(self) -> list[str]:
        return [self.options["prox_path"]]

    def dpdk_nics(self) -> list:
        if self._af_packet():
            return []
        return [i for i in self.node.interfaces.values() if i.is_dpdk_port]

    def preflight(self, facts: dict) -> list[str]:
        """PROX exits at start ("EAL: lcore N unavailable") for a core the node lacks."""
        wanted, online = self.config.lcores(), platform.cpu_set(facts.get("online_cpus", ""))
        if not online or not wanted:
            return []
        missing = sorted(wanted - online)
        if missing:
            return [f"{self.config.source} names lcores {_cpu_list(missing)}, which the node "
                    f"does not have (online CPUs: {facts['online_cpus']})"]
        isolated = platform.cpu_set(facts.get("isolated_cpus", ""))
        workers = wanted - {self.config.master_lcore()}
        if self._on_real_nics() and not workers <= isolated:
            LOG.warning("%s: PROX workers on lcores %s are not isolated (isolcpus: %s): other "
                        "processes may share them", self.name,
                        _cpu_list(sorted(workers - isolated)), facts.get("isolated_cpus") or "none")
        return []

    def _on_real_nics(self) -> bool:
        return any(i.pci for i in self.node.interfaces.values())

    def command(self) -> list[str]:
        args = []
        for key, value in self.options["prox_args"].items():
            args.append(str(key))
            if value not in (None, ""):
                args.append(str(value))
        output = [] if "-o" in args else ["-o", "cli"]
        log = [] if "-l" in args else ["-l", self.remote_log]  # else ./prox.log in the cwd
        # stats snapshots every 0.1 s instead of every second: fresher trial counters
        refresh = [] if "-r" in args else ["-r", "0.1"]
        return [self.options["prox_path"], *output, *log, *refresh, *args,
                "-f", self.remote_config]

    @property
    def remote_log(self) -> str:
        return f"{self.work_dir}/prox.log"

    @property
    def remote_config(self) -> str:
        name = Path(self.options["prox_config"]).name
        return f"{self.work_dir}/{name.removesuffix(TEMPLATE_SUFFIX)}"

    def describe(self) -> dict:
        described = super().describe()
        described["command"] = self.command()
        described["prox_config"] = self.config.text()
        return described

    # --- run time ---------------------------------------------------------

    def instantiate(self) -> None:
        path = self.options["prox_path"]
        if self.executor.run(["test", "-x", path], check=False).returncode != 0:
            raise PrerequisiteError(
                f"{self.name}: PROX binary not found at {path} on node {self.node.name} (looked "
                f"for an executable file there; set the prox_path option of {self.name}; "
                f"{tool_roles.hint('prox')})")
        for text, remote in self.files.values():
            self.executor.write_file(remote, text)
        if self.options["prox_generate_parameter"]:
            self.executor.write_file(f"{self.work_dir}/parameters.lua",
                                     prox_config.parameters_lua(self.port_addresses()))
        self.executor.write_file(self.remote_config, self.config.text())
        self.log = self.log_path("prox")
        self.process = self.executor.start(self.command(), log_path=self.log)

    def wait_until_ready(self, timeout: float) -> None:
        """Ready when PROX's control socket answers ``version``."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                log = self.log_text()
                reason = prox_log.exit_reason(log)
                raise RunError(f"{self.name}: PROX exited with code {self.process.poll()} while "
                               f"starting: {reason or 'no reason in its log'} (log: {self.log})"
                               + ("" if reason else f"\n{tail(log)}"))
            try:
                sock = self.executor.connect_tcp(PROX_PORT, timeout=2.0)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise RunError(
                        f"{self.name}: PROX's control socket (TCP {PROX_PORT} on node "
                        f"{self.node.name}) did not open within {timeout:g} s (vnf_start_timeout "
                        f"in nsb.conf); last lines of its log:\n{tail(self.log_text())}"
                    ) from None
                time.sleep(0.2)
        self.client = ProxClient(sock, self.name)
        prox, dpdk = self.client.version()
        self.running_versions = {f"{self.name}: PROX": prox, f"{self.name}: DPDK": dpdk}
        LOG.info("%s: PROX %s (DPDK %s) ready on %s", self.name, prox, dpdk, self.node.name)
        self.on_ready()

    def software_versions(self) -> dict[str, str]:
        return dict(getattr(self, "running_versions", {}))

    def on_ready(self) -> None:  # noqa: B027 - hook for the generator
        """Called once the control socket answers."""

    def collect_kpi(self) -> dict[str, float]:
        """NSB's VNF KPIs (packets_in/fwd/dropped) plus per-port totals."""
        if self.client is None:
            return {}
        totals = self.client.tot_stats()
        kpis = {"packets_in": float(totals.rx), "packets_fwd": float(totals.tx),
                "packets_dropped": float(max(0, totals.rx - totals.tx)),
                "ierrors": float(self.client.tot_ierrors())}
        for name, port in self.port_totals().items():
            kpis[f"{name}.rx_packets"] = float(port.rx)
            kpis[f"{name}.tx_packets"] = float(port.tx)
        return kpis

    def port_counts(self, kpis: dict[str, float]) -> dict[str, PortCount]:
        """Each port's totals as PROX counts them (received, sent)."""
        names = [key.removesuffix(".rx_packets") for key in kpis if key.endswith(".rx_packets")]
        return {name: PortCount(int(kpis[f"{name}.rx_packets"]),
                                int(kpis.get(f"{name}.tx_packets", 0))) for name in names}

    def counter_feed(self) -> CounterFeed | None:
        """On af_packet ports (kernel interfaces): their kernel counters, which PROX does
        no work to answer. On NICs: after each trial only (its socket answers in the
        thread that reads it; a second client is not what PROX expects)."""
        if self.process is None or not self._af_packet():
            return None
        return link_counters.feed({name: name for name in self.interface_names().values()})

    def interface_names(self) -> dict[int, str]:
        """DPDK port number -> the node's interface name."""
        return {number: iface.name for number, iface in self.node.dpdk_ports().items()}

    def port_totals(self) -> dict[str, PortTotals]:
        """PROX's counters of the config's ports, by interface name."""
        numbers = self.config.port_numbers()
        if not numbers:
            return {}
        names = self.interface_names()
        return {names.get(n, f"port{n}"): totals
                for n, totals in self.client.multi_port_stats(numbers).items()}

    def terminate(self) -> None:
        if self.client is not None:
            try:
                self.client.quit()
            except OSError:  # it ended already (a restart's SIGKILL)
                pass
            self.client.close()
            self.client = None
        if self.process is not None:
            code = self.process.stop(grace_s=5.0)
            LOG.info("%s: PROX stopped (exit %s), log in %s", self.name, code, self.log)
            self.process = None
            self._keep_prox_log()
            self.remove_work_dir()
            dpdk_telemetry.remove_runtime_dir(self.executor, self.file_prefix)

    def _keep_prox_log(self) -> None:
        """PROX's own log (``-l``) goes to the results beside its console output."""
        try:
            text = self.executor.read_file(self.remote_log)
        except (OSError, ValueError, NsbError):  # PROX died before it opened its log
            return
        Path(self.log_path("prox-log")).write_text(text)


def _cpu_list(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)
