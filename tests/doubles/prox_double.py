#!/usr/bin/env python3
"""Test double of PROX (DPDK samplevnf packet generator): its TCP control plane only.

The real PROX (../shared/tools/prox/prox) is what the functional PROX tests run;
this stdlib-only script stands in where a test needs a DUT of known capacity (the
search must find it) or a machine without PROX's runtime. It is started like PROX
(``prox_double.py -f CFG [-e] [-t] [-o cli] [-k] [-r SECONDS] [-l LOG]``), parses
the PROX .cfg file (ports, cores/tasks, variables, ``[lua] dofile``), fails on the
same kinds of config errors, listens on TCP port 8474 (``-t``) and answers PROX's
text protocol with replies formatted exactly as PROX 22.12 does (see
``tests/data/prox-reference``).

What it copies of real PROX's behaviour, as measured (../shared/tools/prox/README.md):
stats come from a snapshot refreshed every ``-r`` seconds (1 s by default) on a fixed
grid, so two reads within a period are equal and ``last_tsc`` steps by the period;
``start`` of a task on a core that already runs one blocks about 1.1 s, ``stop`` of a
running task about 0.9 s; bad arguments to state-changing commands get no reply; the
log goes to ``-l FILE`` (else ./prox.log) and /var/run/dpdk/<file-prefix> is left
behind. What it cannot show: real packets, real af_packet rings and drain times, CPU
contention, PROX's panics on configs it accepts.

What it simulates: no packets at all. Started ``mode=gen`` tasks "transmit"; a
simulated DUT, configured with the environment variable ``NSB_PROX_DOUBLE_DUT``
(``capacity_pps=..,capacity_gbps=..,latency_us=..``), forwards up to its capacity;
started ``mode=lat`` tasks receive the forwarded frames and record latency and a
histogram. Without ``-o cli`` or ``-k`` counters stay 0, as with the real PROX.
``NSB_PROX_DOUBLE_LOG_COMMANDS=1`` logs every command.

This file is the entry point: command line, TCP server, command dispatch. The .cfg
parsing and validation is in ``prox_double_config.py``, the simulated generator and
DUT in ``prox_double_model.py``. Run directly, the script's directory is sys.path[0]
and they import as top-level modules; imported as ``tests.doubles.prox_double`` (by
the tests), relatively.
"""

from __future__ import annotations

import copy
import os
import re
import selectors
import signal
import socket
import sys
import time
from pathlib import Path

if __package__:  # imported as tests.doubles.prox_double
    from .prox_double_config import ConfigError, dut_from_env, int_list, parse_cfg
    from .prox_double_model import TSC_HZ, Dut, Port, Sim, Task
else:  # run as a script (possibly from elsewhere): its directory is sys.path[0]
    from prox_double_config import ConfigError, dut_from_env, int_list, parse_cfg
    from prox_double_model import TSC_HZ, Dut, Port, Sim, Task

# The in-process tests use these through this module.
__all__ = ["Dut", "Prox", "Sim", "main", "parse_cfg"]

VERSION = "144965632,369822563"
CTRL_PORT = 8474
UINT64_MAX = 2**64 - 1
ARG_FLAGS = set("fowlvqr")  # PROX options that take an argument


LOG_FILES: list = []  # PROX logs to -l FILE (default ./prox.log) as well as stdout


def log(msg: str) -> None:
    print(msg, flush=True)
    for handle in LOG_FILES:
        handle.write(msg + "\n")
        handle.flush()


def leave_runtime_dir(cfg_path: str) -> None:
    """Like DPDK under PROX: /var/run/dpdk/<file-prefix> is created and left behind.

    Only for a config that names its prefix (nsb always gives one); DPDK's shared
    default, rte, is not the double's to create.
    """
    match = re.search(r"--file-prefix[=\s]+(\S+)", Path(cfg_path).read_text(errors="replace"))
    if not match:
        return
    try:
        runtime = Path("/var/run/dpdk") / match.group(1)
        runtime.mkdir(parents=True, exist_ok=True)
        (runtime / "config").touch()
    except OSError:  # not root: no runtime directory, as DPDK would fail earlier
        pass


def fatal(msg: str) -> None:
    log(msg)
    print(msg, file=sys.stderr, flush=True)
    sys.exit(1)


# ----------------------------------------------------------------------------- protocol

class Quit(Exception):
    pass


class Snapshot:
    """The counters at one refresh of PROX's master loop: what every stats command reads.

    Real PROX answers stats from such a snapshot, refreshed every ``-r`` seconds
    (1 s by default); its ``last_tsc`` is the moment it was taken. ``port_stats``
    diffs are between this snapshot and the one before (its ``prev_tsc``), as the
    transcripts show: last_tsc - prev_tsc is one refresh, whenever it is asked.
    """

    def __init__(self, sim: Sim, before: Snapshot | None = None):
        sim.advance()
        self._tsc = sim.tsc_of_last_advance()  # the moment the counters are of
        self.tasks = copy.deepcopy(sim.tasks)
        self.ports = copy.deepcopy(sim.ports)
        self.before = {num: (port.counters(), before.tsc() if before else self._tsc)
                       for num, port in (before.ports if before else self.ports).items()}
        self.index = {(t.core, t.task): t for t in self.tasks}
        self.live, self.dut = sim.live, sim.dut

    def tsc(self) -> int:
        return self._tsc

    def advance(self) -> None:
        return None


class Prox:
    """Answers one command line; returns the reply text or None (no reply, as PROX).

    Stats come from a ``Snapshot`` taken on a fixed grid every ``refresh_s``;
    starting a task on a core that already runs one blocks for about 1.1 s and
    stopping a running task for about 0.9 s, as measured with PROX 22.12.
    """

    START_BLOCK_S, STOP_BLOCK_S = 1.1, 0.9

    def __init__(self, sim: Sim, refresh_s: float = 1.0, blocking: bool = True):
        self.live = self.sim = sim
        self.refresh_s, self.blocking = refresh_s, blocking
        self.view = Snapshot(sim, Snapshot(sim))  # PROX starts with two samples taken
        self.next_refresh = time.monotonic() + refresh_s
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

    def refresh_if_due(self) -> float:
        """Take the snapshots due by now; seconds until the next one."""
        now = time.monotonic()
        if now >= self.next_refresh:
            self.view = Snapshot(self.live, self.view)
            while self.next_refresh <= now:
                self.next_refresh += self.refresh_s
        return self.next_refresh - now

    def handle(self, line: str) -> str | None:
        self.refresh_if_due()
        words = line.split()
        if not words:
            return None
        if words[0] == "echo":
            return line.strip()[4:].strip() + "\n"
        for name, fn in self.commands:
            n = len(name.split())
            if words[:n] == name.split():
                try:
                    if fn in self._replying() or fn in (self.tot_stats, self.tot_zero):
                        self.sim = self.view  # stats are read from the last snapshot
                    reply = fn(words[n:])
                except (ValueError, IndexError):
                    reply = "error: invalid syntax" if fn in self._replying() else None
                    if reply is None:
                        log(f"error: invalid syntax: '{line.strip()}'")
                finally:
                    self.sim = self.live
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
        return int_list(spec)

    def _pairs(self, args: list[str]) -> list[tuple[int, int]]:
        if len(args) < 2:
            raise ValueError("core and task needed")
        return [(c, t) for c in self._cores(args[0]) for t in int_list(args[1])]

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
        selected = self._selected(args)
        busy = any(o.running for t in selected for o in self.sim.tasks
                   if o.core == t.core and o not in selected)
        if self.blocking and busy and not all(t.running for t in selected):
            time.sleep(self.START_BLOCK_S)
        for t in selected:
            t.running = True

    def stop(self, args: list[str]) -> None:
        if not args:
            raise ValueError("stop needs an argument")
        self.sim.advance()
        selected = self._selected(args)
        if self.blocking and any(t.running for t in selected):
            time.sleep(self.STOP_BLOCK_S)
        for t in selected:
            t.running = False

    def reset_stats(self, args: list[str]) -> None:
        self.sim.reset()
        self.view = Snapshot(self.live)  # what PROX displays is zeroed at once, diffs too

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
        view = self.view  # port stats are always the last two refreshes
        port = view.ports[port.num]
        prev, prev_tsc = view.before[port.num]
        diff = ",".join(str(a - b) for a, b in zip(port.counters(), prev, strict=True))
        return f"0,0,{diff},{port.rx_pkts},{port.tx_pkts},0,0,{view.tsc()},{prev_tsc}"

    def multi_port_stats(self, args: list[str]) -> str | None:
        ports = [self._port(str(p)) for p in int_list(args[0])]
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
    buffers: dict[socket.socket, bytes] = {}
    try:
        while True:
            for key, _ in sel.select(timeout=prox.refresh_if_due()):
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
        # written unbuffered: the signal may land inside log()'s own write or flush, and
        # a buffered writer entered again raises RuntimeError (exit 1 instead of 0)
        line = f"Received signal {signum}, exiting\n".encode()
        for fd in (sys.stdout.fileno(), *(h.fileno() for h in LOG_FILES)):
            os.write(fd, line)
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    opts = parse_args(argv)
    LOG_FILES.append(open(opts.get("l", "prox.log"), "a"))  # noqa: SIM115 - lives as long as PROX
    log("PROX double (test stand-in for PROX 22.12)")
    if "f" not in opts:
        fatal("error: no configuration file given (-f CFG)")
    try:
        dut = dut_from_env(os.environ.get("NSB_PROX_DOUBLE_DUT", ""))
        ports, tasks = parse_cfg(opts["f"], dict(opts["vars"]))
    except ConfigError as e:
        fatal(str(e))
    except ValueError as e:
        fatal(f"error: invalid value: {e}")
    leave_runtime_dir(opts["f"])
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
        serve(Prox(sim, refresh_s=float(opts.get("r", 1.0))),
              os.environ.get("NSB_PROX_DOUBLE_LOG_COMMANDS") == "1")
    else:
        while True:
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
