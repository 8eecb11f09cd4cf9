"""PROX's control protocol: text commands over TCP port 8474, parsed strictly.

Commands that change state (start, stop, reset stats, speed, pkt_size) get no
reply, and PROX prints errors in their arguments only to its own log. So after
such commands the client sends ``echo`` with a unique token and waits for it:
the commands were processed in order, and any other line that arrives first
is an error. Every reply is checked for its field count and types; a missing
or malformed reply is an error naming the command and the raw reply, never a
silent zero. Closing the socket with a reply pending kills PROX (SIGPIPE), so
every reply is read before closing.
"""

from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass

from nsb.errors import RunError

LOG = logging.getLogger(__name__)

PROX_PORT = 8474
LAT_BUCKETS = 128
IRQ_BUCKETS = 13
UNKNOWN_STAT = 2**64 - 1  # what PROX's stats command answers for a path it cannot resolve


class ProxError(RunError):
    """PROX answered with an error, nothing, or something malformed."""


@dataclass(frozen=True)
class TotStats:
    rx: int
    tx: int
    tsc: int
    hz: int


@dataclass(frozen=True)
class CoreStats:
    rx: int
    tx: int
    drop: int
    tsc: int
    hz: int


@dataclass(frozen=True)
class PortTotals:
    port: int
    rx: int
    tx: int
    no_mbufs: int
    ierrors: int
    tsc: int


@dataclass(frozen=True)
class LatStats:
    """Latency of one ``mode=lat`` task, in microseconds since ``reset stats``."""

    min_us: int
    max_us: int
    avg_us: int
    min_since_reset_us: int
    max_since_reset_us: int
    tsc: int
    hz: int
    core: int
    task: int
    mis_ordered: int
    extent: int
    duplicate: int


def _dpdk_version(encoded: int) -> str:
    """major<<24 | minor<<16 | rev<<8, as DPDK encodes its version."""
    return f"{encoded >> 24}.{(encoded >> 16) & 0xFF}.{(encoded >> 8) & 0xFF}"


def _prox_version(encoded: int) -> str:
    """PROX 22.12 answers 0x08A40000: the upper 16 bits are 2212 (year, month)."""
    upper = encoded >> 16
    if upper >= 1000:
        return f"{upper // 100}.{upper % 100:02d}"
    return _dpdk_version(encoded)


class ProxClient:
    """One connection to one PROX instance."""

    def __init__(self, sock, name: str = "prox", timeout_s: float = 10.0):
        self.sock = sock
        self.name = name
        self.timeout_s = timeout_s
        self._buffer = b""
        self._tokens = itertools.count(1)

    # --- transport -------------------------------------------------------

    def _send(self, command: str) -> None:
        LOG.debug("%s >>> %s", self.name, command)
        try:
            self.sock.sendall(command.encode() + b"\n")
        except OSError as exc:
            raise ProxError(f"{self.name}: sending '{command}' to PROX failed: {exc}") from None

    def _read_line(self, command: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProxError(f"{self.name}: PROX did not answer '{command}' within "
                                f"{timeout_s:g} s (got so far: {self._buffer!r})")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError as exc:
                raise ProxError(f"{self.name}: reading PROX's reply to '{command}' failed: "
                                f"{exc}") from None
            if not chunk:
                raise ProxError(f"{self.name}: PROX closed the connection; no reply to "
                                f"'{command}' (got {self._buffer!r})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        text = line.decode(errors="replace")
        LOG.debug("%s <<< %s", self.name, text)
        return text

    def send(self, *commands: str) -> None:
        """Send commands that get no reply, then wait until PROX processed them."""
        for command in commands:
            self._send(command)
        token = f"nsb-sync-{next(self._tokens)}"
        self._send(f"echo {token}")
        label = commands[-1] if commands else "echo"
        line = self._read_line(label, self.timeout_s)
        if line != token:
            raise ProxError(f"{self.name}: unexpected reply to '{'; '.join(commands)}': "
                            f"{line!r} (these commands reply nothing)")

    def query(self, command: str, timeout_s: float | None = None) -> str:
        """Send a command that replies one line; PROX's ``error:`` lines raise."""
        self._send(command)
        line = self._read_line(command, timeout_s or self.timeout_s)
        if line.startswith("error"):
            raise ProxError(f"{self.name}: PROX refused '{command}': {line}")
        return line

    def _fields(self, command: str, line: str, names: str, count: int | None = None) -> list[int]:
        parts = line.split(",")
        expected = count or len(names.split(","))
        try:
            if len(parts) != expected:
                raise ValueError
            return [int(p) for p in parts]
        except ValueError:
            raise ProxError(f"{self.name}: malformed reply to '{command}': {line!r} "
                            f"(expected {expected} integers: {names})") from None

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    # --- commands --------------------------------------------------------

    def version(self) -> tuple[str, str]:
        """(PROX version, DPDK version), e.g. ('22.12.0', '22.11.11')."""
        line = self.query("version")
        prox, dpdk = self._fields("version", line, "prox_version,rte_version")
        return _prox_version(prox), _dpdk_version(dpdk)

    def reset_stats(self) -> None:
        self.send("reset stats")

    def start(self, tasks: list[tuple[int, int]] | None = None) -> None:
        """Start every core (None) or the given (core, task) pairs."""
        self.send(*(["start all"] if tasks is None else [f"start {c} {t}" for c, t in tasks]))

    def stop(self, tasks: list[tuple[int, int]] | None = None) -> None:
        # ``stop all`` can block PROX for over a second: allow for it
        self.send(*(["stop all"] if tasks is None else [f"stop {c} {t}" for c, t in tasks]))

    def set_speed(self, core: int, task: int, percent: float) -> None:
        self.send(self.speed_command(core, task, percent))

    def set_pkt_size(self, core: int, task: int, frame_size: int) -> None:
        self.send(self.pkt_size_command(core, task, frame_size))

    def speed_command(self, core: int, task: int, percent: float) -> str:
        """``percent`` of 10 Gbit/s, counting frame + preamble + gap (0..1000); checked
        here because PROX answers nothing to a value out of range."""
        if not 0 <= percent <= 1000:
            raise ProxError(f"{self.name}: speed {percent:g}% is outside PROX's 0..1000%")
        return f"speed {core} {task} {percent:.6g}"

    def pkt_size_command(self, core: int, task: int, frame_size: int) -> str:
        """Frame size with FCS; PROX takes it without the 4 FCS bytes."""
        size = frame_size - 4
        if size < 34:
            raise ProxError(f"{self.name}: frame size {frame_size} is below PROX's minimum 38")
        return f"pkt_size {core} {task} {size}"

    def imix_command(self, core: int, task: int, sequence: tuple[int, ...]) -> str:
        """A frame mix: PROX cycles through the sizes (without FCS) in this order."""
        for frame_size in sequence:
            self.pkt_size_command(core, task, frame_size)  # the same minimum
        return f"imix {core} {task} {','.join(str(size - 4) for size in sequence)}"

    def tot_stats(self) -> TotStats:
        line = self.query("tot stats")
        return TotStats(*self._fields("tot stats", line, "rx,tx,last_tsc,tsc_hz"))

    def tot_ierrors(self) -> int:
        line = self.query("tot ierrors tot")
        return self._fields("tot ierrors tot", line, "ierrors,last_tsc,tsc_hz")[0]

    def core_stats(self, core: int, task: int) -> CoreStats:
        command = f"core stats {core} {task}"
        return CoreStats(*self._fields(command, self.query(command), "rx,tx,drop,last_tsc,tsc_hz"))

    def port_stats(self, port: int) -> dict[str, int]:
        """One port's counters: totals, and differences between PROX's last two stats
        refreshes (prev_tsc to last_tsc, one refresh apart), not since the previous call."""
        names = ("no_mbufs_diff,ierrors_diff,rx_bytes_diff,tx_bytes_diff,rx_pkts_diff,"
                 "tx_pkts_diff,rx_tot,tx_tot,no_mbufs_tot,ierrors_tot,last_tsc,prev_tsc")
        command = f"port_stats {port}"
        return dict(zip(names.split(","), self._fields(command, self.query(command), names),
                        strict=True))

    def multi_port_stats(self, ports: list[int]) -> dict[int, PortTotals]:
        command = "multi port stats " + ",".join(str(p) for p in ports)
        line = self.query(command)
        totals = {}
        for chunk in line.split(";"):
            values = self._fields(command, chunk, "port,rx_tot,tx_tot,no_mbufs_tot,ierrors_tot,"
                                  "last_tsc")
            totals[values[0]] = PortTotals(*values)
        if sorted(totals) != sorted(ports):
            raise ProxError(f"{self.name}: reply to '{command}' covers ports {sorted(totals)}: "
                            f"{line!r}")
        return totals

    def lat_stats(self, core: int, task: int) -> LatStats:
        command = f"lat stats {core} {task}"
        return self._lat(command, self.query(command))

    def _lat(self, command: str, line: str) -> LatStats:
        return LatStats(*self._fields(
            command, line, "min_us,max_us,avg_us,min_since_reset_us,max_since_reset_us,"
            "last_tsc,tsc_hz,core,task,mis_ordered,extent,duplicate"))

    def lat_all_stats(self, core: int, task: int) -> tuple[LatStats, list[int]]:
        """Latency stats and the 128-bucket histogram (the last bucket is overflow)."""
        command = f"lat all stats {core} {task}"
        stats = self._lat(command, self.query(command))
        buckets = []
        for index in range(LAT_BUCKETS):
            line = self._read_line(command, self.timeout_s)
            prefix = f"Bucket [{index}]: "
            if not line.startswith(prefix) or not line[len(prefix):].isdigit():
                raise ProxError(f"{self.name}: malformed histogram line {index} in reply to "
                                f"'{command}': {line!r} (expected '{prefix}COUNT')")
            buckets.append(int(line[len(prefix):]))
        return stats, buckets

    def stats(self, paths: list[str]) -> list[int]:
        """PROX's ``stats a,b,...``: one integer per path; PROX answers 2^64-1 for a path it
        cannot resolve (an unknown core or task), which is an error here."""
        command = "stats " + ",".join(paths)
        values = self._fields(command, self.query(command), ",".join(paths), len(paths))
        unknown = [path for path, value in zip(paths, values, strict=True)
                   if value == UNKNOWN_STAT]
        if unknown:
            raise ProxError(f"{self.name}: PROX has no value for {', '.join(unknown)}")
        return values

    def irq_stats(self, core: int, task: int) -> dict[str, int]:
        """A ``mode=irq`` task's interrupt statistics since ``reset stats``, as NSB read
        them: ``max_irq`` (us) and the counts of 13 buckets of how long the task was
        interrupted (bucket_0 < 1 us, 1-5, 5-10, 10-50, 50-100, 100-500, 500-1000 us,
        1-5, 5-10, 10-50, 50-100, 100-500 ms, bucket_12 >= 500 ms); ``overflow`` is
        NSB's sum of bucket_9..12 (10 ms or more)."""
        prefix = f"task.core({core}).task({task})"
        values = self.stats([f"{prefix}.max_irq"] + [f"{prefix}.irq({i})"
                                                      for i in range(IRQ_BUCKETS)])
        stats = {"max_irq": values[0]}
        stats.update({f"bucket_{i}": v for i, v in enumerate(values[1:])})
        stats["overflow"] = sum(values[10:14])
        return stats

    def quit(self) -> None:
        """Ask PROX to exit; it replies nothing and closes the connection."""
        try:
            self._send("quit")
        except ProxError:
            pass
