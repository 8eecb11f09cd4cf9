"""TRex's ASTF counters turned into a stateful trial's result (nsb.sessions).

From the client side's counters (TRex's descriptions): ``tcps_connattempt`` connections
initiated, ``tcps_connects`` established (a SYN sent again that still connected
included: ``tcps_rexmttimeo_syn`` counts those SYN retransmissions),
``tcps_conndrops`` embryonic connections dropped, ``tcps_drops`` connections dropped,
``tcps_timeoutdrop`` dropped in a retransmission timeout, ``tcps_keepdrops`` dropped
by keepalive; UDP: ``udps_connects`` flows opened, ``udps_rcvpkt`` datagrams back,
``udps_keepdrops`` flows that ended waiting. The error counters TRex keeps of its own
shortfalls (new flows throttled, not enough client addresses, its flow table or
memory full) say the generator, not the DUT, left connections unattempted.
"""

from __future__ import annotations

from dataclasses import replace

from nsb.sessions import SessionCounts
from nsb.trial import LatencyStats, Trial, TrialResult, percentiles
from nsb.vnfs.trex.stats import bucket_ceiling

# TRex's counters of its own shortfalls: a connection they kept from being attempted is
# the generator's, never the DUT's (TRex's "error" counters of flow creation and memory)
GENERATOR_ERRORS = ("err_c_nf_throttled", "err_c_tuple_err", "err_flow_overflow",
                    "err_no_memory", "err_s_nf_throttled", "err_dct", "tcps_nombuf",
                    "udps_nombuf", "rss_redirect_drops")
GLOBAL_ERRORS = ("queue_full", "total_alloc_error")


def _int(counters: dict, key: str) -> int:
    try:
        return int(counters.get(key, 0))
    except (TypeError, ValueError):
        return 0


def session_counts(stats: dict, trial: Trial) -> SessionCounts:
    """The trial's connections by TRex's client (and server) counters."""
    load = trial.sessions
    traffic = stats.get("traffic", {})
    client, server = traffic.get("client", {}), traffic.get("server", {})
    errors = {key: _int(client, key) + _int(server, key) for key in GENERATOR_ERRORS}
    errors.update({key: _int(stats.get("global", {}), key) for key in GLOBAL_ERRORS})
    errors = {key: value for key, value in errors.items() if value > 0}
    if load.udp:
        attempted = _int(client, "udps_connects")
        timed_out = _int(client, "udps_keepdrops")
        established = min(attempted, _int(client, "udps_rcvpkt"))
        failed = {"no_answer": attempted - established}
        retransmitted = 0
        moved = {"client_to_server": _int(client, "udps_sndbyte"),
                 "server_to_client": _int(server, "udps_sndbyte")}
        failed["timed_out"] = timed_out
        data = _data(load, client, server, attempted, round(load.cps * trial.duration_s))
    else:
        attempted = _int(client, "tcps_connattempt")
        established = min(attempted, _int(client, "tcps_connects"))
        failed = {"not_established": attempted - established,
                  "embryonic_dropped": _int(client, "tcps_conndrops"),
                  "dropped": max(0, _int(client, "tcps_drops") - _int(client, "tcps_conndrops")),
                  "timed_out": _int(client, "tcps_timeoutdrop"),
                  "keepalive_dropped": _int(client, "tcps_keepdrops")}
        retransmitted = _int(client, "tcps_rexmttimeo_syn")
        moved = {"client_to_server": _int(client, "tcps_sndbyte"),
                 "server_to_client": _int(server, "tcps_sndbyte")}
        data = {}
    return SessionCounts(
        intended=round(load.cps * trial.duration_s), attempted=attempted,
        established=established, failed={k: v for k, v in failed.items() if v > 0},
        retransmitted=retransmitted, generator_errors=errors,
        active_at_end=_int(client, "m_active_flows"), duration_s=trial.duration_s,
        bytes=moved, data=data)


def _data(load, client: dict, server: dict, attempted: int, sessions: int) -> dict:
    """udp_stream's data datagrams: intended (every session intended sends its share),
    the client's sent less its hellos, the server's received less the hellos that made
    its flows (``udps_accepts``)."""
    if load.program != "udp_stream" or load.data_packets_per_session <= 0:
        return {}
    return {"intended": sessions * load.data_packets_per_session,
            "sent": max(0, _int(client, "udps_sndpkt") - attempted),
            "received": max(0, _int(server, "udps_rcvpkt") - _int(server, "udps_accepts"))}


def trial_result(trial: Trial, gen, stats: dict, elapsed_s: float) -> TrialResult:
    """The trial's packets by TRex's port counters and its connections by its ASTF
    counters; generator-limited when TRex kept connections from being attempted (its
    error counters) or had not attempted them all when the trial was over."""
    counts = session_counts(stats, trial)
    ports = {iface.name: {"tx_packets": _int(stats.get(n, {}), "opackets"),
                          "rx_packets": _int(stats.get(n, {}), "ipackets"), "rx_missed": 0}
             for n, iface in enumerate(gen.ports)}
    tx = sum(p["tx_packets"] for p in ports.values())
    rx = sum(p["rx_packets"] for p in ports.values())
    notes = []
    if counts.generator_errors:
        notes.append("TRex's own counters say it kept connections from being attempted: "
                     + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.generator_errors.items())))
    if counts.never_attempted:
        notes.append(f"TRex attempted {counts.attempted:,} of the {counts.intended:,} "
                     f"connections by the trial's end: it could not open "
                     f"{trial.sessions.cps:,.0f} a second")
    seconds = trial.duration_s
    data = counts.data
    if data:  # a stream's rates are its data's, over the seconds each session sent it
        tolerance = float(gen.options.get("generator_tolerance_pct", 5.0)) / 100.0
        if data["sent"] < (1.0 - tolerance) * data["intended"]:
            notes.append(f"TRex sent {data['sent']:,} of the {data['intended']:,} datagrams "
                         "of data by the trial's end")
        seconds = trial.sessions.data_seconds
        tx, rx = data["sent"], data["received"]
    result = TrialResult(trial=trial, tx_packets=tx, rx_packets=rx, elapsed_s=seconds,
                         generator_limited=bool(notes), ports=ports,
                         measured_tx_pps=tx / seconds, measured_rx_pps=rx / seconds,
                         generator_note="; ".join(notes), sessions=counts)
    cpu = stats.get("global", {}).get("cpu_util")
    if trial.latency:
        result = replace(result, latency=latency(stats.get("latency") or {}))
    extra = {"astf_wall_s": elapsed_s}
    if cpu is not None:
        extra["trex_cpu_util_pct"] = float(cpu)
    return replace(result, extra=extra)


def latency(per_port: dict) -> LatencyStats | None:
    """TRex's ASTF latency stream (ICMP, port to port, each direction timed where it
    arrives) merged over ports: its histogram's buckets (the floor of each, TRex's
    coarse ones: 10 us wide below 100, 100 us below 1 ms, ...), percentiles at a
    bucket's ceiling, the mean TRex keeps; None without a sample."""
    buckets: dict[float, int] = {}
    weighted, samples, highest = 0.0, 0, 0.0
    for port in per_port.values():
        hist = port.get("hist") or {} if isinstance(port, dict) else {}
        count = int(hist.get("cnt") or 0)
        weighted += float(hist.get("s_avg") or 0.0) * count
        samples += count
        highest = max(highest, float(hist.get("s_max") or 0.0))
        for bucket in hist.get("histogram") or []:
            edge = bucket_ceiling(float(bucket["key"]))
            buckets[edge] = buckets.get(edge, 0) + int(bucket["val"])
    edges = sorted(buckets.items())
    if not samples or not edges:
        return None
    floors = [float(b["key"]) for port in per_port.values()
              for b in ((port.get("hist") or {}).get("histogram") or [])]
    in_histogram = sum(count for _, count in edges)
    return LatencyStats(samples=samples, min_us=min(floors), avg_us=weighted / samples,
                        max_us=max(highest, edges[-1][0]), histogram=edges,
                        percentiles_us=percentiles(edges, in_histogram),
                        resolution="TRex ASTF's ICMP latency stream: its buckets (min at a "
                                   "bucket's floor, max and percentiles at its ceiling)")
