"""How accurate nsb's numbers are, measured against independent witnesses (needs root;
TRex from NSB_TREX_PATH or ../shared/tools/trex, PROX from ../shared/tools/prox).

Per generator, port kind and trial length, one trial at a rate the generator keeps up
with, through dpdk-testpmd (io forwarding) in the embedded lab (PROX: through PROX's
l3fwd, the PROX sample):

- the rate nsb reports against the rate on the wire: the DUT's receive counters, read
  every 20 ms while the trial runs (testpmd's through its telemetry socket over
  memif, the kernel's of the DUT's veths otherwise), time the first and the last
  frame that reached it (each extrapolated from the readings around it at the
  trial's pace, nsb.counter_span: to a few ms);
- the frames nsb reports against testpmd's counters (exact) and, for TRex, against a
  second STL client on the same server;
- latency as reported, beside the generator's own floor: TRex port to port without a
  DUT (memif loopback, a veth pair), at a low rate, latency frames only.

    python benchmarks/bench_accuracy.py                 # 2, 10 and 60 s trials
    python benchmarks/bench_accuracy.py --lengths 2     # quicker
    python benchmarks/bench_accuracy.py --pod           # and PROX on the pod's PCI NICs

Prints a markdown table (the README's accuracy table comes from it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

POLL_S = 0.02
CASES = [  # generator, link, 64 B rate (pps, both directions)
    ("trex", "memif", 400_000),
    ("trex", "veth", 60_000),
    ("trafgen", "veth", 20_000),
    ("prox", "veth", 20_000),
]


class WireClock:
    """A DUT's receive counter over time: when the first and the last frame of a trial
    reached it. ``count`` reads the counter (cheaply: a socket or a /proc file)."""

    def __init__(self, count, close=lambda: None):
        self._count, self._close = count, close
        self.readings, self._stop = [], threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    @classmethod
    def testpmd(cls, file_prefix: str, ports: tuple[int, ...] = (0, 1)) -> WireClock:
        """testpmd's ports, through its DPDK telemetry socket (memif has no kernel
        counters)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.connect(f"/var/run/dpdk/{file_prefix}/dpdk_telemetry.v2")
        max_len = json.loads(sock.recv(1024)).get("max_output_len", 16384)

        def count() -> int:
            total = 0
            for port in ports:
                sock.send(f"/ethdev/stats,{port}".encode())
                total += int(json.loads(sock.recv(max_len))["/ethdev/stats"]["ipackets"])
            return total
        return cls(count, sock.close)

    @classmethod
    def kernel(cls, pid: int) -> WireClock:
        """The kernel's receive counters of the interfaces in the network namespace of
        process ``pid`` (the DUT's veths: every frame that reached it)."""
        def count() -> int:
            lines = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
            return sum(int(line.split(":", 1)[1].split()[1]) for line in lines
                       if line.split(":", 1)[0].strip() != "lo")
        return cls(count)

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.readings.append((time.monotonic(), self._count()))
            time.sleep(POLL_S)

    def __enter__(self):
        self.readings.append((time.monotonic(), self._count()))
        self._thread.start()
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)
        self._stop.set()
        self._thread.join()
        self._close()

    def busy_span(self, rate_pps: float) -> tuple[int, float]:
        """(frames, seconds) of the stretch where the counter moved at a quarter of
        ``rate_pps`` or more (a trial among a whole run's start and end)."""
        busy = [i for i in range(1, len(self.readings))
                if (self.readings[i][1] - self.readings[i - 1][1])
                >= rate_pps / 4 * (self.readings[i][0] - self.readings[i - 1][0])]
        first, last = busy[0], busy[-1]
        frames = self.readings[last][1] - self.readings[first - 1][1]
        return frames, self.readings[last][0] - self.readings[first - 1][0]

    def span(self) -> tuple[int, float]:
        """(frames that arrived, seconds from the first to the last of them: each end
        extrapolated from the readings nearest it, ``nsb.counter_span``)."""
        from nsb import counter_span

        base, total = self.readings[0][1], self.readings[-1][1]
        seconds = counter_span.span_s(self.readings, total, base)
        return total - base, seconds if seconds is not None else float("nan")


def measure(generator: str, link: str, rate: float, lengths: list[float]) -> list[dict]:
    from nsb.trial import Trial
    from tests.functional.prox_lab import SAMPLE as PROX_SAMPLE
    from tests.functional.prox_lab import deployed, lab_args
    from tests.functional.trex_lab import trex_env

    rows = []
    task, args = ROOT / "samples" / "tc_testpmd_netns_rfc2544.yaml", \
        {"generator": generator, "link": link, "forward_mode": "io"}
    if generator == "prox":  # PROX generating, PROX's l3fwd as the DUT
        task, args = PROX_SAMPLE, lab_args()
    with tempfile.TemporaryDirectory() as tmp, trex_env(), \
            deployed(Path(tmp), task, args, ready_s=60.0) as scenario:
        gen, dut = scenario.generator, scenario.vnfs[0]
        for length in lengths:
            other = _second_client(gen) if generator == "trex" else None
            clock = WireClock.testpmd(dut.file_prefix) if link == "memif" else \
                WireClock.kernel(dut.process.pid)
            with clock:
                result = gen.run_trial(Trial(64, rate, length, flows=16))
            frames, seconds = clock.span()
            row = {"generator": generator, "link": link, "length_s": length,
                   "asked_pps": rate, "reported_pps": result.tx_rate_pps,
                   "limited": result.generator_limited, "tx": result.tx_packets,
                   "dut_rx": frames, "wire_pps": frames / seconds, "wire_s": seconds,
                   "latency": result.latency}
            if other is not None:
                seen = other.get_stats(ports=gen.tx_ports)
                row["second_client_tx"] = sum(int(seen[p]["opackets"]) for p in gen.tx_ports)
                other.disconnect(stop_traffic=False, release_ports=False)
            rows.append(row)
    return rows


def _second_client(gen):
    from tests.functional.trex_lab import second_client

    client = second_client(gen)
    client.clear_stats()
    return client


def floor(link: str) -> dict:
    """TRex's latency with its two ports joined to each other (no DUT), latency frames
    only at 1000 pps per port: what TRex itself adds."""
    from nsb.trial import Trial
    from tests.functional.prox_lab import deployed
    from tests.functional.trex_lab import trex_env

    with tempfile.TemporaryDirectory() as tmp:
        task = Path(tmp) / "loop.yaml"
        task.write_text(LOOPBACK.replace("LINK", link))
        with trex_env(), deployed(Path(tmp), task, {}, ready_s=60.0) as scenario:
            result = scenario.generator.run_trial(
                Trial(64, 2000, 10.0, latency_only=True))
    return {"link": link, "latency": result.latency}


LOOPBACK = """schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {role: TrafficGen, interfaces: {xe0: {type: LINK}, xe1: {type: LINK}}}
  links: [[tg:xe0, tg:xe1]]
scenarios:
  - name: floor
    vnfs: []
    traffic_generator: {name: tg0, type: trex, node: tg, options: {low_end_core: 0}}
    traffic_profile: {type: fixed, rate_pps: 2000, duration: 10}
"""


def _latency(stats) -> str:
    if stats is None:
        return "-"
    p99 = stats.percentiles_us.get("p99")
    return (f"{stats.min_us:.0f} / {stats.avg_us:.0f} / "
            f"{'-' if p99 is None else f'{p99:.0f}'} / {stats.max_us:.0f}")


def measure_pod(lengths: list[float]) -> list[dict]:
    """PROX on the hardware-like pod's PCI NICs (uio_pci_generic, TCG guests) into
    testpmd, through nsb as a user runs it: the wire witness is the host's taps of the
    SUT's NICs (every frame the SUT's PCI NICs were handed), polled from the host."""
    import subprocess

    from tests.conftest import NSB
    from tests.functional import test_hw_pod_nsb as pod_test
    from tests.functional.hw_pod import hw_pod, sut_taps

    rows = []
    with tempfile.TemporaryDirectory() as tmp, hw_pod("uio_pci_generic") as pod_file:
        taps = sut_taps(pod_file)
        conf = Path(tmp) / "nsb.conf"
        for length in lengths:
            results = Path(tmp) / f"results-{length:g}"
            conf.write_text(f"[DEFAULT]\nresults_dir = {results}\nlog_dir = {tmp}/logs\n"
                            "nfvi_interval = 0\n")
            task = pod_test._task(Path(tmp), pod_file, duration=length)
            clock = WireClock(lambda: sum(_tap_tx(tap) for tap in taps))
            with clock:
                subprocess.run([*NSB, "--config-file", str(conf), "task", "start", str(task)],
                               check=True, capture_output=True, timeout=1800)
            (trial,) = pod_test._results(results)["trials"]
            frames, seconds = clock.busy_span(trial["requested_rate_pps"])
            rows.append({"generator": "prox", "link": "pci", "length_s": length,
                         "asked_pps": trial["requested_rate_pps"],
                         "reported_pps": trial["tx_rate_pps"],
                         "limited": trial["generator_limited"], "tx": trial["tx_packets"],
                         "dut_rx": frames, "wire_pps": frames / seconds, "wire_s": seconds,
                         "latency": None})
    return rows


def _tap_tx(tap: str) -> int:
    """Frames the host handed to the VM through ``tap``."""
    return int(Path(f"/sys/class/net/{tap}/statistics/tx_packets").read_text())


def _port(link: str) -> str:
    return "af_packet (veth)" if link == "veth" else link


def table(rows: list[dict], floors: list[dict]) -> str:
    lines = ["| generator, port | trial | asked | reported | on the wire (the DUT's counters, "
             "read every 20 ms) | error | frames: nsb / DUT / 2nd client | "
             "latency min/avg/p99/max (us) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        error = 100 * (r["reported_pps"] / r["wire_pps"] - 1)
        limited = " (generator-limited)" if r["limited"] else ""
        lines.append(
            f"| {r['generator']}, {_port(r['link'])} | {r['length_s']:g} s | {r['asked_pps']:,.0f} "
            f"| {r['reported_pps']:,.0f}{limited} | {r['wire_pps']:,.0f} "
            f"({r['wire_s']:.3f} s) | {error:+.2f} % | {r['tx']:,} / {r['dut_rx']:,} / "
            f"{r.get('second_client_tx', '-'):{',' if 'second_client_tx' in r else ''}} "
            f"| {_latency(r['latency'])} |")
    lines.append("")
    lines.append("| TRex floor (no DUT) | latency min/avg/p99/max (us) |")
    lines.append("|---|---|")
    for f in floors:
        lines.append(f"| {f['link']} loopback | {_latency(f['latency'])} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="2,10,60",
                        help="trial lengths in seconds, comma-separated (default 2,10,60)")
    parser.add_argument("--pod", action="store_true",
                        help="also PROX on the hardware-like pod's PCI NICs (boots two TCG "
                             "VMs: minutes)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("accuracy benchmark: skipped (needs root for the embedded lab)")
        return 0
    lengths = [float(v) for v in args.lengths.split(",")]
    rows, floors = [], []
    for generator, link, rate in CASES:
        with contextlib.suppress(KeyboardInterrupt):
            rows += measure(generator, link, rate, lengths)
            print(f"measured {generator} over {link}", file=sys.stderr, flush=True)
    if args.pod:
        rows += measure_pod(lengths)
    for link in ("memif", "veth"):
        floors.append(floor(link))
    print(table(rows, floors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
