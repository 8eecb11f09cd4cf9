"""netsniff-ng trafgen as traffic generator, with a latency probe stream beside it."""

from __future__ import annotations

import json
import logging
import re
import signal
import time
from dataclasses import replace
from pathlib import Path

from nsb import frames
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import TimeoutExpired, tail
from nsb.frames import Frame, FrameMix
from nsb.runinfo import short_tag
from nsb.trial import PERCENTILES, LatencyStats, Trial, TrialResult, burst_shares
from nsb.vnfs import latency_probe, trafgen_config, trafgen_streams, trafgen_wire, trial_frames
from nsb.vnfs.base import TrafficGen
from nsb.vnfs.kernel_ports import SilencedPorts

LOG = logging.getLogger(__name__)

_SENT = re.compile(r"(\d+)\s+packets outgoing")
# per CPU: "   1 sec, 13009 usec on CPU0 (20000 packets)": the send loop's own clock
_SEND_TIME = re.compile(r"(\d+)\s+sec,\s+(\d+)\s+usec on CPU")


class TrafgenGenerator(TrafficGen):
    """netsniff-ng trafgen: Ethernet/IPv4/UDP at a set rate, latency by probe stream."""

    SENDS_FRAME_MIX = True
    SENDS_BURSTS = True  # --num: exactly a burst's frames, paced by the port's token bucket

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "trafgen_path": {"description": "the trafgen binary (a name on PATH or a path)",
                             "type": "string", "default": "trafgen"},
            "flows": {"description": "UDP flows per direction (source ports); a profile's flows "
                                     "win",
                      "type": "integer", "minimum": 1,
                      "maximum": trafgen_config.MAX_FLOWS, "default": 1},
            "bidirectional": {"description": "traffic both ways through each port pair",
                              "type": "boolean", "default": False},
            "port_pairs": {"description": "[tx, rx] interface pairs (default: linked interfaces in"
                                          " pairs)",
                "type": "array", "minItems": 1,
                "items": {"type": "array", "minItems": 2, "maxItems": 2,
                          "items": {"type": "string"}},
            },
            "latency_probe_pps": {"description": "latency probe frames per second (0: no latency)",
                                  "type": "number", "minimum": 0, "default": 1000},
            "generator_tolerance_pct": {"description": "a trial sent more than this % below the "
                                                       "rate asked is generator-limited",
                                        "type": "number", "exclusiveMinimum": 0,
                                        "maximum": 50, "default": 5},
            "drain_timeout_s": {"description": "at most this long after a trial for frames still "
                                               "in flight",
                                "type": "number", "minimum": 0, "default": 2.0},
            "drain_quiet_s": {"description": "how long the receive counters must stay still for "
                                             "the trial to be over (a VM under TCG holds frames "
                                             "for tens of milliseconds)",
                              "type": "number", "minimum": 0, "default": 0.02},
            "count_received": {"description": "received frames: those with the trial's UDP port, "
                                              "or all the port got (for a DUT that rewrites UDP "
                                              "ports)",
                               "enum": ["trial_port", "link"], "default": "trial_port"},
            "startup_allowance_s": {"description": "time a trafgen may take to start, on top of "
                                                   "the trial's",
                                    "type": "number", "minimum": 0, "default": 1.0},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.streams = self._streams(options.get("port_pairs"))
        self._processes = []
        self._shaped: set[str] = set()
        self._probe_process = None
        self._trials = 0
        self._silenced: SilencedPorts | None = None
        self.received: trial_frames.TrialFrames | None = None  # made by instantiate

    def _streams(self, pairs) -> list[trafgen_streams.Stream]:
        node = self.node
        where = self.spec.options_where
        if pairs is None:
            linked = [i.name for i in node.interfaces.values() if i.peer]
            if len(linked) < 2:
                raise where.error(f"trafgen needs two linked interfaces on {node.name} (one to "
                                  f"send, one to receive); linked: {', '.join(linked) or 'none'}")
            pairs = [linked[i:i + 2] for i in range(0, len(linked) - 1, 2)]
        streams = []
        for index, (tx, rx) in enumerate(pairs):
            for side, name in enumerate((tx, rx)):
                if name not in node.interfaces:
                    raise where.error(f"node {node.name} has no interface '{name}'; it has: "
                                      f"{', '.join(node.interfaces)}", "port_pairs", index, side)
                if node.interfaces[name].peer is None:
                    raise where.error(f"interface {node.name}:{name} is not linked to anything",
                                      "port_pairs", index, side)
            streams.append(trafgen_streams.Stream(tx, rx, index))
            if self.options["bidirectional"]:
                streams.append(trafgen_streams.Stream(rx, tx, index))
        return streams

    def port_pairs(self) -> list[tuple[str, str]]:
        return trafgen_streams.pairs(self.streams)

    @property
    def tx_port_count(self) -> int:
        return len(self.streams)

    def required_binaries(self) -> list[str]:
        return [self.options["trafgen_path"], "python3", "tc"]

    def describe(self) -> dict:
        info = super().describe()
        info["streams"] = [f"{s.tx} -> {self.node.interfaces[s.tx].peer} ... "
                           f"{self.node.interfaces[s.rx].peer} -> {s.rx}" for s in self.streams]
        info["received_frames"] = ("frames carrying the trial's own UDP destination port "
                                   "(nftables ingress counters where nft is installed)")
        return info

    # lifecycle

    def instantiate(self) -> None:
        for binary in self.required_binaries():
            if not self.executor.which(binary):
                hint = (" (apt-get install netsniff-ng, or set options.trafgen_path)"
                        if binary.endswith("trafgen") else "")
                raise PrerequisiteError(f"{self.node.name}: {binary} not found{hint}")
        self._silence_receivers()
        self.received = trial_frames.TrialFrames(
            self.executor, [s.rx for s in self.streams], f"nsb_{short_tag(self.run.task_id)}")
        self.received.install(by_port=self.options["count_received"] == "trial_port")
        self.executor.run(["mkdir", "-p", self.work_dir])
        self.probe_path = f"{self.work_dir}/latency_probe.py"
        self.executor.write_file(self.probe_path, Path(latency_probe.__file__).read_text())
        self.log = self.log_path("trafgen")

    def _silence_receivers(self) -> None:
        """Receiving ports are sinks: without an IPv4 address the kernel drops test frames.

        Frames addressed to this node itself (a switch loops them back, as in
        Phy2Phy) would otherwise reach its IP stack and be answered with ICMP,
        which then counts as received. The addresses come back at teardown.
        """
        self._silenced = SilencedPorts(self.executor, [s.rx for s in self.streams])
        self._silenced.silence()

    def wait_until_ready(self, timeout: float) -> None:
        return None

    def terminate(self) -> None:
        for process in self._processes:
            process.stop(grace_s=2.0)
        self._processes.clear()
        self._probe_process = None
        for ifname in sorted(self._shaped):
            self.executor.run(["tc", "qdisc", "del", "dev", ifname, "root"], check=False)
        self._shaped.clear()
        if self._silenced is not None:
            self._silenced.restore()
            self._silenced = None
        if self.received is not None:
            self.received.remove()
            self.received = None
        if self.executor is not None:
            self.remove_work_dir()

    # trials

    def run_trial(self, trial: Trial) -> TrialResult:
        flows = trial.flows or self.options["flows"]
        rates = trafgen_streams.rates(self.streams, trial)
        # a burst: exactly its frames over the ports (trafgen --num), then stop
        counts = [round(pps * trial.duration_s) for pps in rates] \
            if trial.burst_frames is None else burst_shares(trial.burst_frames, len(self.streams))
        self._check_frame_fits(frames.largest(trial.frame_size))
        self._trials += 1
        port = trial_frames.trial_port(self._trials)
        commands = [self._trafgen_command(stream, index, trial, flows, rates[index],
                                          counts[index], port)
                    for index, stream in enumerate(self.streams) if counts[index] > 0]
        t0 = time.monotonic()
        self.received.arm(port)
        tx_ports = [stream.tx for stream, count in zip(self.streams, counts, strict=True)
                    if count > 0]
        before = trafgen_wire.tx_counts(self.executor, tx_ports)
        probe = self._start_probe(trial)
        started = time.monotonic()
        senders = [self.executor.start(argv, log_path=self.log, pipes=True) for argv in commands]
        self._processes += senders
        reports = self._wait_senders(senders, trial, started)
        # the frames still queued in front of the ports when trafgen's loops ended
        queued_s = trafgen_wire.drained_after(
            self.executor, before, {p: n for p, (n, _) in zip(tx_ports, reports, strict=True)},
            self.options["drain_timeout_s"])
        reports = [(n, t + queued_s) for n, t in reports]
        sent = [n for n, _ in reports]
        elapsed = max((t for _, t in reports), default=time.monotonic() - started)
        t_sent = time.monotonic()
        received = self._drain()
        t_drained = time.monotonic()
        latency, probe_streams = self._stop_probe(probe)
        probe_sent = sum(s["sent"] for s in probe_streams)
        probe_received = sum(s["received"] + s.get("duplicates", 0) for s in probe_streams)
        LOG.debug("trial timing: setup %.3f s, traffic %.3f s, drain %.3f s, probe report "
                  "%.3f s", started - t0, t_sent - started, t_drained - t_sent,
                  time.monotonic() - t_drained)
        tx = sum(sent) + probe_sent
        rx = sum(received[s.rx] for s in self.streams) + probe_received
        # each trafgen's rate over its own send loop and its queue's drain (till the
        # port's kernel tx counter stopped): start-up is not part of the trial
        sent_pps = sum(n / t for n, t in reports if t > 0)
        tolerance = self.options["generator_tolerance_pct"] / 100.0
        limited = bool(reports) and sent_pps < trial.rate_pps * (1 - tolerance)
        if trial.burst_frames is not None:  # a burst: all of it, at the rate
            limited = limited or sum(sent) < trial.burst_frames
        if limited:
            LOG.info("trafgen sent %.0f pps of %.0f asked: generator-limited", sent_pps,
                     trial.rate_pps)
        sending = [s for s, count in zip(self.streams, counts, strict=True) if count > 0]
        ports = trafgen_streams.with_probe(
            trafgen_streams.port_counts(sending, sent, received, [t for _, t in reports]),
            probe_streams)
        return TrialResult(trial=replace(trial, flows=flows), tx_packets=tx, rx_packets=rx,
                           elapsed_s=elapsed, latency=latency, generator_limited=limited,
                           ports=ports, measured_tx_pps=sent_pps + probe_sent / trial.duration_s,
                           measured_rx_pps=rx / max(elapsed, trial.duration_s),
                           intended_packets=sum(counts),
                           extra={"probe_packets": probe_sent})

    def _check_frame_fits(self, frame_size: int) -> None:
        for stream in self.streams:
            mtu = self.node.interfaces[stream.tx].mtu
            if frame_size - 18 > mtu:
                raise RunError(f"frame size {frame_size} B does not fit the MTU {mtu} of "
                               f"{self.node.name}:{stream.tx} (frame = MTU + 18)")

    def _trafgen_command(self, stream, index, trial, flows, pps, count, port) -> list[str]:
        tx = self.node.interfaces[stream.tx]
        rx = self.node.interfaces[stream.rx]
        addresses = (tx.mac, tx.peer_mac or rx.mac, tx.address or "10.0.0.1",
                     rx.address or "10.0.0.2", flows, port)
        frame = trial.frame_size
        if isinstance(frame, FrameMix):
            config = trafgen_config.mix_config(frame.sequence, *addresses)
        else:
            config = trafgen_config.packet_config(frame, *addresses)
        path = f"{self.work_dir}/stream{index}.cfg"
        self.executor.write_file(path, config)
        self._shape(stream.tx, pps, frame)
        # --rate would send one burst per second; instead trafgen sends frame by frame
        # (--gap) into the qdisc path, where the token bucket paces them evenly
        return [self.options["trafgen_path"], "--in", path, "--out", stream.tx, "--cpus", "1",
                "--no-sock-mem", "--notouch-irq", "--qdisc-path", "--gap", "1ns",
                "--num", str(count)]

    def _shape(self, ifname: str, pps: float, frame: Frame) -> None:
        """A token bucket on the port: kernel-paced, never dropping (the sender blocks).
        A mix is paced by its mean size, so its frames per second are the rate asked."""
        bits = max(8, round(pps * (frames.avg_size(frame) - trafgen_config.FCS_B) * 8))
        self.executor.run(["tc", "qdisc", "replace", "dev", ifname, "root", "tbf", "rate",
                           f"{bits}bit", "burst", str(max(3000, 2 * frames.largest(frame))),
                           "limit", "100000000"])
        self._shaped.add(ifname)

    def _wait_senders(self, senders, trial, started) -> list[tuple[int, float]]:
        """Wait for every trafgen; stop the ones still sending when the trial is over.

        Returns (frames sent, seconds of its send loop) per trafgen. The shaper
        paces at exactly the rate asked, so a trafgen still busy well after the
        trial's time (plus its start-up allowance) is slower than asked.
        """
        grace = max(0.1, 0.02 * trial.duration_s) + self.options["startup_allowance_s"]
        deadline = started + trial.duration_s + grace
        for process in senders:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except TimeoutExpired:
                process.signal(signal.SIGINT)
        reports = []
        for process in senders:
            try:
                process.wait(5)
                output = process.read_all(5)
            except TimeoutExpired:
                process.stop()
                output = ""
            reports.append(parse_trafgen_report(output, process.poll(), self))
            self._processes.remove(process)
        return reports

    def _drain(self) -> dict[str, int]:
        """The trial's frames received per port, read once they stop arriving: nothing
        in flight is counted as lost."""
        deadline = time.monotonic() + self.options["drain_timeout_s"]
        last = self.received.read()
        while time.monotonic() < deadline:
            time.sleep(max(0.02, self.options["drain_quiet_s"]))
            now = self.received.read()
            if now == last:
                return now
            last = now
        return last

    def _probe(self):
        """The latency probe process, started once and kept for every trial."""
        if self.options["latency_probe_pps"] <= 0:
            return None
        if self._probe_process is not None and self._probe_process.poll() is None:
            return self._probe_process
        argv = ["python3", "-I", "-S", self.probe_path,
                "--percentiles", ",".join(f"{p:g}" for p in PERCENTILES)]
        for stream in self.streams:
            tx, rx = self.node.interfaces[stream.tx], self.node.interfaces[stream.rx]
            argv += ["--stream", ",".join([tx.name, rx.name, tx.mac, tx.peer_mac or rx.mac,
                                           tx.address or "10.0.0.1", rx.address or "10.0.0.2"])]
        probe = self.executor.start(argv, log_path=self.log, pipes=True)
        self._processes.append(probe)
        self._expect(probe, "ready")
        self._probe_process = probe
        return probe

    def _expect(self, probe, word: str) -> None:
        try:
            line = probe.read_line(10)
        except (TimeoutExpired, EOFError):
            probe.stop()
            raise RunError(f"latency probe on {self.node.name} stopped answering:\n"
                           f"{tail(self.log_text())}") from None
        if line != word:
            raise RunError(f"latency probe on {self.node.name} said {line!r} instead of {word}")

    def _start_probe(self, trial: Trial):
        if not trial.latency:  # a throughput-only trial: no probe frames
            return None
        probe = self._probe()
        if probe is None:
            return None
        probe.write_line(json.dumps({"pps": self.options["latency_probe_pps"],
                                     "duration": trial.duration_s,
                                     "frame_size": _probe_size(trial.frame_size)}))
        self._expect(probe, "sending")
        return probe

    def _stop_probe(self, probe) -> tuple[LatencyStats | None, list[dict]]:
        """Latency, and per probe stream its frames sent and received in the trial."""
        if probe is None:
            return None, []
        try:
            probe.write_line("stop")
            report = json.loads(probe.read_line(10))
        except (TimeoutExpired, EOFError, json.JSONDecodeError, BrokenPipeError) as exc:
            raise RunError(f"latency probe on {self.node.name} gave no report ({exc}):\n"
                           f"{tail(self.log_text())}") from None
        return latency_from_report(report.get("all")), list(report["streams"])


def _probe_size(frame: Frame) -> int:
    """Latency probes of a mix are its most frequent size."""
    return frame.most_common if isinstance(frame, FrameMix) else frame


def latency_from_report(summary: dict | None) -> LatencyStats | None:
    if not summary:
        return None
    return LatencyStats(samples=summary["samples"], min_us=summary["min_us"],
                        avg_us=summary["avg_us"], max_us=summary["max_us"],
                        percentiles_us=dict(summary["percentiles_us"]),
                        histogram=[(edge, count) for edge, count in summary["histogram"]])


def parse_trafgen_report(output: str, code: int | None, gen: TrafgenGenerator) -> tuple[int, float]:
    """(frames sent, seconds its send loop ran) from what trafgen printed at exit."""
    match = _SENT.search(output)
    if match is None:
        raise RunError(f"trafgen on {gen.node.name} did not report what it sent "
                       f"(exit {code}):\n{tail(gen.log_text())}")
    seconds = sum(int(sec) + int(usec) / 1e6 for sec, usec in _SEND_TIME.findall(output))
    return int(match.group(1)), seconds
