"""PROX as the traffic generator: ``mode=gen`` tasks send, ``mode=lat`` tasks receive.

A trial: reset stats, set frame size and rate on every gen task, start the lat
and gen tasks, read ``tot stats`` at the start and the end of the trial's
duration (rates are the deltas over PROX's TSC, as NSB measured them), stop
the gen tasks, let in-flight frames arrive (af_packet rings hold a few
thousand), then read the per-task counters and latency and stop the lat
tasks. Loss compares every frame the gen tasks sent with every frame the lat
tasks received.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import replace

from nsb.errors import TaskError
from nsb.trial import LatencyStats, Trial, TrialResult
from nsb.vnfs import latency_probe
from nsb.vnfs.base import TrafficGen
from nsb.vnfs.prox import PROX_OPTIONS, ProxVnf
from nsb.vnfs.prox_client import LatStats

LOG = logging.getLogger(__name__)

BYTES_PER_PCT = 12_500_000  # PROX's speed unit: 1% of 10 Gbit/s, in bytes per second
WIRE_OVERHEAD = 20  # preamble + inter-frame gap, which PROX's pacing counts


def speed_pct(rate_pps: float, frame_size: int) -> float:
    """PROX ``speed`` for ``rate_pps`` frames of ``frame_size`` (with FCS) per second."""
    return rate_pps * (max(frame_size, 64) + WIRE_OVERHEAD) / BYTES_PER_PCT


class ProxTrafficGen(ProxVnf, TrafficGen):
    """PROX generator: RFC 2544 trials over its gen/lat tasks, TSC-timed, with latency."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "required": ["prox_config"],
        "additionalProperties": False,
        "properties": {
            **PROX_OPTIONS,
            "drain_timeout_s": {"type": "number", "minimum": 0, "default": 2.0},
            "generator_tolerance_pct": {"type": "number", "minimum": 0, "maximum": 100,
                                        "default": 5.0},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        tasks = self.config.tasks()
        self.gen_tasks = [t for t in tasks if t.mode == "gen"]
        self.lat_tasks = [t for t in tasks if t.mode == "lat"]
        source = self.config.source
        if not self.gen_tasks:
            raise TaskError("the prox_tg generator needs at least one mode=gen task; this "
                            "config has none", source)
        missing = [f"core {t.core} task {t.task}" for t in self.gen_tasks if t.tx_port is None]
        if missing:
            raise TaskError(f"mode=gen task without 'tx port': {', '.join(missing)}", source)
        if not self.lat_tasks:
            raise TaskError("the prox_tg generator counts received frames on mode=lat tasks; "
                            "this config has none", source)
        self._zero_latency_warned = False

    @property
    def tx_port_count(self) -> int:
        return len({t.tx_port for t in self.gen_tasks})

    def _pairs(self, tasks) -> list[tuple[int, int]]:
        return [(t.core, t.task) for t in tasks]

    def on_ready(self) -> None:
        # without -e PROX starts every core at launch: nothing may send between trials
        self.client.stop(self._pairs(self.gen_tasks + self.lat_tasks))

    def describe(self) -> dict:
        described = super().describe()
        described["generator"] = {
            "gen_tasks": [f"core {t.core} task {t.task} -> port {t.tx_port}"
                          for t in self.gen_tasks],
            "lat_tasks": [f"core {t.core} task {t.task} <- port {t.rx_port}"
                          for t in self.lat_tasks],
            "flows": "as the PROX config generates them ('random=' masks)",
        }
        return described

    def run_trial(self, trial: Trial) -> TrialResult:
        client = self.client
        by_port = defaultdict(list)
        for task in self.gen_tasks:
            by_port[task.tx_port].append(task)
        client.reset_stats()
        for tasks in by_port.values():
            task_pps = trial.rate_pps / len(by_port) / len(tasks)
            for task in tasks:
                client.set_pkt_size(task.core, task.task, trial.frame_size)
                client.set_speed(task.core, task.task, speed_pct(task_pps, trial.frame_size))
        client.start(self._pairs(self.lat_tasks))
        client.start(self._pairs(self.gen_tasks))
        first = client.tot_stats()
        time.sleep(trial.duration_s)
        last = client.tot_stats()
        client.stop(self._pairs(self.gen_tasks))
        window_s = (last.tsc - first.tsc) / last.hz
        tx_pps = (last.tx - first.tx) / window_s if window_s > 0 else 0.0
        rx_pps = (last.rx - first.rx) / window_s if window_s > 0 else 0.0
        tx = sum(client.core_stats(t.core, t.task).tx for t in self.gen_tasks)
        received = self._drain()
        rx = sum(s.rx for s in received)
        latency = self._latency([s.rx for s in received], last.hz)
        ports = self._ports()
        client.stop(self._pairs(self.lat_tasks))
        limited = tx_pps < trial.rate_pps * (1 - self.options["generator_tolerance_pct"] / 100.0)
        if limited:
            LOG.info("%s: PROX sent %.0f pps of %.0f asked: generator-limited", self.name,
                     tx_pps, trial.rate_pps)
        result = TrialResult(trial=trial, tx_packets=tx, rx_packets=rx, elapsed_s=window_s,
                             latency=latency, generator_limited=limited, ports=ports,
                             measured_tx_pps=tx_pps, measured_rx_pps=rx_pps)
        return replace(result, extra=nsb_kpis(result))

    def _drain(self):
        """Lat task counters once they stop moving (or after drain_timeout_s)."""
        deadline = time.monotonic() + self.options["drain_timeout_s"]
        previous = None
        while True:
            stats = [self.client.core_stats(t.core, t.task) for t in self.lat_tasks]
            total = sum(s.rx for s in stats)
            if total == previous or time.monotonic() >= deadline:
                return stats
            previous = total
            time.sleep(0.05)

    def _latency(self, rx_per_task: list[int], hz: int) -> LatencyStats | None:
        measured: list[tuple[LatStats, list[int], int, int]] = []
        for task, rx in zip(self.lat_tasks, rx_per_task, strict=True):
            stats, buckets = self.client.lat_all_stats(task.core, task.task)
            if rx > 0:
                measured.append((stats, buckets, task.bucket_size, rx))
        if not measured:
            return None
        if all(m[0].max_since_reset_us == 0 for m in measured):
            if not self._zero_latency_warned:
                LOG.warning("%s: PROX reports zero latency; add 'accuracy limit nsec=1000000' to "
                            "the mode=lat sections of %s", self.name, self.config.source)
                self._zero_latency_warned = True
            return None
        total_rx = sum(m[3] for m in measured)
        # min/max since reset cover the trial; PROX's avg covers its last stats period
        avg = sum(m[0].avg_us * m[3] for m in measured) / total_rx
        low = min(m[0].min_since_reset_us for m in measured)
        high = max(m[0].max_since_reset_us for m in measured)
        histogram = _merge_histograms([(m[1], m[2]) for m in measured], hz, high)
        samples = sum(count for _, count in histogram)
        return LatencyStats(samples=samples, min_us=float(low), avg_us=avg, max_us=float(high),
                            percentiles_us=_percentiles(histogram, samples),
                            histogram=histogram)

    def _ports(self) -> dict[str, dict[str, int]]:
        return {name: {"tx_packets": p.tx, "rx_packets": p.rx}
                for name, p in self.port_totals().items()}


def nsb_kpis(result: TrialResult) -> dict[str, float]:
    """The names NSB's PROX generator reported, so existing dashboards keep working."""
    rx_mpps = result.rx_rate_pps / 1e6
    kpis = {"Throughput": rx_mpps, "RxThroughput": rx_mpps,
            "TxThroughput": result.trial.rate_pps / 1e6, "DropPackets": result.loss_pct,
            "CurrentDropPackets": result.loss_pct, "PktSize": float(result.trial.frame_size)}
    if result.latency is not None:
        kpis.update(LatencyMin=result.latency.min_us, LatencyMax=result.latency.max_us,
                    LatencyAvg=result.latency.avg_us)
    return kpis


def _merge_histograms(histograms: list[tuple[list[int], int]], hz: int,
                      max_us: float) -> list[tuple[float, int]]:
    """Sum PROX histograms into (upper edge in us, count); the overflow bucket ends at max."""
    merged: dict[float, int] = defaultdict(int)
    for buckets, bucket_size in histograms:
        width_us = (1 << bucket_size) / hz * 1e6
        for index, count in enumerate(buckets):
            if count:
                last = index == len(buckets) - 1
                edge = max(max_us, index * width_us) if last else (index + 1) * width_us
                merged[round(edge, 3)] += count
    return sorted(merged.items())


def _percentiles(histogram: list[tuple[float, int]], samples: int) -> dict[str, float]:
    """Upper bucket edge at each percentile's rank (conservative by at most one bucket)."""
    result = {}
    for p in latency_probe.PERCENTILES:
        rank = max(1, -(-p * samples // 100))
        seen = 0
        for edge, count in histogram:
            seen += count
            if seen >= rank:
                result[f"p{p:g}"] = edge
                break
    return result
