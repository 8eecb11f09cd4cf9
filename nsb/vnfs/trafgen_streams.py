"""trafgen's streams: one trafgen per direction of each port pair, each at its share of
a trial's rate (or of its pair's own rate), counted per port with its own seconds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from nsb.chains import TX_SECONDS
from nsb.trial import Trial


@dataclass(frozen=True)
class Stream:
    """Frames leave ``tx`` and are expected back on ``rx`` after crossing the DUT."""

    tx: str
    rx: str
    pair: int = 0  # the port pair it belongs to (a service chain is made of pairs)


def pairs(streams: list[Stream]) -> list[tuple[str, str]]:
    """The port pairs in order, as service chains take them: each pair's first stream."""
    first: dict[int, tuple[str, str]] = {}
    for stream in streams:
        first.setdefault(stream.pair, (stream.tx, stream.rx))
    return [first[index] for index in sorted(first)]


def rates(streams: list[Stream], trial: Trial) -> list[float]:
    """Each stream's frames per second: an even share of the trial's rate, or of its
    pair's own rate where the trial gives pairs theirs (an isolation trial)."""
    if not trial.pair_rates_pps:
        return [trial.rate_pps / len(streams)] * len(streams)
    per_pair = Counter(s.pair for s in streams)
    return [trial.pair_rate_pps(s.pair) / per_pair[s.pair] for s in streams]


def with_probe(ports: dict[str, dict], probe_streams: list[dict]) -> dict[str, dict]:
    """The ports' counts with the latency probe's frames, which leave and arrive by the
    same ports as the trial's (the loss budget counts them on the wire too)."""
    for stream in probe_streams:
        for name in (stream["tx_if"], stream["rx_if"]):
            ports.setdefault(name, {"tx_packets": 0, "rx_packets": 0})
        ports[stream["tx_if"]]["tx_packets"] += stream["sent"]
        ports[stream["rx_if"]]["rx_packets"] += stream["received"] + stream.get("duplicates", 0)
    return ports


def port_counts(streams, sent: list[int], received: dict[str, int],
                seconds: list[float] | None = None) -> dict[str, dict]:
    """Per port what it sent (its stream's frames) and received (what arrived on it),
    and, with ``seconds``, how long its trafgen sent for (``tx_seconds``: each trafgen
    keeps its own time, so a pair's rate is its frames over its own seconds)."""
    ports: dict[str, dict] = {}
    for index, (stream, count) in enumerate(zip(streams, sent, strict=True)):
        for name in (stream.tx, stream.rx):
            ports.setdefault(name, {"tx_packets": 0, "rx_packets": 0})
        ports[stream.tx]["tx_packets"] += count
        ports[stream.rx]["rx_packets"] = received[stream.rx]
        if seconds is not None and seconds[index] > 0:
            ports[stream.tx][TX_SECONDS] = seconds[index]
    return ports
