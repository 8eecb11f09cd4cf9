#!/usr/bin/env python3
"""Test double of PROX (DPDK samplevnf packet generator): its TCP control plane only.

PROX cannot be installed on the test machines, so this stdlib-only script stands in
for it. It is started like PROX (``prox_double.py -f CFG [-e] [-t] [-o cli] [-k]``),
parses the PROX .cfg file (ports, cores/tasks, variables, ``[lua] dofile``), fails
on the same kinds of config errors, listens on TCP port 8474 (``-t``) and answers
PROX's text protocol with replies formatted exactly as PROX 22.12 does (see
``tests/data/prox-reference``).

What it simulates: no packets at all. Started ``mode=gen`` tasks "transmit" at the
rate set by ``speed``/``pkt_size`` (percent of 10 Gbit/s, frame on the wire =
max(pkt_size, 60) + 24 bytes); a simulated DUT, configured with the environment
variable ``NSB_PROX_DOUBLE_DUT`` (``capacity_pps=..,capacity_gbps=..,latency_us=..``),
forwards up to its capacity; started ``mode=lat`` tasks receive the forwarded frames
and record latency (rising with load, +200 us when overloaded) and a histogram.
Counters advance lazily with wall time. Without ``-o cli`` or ``-k`` counters stay 0,
as with the real PROX. ``NSB_PROX_DOUBLE_LOG_COMMANDS=1`` logs every command.
"""

from __future__ import annotations

import math
import os
import random
import re
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass, field

TSC_HZ = 2_000_000_000
TSC_OFFSET = 17_000_000_000_000
VERSION = "144965632,369822563"
CTRL_PORT = 8474
N_BUCKETS = 128
UINT64_MAX = 2**64 - 1
ARG_FLAGS = set("fowlvqr")  # PROX options that take an argument


def log(msg: str) -> None:
    print(msg, flush=True)


def fatal(msg: str) -> None:
    log(msg)
    print(msg, file=sys.stderr, flush=True)
    sys.exit(1)


class ConfigError(Exception):
    pass


# ----------------------------------------------------------------------------- model

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
    snap: tuple[int, int, int, int] = (0, 0, 0, 0)
    snap_tsc: int = 0

    def counters(self) -> tuple[int, int, int, int]:
        return (self.rx_bytes, self.tx_bytes, self.rx_pkts, self.tx_pkts)


# ----------------------------------------------------------------------------- config

VAR_RE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def _subst(value: str, variables: dict[str, str], where: str) -> str:
    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name not in variables:
            raise ConfigError(f"error: undefined variable ${name} in {where}")
        return variables[name]

    return VAR_RE.sub(repl, value)


def _int_list(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:s\d+h?)?(?:-(\d+)(?:s\d+h?)?)?", part)
        if not m:
            raise ValueError(part)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        out.extend(range(lo, hi + 1))
    return out


def parse_cfg(path: str, variables: dict[str, str]) -> tuple[dict[int, Port], list[Task]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ConfigError(f"error: cannot open config file {path}: {e.strerror}") from e
    base_dir = os.path.dirname(os.path.abspath(path))
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and "]" in line:
            name = _subst(line[1 : line.index("]")].strip(), variables, line)
            sections.append((name, []))
            continue
        if not sections:
            continue
        sec_name, entries = sections[-1]
        where = f"[{sec_name}]"
        if sec_name == "lua":
            _check_placeholder(line, where)
            for m in re.finditer(r"""dofile\(\s*["']([^"']+)["']\s*\)""", line):
                lua = os.path.join(base_dir, m.group(1))  # absolute paths stay as they are
                if not os.path.isfile(lua):
                    raise ConfigError(f"error: cannot open {lua}")
            continue
        line = line.split(";", 1)[0].strip()
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        value = _subst(value, variables, f"{where} {key}")
        _check_placeholder(value, f"{where} {key}")
        if sec_name == "variables" and key.startswith("$"):
            variables[key[1:]] = value
        entries.append((key, value))
    return _build(sections)


def _check_placeholder(text: str, where: str) -> None:
    """Yardstick fills @@name placeholders; one left over means a broken config."""
    if m := re.search(r"@@\w*", text):
        raise ConfigError(f"error: unresolved placeholder {m.group(0)} in {where}")


def _build(sections: list[tuple[str, list[tuple[str, str]]]]) -> tuple[dict[int, Port], list[Task]]:
    ports: dict[int, Port] = {}
    for name, entries in sections:
        if m := re.fullmatch(r"port\s+(\d+)", name):
            num = int(m.group(1))
            ports[num] = Port(num, dict(entries).get("name", f"port{num}"))
    by_name = {p.name: p.num for p in ports.values()}

    def port_ids(value: str, where: str) -> list[int]:
        ids = []
        for item in filter(None, (v.strip() for v in value.split(","))):
            if item in by_name:
                ids.append(by_name[item])
            elif item.isdigit() and int(item) in ports:
                ids.append(int(item))
            else:
                raise ConfigError(f"error: unknown port '{item}' in {where}")
        return ids

    tasks: dict[tuple[int, int], Task] = {}
    for name, entries in sections:
        m = re.fullmatch(r"core\s+(.+)", name)
        if not m:
            continue
        where = f"[{name}]"
        try:
            cores = _int_list(m.group(1))
        except ValueError as e:
            raise ConfigError(f"error: invalid core specification in {where}") from e
        kv = dict(entries)
        for core in cores:
            t = Task(core=core, task=int(kv.get("task", "0")), name=kv.get("name", ""),
                     mode=kv.get("mode", "nop"))
            if (core, t.task) in tasks:
                raise ConfigError(f"error: core {core} task {t.task} defined twice")
            t.tx_ports = port_ids(kv.get("tx port", ""), f"{where} tx port")
            t.rx_ports = port_ids(kv.get("rx port", ""), f"{where} rx port")
            if "pkt inline" in kv:
                data = kv["pkt inline"].split()
                bad = [b for b in data if not re.fullmatch(r"[0-9a-fA-F]{2}", b)]
                if bad or not data:
                    raise ConfigError(f"error: invalid byte '{bad[0] if bad else ''}' in "
                                      f"{where} pkt inline (expected hex bytes)")
                t.pkt_size = len(data)
            if "pkt size" in kv:
                t.pkt_size = int(kv["pkt size"])
            if "bps" in kv:
                t.speed = int(float(kv["bps"])) / 12_500_000
            t.bucket_size = int(kv.get("bucket size", "11"))
            if t.mode == "gen" and not t.tx_ports:
                raise ConfigError(f"error: gen task in {where} needs a tx port")
            tasks[(core, t.task)] = t
    return ports, list(tasks.values())


# ----------------------------------------------------------------------------- simulation

@dataclass
class Dut:
    capacity_pps: float = 1_000_000.0
    capacity_gbps: float = 10.0
    latency_us: float = 10.0

    @classmethod
    def from_env(cls, spec: str) -> Dut:
        dut = cls()
        for item in filter(None, (s.strip() for s in spec.split(","))):
            key, _, value = item.partition("=")
            if key.strip() not in ("capacity_pps", "capacity_gbps", "latency_us"):
                raise ConfigError(f"error: NSB_PROX_DOUBLE_DUT: unknown key '{key.strip()}'")
            setattr(dut, key.strip(), float(value))
        return dut


class Sim:
    def __init__(self, ports: dict[int, Port], tasks: list[Task], dut: Dut, live: bool):
        self.ports, self.tasks, self.dut, self.live = ports, tasks, dut, live
        self.index = {(t.core, t.task): t for t in tasks}
        self.t_last = time.monotonic()
        self.frozen_tsc = self._tsc_now()
        self.fwd_frac = 0.0
        self.rot = 0
        for p in ports.values():
            p.snap_tsc = self.frozen_tsc
        for t in tasks:
            t.reset(self.t_last)

    @staticmethod
    def _tsc_now() -> int:
        return TSC_OFFSET + time.monotonic_ns() * (TSC_HZ // 1_000_000_000)

    def tsc(self) -> int:
        return self._tsc_now() if self.live else self.frozen_tsc

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
        tsc = self.tsc()
        for t in self.tasks:
            t.reset(self.t_last)
        for p in self.ports.values():
            p.rx_pkts = p.tx_pkts = p.rx_bytes = p.tx_bytes = 0
            p.snap, p.snap_tsc = (0, 0, 0, 0), tsc
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


# ----------------------------------------------------------------------------- protocol

class Quit(Exception):
    pass


class Prox:
    """Answers one command line; returns the reply text or None (no reply, as PROX)."""

    def __init__(self, sim: Sim):
        self.sim = sim
        self.commands = [
            ("lat all stats", self.lat_all_stats), ("lat stats", self.lat_stats),
            ("dp core stats", self.dp_core_stats), ("core stats", self.core_stats),
            ("tot stats", self.tot_stats), ("tot ierrors tot", self.tot_zero),
            ("tot imissed tot", self.tot_zero), ("multi port stats", self.multi_port_stats),
            ("port_stats", self.port_stats), ("port link state", self.port_link_state),
            ("port info", self.port_info), ("reset stats", self.reset_stats),
            ("start", self.start), ("stop", self.stop), ("speed", self.speed),
            ("pkt_size", self.pkt_size), ("version", lambda a: VERSION),
            ("stats", self.stats), ("quit", self.quit),
        ] + [(name, self.ignored) for name in (
            "reset values", "set value", "accuracy limit", "count", "imix", "help")]

    def handle(self, line: str) -> str | None:
        words = line.split()
        if not words:
            return None
        if words[0] == "echo":
            return line.strip()[4:].strip() + "\n"
        for name, fn in self.commands:
            n = len(name.split())
            if words[:n] == name.split():
                try:
                    reply = fn(words[n:])
                except (ValueError, IndexError):
                    reply = "error: invalid syntax" if fn in self._replying() else None
                    if reply is None:
                        log(f"error: invalid syntax: '{line.strip()}'")
                return None if reply is None else reply + "\n"
        log(f"error Unknown command: '{line.strip()}'")
        return None

    def _replying(self) -> tuple:
        return (self.lat_all_stats, self.lat_stats, self.dp_core_stats, self.core_stats,
                self.multi_port_stats, self.port_stats, self.stats)

    # -- helpers
    def _cores(self, spec: str) -> list[int]:
        if spec == "all":
            return sorted({t.core for t in self.sim.tasks})
        return _int_list(spec)

    def _pairs(self, args: list[str]) -> list[tuple[int, int]]:
        if len(args) < 2:
            raise ValueError("core and task needed")
        return [(c, t) for c in self._cores(args[0]) for t in _int_list(args[1])]

    def _invalid(self, pairs: list[tuple[int, int]]) -> str | None:
        for c, t in pairs:
            if (c, t) not in self.sim.index:
                return f"error: invalid core {c}, task {t}"
        return None

    def _selected(self, args: list[str]) -> list[Task]:
        if not args or args[0] == "all":
            return list(self.sim.tasks)
        cores = self._cores(args[0])
        if len(args) == 1:
            return [t for t in self.sim.tasks if t.core in cores]
        pairs = self._pairs(args)
        for c, t in pairs:
            if (c, t) not in self.sim.index:
                log(f"error: invalid core {c}, task {t}")
        return [self.sim.index[p] for p in pairs if p in self.sim.index]

    def ignored(self, args: list[str]) -> None:
        return None

    # -- state changes (never a reply)
    def start(self, args: list[str]) -> None:
        if not args:
            raise ValueError("start needs an argument")
        self.sim.advance()
        for t in self._selected(args):
            t.running = True

    def stop(self, args: list[str]) -> None:
        if not args:
            raise ValueError("stop needs an argument")
        self.sim.advance()
        for t in self._selected(args):
            t.running = False

    def reset_stats(self, args: list[str]) -> None:
        self.sim.reset()

    def speed(self, args: list[str]) -> None:
        value = float(args[2])
        if not 0 <= value <= 1000:
            log("error Speed out of range (must be betweeen 0% and 1000%)")
            return
        self._set(args, "speed", value)

    def pkt_size(self, args: list[str]) -> None:
        value = int(args[2])
        if value < 34:
            log("error pkt_size out of range (must be >= 34)")
            return
        self._set(args, "pkt_size", value)

    def _set(self, args: list[str], attr: str, value: float) -> None:
        self.sim.advance()
        for t in self._selected(args[:2]):
            if t.mode != "gen":
                log(f"error: core {t.core} task {t.task} is not a gen task")
            else:
                setattr(t, attr, value)

    def quit(self, args: list[str]) -> None:
        raise Quit

    # -- stats (replies)
    def tot_stats(self, args: list[str]) -> str:
        self.sim.advance()
        rx = sum(t.rx for t in self.sim.tasks)
        tx = sum(t.tx for t in self.sim.tasks)
        return f"{rx},{tx},{self.sim.tsc()},{TSC_HZ}"

    def tot_zero(self, args: list[str]) -> str:
        return f"0,{self.sim.tsc()},{TSC_HZ}"

    def core_stats(self, args: list[str]) -> str | None:
        if len(args) < 2:
            raise ValueError("core and task needed")
        task = int(args[1].split(",")[0])  # PROX reads one task only
        self.sim.advance()
        lines = []
        for c in self._cores(args[0]):
            t = self.sim.index.get((c, task))
            if t is None:
                log(f"error: invalid core {c}, task {task}")
                continue
            lines.append(f"{t.rx},{t.tx},{t.tx_fail},{self.sim.tsc()},{TSC_HZ}")
        return "\n".join(lines) if lines else None

    def dp_core_stats(self, args: list[str]) -> str:
        pairs = self._pairs(args)
        if err := self._invalid(pairs):
            return err
        self.sim.advance()
        return "\n".join(
            f"{t.rx},{t.tx},0,0,{t.tx_fail},0,{self.sim.tsc()},{TSC_HZ},{t.core},{t.task}"
            for t in (self.sim.index[p] for p in pairs))

    def _lat_tasks(self, args: list[str]) -> list[Task] | str:
        pairs = self._pairs(args)
        if err := self._invalid(pairs):
            return err
        for c, t in pairs:
            if self.sim.index[(c, t)].mode != "lat":
                return f"error: core {c} task {t} is not measuring latency"
        self.sim.advance()
        return [self.sim.index[p] for p in pairs]

    def _lat_line(self, t: Task) -> str:
        w = t.prev_win if t.prev_win.n else t.win
        cur = (round(w.min_us), round(w.max_us), round(w.sum_us / w.n)) if w.n else (0, 0, 0)
        tot = (round(t.total.min_us), round(t.total.max_us)) if t.total.n else (0, 0)
        return (f"{cur[0]},{cur[1]},{cur[2]},{tot[0]},{tot[1]},{self.sim.tsc()},{TSC_HZ},"
                f"{t.core},{t.task},0,0,0")

    def lat_stats(self, args: list[str]) -> str:
        tasks = self._lat_tasks(args)
        if isinstance(tasks, str):
            return tasks
        return "\n".join(self._lat_line(t) for t in tasks)

    def lat_all_stats(self, args: list[str]) -> str:
        tasks = self._lat_tasks(args)
        if isinstance(tasks, str):
            return tasks
        return "\n".join(
            "\n".join([self._lat_line(t)] + [f"Bucket [{i}]: {c}" for i, c in enumerate(t.hist)])
            for t in tasks)

    def _port(self, spec: str) -> Port | None:
        port = self.sim.ports.get(int(spec))
        if port is None:
            log(f"error: invalid port {spec}")
        return port

    def port_stats(self, args: list[str]) -> str | None:
        port = self._port(args[0])
        if port is None:
            return None
        self.sim.advance()
        tsc, cur = self.sim.tsc(), port.counters()
        diff = ",".join(str(a - b) for a, b in zip(cur, port.snap, strict=True))
        reply = f"0,0,{diff},{port.rx_pkts},{port.tx_pkts},0,0,{tsc},{port.snap_tsc}"
        port.snap, port.snap_tsc = cur, tsc
        return reply

    def multi_port_stats(self, args: list[str]) -> str | None:
        ports = [self._port(str(p)) for p in _int_list(args[0])]
        if None in ports:
            return None
        self.sim.advance()
        return ";".join(f"{p.num},{p.rx_pkts},{p.tx_pkts},0,0,{self.sim.tsc()}" for p in ports)

    def port_link_state(self, args: list[str]) -> str | None:
        return "up" if self._port(args[0]) else None

    def port_info(self, args: list[str]) -> str | None:
        p = self._port(args[0])
        if p is None:
            return None
        return (f"Port info for port {p.num},\tName: {p.name},\tDriver: net_af_packet,\t"
                f"Mac address: 02:00:00:00:00:{p.num:02x},\tLink speed: 10000 Mbps,\t"
                "Link max speed: 4294967295 Mbps,\tLink status: up,\tSocket: 4294967295,\t"
                "PCI address: 0000:00:00.0,\tPromiscuous: yes,\t"
                "Number of RX/TX descriptors: 512/512,\tNumber of RX/TX queues: 1/1 (max: 1/1)")

    def stats(self, args: list[str]) -> str:
        m = re.fullmatch(r"latency\((\d+)\)\.(used|total)", args[0])
        lats = [t for t in self.sim.tasks if t.mode == "lat"]
        if m and int(m.group(1)) < len(lats):
            self.sim.advance()
            return str(lats[int(m.group(1))].rx)
        return str(UINT64_MAX)  # what PROX answers for a stat it cannot resolve


# ----------------------------------------------------------------------------- server

def serve(prox: Prox, log_commands: bool) -> None:
    sel = selectors.DefaultSelector()
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        lsock.bind(("0.0.0.0", CTRL_PORT))
        lsock.listen(8)
    except OSError as e:
        fatal(f"error: cannot listen on port {CTRL_PORT}: {e.strerror}")
    sel.register(lsock, selectors.EVENT_READ, None)
    log(f"Listening on port {CTRL_PORT}")
    buffers: dict[socket.socket, bytes] = {}
    try:
        while True:
            for key, _ in sel.select(timeout=1.0):
                if key.data is None:
                    conn, addr = lsock.accept()
                    log(f"Client connected from {addr[0]}:{addr[1]}")
                    buffers[conn] = b""
                    sel.register(conn, selectors.EVENT_READ, "client")
                    continue
                conn = key.fileobj
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(conn)
                    conn.close()
                    del buffers[conn]
                    log("Client disconnected")
                    continue
                buffers[conn] += data
                while b"\n" in buffers[conn]:
                    raw, buffers[conn] = buffers[conn].split(b"\n", 1)
                    line = raw.decode("utf-8", "replace").rstrip("\r")
                    if log_commands:
                        log(f"cmd: {line}")
                    reply = prox.handle(line)
                    if reply:
                        try:
                            conn.sendall(reply.encode())
                        except OSError:
                            pass
    except Quit:
        log("quit")
    finally:
        for conn in buffers:
            conn.close()
        lsock.close()


def parse_args(argv: list[str]) -> dict:
    opts: dict = {"flags": set(), "vars": {}}
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-") or len(arg) < 2:
            continue
        for j, ch in enumerate(arg[1:], 1):
            if ch in ARG_FLAGS:
                value = arg[j + 1 :]
                if not value:
                    if i >= len(argv):
                        fatal(f"error: option -{ch} needs an argument")
                    value, i = argv[i], i + 1
                if ch == "w":
                    name, _, val = value.partition("=")
                    opts["vars"][name.lstrip("$")] = val
                else:
                    opts[ch] = value
                break
            opts["flags"].add(ch)
    return opts


def main(argv: list[str]) -> int:
    def on_signal(signum, frame):
        log(f"Received signal {signum}, exiting")
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log("PROX double (test stand-in for PROX 22.12)")
    opts = parse_args(argv)
    if "f" not in opts:
        fatal("error: no configuration file given (-f CFG)")
    try:
        dut = Dut.from_env(os.environ.get("NSB_PROX_DOUBLE_DUT", ""))
        ports, tasks = parse_cfg(opts["f"], dict(opts["vars"]))
    except ConfigError as e:
        fatal(str(e))
    except ValueError as e:
        fatal(f"error: invalid value: {e}")
    live = opts.get("o") == "cli" or "k" in opts["flags"]
    sim = Sim(ports, tasks, dut, live)
    autostart_gen = "e" not in opts["flags"]
    for t in tasks:
        t.running = autostart_gen or t.mode != "gen"
    log(f"Config {opts['f']}: {len(ports)} ports, {len(tasks)} tasks; DUT {dut}; "
        f"stats {'live' if live else 'frozen (no -o cli / -k)'}")
    for p in ports.values():
        log(f"  port {p.num}: name={p.name}")
    for t in tasks:
        log(f"  core {t.core} task {t.task}: name={t.name} mode={t.mode} tx ports={t.tx_ports} "
            f"rx ports={t.rx_ports} pkt_size={t.pkt_size} speed={t.speed:g} "
            f"{'running' if t.running else 'stopped'}")
    if "t" in opts["flags"]:
        serve(Prox(sim), os.environ.get("NSB_PROX_DOUBLE_LOG_COMMANDS") == "1")
    else:
        while True:
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
