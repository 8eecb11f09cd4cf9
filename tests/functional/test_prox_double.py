"""Tests of the PROX test double (tests/doubles/prox_double.py).

Reply formats are checked against the replies recorded from a real PROX
(tests/data/prox-reference transcripts), the simulated DUT against its formula.

Port 8474 is fixed, so as root every double runs in a fresh network namespace:
``unshare -n sh -c 'ip link set lo up && exec prox_double.py ...'``. unshare and sh
exec, so the Popen pid is the double itself. The test connects from a short-lived
helper thread that joins the double's namespace with setns(2) on /proc/PID/ns/net
(a per-thread operation for network namespaces) and opens the socket there; the
socket stays in that namespace, the rest of the test process is untouched, and
nothing needs cleaning up besides the process. Without root the double runs in the
host namespace (and fails if port 8474 is taken).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from nsb.executors.local import connect_in_netns
from tests.doubles import prox_double

DOUBLE = Path(prox_double.__file__).resolve()
HZ = 2_000_000_000
ROOT = os.geteuid() == 0
INT = r"\d+"

# Like gen_l3fwd-2.cfg with the @@ placeholders filled: 2 gen cores, 2 lat cores.
GEN_CFG = """\
[eal options]
-n=4 ; force number of memory channels
no-output=no ; disable DPDK debug output

[port 0]
name=p0
mac=hardware
[port 1]
name=p1
mac=hardware

[variables]
$sut_mac0=02 00 00 00 01 01
$sut_mac1=02 00 00 00 01 02
$tester_mac0=02 00 00 00 00 01
$tester_mac1=02 00 00 00 00 02

[lua]
lpm4 = dofile("route.lua")

[global]
start time=5
name=Routing Gen

[core 0]
mode=master

[core 1]
name=p0
task=0
mode=gen
tx port=p0
bps=1250000000
pkt inline=${sut_mac0} ${tester_mac0} 08 00 45 00 00 24 00 01 00 00 40 11 f7 7d c0 a8 01 01 \
0a 00 00 00 13 88 13 88 00 10 55 7b 00 01 02 03 04 05 06 07
lat pos=42

[core 2]
name=p1
task=0
mode=gen
tx port=p1
bps=1250000000
pkt inline=${sut_mac1} ${tester_mac1} 08 00 45 00 00 24 00 01 00 00 40 11 f7 7d c0 a8 01 01 \
0a 00 00 00 13 88 13 88 00 10 55 7b 00 01 02 03 04 05 06 07

[core 3]
name=REC_P0
task=0
mode=lat
rx port=p0

[core 4]
name=REC_P1
task=0
mode=lat
rx port=p1
bucket size=11
""".replace("\\\n", "")

# Like embedded-lab-gen.cfg: one core, gen task 0 on port 0 and lat task 1 on port 1.
LAB_CFG = """\
[port 0]
name=p0
[port 1]
name=p1
[core 0]
mode=master
[core 1]
name=g0
task=0
mode=gen
tx port=p0
bps=125000000
pkt inline=00 00 01 00 00 01 00 00 02 00 00 02 08 00 45 00 00 2e 00 01 00 00 40 11
[core 1]
name=l1
task=1
mode=lat
rx port=p1
"""


# ----------------------------------------------------------------------------- harness

class Client:
    def __init__(self, sock: socket.socket):
        self.sock, self.buf = sock, b""
        sock.settimeout(5)

    def send(self, *cmds: str) -> None:
        self.sock.sendall("".join(c + "\n" for c in cmds).encode())

    def line(self) -> str:
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            assert data, "connection closed by the double"
            self.buf += data
        raw, self.buf = self.buf.split(b"\n", 1)
        return raw.decode()

    def ask(self, cmd: str) -> str:
        self.send(cmd)
        return self.line()

    def fields(self, cmd: str) -> list[int]:
        return [int(x) for x in self.ask(cmd).split(",")]

    def close(self) -> None:
        self.sock.close()


class Double:
    def __init__(self, tmp: Path, cfg: str, args: list[str], env: dict[str, str]):
        tmp.mkdir()
        (tmp / "route.lua").write_text("return {}\n")
        self.cfg = tmp / "prox.cfg"
        self.cfg.write_text(cfg)
        self.log = tmp / "prox.log"
        cmd = [str(DOUBLE), "-f", str(self.cfg), "-l", str(tmp / "prox-l.log"), *args]
        if ROOT:
            cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', *cmd]
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                         env={**os.environ, **env})

    def output(self) -> str:
        return self.log.read_text()

    def wait_for_log(self, text: str, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output():
            assert self.proc.poll() is None, f"double exited early:\n{self.output()}"
            assert time.monotonic() < deadline, f"no '{text}' in log:\n{self.output()}"
            time.sleep(0.02)

    def connect(self, timeout: float = 10) -> Client:
        """Ready when the control socket accepts (as real PROX, the double prints no
        'listening' line)."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, f"double exited early:\n{self.output()}"
            try:
                if not ROOT:
                    return Client(socket.create_connection(("127.0.0.1", 8474), timeout=5))
                return Client(connect_in_netns(f"/proc/{self.proc.pid}/ns/net", "127.0.0.1",
                                               8474, 5))
            except OSError:
                assert time.monotonic() < deadline, f"8474 never accepted:\n{self.output()}"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def start_double(tmp_path):
    if not ROOT:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", 8474)) == 0:
                pytest.fail("port 8474 is in use and no root for a network namespace "
                            "(make test runs as root)")
    doubles: list[Double] = []

    def start(cfg: str = GEN_CFG, args: tuple[str, ...] = ("-e", "-t", "-o", "cli", "-r", "0.01"),
              **env: str) -> Double:
        doubles.append(Double(tmp_path / f"double{len(doubles)}", cfg, list(args), env))
        return doubles[-1]

    yield start
    for d in doubles:
        d.stop()


def run_double(tmp_path: Path, cfg: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "route.lua").write_text("return {}\n")
    path = tmp_path / "bad.cfg"
    path.write_text(cfg)
    return subprocess.run([str(DOUBLE), "-f", str(path), *args], capture_output=True,
                          text=True, timeout=20, cwd=tmp_path)


def lat_line_re(core: int, task: int) -> str:
    return rf"^{INT},{INT},{INT},{INT},{INT},{INT},{HZ},{core},{task},0,0,0$"


def trial(c: Client, seconds: float, *setup: str) -> tuple[float, int, int]:
    """reset, set up, run all cores for `seconds`; returns (duration by TSC, rx, tx).

    The counters are read while the cores still run: the doubles here refresh their
    snapshot every 10 ms (-r 0.01), and a stop blocks as PROX's does.
    """
    c.send("stop all", "reset stats", *setup, "start all", "tot stats")
    t0 = int(c.line().split(",")[2])
    time.sleep(seconds)
    c.send("tot stats")
    rx, tx, t1, _ = (int(x) for x in c.line().split(","))
    c.send("stop all")
    return (t1 - t0) / HZ, rx, tx


# ----------------------------------------------------------------------------- protocol

def test_replies_match_prox_formats(start_double):
    d = start_double(NSB_PROX_DOUBLE_LOG_COMMANDS="1")
    c = d.connect()
    assert c.ask("version") == "144965632,369822563"
    assert re.match(rf"^0,0,{INT},{HZ}$", c.ask("tot stats"))
    port = c.fields("port_stats 0")
    assert len(port) == 12 and port[:10] == [0] * 10 and port[10] > port[11] > 10**12
    assert re.match(rf"^0,0,0,0,0,{INT};1,0,0,0,0,{INT}$", c.ask("multi port stats 0,1"))
    assert re.match(rf"^0,0,0,{INT},{HZ}$", c.ask("core stats 1 0"))
    assert re.match(lat_line_re(3, 0), c.ask("lat stats 3 0"))
    assert re.match(rf"^0,{INT},{HZ}$", c.ask("tot ierrors tot"))
    assert re.match(rf"^0,{INT},{HZ}$", c.ask("tot imissed tot"))
    assert re.match(rf"^0,0,0,0,0,0,{INT},{HZ},1,0$", c.ask("dp core stats 1 0"))
    assert c.ask("port link state 1") == "up"
    assert re.match(r"^\d+$", c.ask("stats latency(0).used"))
    c.send("lat all stats 4 0")
    assert re.match(lat_line_re(4, 0), c.line())
    assert [c.line() for _ in range(128)] == [f"Bucket [{i}]: 0" for i in range(128)]

    # errors that PROX answers with a line
    assert c.ask("lat stats 1 0") == "error: core 1 task 0 is not measuring latency"
    assert c.ask("lat all stats 2 0") == "error: core 2 task 0 is not measuring latency"
    assert c.ask("lat stats 5 0") == "error: invalid core 5, task 0"
    assert c.ask("lat stats 9 9") == "error: invalid core 9, task 9"
    assert c.ask("dp core stats 1 7") == "error: invalid core 1, task 7"
    assert c.ask("dp core stats") == "error: invalid syntax"
    assert c.ask("lat all stats") == "error: invalid syntax"

    # commands without a reply: the echo sent right after is the next line
    silent = ["start all", "stop all", "start 1", "stop 1 0", "start 1,2", "stop 1,2 0",
              "reset stats", "speed 1 0 5", "pkt_size 1 0 60", "reset values",
              "set value 1 0 56 1 1", "accuracy limit 3 0 1000000", "count 1 0 0 1",
              "bogus cmd", "foo bar", "help version", "port_stats 3", "core stats 5 0",
              "speed 1 0 2000", "pkt_size 1 0 20", ""]
    for i, cmd in enumerate(silent):
        assert c.ask(f"{cmd}\necho mark{i}") == f"mark{i}", cmd
    assert c.ask("echo hello") == "hello"

    # several commands in one segment; replies in order, tsc never goes back
    c.send("version", "tot stats", "tot stats", "echo done")
    lines = [c.line() for _ in range(4)]
    assert lines[0] == "144965632,369822563" and lines[3] == "done"
    assert int(lines[2].split(",")[2]) >= int(lines[1].split(",")[2])

    # out-of-range values are logged and ignored
    c.send("reset stats", "speed 1 0 1", "pkt_size 1 0 60", "speed 1 0 2000", "pkt_size 1 0 20")
    log = d.output()
    assert "error Speed out of range (must be betweeen 0% and 1000%)" in log
    assert "error pkt_size out of range (must be >= 34)" in log
    assert "error Unknown command: 'bogus cmd'" in log
    assert "cmd: version" in log

    # a new client after a close; quit ends the double with 0
    c.close()
    c = d.connect()
    assert c.ask("echo again") == "again"
    c.send("quit")
    assert d.proc.wait(timeout=10) == 0


def test_one_core_tasks_and_rate(start_double):
    c = start_double(LAB_CFG).connect()
    dt, rx, tx = trial(c, 1.0, "pkt_size 1 0 60", "speed 1 0 1")
    assert tx / dt == pytest.approx(148_810, rel=0.03)  # dt: the double's TSC, about 1 s
    assert rx == tx  # 148.8 kpps is well below the default DUT capacity
    rx, tx = c.fields("tot stats")[:2]  # the final counts, after the stop
    g = c.fields("core stats 1 0")
    lat = c.fields("core stats 1 1")
    assert (g[:3], lat[:3]) == ([0, tx, 0], [rx, 0, rx])  # the lat task consumes what it gets
    assert c.fields("core stats 1 0,1")[:3] == g[:3]  # PROX reads the first task only
    c.send("dp core stats 1 0,1")
    assert re.match(rf"^0,{tx},0,0,0,0,{INT},{HZ},1,0$", c.line())
    assert re.match(rf"^{rx},0,0,0,{rx},0,{INT},{HZ},1,1$", c.line())
    # port_stats: totals since the reset; diffs between PROX's last two refreshes (10 ms
    # here), long after the stop, so zero however often or seldom it is asked
    time.sleep(0.05)
    p0, p1 = c.fields("port_stats 0"), c.fields("port_stats 1")
    assert p0[:8] == [0, 0, 0, 0, 0, 0, 0, tx] and p1[:8] == [0, 0, 0, 0, 0, 0, rx, 0]
    assert p0[10] - p0[11] == pytest.approx(0.01 * HZ, rel=0.5)  # one refresh apart
    mp = c.ask("multi port stats 0,1").split(";")
    assert mp[0].split(",")[:5] == ["0", "0", str(tx), "0", "0"]
    assert mp[1].split(",")[:5] == ["1", str(rx), "0", "0", "0"]
    assert int(c.ask("stats latency(0).used")) == rx
    c.send("reset stats")
    assert re.match(rf"^0,0,{INT},{HZ}$", c.ask("tot stats"))
    assert c.fields("lat stats 1 1")[:5] == [0] * 5


def test_dut_capacity_loss_and_latency(start_double):
    c = start_double(NSB_PROX_DOUBLE_DUT="capacity_pps=200000,latency_us=10").connect()
    sizes = ("pkt_size 1 0 60", "pkt_size 2 0 60")

    def lat_avg() -> tuple[int, int]:
        a, b = c.fields("lat stats 3 0"), c.fields("lat stats 4 0")
        return (a[2] + b[2]) // 2, max(a[4], b[4])

    # low load (14.9 kpps): no loss, base latency
    dt, rx, tx = trial(c, 0.4, *sizes, "speed 1 0 0.1", "speed 2 0 0")
    assert rx == tx > 0
    low, low_max = lat_avg()
    assert 9 <= low <= 11 and low_max <= 11

    # near capacity (193.5 kpps of 200 k): still no loss, latency up ~4.5x
    dt, rx, tx = trial(c, 0.4, *sizes, "speed 1 0 1", "speed 2 0 0.3")
    assert rx == tx > 0
    near, _ = lat_avg()
    assert near > 3 * low

    # overload (297.6 kpps): rx is the capacity, the rest is lost, queueing latency
    dt, rx, tx = trial(c, 0.6, *sizes, "speed 1 0 1", "speed 2 0 1")
    assert tx == pytest.approx(2 * 148_809.5 * dt, rel=0.03)
    assert rx == pytest.approx(200_000 * dt, rel=0.03)
    assert tx - rx > 0.25 * tx
    over, _ = lat_avg()
    assert over > 200 + near

    # each lat core got half; its histogram holds exactly what it received
    rx = c.fields("tot stats")[0]  # the final count, after the stop
    for core, port in ((3, 0), (4, 1)):
        got = c.fields(f"core stats {core} 0")[0]
        assert got == pytest.approx(rx / 2, abs=1)
        assert c.fields(f"port_stats {port}")[6] == got
        c.send(f"lat all stats {core} 0")
        assert re.match(lat_line_re(core, 0), c.line())
        buckets = [c.line() for _ in range(128)]
        counts = [int(re.fullmatch(rf"Bucket \[{i}\]: (\d+)", b).group(1))
                  for i, b in enumerate(buckets)]
        assert sum(counts) == got
        # ~250 us at 1.024 us per bucket lands in the overflow bucket 127
        assert counts[127] > 0
    assert c.fields("port_stats 0")[7] == c.fields("core stats 1 0")[1]


def test_stats_stay_zero_without_cli_output(start_double):
    c = start_double(args=("-t", "-o", "none")).connect()  # no -e: gen cores autostart
    first = c.fields("tot stats")
    time.sleep(0.3)
    c.send("start all")
    assert c.fields("tot stats") == first and first[:2] == [0, 0]


def test_sigterm_exits_zero(start_double):
    d = start_double()
    d.connect().close()
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=10) == 0
    d2 = start_double(args=("-e",))  # no -t: no server, runs until SIGTERM
    d2.wait_for_log("core 4 task 0")
    assert "Listening" not in d2.output()
    d2.proc.send_signal(signal.SIGTERM)
    assert d2.proc.wait(timeout=10) == 0


# ----------------------------------------------------------------------------- config errors

def test_unfilled_placeholder_fails(tmp_path):
    cfg = GEN_CFG.replace("$sut_mac0=02 00 00 00 01 01", "$sut_mac0=@@dst_mac0")
    res = run_double(tmp_path, cfg, "-t")
    assert res.returncode == 1
    assert "error: unresolved placeholder @@dst_mac0 in [variables] $sut_mac0" in res.stderr


def test_missing_dofile_fails(tmp_path):
    res = run_double(tmp_path, GEN_CFG.replace("route.lua", "nowhere/ipv4-2port.lua"), "-t")
    assert res.returncode == 1
    assert f"error: cannot open {tmp_path}/nowhere/ipv4-2port.lua" in res.stderr


def test_bad_pkt_inline_and_missing_cfg_fail(tmp_path):
    cfg = GEN_CFG.replace("$sut_mac0=02 00 00 00 01 01", "$sut_mac0=02:00:00:00:01:01")
    res = run_double(tmp_path, cfg, "-t")
    assert res.returncode == 1 and "pkt inline" in res.stderr
    # as PROX, the double writes ./prox.log without -l: run it where that may land
    res = subprocess.run([str(DOUBLE), "-t"], capture_output=True, text=True, timeout=20,
                         cwd=tmp_path)
    assert res.returncode == 1 and "-f" in res.stderr
    res = subprocess.run([str(DOUBLE), "-f", str(tmp_path / "none.cfg")], capture_output=True,
                         text=True, timeout=20, cwd=tmp_path)
    assert res.returncode == 1 and "none.cfg" in res.stderr


# ----------------------------------------------------------------------------- model, in-process

def _sim(tmp_path: Path, dut: prox_double.Dut) -> prox_double.Sim:
    (tmp_path / "route.lua").write_text("return {}\n")
    (tmp_path / "gen.cfg").write_text(GEN_CFG)
    ports, tasks = prox_double.parse_cfg(str(tmp_path / "gen.cfg"), {})
    return prox_double.Sim(ports, tasks, dut, live=True)


def test_config_parsing(tmp_path):
    sim = _sim(tmp_path, prox_double.Dut())
    by = sim.index
    assert sorted(by) == [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)]
    assert (by[1, 0].mode, by[1, 0].tx_ports, by[1, 0].pkt_size) == ("gen", [0], 50)
    assert by[1, 0].speed == 100  # bps=1250000000
    assert (by[2, 0].tx_ports, by[3, 0].rx_ports, by[4, 0].rx_ports) == ([1], [0], [1])
    assert by[3, 0].mode == by[4, 0].mode == "lat"
    (tmp_path / "lab.cfg").write_text(LAB_CFG)
    _, tasks = prox_double.parse_cfg(str(tmp_path / "lab.cfg"), {})
    assert [(t.core, t.task, t.mode) for t in tasks] == [
        (0, 0, "master"), (1, 0, "gen"), (1, 1, "lat")]
    assert tasks[1].speed == 10 and tasks[1].pkt_size == 24


def test_gbps_limit_and_histogram_model(tmp_path):
    sim = _sim(tmp_path, prox_double.Dut(capacity_gbps=1.0))
    for t in sim.tasks:
        t.running = True
    sim.index[1, 0].pkt_size = 1514  # 1518-byte frames
    sim.index[2, 0].running = False
    sim.t_last = time.monotonic() - 1.0  # pretend one second passed
    sim.advance()
    gen = sim.index[1, 0]
    rx = sim.index[3, 0].rx + sim.index[4, 0].rx
    assert gen.tx == pytest.approx(1.25e9 / 1538, rel=1e-3)  # speed 100 = 10 Gbit/s
    assert rx == pytest.approx(gen.tx / 10, abs=2)  # capacity 1 Gbit/s
    for core in (3, 4):
        lat = sim.index[core, 0]
        assert sum(lat.hist) == lat.rx > 0
        assert lat.hist[127] == lat.rx  # 210..262 us: all above 128 * 1.024 us


def test_stats_are_snapshots_refreshed_once_a_period_like_prox(start_double):
    """Real PROX answers stats from a snapshot its master loop takes every -r seconds
    (1 s by default): reads within a period are equal, last_tsc steps by the period,
    and starting a task beside a running one blocks (measured with PROX 22.12)."""
    c = start_double(LAB_CFG, args=("-e", "-t", "-o", "cli")).connect()
    started = time.monotonic()
    c.send("start 1 1", "echo a")  # nothing else runs on core 1: at once
    assert c.line() == "a" and time.monotonic() - started < 0.5
    c.send("reset stats", "pkt_size 1 0 60", "speed 1 0 1", "start 1 0", "echo b")
    assert c.line() == "b" and time.monotonic() - started >= 1.0  # beside the lat task
    readings = []
    for _ in range(25):
        readings.append(c.fields("tot stats"))
        time.sleep(0.1)
    by_tsc: dict[int, set] = {}
    for rx, tx, tsc, _ in readings:
        by_tsc.setdefault(tsc, set()).add((rx, tx))
    assert all(len(values) == 1 for values in by_tsc.values())  # one snapshot, one value
    steps = sorted(by_tsc)[1:]  # the first came with reset stats, off the grid (as PROX's)
    assert len(steps) >= 2 and all(b - a == pytest.approx(HZ, rel=0.02)
                                   for a, b in zip(steps, steps[1:], strict=False))
    assert max(tx for _, tx, _, _ in readings) > 0
