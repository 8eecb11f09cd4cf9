"""The PROX plugins against the real PROX binary, in the embedded lab.

PROX is NSB_PROX_PATH, else ../shared/tools/prox/prox beside the checkout (`make
test` installs its runtime packages). Only where neither exists are these tests
skipped, with that reason. The lab has 2 CPUs shared by the generator and the
router, so the checks are about what is counted and how, not about rates.
"""

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from nsb import frames
from nsb.trial import Trial
from nsb.vnfs.prox.client import ProxClient
from tests.conftest import NSB, requires_root
from tests.functional.lab import results_of
from tests.functional.prox_lab import PROX, SAMPLE, lab_args, running_sample

pytestmark = pytest.mark.skipif(not PROX.is_file(),
                                reason=f"no PROX binary at {PROX} (set NSB_PROX_PATH)")
LAB_BUCKET_SIZE = 16  # latency bucket size in samples/prox/configs/gen_l3fwd-lab.cfg


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def start(results_conf, task: str, args: dict, timeout: float = 900):
    argv = NSB + ["--config-file", str(results_conf), "task", "start", task,
                  "--task-args", json.dumps(args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def one_error_line(done) -> str:
    assert done.returncode == 3, done.stderr  # a run-time failure, not bad input
    lines = [line for line in done.stderr.splitlines() if line.startswith("nsb: error")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def check_latency(lat: dict | None) -> None:
    if not lat:
        return
    shown = [lat["min_us"]] + [lat[k] for k in ("p50_us", "p90_us", "p99_us", "p99_9_us")
                               if k in lat] + [lat["max_us"]]
    assert 0 < lat["min_us"] <= lat["avg_us"] <= lat["max_us"]
    assert shown == sorted(shown), lat


def test_sample_end_to_end_with_real_prox(results_conf, tmp_path):
    # 1 Gbit/s "line rate": the lab forwards a few hundred kpps, 1-20 % of it
    done = start(results_conf, str(SAMPLE), lab_args(duration_s=1, precision=2, speed_gbps=1,
                                                     packet_sizes=[64, 512, 1518]))
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok"
    assert [r["frame_size"] for r in doc["results"]] == [64, 512, 1518]
    # what the running PROX instances say they are (its `version` command)
    versions = {**doc["platform"]["tg_0"]["versions"], **doc["platform"]["vnf_0"]["versions"]}
    assert versions["tg__0: PROX"] == versions["vnf__0: PROX"] and versions["vnf__0: DPDK"]
    for trial in doc["trials"]:
        lost = trial["tx_packets"] - trial["rx_packets"]
        assert lost >= 0, trial  # the lat tasks never count more than the gen tasks sent
        if lost == 0:  # a trial PROX counts loss-free is never failed
            assert trial["verdict"] in ("pass", "generator_limited"), trial
        else:
            assert trial["verdict"] == "fail", trial
        assert trial["extra"]["in_flight_packets"] == 0, trial
        assert trial["elapsed_s"] >= trial["duration_s"]
        assert sum(p["tx_packets"] for p in trial["ports"].values()) >= trial["tx_packets"]
        check_latency(trial["latency"])
    for result in doc["results"]:
        assert result["throughput_pps"] > 0 and result["loss_pct"] == 0.0, result
        backing = [t for t in doc["trials"] if t["frame_size"] == result["frame_size"]
                   and t["tx_rate_pps"] == pytest.approx(result["throughput_pps"])]
        assert backing and backing[0]["rx_packets"] == backing[0]["tx_packets"]
        check_latency(result["latency"])
    logs = tmp_path / "results" / task_id / "logs"
    for vnf in ("tg__0", "vnf__0"):  # PROX's own log (-l) is kept with its console output
        assert "PROX" in (logs / f"{vnf}-prox-log.log").read_text()


def fresh_counts(client: ProxClient, gen_tasks, lat_tasks) -> tuple[int, int, int]:
    """(tx, rx, tsc_hz) from a snapshot PROX took after this call started."""
    def read():
        gen = [client.core_stats(t.core, t.task) for t in gen_tasks]
        lat = [client.core_stats(t.core, t.task) for t in lat_tasks]
        return min(s.tsc for s in gen + lat), sum(s.tx for s in gen), sum(s.rx for s in lat), \
            gen[0].hz

    first = read()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = read()
        if now[0] != first[0]:
            return now[1], now[2], now[3]
    raise AssertionError("PROX took no new snapshot within 5 s")


def test_every_trial_counts_what_a_second_client_reads(tmp_path):
    """nsb's tx/rx of each trial are PROX's own counters, read by another connection."""
    with running_sample(tmp_path) as scenario:
        tg = scenario.generator
        second = ProxClient(tg.executor.connect_tcp(8474), "second client")
        try:
            trials = [Trial(64, 20_000, 1.0), Trial(64, 3_000_000, 1.0),
                      Trial(512, 50_000, 2.0), Trial(1518, 30_000, 0.5)]
            for trial in trials:
                result = tg.run_trial(trial)
                tx, rx, hz = fresh_counts(second, tg.gen_tasks, tg.lat_tasks)
                in_flight = result.extra["in_flight_packets"]
                assert tx == result.tx_packets, trial
                assert result.rx_packets <= rx <= result.rx_packets + in_flight, trial
                assert result.elapsed_s >= trial.duration_s
                # the rate is PROX's count over PROX's clock, not over the asked duration
                assert result.extra["rate_timed_by"] == "prox_tsc"
                assert result.tx_rate_pps == pytest.approx(tx / result.elapsed_s, rel=0.1)
                lat = result.latency
                if lat is not None and lat.histogram:
                    width_us = (1 << LAB_BUCKET_SIZE) / hz * 1e6
                    edges = [e for e, _ in lat.histogram[:-1] if e < lat.max_us]
                    assert all(abs(e / width_us - round(e / width_us)) < 1e-3 for e in edges)
                    pcts = [lat.percentiles_us[k] for k in ("p50", "p99")
                            if k in lat.percentiles_us]
                    assert [lat.min_us, *pcts, lat.max_us] == sorted([lat.min_us, *pcts,
                                                                      lat.max_us])
            low = tg.run_trial(Trial(64, 10_000, 1.0))
            assert low.lost_packets == 0 and not low.generator_limited  # 10 kpps is easy
        finally:
            second.close()


def test_a_config_naming_cores_the_node_lacks_stops_at_pre_flight(results_conf, tmp_path):
    online = open("/sys/devices/system/cpu/online").read().strip()
    missing = max(int(part.split("-")[-1]) for part in online.split(",")) + 3
    copy = tmp_path / "prox"
    shutil.copytree(SAMPLE.parent, copy)
    config = copy / "configs" / "gen_l3fwd-lab.cfg"
    config.write_text(config.read_text().replace("[core 1]", f"[core {missing}]"))
    done = start(results_conf, str(copy / SAMPLE.name), lab_args(packet_sizes=[64]))
    line = one_error_line(done)
    assert "pre-flight checks failed, no traffic was sent" in line
    assert f"names lcores {missing}, which the node does not have (online CPUs: {online})" \
        in done.stderr


def test_prox_exiting_at_start_is_one_line_quoting_why(results_conf, tmp_path):
    copy = tmp_path / "prox"
    shutil.copytree(SAMPLE.parent, copy)
    config = copy / "configs" / "gen_l3fwd-lab.cfg"
    text = config.read_text()
    # a lat task's mbufs too small for the af_packet port's 2048-byte frames: PROX's port
    # set-up fails and it panics
    lat = text.index("name=lat_p1")
    config.write_text(text[:lat] + text[lat:].replace("mbuf size=2560", "mbuf size=1024", 1))
    done = start(results_conf, str(copy / SAMPLE.name), lab_args(packet_sizes=[64],
                                                                 duration_s=1), timeout=120)
    line = one_error_line(done)
    assert "tg__0: PROX exited with code" in line and "while starting: " in line
    assert "will not fit in mbuf" in line or "rx_queue_setup" in line, line


def test_two_gen_tasks_on_one_core_are_one_line_before_prox_starts(results_conf, tmp_path):
    """PROX names a gen task's flow table after its core and panics at start on a second
    one ("Failed to set up flow_id hash table for gen", seen with this PROX): nsb says so
    at the config's second gen section, before anything starts."""
    copy = tmp_path / "prox"
    shutil.copytree(SAMPLE.parent, copy)
    config = copy / "configs" / "gen_l3fwd-lab.cfg"
    text = config.read_text()
    gen = text[text.index("[core 1]\nname=gen_p0"):text.index("[core 1]\nname=lat_p1")]
    second = gen.replace("name=gen_p0", "name=gen_p1").replace("task=0", "task=3").replace(
        "tx port=p0", "tx port=p1")
    config.write_text(text + "\n" + second)
    done = start(results_conf, str(copy / SAMPLE.name), lab_args(packet_sizes=[64],
                                                                 duration_s=1), timeout=120)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"{config}:" in line and "a second mode=gen task on core 1" in line, line
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").glob("*"))


def test_irq_test_samples_each_core_of_both_nodes(results_conf, tmp_path):
    """NSB's ProxIrqVNF/ProxIrqGen with ProxIrqProfile: no traffic, per-core
    interruption statistics as events per second, every second."""
    task = Path(__file__).resolve().parents[1] / "data" / "prox-irq" / "tc_prox_irq_lab.yaml"
    done = start(results_conf, str(task), {"prox_path": str(PROX), "duration_s": 6},
                 timeout=120)
    assert done.returncode == 0, done.stderr
    _, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok" and doc["trials"] == []
    for source in ("vnf__0", "tg__0"):
        samples = [k["kpis"] for k in doc["kpis"] if k["source"] == source]
        assert len(samples) >= 4, source
        assert all("core_1.max_irq" in kpis for kpis in samples)
        # PROX counts nothing in an irq task's first 2 s; after that the task spins on
        # the TSC, so nearly every gap is under 1 us, and both nodes share core 1 here,
        # so each is kept off it for milliseconds at a time
        for kpis in samples[-2:]:
            assert kpis["core_1.bucket_0"] > 1000 and kpis["core_1.max_irq"] > 1000
            assert all(v > 0 for k, v in kpis.items() if "bucket" in k)


def _link_bytes(namespace_part: str, ifname: str) -> tuple[int, int]:
    """(tx packets, tx bytes) of ``ifname`` in the lab namespace named with ``namespace_part``."""
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    (namespace,) = [n.split()[0] for n in names.splitlines() if namespace_part in n]
    links = json.loads(subprocess.run(["ip", "-n", namespace, "-s", "-j", "link", "show",
                                       ifname], capture_output=True, text=True).stdout)
    return links[0]["stats64"]["tx"]["packets"], links[0]["stats64"]["tx"]["bytes"]


def test_imix_is_sent_by_prox_in_its_proportions_and_pkt_size_undoes_it(tmp_path):
    """PROX's imix command (sizes without FCS) on every gen task: the generator's
    port sends the mix's mean size; a later single-size trial is that size again."""
    mix = frames.from_weights(frames.SIMPLE_IMIX)
    with running_sample(tmp_path) as scenario:
        tg = scenario.generator
        sent = []
        for frame in (mix, 128):
            before = _link_bytes("tg_0", "xe0")
            result = tg.run_trial(Trial(frame, 20_000, 1.0))
            after = _link_bytes("tg_0", "xe0")
            packets, octets = after[0] - before[0], after[1] - before[1]
            assert packets >= result.tx_packets // 2  # xe0 carries one of the two streams
            sent.append(octets / packets)
        assert sent[0] == pytest.approx(mix.avg_size - 4, rel=0.01)
        assert sent[1] == 124
