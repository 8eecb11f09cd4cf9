"""TRex in the embedded lab, measured and printed (needs root and a TRex):

1. TRex's ceiling here: 64 B frames from one memif port to the other (loopback),
   asked for 10 Mpps: what it sent and received.
2. The lab sample (TRex over memif into dpdk-testpmd): its 64 B NDR, what limited
   it, and what testpmd's own counters forwarded in the trial that set it.
3. nsb's control time per TRex trial: a trial's wall time minus its traffic time
   (streams, start, waiting for the end, draining, counters, latency); goal 0.3 s.
4. TRex in ASTF mode port to port: the lab's connections-per-second ceiling and the
   control time per CPS trial.

TRex is NSB_TREX_PATH or ../shared/tools/trex beside the checkout.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TREX = Path(os.environ.get("NSB_TREX_PATH") or ROOT.parent / "shared" / "tools" / "trex")

TRIALS, DURATION_S, RATE_PPS = 10, 1.0, 20_000
GOAL_S = 0.3


def ceiling(work: Path) -> str:
    """TRex's two memif ports joined to each other, flat out at 64 B."""
    from nsb.executors.local import LocalExecutor
    from nsb.vnfs.trex import install, server

    sock = work / "loop.sock"
    cfg = work / "trex_cfg.yaml"
    cfg.write_text(json.dumps([{
        "version": 2, "port_limit": 2, "prefix": "nsb-bench-trex", "zmq_rpc_port": 4701,
        "zmq_pub_port": 4700, "low_end": True, "low_end_core": 1,
        "interfaces": [f"--vdev=net_memif0,id=0,role=master,socket={sock},socket-abstract=no",
                       f"--vdev=net_memif1,id=0,role=slave,socket={sock},socket-abstract=no"]}]))
    log = work / "trex.log"
    trex = server.TrexServer(LocalExecutor(), server.command(str(TREX), str(cfg), None, []),
                             str(log), "nsb-bench-trex", "bench", log.read_text)
    api = install.load_stl_api(TREX / install.CLIENT_SUBDIR)
    trex.start()
    try:
        client = trex.wait_ready(lambda: _connect(api), 60)
        client.reset(ports=[0, 1])
        frame = (api.Ether(dst="02:00:00:00:00:02") / api.IP(src="16.0.0.1", dst="48.0.0.1")
                 / api.UDP() / (18 * "x"))
        client.add_streams(api.STLStream(packet=api.STLPktBuilder(pkt=frame),
                                         mode=api.STLTXCont(pps=10_000_000)), ports=[0])
        client.clear_stats()
        started = time.monotonic()
        client.start(ports=[0], duration=3)
        client.wait_on_traffic(ports=[0])
        seconds = time.monotonic() - started
        time.sleep(0.2)
        stats = client.get_stats()
        client.disconnect()
    finally:
        trex.stop()
    sent, got = stats[0]["opackets"], stats[1]["ipackets"]
    return (f"TRex ceiling (memif loopback, 64 B, 10 Mpps asked for 3 s): sent "
            f"{sent / seconds / 1e6:.2f} Mpps, received {got / seconds / 1e6:.2f} Mpps "
            f"({seconds:.2f} s of traffic)")


def _connect(api):
    client = api.STLClient(server="127.0.0.1", sync_port=4701, async_port=4700,
                           verbose_level="none")
    client.connect()
    return client


def lab_sample(work: Path) -> str:
    """The sample's 64 B search, and testpmd's own count in the trial that set the NDR."""
    conf = work / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {work}/results\nlog_dir = {work}/logs\n"
                    "nfvi_interval = 0\n")
    subprocess.run([sys.executable, "-m", "nsb", "--config-file", str(conf), "task", "start",
                    str(ROOT / "samples" / "tc_testpmd_netns_rfc2544.yaml"), "--task-args",
                    json.dumps({"packet_sizes": [64], "duration_s": 2})],
                   check=True, capture_output=True, env=dict(os.environ, NSB_TREX_PATH=str(TREX)))
    (path,) = (work / "results").glob("*/results.json")
    doc = json.loads(path.read_text())
    (result,) = doc["results"]
    index = (result.get("evidence") or {}).get("trial_index")
    if index is None:  # no trial backs the answer (nothing passed)
        return (f"lab sample, 64 B: NDR {result['throughput_pps'] / 1e6:.3f} Mpps, limited by "
                f"{result['limited_by']} ({result.get('limited_reason') or 'no trial passed'})")
    best = next(t for t in doc["trials"] if t["trial_index"] == index)
    kpis = {k["trial_index"]: k["kpis"] for k in doc["kpis"] if k["source"] == "testpmd0"}
    prior = kpis.get(best["trial_index"] - 1, {})
    forwarded = sum(kpis[best["trial_index"]][f"port{p}_opackets"]
                    - prior.get(f"port{p}_opackets", 0) for p in (0, 1))
    # the seconds TRex took to send the trial, by its own tx counter
    seconds = best["elapsed_s"]
    within = best["extra"].get("known_within_s")
    warned = "; ".join(result.get("warnings") or [])
    return (f"lab sample, 64 B: NDR {result['throughput_pps'] / 1e6:.3f} Mpps, limited by "
            f"{result['limited_by']}" + (f" (unconfirmed: {warned})" if warned else "") +
            f"; from trial {index} ({best['reason']}); testpmd forwarded "
            f"{forwarded / seconds / 1e6:.3f} Mpps "
            f"in that trial ({forwarded} frames in its {seconds:.3f} s, TRex received "
            f"{best['rx_packets']}" + (f", every frame out by {within:.3f} s)" if within
                                       else ")"))


def astf_ceiling(work: Path) -> str:
    """TRex in ASTF mode port to port (samples/stateful/tc_astf_calibrate.yaml): the
    lab's connections-per-second ceiling, and nsb's control time per CPS trial (a
    trial's wall time, from its TrialStarted to its TrialDone, less the seconds it
    opens connections for)."""
    conf = work / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {work}/results\nlog_dir = {work}/logs\n"
                    "nfvi_interval = 0\n")
    subprocess.run([sys.executable, "-m", "nsb", "--config-file", str(conf), "task", "start",
                    str(ROOT / "samples" / "stateful" / "tc_astf_calibrate.yaml"),
                    "--task-args", json.dumps({"duration_s": 1, "upper_cps": 200000,
                                               "precision_pct": 5})],
                   check=True, capture_output=True, env=dict(os.environ, NSB_TREX_PATH=str(TREX)))
    (path,) = (work / "results").glob("*/results.json")
    (result,) = json.loads(path.read_text())["results"]
    started, control = {}, []
    for line in (path.parent / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "TrialStarted":
            started[event["trial_index"]] = event["timestamp"]
        elif event["event"] == "TrialDone":
            duration = event["duration_s"]
            control.append(event["timestamp"] - started[event["trial_index"]] - duration)
    stateful = result["stateful"]
    return (f"TRex ASTF ceiling (port to port, tcp_cps, 1 s trials): "
            f"{stateful['cps']:,.0f} connections/s, limited by {result['limited_by']} "
            f"(from trial {stateful['trial_index']}); control per CPS trial: median "
            f"{statistics.median(control):.3f} s, max {max(control):.3f} s over "
            f"{len(control)} trials (TRex's start-up and the closing wait included)")


def control_time(work: Path) -> str:
    from nsb.trial import Trial
    from tests.functional.trex_lab import running

    with running(work, generator="trex", forward_mode="io") as scenario:
        gen = scenario.generator
        gen.run_trial(Trial(64, RATE_PPS, DURATION_S))  # warm-up
        control = []
        for _ in range(TRIALS):
            started = time.monotonic()
            gen.run_trial(Trial(64, RATE_PPS, DURATION_S))
            control.append(time.monotonic() - started - DURATION_S)
    verdict = "met" if statistics.median(control) <= GOAL_S else "MISSED"
    return (f"TRex control per trial ({TRIALS} trials of {DURATION_S:g} s at "
            f"{RATE_PPS / 1000:g} kpps): median {statistics.median(control):.3f} s, max "
            f"{max(control):.3f} s (goal {GOAL_S} s: {verdict})")


def main() -> int:
    if not (TREX / "_t-rex-64").exists():
        print(f"TRex benchmarks: skipped (no TRex at {TREX}; set NSB_TREX_PATH)")
        return 0
    if os.geteuid() != 0:
        print("TRex benchmarks: skipped (needs root for the embedded lab)")
        return 0
    for bench in (ceiling, lab_sample, control_time, astf_ceiling):
        with tempfile.TemporaryDirectory() as tmp:
            print(bench(Path(tmp)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
