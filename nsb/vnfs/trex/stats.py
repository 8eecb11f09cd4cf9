"""TRex's counters turned into a trial's result: port counters for the frames,
the latency streams' pg_id statistics for latency, NSB's KPI names beside nsb's.

TRex reports latency per pg_id: ``total_min``, ``average``, ``total_max``,
``jitter`` (microseconds), a coarse histogram whose keys are bucket floors
(10, 20, ... 90, 100, 200, ...: each bucket is as wide as its floor's leading
power of ten) and, started with ``--hdrh`` (as nsb starts it), an HDR histogram
of every sample. Percentiles and the mean come from the HDR histogram
(nsb.hdr_latency); from the coarse one (at bucket ceilings) only when TRex
sends no HDR histogram.
"""

from __future__ import annotations

import math
from dataclasses import replace

from nsb import frames, hdr_latency
from nsb.trial import LatencyStats, Trial, TrialResult, percentiles

from .pacing import Pacing
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


def _measured(pgid_stats: dict, pg_ids: list[int]) -> list[dict]:
    """The latency figures of the pg_ids that received samples."""
    found = []
    for pg_id in pg_ids:
        measured = pgid_stats.get("latency", {}).get(pg_id, {}).get("latency", {})
        received_frames = pgid_stats.get("flow_stats", {}).get(pg_id, {}).get("rx_pkts", {})
        count = int(received_frames.get("total", 0)) if isinstance(received_frames, dict) else 0
        low, high = _number(measured.get("total_min")), _number(measured.get("total_max"))
        if count and low is not None and high is not None:
            found.append({**measured, "samples": count, "low": low, "high": high})
    return found


def hdr_histogram(pgid_stats: dict, pg_ids: list[int]):
    """Every latency sample of the pg_ids as one HDR histogram (TRex started with
    ``--hdrh``); None when TRex sent none."""
    measured = _measured(pgid_stats, pg_ids)
    if not measured or not all(m.get("hdrh") for m in measured):
        return None
    return hdr_latency.merged(hdr_latency.decode(m["hdrh"]) for m in measured)


def latency(pgid_stats: dict, pg_ids: list[int]) -> LatencyStats | None:
    """The latency streams' statistics, merged over directions (None without samples):
    from TRex's HDR histograms, with its exact min and max; from its coarse buckets
    (percentiles at their ceilings) when it keeps no HDR histogram."""
    measured = _measured(pgid_stats, pg_ids)
    if not measured:
        return None
    low, high = min(m["low"] for m in measured), max(m["high"] for m in measured)
    histogram = hdr_histogram(pgid_stats, pg_ids)
    if histogram is not None:
        return hdr_latency.stats(histogram, min_us=low, max_us=high)
    weighted, buckets, samples = 0.0, {}, 0
    for m in measured:
        weighted += (_number(m.get("average")) or 0.0) * m["samples"]
        samples += m["samples"]
        for floor, hits in (m.get("histogram") or {}).items():
            edge = min(bucket_ceiling(float(floor)), m["high"]) if float(floor) < m["high"] \
                else m["high"]
            buckets[edge] = buckets.get(edge, 0) + int(hits)
    edges = sorted(buckets.items())
    in_histogram = sum(count for _, count in edges)
    return LatencyStats(samples=samples, min_us=low, avg_us=weighted / samples, max_us=high,
                        histogram=edges, percentiles_us=percentiles(edges, in_histogram),
                        resolution="TRex's buckets: percentiles at the bucket's ceiling")


def pair_latency(pgid_stats: dict, pair_of: dict[int, int]) -> dict[int, LatencyStats]:
    """Each port pair's latency on its own (``pair_of``: latency pg_id -> pair)."""
    pairs: dict[int, list[int]] = {}
    for pg_id, pair in pair_of.items():
        pairs.setdefault(pair, []).append(pg_id)
    made = {pair: latency(pgid_stats, ids) for pair, ids in pairs.items()}
    return {pair: stats for pair, stats in made.items() if stats is not None}


def trial_result(trial: Trial, gen, port_stats: dict, pace: Pacing,
                 latency_stats: LatencyStats | None,
                 missed_by_port: dict[int, int] | None = None) -> TrialResult:
    """Tx from the sending ports, rx from the receiving ports. The offered rate is the
    frames sent over the seconds TRex took to send them by its own counters (``pace``:
    its measured pace, never faster than its schedule). Generator-limited when it
    lagged or sent fewer frames than asked. ``missed_by_port``: frames TRex's
    receiving ports dropped for want of buffers (af_packet's ring overflowing)."""
    missed_by_port = missed_by_port or {}
    rx_missed = sum(missed_by_port.values())
    tx = sum(int(port_stats[p]["opackets"]) for p in gen.tx_ports)
    rx = received(port_stats, gen.rx_ports)
    tolerance = gen.options["generator_tolerance_pct"] / 100.0
    intended = trial.burst_frames or round(trial.rate_pps * trial.duration_s)
    note = pace.note
    if not note and tx < intended * (1 - (0 if trial.burst_frames else tolerance)):
        note = f"TRex sent {tx:,} of the {intended:,} frames asked"
    if note and rx >= tx:
        note += pushed_back(gen)
    seconds = pace.seconds_for(tx, trial)  # the frames at TRex's pace: the seconds they took
    ports = {iface.name: {"tx_packets": int(port_stats[n]["opackets"]),
                          "rx_packets": int(port_stats[n]["ipackets"]),
                          "rx_missed": missed_by_port.get(n, 0)}
             for n, iface in enumerate(gen.ports)}
    result = TrialResult(trial=trial, tx_packets=tx, rx_packets=rx, elapsed_s=seconds,
                         latency=latency_stats, generator_limited=bool(note), ports=ports,
                         measured_tx_pps=tx / seconds, measured_rx_pps=rx / seconds,
                         intended_packets=intended, rx_missed_packets=rx_missed,
                         generator_note=note)
    extra = {**nsb_named_kpis(result, gen, port_stats), "rx_missed_packets": float(rx_missed)}
    proven = None
    if pace.known_within_s and not pace.lagged:  # every frame was out by then, no later
        extra["known_within_s"] = pace.known_within_s
        proven = extra["proven_tx_pps"] = tx / max(pace.known_within_s, trial.duration_s)
    return replace(result, extra=extra, proven_tx_pps=proven)


def pushed_back(gen) -> str:
    """What a short, lossless trial cannot tell on links that hold the sender back
    instead of dropping (memif, vhost-user): measured with testpmd over memif, a DUT
    slower than the rate slowed TRex with no loss and no counter of TRex's (queue_full,
    oerrors, memif's xstats) saying so. '' on other links."""
    kinds = sorted({gen.ports[n].kind for n in gen.tx_ports
                    if gen.ports[n].is_memif or gen.ports[n].is_vhostuser})
    if not kinds:
        return ""
    holds = "hold" if len(kinds) > 1 else "holds"
    return (f"; over {' and '.join(kinds)}, which {holds} the sender back rather than drop, "
            "a DUT slower than this rate slows TRex the same way with nothing lost: "
            "the generator and the DUT cannot be told apart here")


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
