"""samples/prox/tc_prox_l3fwd.yaml end to end: netns nodes, the PROX double as prox_path.

PROX cannot be installed here; tests/doubles/prox_double.py speaks its protocol
and simulates a DUT of known capacity, so the search must find that capacity.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import NSB, ROOT, requires_root
from tests.functional.lab import leftovers, results_of

SAMPLE = ROOT / "samples" / "prox" / "tc_prox_l3fwd.yaml"
DOUBLE = ROOT / "tests" / "doubles" / "prox_double.py"
CAPACITY_PPS, CAPACITY_GBPS = 12_000_000, 20.0  # the simulated router
SPEED_GBPS, PORTS = 25, 1  # the sample's interfaces; the lab generator sends on one
PRECISION_PCT = 1.0
NSB_KPIS = {"Throughput", "RxThroughput", "TxThroughput", "DropPackets", "CurrentDropPackets",
            "PktSize", "LatencyMin", "LatencyMax", "LatencyAvg"}


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def run_sample(results_conf, task_args: dict, timeout=600):
    env = dict(os.environ, NSB_PROX_DOUBLE_DUT=f"capacity_pps={CAPACITY_PPS},"
                                               f"capacity_gbps={CAPACITY_GBPS}")
    args = {"context": "netns", "prox_path": str(DOUBLE), **task_args}
    argv = NSB + ["--config-file", str(results_conf), "task", "start", str(SAMPLE),
                  "--task-args", json.dumps(args)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)


def capacity_pct(frame: int) -> float:
    capacity = min(CAPACITY_PPS, CAPACITY_GBPS * 1e9 / 8 / (frame + 20))
    return 100 * capacity / (PORTS * SPEED_GBPS * 1e9 / 8 / (frame + 20))


def test_search_finds_the_simulated_capacity_for_every_frame_size(results_conf, tmp_path):
    done = run_sample(results_conf, {"duration_s": 0.3, "precision": PRECISION_PCT})
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok"
    sizes = [r["frame_size"] for r in doc["results"]]
    assert sizes == [64, 128, 256, 512, 1024, 1280, 1518]
    for result in doc["results"]:
        frame, expected = result["frame_size"], capacity_pct(result["frame_size"])
        # never above the DUT's capacity (beyond what a rate measured between two
        # 0.1 s snapshots resolves), at most the search precision below it
        assert expected - PRECISION_PCT - 0.2 <= result["line_rate_pct"] <= expected * 1.005, \
            result
        assert result["limited_by"] == "dut"
        assert result["loss_pct"] == 0.0
        lat = result["latency"]
        assert 0 < lat["min_us"] <= lat["avg_us"] <= lat["max_us"]
        assert lat["p50_us"] <= lat["p99_us"] and sum(b["count"] for b in lat["histogram"]) > 0
        assert result["throughput_mbps"] == pytest.approx(
            (frame + 20) * 8 * result["throughput_pps"] / 1e6)
    for trial in doc["trials"]:
        assert NSB_KPIS <= set(trial["extra"]), trial["extra"]
        assert trial["extra"]["PktSize"] == trial["frame_size"]
        assert trial["extra"]["DropPackets"] == pytest.approx(trial["loss_pct"])
        assert set(trial["ports"]) == {"xe0", "xe1"}
        assert sum(p["tx_packets"] for p in trial["ports"].values()) == trial["tx_packets"]
        offered = trial["requested_rate_pps"]
        capacity = capacity_pct(trial["frame_size"]) / 100 * PORTS * SPEED_GBPS * 1e9 / 8 / (
            trial["frame_size"] + 20)
        if offered > capacity * 1.01:
            assert trial["verdict"] == "fail"
        if offered < capacity * 0.99:
            assert trial["verdict"] == "pass"
    kpis = [e for e in doc["kpis"] if e["source"] == "vnf__0"]
    assert kpis and {"packets_in", "packets_fwd", "packets_dropped"} <= set(kpis[0]["kpis"])
    logs = tmp_path / "results" / task_id / "logs"
    assert "PROX double" in (logs / "tg__0-prox-log.log").read_text()  # its -l log, kept
    assert (logs / "vnf__0-prox.log").exists() and (logs / "vnf__0-prox-log.log").exists()
    assert leftovers(task_id) == []


def bad_prox(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-prox"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


def one_line_error(done) -> str:
    assert done.returncode == 3, done.stderr  # a run-time failure, not bad input
    lines = [line for line in done.stderr.splitlines() if line.startswith("nsb: error")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


def test_missing_prox_binary_stops_the_run_before_traffic(results_conf, tmp_path):
    done = run_sample(results_conf, {"prox_path": "/opt/nowhere/prox", "packet_sizes": [64]})
    error = one_line_error(done)
    assert "pre-flight checks failed, no traffic was sent" in error
    assert "vnf_0: binary /opt/nowhere/prox: FAILED: not found" in error
    assert "tg_0: binary /opt/nowhere/prox: FAILED: not found" in error
    assert not [line for line in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                text=True).stdout.splitlines()
                if line.startswith("nsb-")]


def test_prox_exiting_during_start_shows_its_log(results_conf, tmp_path):
    prox = bad_prox(tmp_path, 'echo "EAL: Cannot init memory (simulated)"\nexit 1\n')
    done = run_sample(results_conf, {"prox_path": str(prox), "packet_sizes": [64]})
    error = one_line_error(done)
    assert "vnf__0: PROX exited with code 1 while starting" in error
    assert "EAL: Cannot init memory (simulated)" in error


def test_prox_socket_that_never_opens_names_the_timeout(results_conf, tmp_path):
    results_conf.write_text(results_conf.read_text() + "vnf_start_timeout = 2\n")
    prox = bad_prox(tmp_path, "echo starting\nexec sleep 600\n")
    done = run_sample(results_conf, {"prox_path": str(prox), "packet_sizes": [64]})
    error = one_line_error(done)
    assert "control socket (TCP 8474 on node vnf_0) did not open within 2 s" in error
    task_id = done.stderr.split("task ")[1].split(":")[0]
    assert leftovers(task_id) == []
