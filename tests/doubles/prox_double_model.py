"""Simulated generator and DUT of the PROX test double (tests/doubles/prox_double.py).

Part of the PROX test double; stdlib only. No packets at all: started ``mode=gen``
tasks "transmit" at the rate set by ``speed``/``pkt_size`` (percent of 10 Gbit/s,
frame on the wire = max(pkt_size, 60) + 24 bytes); the simulated DUT (``Dut``)
forwards up to its capacity (packets/s and Gbit/s); started ``mode=lat`` tasks
receive the forwarded frames and record latency (rising with load, +200 us when
overloaded) in one-second windows, a total and a histogram of ``N_BUCKETS`` buckets
of 2**bucket_size TSC cycles. Counters advance lazily with wall time (``Sim.advance``);
a frozen ``Sim`` (``live=False``) keeps them, and its TSC, unchanged.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field

TSC_HZ = 2_000_000_000
TSC_OFFSET = 17_000_000_000_000
N_BUCKETS = 128


@dataclass
class Window:
    start: float = 0.0
    n: int = 0
    sum_us: float = 0.0
    min_us: float = math.inf
    max_us: float = 0.0

    def add(self, k: int, lo: float, hi: float) -> None:
        self.n += k
        self.sum_us += k * (lo + hi) / 2
        self.min_us = min(self.min_us, lo)
        self.max_us = max(self.max_us, hi)


@dataclass
class Task:
    core: int
    task: int
    name: str = ""
    mode: str = "nop"
    tx_ports: list[int] = field(default_factory=list)
    rx_ports: list[int] = field(default_factory=list)
    pkt_size: int = 60
    speed: float = 100.0
    bucket_size: int = 11
    running: bool = False
    rx: int = 0
    tx: int = 0
    tx_fail: int = 0
    frac: float = 0.0
    rot: int = 0
    win: Window = field(default_factory=Window)
    prev_win: Window = field(default_factory=Window)
    total: Window = field(default_factory=Window)
    hist: list[int] = field(default_factory=lambda: [0] * N_BUCKETS)

    @property
    def pps(self) -> float:
        return self.speed * 12_500_000 / (max(self.pkt_size, 60) + 24)

    def reset(self, now: float) -> None:
        self.rx = self.tx = self.tx_fail = 0
        self.frac = 0.0
        self.win, self.prev_win, self.total = Window(now), Window(now), Window(now)
        self.hist = [0] * N_BUCKETS


@dataclass
class Port:
    num: int
    name: str
    rx_pkts: int = 0
    tx_pkts: int = 0
    rx_bytes: int = 0
    tx_bytes: int = 0

    def counters(self) -> tuple[int, int, int, int]:
        return (self.rx_bytes, self.tx_bytes, self.rx_pkts, self.tx_pkts)


@dataclass
class Dut:
    capacity_pps: float = 1_000_000.0
    capacity_gbps: float = 10.0
    latency_us: float = 10.0


class Sim:
    def __init__(self, ports: dict[int, Port], tasks: list[Task], dut: Dut, live: bool):
        self.ports, self.tasks, self.dut, self.live = ports, tasks, dut, live
        self.index = {(t.core, t.task): t for t in tasks}
        self.t_last = time.monotonic()
        self.frozen_tsc = self._tsc_now()
        self.fwd_frac = 0.0
        self.rot = 0
        for t in tasks:
            t.reset(self.t_last)

    @staticmethod
    def _tsc_now() -> int:
        return TSC_OFFSET + time.monotonic_ns() * (TSC_HZ // 1_000_000_000)

    def tsc(self) -> int:
        return self._tsc_now() if self.live else self.frozen_tsc

    def tsc_of_last_advance(self) -> int:
        """The TSC at the moment the counters were last brought up to date (advancing
        them takes time of its own, which must not count as sending time)."""
        if not self.live:
            return self.frozen_tsc
        return TSC_OFFSET + round(self.t_last * 1e9) * (TSC_HZ // 1_000_000_000)

    def advance(self) -> None:
        now = time.monotonic()
        dt, self.t_last = now - self.t_last, now
        gens = [t for t in self.tasks if t.mode == "gen" and t.running and t.speed > 0]
        if not self.live or dt <= 0 or not gens:
            return
        lats = [t for t in self.tasks if t.mode == "lat" and t.running]
        offered_pps = sum(g.pps for g in gens)
        offered_bps = sum(g.pps * (max(g.pkt_size, 60) + 24) for g in gens)
        cap_bps = self.dut.capacity_gbps * 1e9 / 8
        ratio = min(1.0, self.dut.capacity_pps / offered_pps, cap_bps / offered_bps)
        load = min(1.0, max(offered_pps / self.dut.capacity_pps, offered_bps / cap_bps))
        base_us = self.dut.latency_us * (1 + 4 * load**4) + (200.0 if ratio < 1.0 else 0.0)
        n_slices = min(100, max(1, math.ceil(dt / 0.01)))
        for _ in range(n_slices):
            sent = sent_bytes = 0
            for g in gens:
                x = g.pps * dt / n_slices + g.frac
                n = int(x)
                g.frac = x - n
                g.tx += n
                sent += n
                sent_bytes += n * g.pkt_size
                for port, k in zip(g.tx_ports, _split(n, len(g.tx_ports), g.rot), strict=True):
                    self.ports[port].tx_pkts += k
                    self.ports[port].tx_bytes += k * g.pkt_size
                g.rot += n
            x = sent * ratio + self.fwd_frac
            fwd = int(x)
            self.fwd_frac = x - fwd
            if not lats or not fwd:
                continue
            for lat, k in zip(lats, _split(fwd, len(lats), self.rot), strict=True):
                if k:
                    self._receive(lat, k, round(k * sent_bytes / sent), base_us, now)
            self.rot += fwd

    def _receive(self, lat: Task, k: int, nbytes: int, base_us: float, now: float) -> None:
        lat.rx += k
        lat.tx_fail += k  # the lat task consumes what it receives
        for port, kk in zip(lat.rx_ports, _split(k, len(lat.rx_ports), lat.rot), strict=True):
            self.ports[port].rx_pkts += kk
            self.ports[port].rx_bytes += round(nbytes * kk / k)
        lat.rot += k
        lo = base_us * (1 - 0.05 * random.random())
        hi = base_us * (1 + 0.05 * random.random())
        if now - lat.win.start >= 1.0:
            lat.prev_win, lat.win = lat.win, Window(now)
        lat.win.add(k, lo, hi)
        lat.total.add(k, lo, hi)
        _spread(lat.hist, k, lo * TSC_HZ / 1e6, hi * TSC_HZ / 1e6, 2**lat.bucket_size)

    def reset(self) -> None:
        self.advance()
        for t in self.tasks:
            t.reset(self.t_last)
        for p in self.ports.values():
            p.rx_pkts = p.tx_pkts = p.rx_bytes = p.tx_bytes = 0
        self.fwd_frac = 0.0


def _split(n: int, k: int, rot: int) -> list[int]:
    """n items over k bins as evenly as possible, remainder starting at bin rot % k."""
    if k == 0:
        return []
    out = [n // k] * k
    for i in range(n % k):
        out[(rot + i) % k] += 1
    return out


def _spread(hist: list[int], k: int, lo: float, hi: float, width: int) -> None:
    """Add k frames with latencies uniform in [lo, hi] TSC cycles to the histogram."""
    top = N_BUCKETS - 1
    b_lo, b_hi = min(int(lo // width), top), min(int(hi // width), top)
    if b_lo == b_hi or hi <= lo:
        hist[b_lo] += k
        return
    raw = []
    for b in range(b_lo, b_hi + 1):
        end = hi if b == top else min(hi, (b + 1) * width)
        raw.append(k * max(0.0, end - max(lo, b * width)) / (hi - lo))
    ints = [int(x) for x in raw]
    by_rest = sorted(range(len(raw)), key=lambda i: raw[i] - ints[i], reverse=True)
    for i in by_rest[: k - sum(ints)]:
        ints[i] += 1
    for i, c in enumerate(ints):
        hist[b_lo + i] += c

