"""TRex's counters turned into a trial's result: port counters for the frames,
the latency streams' pg_id statistics for latency, NSB's KPI names beside nsb's.

TRex reports latency per pg_id: ``total_min``, ``average``, ``total_max``,
``jitter`` (microseconds) and a histogram whose keys are bucket floors
(10, 20, ... 90, 100, 200, ...: each bucket is as wide as its floor's leading
power of ten). Percentiles are read at bucket ceilings, so they are
conservative by at most one bucket.
"""

from __future__ import annotations

import math
from dataclasses import replace

from nsb import frames
from nsb.trial import LatencyStats, Trial, TrialResult, percentiles

from .streams import Path


def received(port_stats: dict, rx_ports: list[int]) -> int:
    return sum(int(port_stats[p]["ipackets"]) for p in rx_ports)


def bucket_ceiling(floor: float) -> float:
    """The upper edge of TRex's histogram bucket starting at ``floor`` microseconds."""
    if floor < 10:
        return 10.0
    return floor + 10 ** math.floor(math.log10(floor))


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None  # TRex says "N/A" before any sample
    return number if math.isfinite(number) else None


def latency(pgid_stats: dict, pg_ids: list[int]) -> LatencyStats | None:
    """The latency streams' statistics, merged over directions (None without samples)."""
    mins, maxes, weighted, histogram, samples = [], [], 0.0, {}, 0
    for pg_id in pg_ids:
        measured = pgid_stats.get("latency", {}).get(pg_id, {}).get("latency", {})
        received_frames = pgid_stats.get("flow_stats", {}).get(pg_id, {}).get("rx_pkts", {})
        count = int(received_frames.get("total", 0)) if isinstance(received_frames, dict) else 0
        low, avg, high = (_number(measured.get(k)) for k in ("total_min", "average",
                                                              "total_max"))
        if not count or low is None or high is None:
            continue
        mins.append(low)
        maxes.append(high)
        weighted += (avg or 0.0) * count
        samples += count
        for floor, hits in (measured.get("histogram") or {}).items():
            edge = min(bucket_ceiling(float(floor)), high) if float(floor) < high else high
            histogram[edge] = histogram.get(edge, 0) + int(hits)
    if not samples:
        return None
    edges = sorted(histogram.items())
    in_histogram = sum(count for _, count in edges)
    return LatencyStats(samples=samples, min_us=min(mins), avg_us=weighted / samples,
                        max_us=max(maxes), histogram=edges,
                        percentiles_us=percentiles(edges, in_histogram))


def trial_result(trial: Trial, gen, port_stats: dict, wall_s: float, stretched: bool,
                 latency_stats: LatencyStats | None, rx_missed: int = 0) -> TrialResult:
    """Tx from the sending ports, rx from the receiving ports; generator-limited when
    TRex stretched the trial or sent less than asked. ``rx_missed``: frames TRex's
    receiving ports dropped for want of buffers (af_packet's ring overflowing)."""
    tx = sum(int(port_stats[p]["opackets"]) for p in gen.tx_ports)
    rx = received(port_stats, gen.rx_ports)
    sent_pps = tx / max(trial.duration_s, wall_s)
    tolerance = gen.options["generator_tolerance_pct"] / 100.0
    limited = stretched or tx < trial.rate_pps * trial.duration_s * (1 - tolerance)
    if trial.burst_frames:  # a burst's wall time is mostly polling: its count says it all
        limited = tx < trial.burst_frames
    ports = {iface.name: {"tx_packets": int(port_stats[n]["opackets"]),
                          "rx_packets": int(port_stats[n]["ipackets"])}
             for n, iface in enumerate(gen.ports)}
    result = TrialResult(trial=trial, tx_packets=tx, rx_packets=rx, elapsed_s=wall_s,
                         latency=latency_stats, generator_limited=limited, ports=ports,
                         measured_tx_pps=sent_pps, measured_rx_pps=rx / max(trial.duration_s,
                                                                            wall_s),
                         intended_packets=trial.burst_frames
                         or round(trial.rate_pps * trial.duration_s),
                         rx_missed_packets=rx_missed)
    extra = {**nsb_named_kpis(result, gen, port_stats), "rx_missed_packets": float(rx_missed)}
    return replace(result, extra=extra)


def nsb_named_kpis(result: TrialResult, gen, port_stats: dict) -> dict[str, float]:
    """The names NSB's TRex generators report, so existing dashboards keep working:
    per port InPackets/OutPackets/InBytes/OutBytes, and the RFC 2544 figures."""
    kpis: dict[str, float] = {}
    for number, iface in enumerate(gen.ports):
        counters = port_stats[number]
        kpis.update({f"{iface.name}.InPackets": float(counters["ipackets"]),
                     f"{iface.name}.OutPackets": float(counters["opackets"]),
                     f"{iface.name}.InBytes": float(counters["ibytes"]),
                     f"{iface.name}.OutBytes": float(counters["obytes"])})
    kpis.update(TxThroughput=result.tx_rate_pps, RxThroughput=result.rx_rate_pps,
                DropPercentage=result.loss_pct, PktSize=frames.avg_size(result.trial.frame_size))
    if result.latency is not None:
        kpis.update(LatencyMin=result.latency.min_us, LatencyAvg=result.latency.avg_us,
                    LatencyMax=result.latency.max_us)
    return kpis


def describe_path(path: Path, options: dict) -> str:
    """One direction of the dry-run's streams."""
    return (f"{path.direction}_{path.pair}: port {path.tx} ({path.tx_iface.name}) -> "
            f"{path.tx_iface.peer} ... {path.rx_iface.peer} -> port {path.rx} "
            f"({path.rx_iface.name}); UDP {path.tx_iface.address or '10.0.0.1'} -> "
            f"{path.rx_iface.address or '10.0.0.2'}, {options['flows']} flow(s) by source "
            f"address unless the profile defines the frames; latency stream "
            f"{options['latency_pps']:g} pps")
