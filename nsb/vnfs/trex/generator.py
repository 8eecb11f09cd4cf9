"""TRex (stateless) as nsb's traffic generator, also under NSB's names
``TrexTrafficGenRFC`` and ``TrexTrafficGen``.

The server runs on the generator's node (this machine, a namespace, or a pod's TG
over SSH); nsb drives it with TRex's own STL client from wherever nsb runs. A
trial is: streams per direction at the trial's rate, ``start(duration)``, wait,
then the port counters once the receive counters stop moving. TRex that cannot
keep up sends late rather than dropping frames; whether it kept the trial's
schedule is read from its own tx counters (``pacing``), never from the client's
wall time.
"""

from __future__ import annotations

import logging
import time
import zlib
from dataclasses import replace

from nsb import frames
from nsb.contexts.base import Endpoint, vhost_socket
from nsb.errors import PrerequisiteError, RunError
from nsb.nodes import tool_roles
from nsb.packets import Direction
from nsb.trial import Trial, TrialResult, burst_shares
from nsb.vnfs.base import TrafficGen
from nsb.vnfs.kernel_ports import SilencedPorts
from nsb.vnfs.trex import addresses as address_trials
from nsb.vnfs.trex import install, pacing, sampled, shared_net, stats, streams, trex_cfg, vxlan
from nsb.vnfs.trex.options import OPTIONS_SCHEMA
from nsb.vnfs.trex.server import TrexServer, command

LOG = logging.getLogger(__name__)
# measured: frames of mixed sizes over memif between TRex 3.08 and DPDK 22.11 make
# both sides count frames that were never sent (tens of times the frames sent)
MEMIF_NO_MIX = ("cannot send a frame mix over memif (TRex's memif ports miscount frames "
                "of mixed sizes); a mix needs NIC or kernel-interface ports")


class TrexTrafficGen(TrafficGen):
    """Cisco TRex stateless: line-rate capable generator on NICs, memif, af_packet."""

    SENDS_FRAME_MIX = True
    SAMPLES_INTERVALS = True  # counters read while traffic runs (nsb.vnfs.trex.sampled)
    SENDS_BURSTS = True  # a single-burst stream: exactly total_pkts frames at the rate
    SENDS_ADDRESSES = True  # address-learning trials (nsb.vnfs.trex.addresses)
    OPTIONS_SCHEMA = OPTIONS_SCHEMA
    API_MODULE, CLIENT = "trex.stl.api", "STLClient"  # TRex's stateless client

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.trex_path = options.get("trex_path") or install.default_path()
        self.ports = self._ports(options.get("port_pairs"))
        self.paths = self._paths()
        self.chain_macs = shared_net.chain_macs(options, len(self.ports), context.nodes,
                                                spec.options_where)
        self.vxlan = vxlan.from_options(options.get("vxlan"))
        if self.vxlan and options["latency_pps"] > 0:
            raise spec.options_where.error(
                f"{options['latency_pps']:g}: latency frames are not matched once the DUT has "
                "re-encapsulated them; with vxlan set latency_pps: 0", "latency_pps")
        if any(i.is_memif for i in self.ports):
            self.SENDS_FRAME_MIX = False
            self.no_frame_mix_reason = MEMIF_NO_MIX
        tag = zlib.crc32(f"{run.task_id}:{spec.name}".encode())
        self.pub_port = options.get("pub_port") or 30000 + 2 * (tag % 10000)
        self.rpc_port = options.get("rpc_port") or self.pub_port + 1
        self.prefix = f"nsb-{run.task_id}-{spec.name}"
        self.cfg_path = f"{self.work_dir}/trex_cfg.yaml"
        self.api = None
        self.client = None
        self.server: TrexServer | None = None
        self._low_end: bool | None = None
        self._sending: list[streams.Path] = []  # the paths of the current trial
        self._reflected = False  # the current trial's frames come back where they left
        self._pair_of: dict[int, int] = {}  # the current trial's latency pg_id -> port pair
        self._silenced: SilencedPorts | None = None  # its kernel ports, as sinks

    def _ports(self, pairs) -> list:
        """The interfaces TRex drives, in TRex's port order (pairs side by side)."""
        node, where = self.node, self.spec.options_where
        if pairs is None:
            # linked ports, and those an NSB topology puts on a link without a cable
            linked = [i for _, i in node.dpdk_ports().items()
                      if i.peer or i.name in self.spec.networks]
            if len(linked) < 2 or len(linked) % 2:
                names = ", ".join(i.name for i in linked) or "none"
                raise where.error(f"TRex drives ports in pairs: {node.name} has "
                                  f"{len(linked)} linked interfaces ({names}); name them "
                                  "in options.port_pairs")
            return linked
        ports = []
        for index, pair in enumerate(pairs):
            for side, name in enumerate(pair):
                if name not in node.interfaces:
                    raise where.error(f"node {node.name} has no interface '{name}'; it has: "
                                      f"{', '.join(node.interfaces)}", "port_pairs", index, side)
                ports.append(node.interfaces[name])
        return ports

    def port_pairs(self) -> list[tuple[str, str]]:
        return [(self.ports[k].name, self.ports[k + 1].name)
                for k in range(0, len(self.ports) - 1, 2)]

    def chain_destinations(self) -> list[str]:
        return list(self.options.get("chain_destinations") or []) if self.chain_macs else []

    def _paths(self) -> list[streams.Path]:
        paths = []
        for pair in range(len(self.ports) // 2):
            a, b = 2 * pair, 2 * pair + 1
            paths.append(streams.Path(a, b, self.ports[a], self.ports[b], pair, Direction.UPLINK))
            if self.options["bidirectional"]:
                paths.append(streams.Path(b, a, self.ports[b], self.ports[a], pair,
                                          Direction.DOWNLINK))
        return paths

    @property
    def tx_port_count(self) -> int:
        return len(self.paths)

    @property
    def tx_ports(self) -> list[int]:
        """The ports sending in the current trial (all paths' before the first)."""
        return sorted({p.tx for p in self._sending or self.paths})

    @property
    def rx_ports(self) -> list[int]:
        """The ports the current trial's frames come back to (the sending ones when a
        reflector returns them: NSB's correlated traffic)."""
        return sorted({p.tx if self._reflected else p.rx for p in self._sending or self.paths})

    # configuration

    def settings(self, low_end: bool) -> trex_cfg.ServerSettings:
        o = self.options
        return trex_cfg.ServerSettings(
            prefix=self.prefix, rpc_port=self.rpc_port, pub_port=self.pub_port,
            low_end=low_end, low_end_core=o["low_end_core"], master_core=o.get("master_core"),
            latency_core=o.get("latency_core"), worker_cores=tuple(o.get("worker_cores", ())),
            af_packet_framecnt=o["af_packet_framecnt"])

    def _vhost_sockets(self) -> dict[str, str]:
        return {i.name: vhost_socket(self.run.task_id, Endpoint(self.node.name, i.name))
                for i in self.ports if i.is_vhostuser}

    def config_text(self, low_end: bool) -> str:
        return trex_cfg.render(self.ports, self.settings(low_end), self._vhost_sockets())

    def command(self) -> list[str]:
        o = self.options
        return command(self.trex_path, self.cfg_path, o.get("queues_per_port"), o["extra_args"])

    def _decide_low_end(self) -> bool:
        chosen = self.options["low_end"]
        if chosen != "auto":
            return bool(chosen)
        cpus = self.executor.run(["nproc", "--all"], check=False).stdout.strip()
        return not cpus.isdigit() or int(cpus) < trex_cfg.LOW_END_BELOW_CPUS

    def describe(self) -> dict:
        low_end = self.options["low_end"]
        info = {**super().describe(), "trex_path": self.trex_path,
                "command": " ".join(self.command())}
        info["trex_cfg.yaml"] = self.config_text(low_end is True or low_end == "auto")
        if low_end == "auto":
            info["low_end"] = (f"decided at start: on when the node has fewer than "
                               f"{trex_cfg.LOW_END_BELOW_CPUS} CPUs")
        info["ports"] = {n: f"{i.name} ({trex_cfg.port_kind(i)})"
                         for n, i in enumerate(self.ports)}
        return {**info, **self.traffic_described()}

    def traffic_described(self) -> dict:
        """What the dry run shows of the traffic: each direction's streams."""
        info = {"streams": [stats.describe_path(p, self.options) for p in self.paths]}
        if self.chain_macs:
            info["chain_streams"] = shared_net.describe(self.chain_destinations(),
                                                        self.chain_macs)
        if self.vxlan:
            info["vxlan"] = vxlan.describe(self.vxlan)
        return info

    # lifecycle

    def dpdk_nics(self) -> list:
        return [i for i in self.ports if i.is_dpdk_port]

    def required_binaries(self) -> list[str]:
        return ["env"]

    def instantiate(self) -> None:
        missing = install.missing_server_files(self.executor, self.trex_path)
        if missing:
            raise PrerequisiteError(
                f"{self.node.name}: no TRex server in {self.trex_path} (missing "
                f"{', '.join(missing)}): set options.trex_path, or install TRex at "
                f"{install.DEFAULT_PATH} ({tool_roles.hint('trex')}) or set {install.ENV}")
        client_dir = install.client_dir(self.trex_path, self.options.get("trex_client_lib"))
        self.api = install.load_api(client_dir, self.API_MODULE)
        self._low_end = self._decide_low_end()
        self._silenced = SilencedPorts(self.executor, [i.name for i in self.ports
                                                       if trex_cfg.port_kind(i) == "kernel"])
        self._silenced.silence()
        self.executor.run(["mkdir", "-p", self.work_dir])
        self.executor.write_file(self.cfg_path, self.config_text(self._low_end))
        self.log = self.log_path("trex")
        self.server = TrexServer(self.executor, self.command(), self.log, self.prefix,
                                 self.name, self.log_text)
        self.server.start()
        self.process = self.server.process

    def _connect(self):
        client = getattr(self.api, self.CLIENT)(server=self.executor.service_host,
                                                sync_port=self.rpc_port,
                                                async_port=self.pub_port, verbose_level="none")
        try:
            self.executor.in_network(client.connect)
        except Exception:
            _quietly(client.disconnect)
            raise
        return client

    def wait_until_ready(self, timeout: float) -> None:
        self.client = self.server.wait_ready(self._connect, timeout)
        count = len(self.client.get_all_ports())
        if count != len(self.ports):
            raise RunError(f"{self.name}: TRex has {count} ports, nsb configured "
                           f"{len(self.ports)} (log: {self.log})")
        self.client.reset(ports=list(range(count)))
        LOG.info("%s: TRex %s ready on %s (RPC %s:%d)", self.name, self._version(),
                 self.node.name, self.executor.service_host, self.rpc_port)

    def _version(self) -> str:
        return str(self.client.get_server_version().get("version", "?"))

    def software_versions(self) -> dict[str, str]:
        return {f"{self.name}: TRex": self._version()} if self.client else {}

    def collect_kpi(self) -> dict[str, float]:
        if self.client is None:
            return {}
        cpu = self.client.get_stats(ports=[]).get("global", {}).get("cpu_util")
        return {"trex_cpu_util_pct": float(cpu)} if cpu is not None else {}

    def terminate(self) -> None:
        if self.client is not None:
            _quietly(lambda: self.client.disconnect(stop_traffic=True, release_ports=True))
            self.client = None
        if self.server is not None:
            self.server.stop()
            self.server = None
            self.process = None
        if self._silenced is not None:
            self._silenced.restore()
            self._silenced = None
        served = [i.socket for i in self.ports if i.is_memif and i.serves_socket]
        if served:  # a memif socket TRex served; left over it stops the next start
            self.executor.run(["rm", "-f", *served], check=False)
        if self.executor is not None:
            self.remove_work_dir()

    # trials

    def run_trial(self, trial: Trial, send=None) -> TrialResult:
        died = self.server.died() if self.server else f"{self.name}: TRex is not running"
        if died:
            raise RunError(died)
        try:
            return (send or self._run_trial)(trial)
        except self.api.TRexError as exc:  # TRex refused a request: its words, one line
            died = self.server.died()
            raise RunError(died or f"{self.name}: TRex: {' '.join(str(exc).split())} "
                           f"(log: {self.log})") from None

    def run_sampled(self, trial: Trial, interval_s: float, on_interval) -> TrialResult:
        return self.run_trial(trial, lambda t: sampled.run(self, t, interval_s, on_interval))

    def scale_rate(self, factor: float) -> None:
        self.client.update(ports=self.tx_ports, mult=f"{factor:g}")

    def _run_trial(self, trial: Trial) -> TrialResult:
        if trial.addresses is not None:
            return address_trials.run(self, trial)
        self._check_frame_fits(frames.largest(trial.frame_size))
        if isinstance(trial.frame_size, frames.FrameMix) and not self.SENDS_FRAME_MIX:
            raise RunError(f"{self.name}: {MEMIF_NO_MIX}")
        flows = trial.flows or self.options["flows"]
        pg_ids = self._load_streams(trial, flows)
        client, ports = self.client, list(range(len(self.ports)))
        client.clear_stats(ports=ports)
        asked = time.monotonic()
        client.start(ports=self.tx_ports, force=True,  # a burst ends when it is sent
                     duration=-1 if trial.burst_frames else trial.duration_s)
        pace = self._wait_traffic(trial, time.monotonic(), asked)
        port_stats = self._drain(ports)
        missed = self.rx_missed(self.rx_ports)
        pgid_stats = client.get_pgid_stats(pg_ids) if pg_ids else {}
        latency = stats.latency(pgid_stats, pg_ids) if pg_ids else None
        result = stats.trial_result(replace(trial, flows=flows), self, port_stats, pace,
                                    latency, missed)
        result = replace(result, pair_latency=stats.pair_latency(pgid_stats, self._pair_of))
        if not self.chain_macs:
            return result
        per_chain, unsent = shared_net.counts(pgid_stats, len(self.chain_macs),
                                              result.tx_packets, result.rx_packets)
        return replace(result, chain_counts=per_chain,
                       extra={**result.extra, "chain_frames_not_sent": float(unsent)})

    def rx_missed(self, ports: list[int]) -> dict[int, int]:
        """Per receiving port, the frames its receive path dropped for want of buffers
        (af_packet's ring: rx_missed_errors), since the trial's counters were cleared."""
        return {port: int(self.client.get_xstats(port).get("rx_missed_errors", 0))
                for port in ports}

    def _load_streams(self, trial: Trial, flows: int) -> list[int]:
        """Replace every port's streams with the trial's; the latency streams' pg_ids."""
        api, client = self.api, self.client
        client.remove_all_streams(ports=list(range(len(self.ports))))
        self._pair_of = {}
        sending = [(path, vxlan.tunnelled(streams.spec_for(path, trial, flows), self.vxlan))
                   for path in self.paths]
        sending = [(path, spec) for path, spec in sending if spec is not None]
        shares = burst_shares(trial.burst_frames, len(sending))
        if not sending:
            raise RunError(f"{self.name}: the profile defines frames for none of TRex's "
                           f"port pairs ({len(self.ports) // 2}): "
                           f"{', '.join(s.name for s in trial.packets)}")
        pg_ids = []
        for index, (path, spec) in enumerate(sending):
            if shares[index] == 0:  # a burst shorter than the paths leaves this one idle
                continue
            per_path_pps = streams.path_rate(trial, path, [p for p, _ in sending])
            if per_path_pps <= 0:  # a pair the trial leaves idle
                continue
            data_pps, latency_pps = streams.split_rate(
                per_path_pps, self.options["latency_pps"] if trial.latency else 0)
            if trial.latency_only and latency_pps > 0:  # no load: latency frames alone
                data_pps, latency_pps = 0.0, per_path_pps
            if self.chain_macs:  # every chain's streams, each counted by its pg_ids
                client.add_streams(shared_net.chain_streams(
                    api, path, spec, trial.frame_size, data_pps,
                    latency_pps if trial.latency else 0, self.chain_macs, shares[index]),
                    ports=[path.tx])
                pg_ids += [pg for k in range(len(self.chain_macs)) for pg in shared_net.pg_ids(k)]
                continue
            loaded = streams.data_streams(api, path, spec, trial.frame_size, data_pps,
                                          shares[index]) if data_pps > 0 else []
            if latency_pps > 0 and trial.latency:
                loaded.append(streams.latency_stream(api, path, spec, trial.frame_size,
                                                     latency_pps, index + 1))
                pg_ids.append(index + 1)
                self._pair_of[index + 1] = path.pair
            client.add_streams(loaded, ports=[path.tx])
        self._sending = [path for (path, _), share in zip(sending, shares, strict=True)
                         if share != 0]
        self._reflected = trial.reflected
        return pg_ids

    def _wait_traffic(self, trial: Trial, started: float, asked: float) -> pacing.Pacing:
        """Until TRex sent the trial (``pacing``: whether it kept its schedule, stopped at
        once when not), then ``rx_delay_ms`` for latency frames still on their way."""
        pace = pacing.wait(self, trial, started,
                           pacing.BURST_ALLOWANCE_S if trial.burst_frames else 0.0, asked)
        self.client.wait_on_traffic(ports=self.tx_ports, timeout=5,
                                    rx_delay_ms=self.options["rx_delay_ms"])
        return pace

    def _drain(self, ports: list[int], watched: list[int] | None = None) -> dict:
        """Port counters once the receive counters of ``watched`` (default: the trial's
        receiving ports) rest ``drain_quiet_s`` (or at the drain timeout): nothing in
        flight is counted as lost."""
        watched = self.rx_ports if watched is None else watched
        quiet, deadline = self.options["drain_quiet_s"], \
            time.monotonic() + self.options["drain_timeout_s"]
        last = self.client.get_stats(ports=ports)
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.client.get_stats(ports=ports)
            if stats.received(now, watched) == stats.received(last, watched):
                return now
            last = now
        return last

    def _check_frame_fits(self, frame_size: int) -> None:
        for iface in self.ports:
            if frame_size - 18 > iface.mtu:
                raise RunError(f"frame size {frame_size} B does not fit the MTU {iface.mtu} of "
                               f"{self.node.name}:{iface.name} (frame = MTU + 18)")


def _quietly(call) -> None:
    try:
        call()
    except Exception as exc:  # teardown goes on: the server is stopped next anyway
        LOG.debug("TRex client: %s", exc)

