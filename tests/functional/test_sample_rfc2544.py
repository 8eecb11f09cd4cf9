"""The embedded-lab sample for real: namespaces, veth, dpdk-testpmd, trafgen, probe."""

import signal
import time

import pytest

from tests.conftest import requires_root
from tests.functional.answers import check_consistent
from tests.functional.lab import leftovers, results_of, start


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def check_nfvi_samples(doc):
    """testpmd busy-polls: its process and a core of its node show up as busy."""
    trials = {t["trial_index"] for t in doc["trials"]}
    testpmd = [k for k in doc["kpis"] if k["source"] == "nfvi:testpmd0"]
    assert testpmd and {k["trial_index"] for k in testpmd} <= trials
    assert max(k["kpis"]["cpu_user_pct"] + k["kpis"]["cpu_system_pct"] for k in testpmd) > 50
    assert all(k["kpis"]["rss_kb"] > 0 for k in testpmd)
    node = [k for k in doc["kpis"] if k["source"] == "node:sut"]
    assert node and max(max(k["kpis"].values()) for k in node) > 50
    assert all(key.startswith("cpu") and key.endswith("_util_pct") for key in node[0]["kpis"])


def test_sample_runs_and_reports_consistent_results(results_conf, tmp_path):
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0.25\n")
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64, 1518]})
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    check_consistent(doc)
    check_nfvi_samples(doc)
    assert [r["frame_size"] for r in doc["results"]] == [64, 1518]
    assert "Throughput (pps)" in out and "% line rate" in out and "results.json" in out
    assert "1518" in out
    # platform facts and testpmd's port counters as KPIs
    assert doc["platform"]["sut"]["cpus"] >= 1 and doc["platform"]["sut"]["kernel"]
    # the version the running testpmd reports through telemetry, beside the package's
    assert doc["platform"]["sut"]["versions"]["testpmd0: DPDK"].startswith("DPDK 22.11")
    assert doc["platform"]["sut"]["os_release"]
    assert doc["platform"]["sut"]["numa_layout"]  # CPUs per NUMA node, as lscpu reports
    nic = doc["platform"]["sut"]["nics"]["xe0"]
    assert nic["driver"] == "veth"
    assert nic["mac"] == doc["plan"]["context"]["nodes"]["sut"]["interfaces"]["xe0"]["mac"]
    counters = [k for k in doc["kpis"] if k["source"] == "testpmd0"]
    assert len(counters) == len(doc["trials"])  # one after every trial
    last = counters[-1]["kpis"]
    assert last["port0_ipackets"] > 0 and last["port1_opackets"] > 0
    # testpmd's log is kept with the results
    log = (tmp_path / "results" / task_id / "logs" / "testpmd0-testpmd.log").read_text()
    assert "io packet forwarding" in log
    assert leftovers(task_id) == []


def test_macswap_unidirectional_many_flows(results_conf, tmp_path):
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [256],
                                "forward_mode": "macswap", "bidirectional": False,
                                "flows": 1000})
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    check_consistent(doc)
    assert {t["flows"] for t in doc["trials"]} == {1000}
    assert all(sum(p["tx_packets"] > 0 for p in t["ports"].values()) == 1
               for t in doc["trials"])
    assert leftovers(task_id) == []


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_killed_mid_trial_leaves_nothing_behind(results_conf, tmp_path, signum, code):
    proc = start(results_conf, {"duration_s": 5, "packet_sizes": [64]})
    events = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = list((tmp_path / "results").glob("*/events.jsonl"))
        if found and '"TrialStarted"' in found[0].read_text():
            events = found[0]
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    assert events, "no trial started within 60 s"
    time.sleep(1.0)  # mid-trial: trafgen, the probe and testpmd are all running
    task_id = events.parent.name
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "interrupted" in err and "Traceback" not in err
    _, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "interrupted"
    assert leftovers(task_id) == []


def test_a_missed_sla_exits_4_with_junit_after_a_real_run(results_conf, tmp_path):
    """The run itself succeeds; the SLA (a latency no veth lab reaches: 10 ns on
    average) is missed: exit 4, not the 2 of bad input, the 3 of a broken lab or the 5
    of a throughput the generator set, and JUnit a parser reads. A fixed rate the
    generator keeps: an answer its generator set (or a search's confirmation it sent
    short) is not comparable, exit 5."""
    from junitparser import Failure, JUnitXml

    junit = tmp_path / "sla.xml"
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64]}, "--rate", "0.5%",
                 "--sla", "latency_avg_us<=0.01@64", "--sla", "loss_pct<=0.01",
                 "--junit", str(junit), "--label", "ci")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 4, err
    errors = [line for line in err.splitlines() if line.startswith("nsb: error")]
    assert len(errors) == 1 and errors[0].startswith(
        "nsb: error: SLA missed (1 of 2 checks): latency_avg_us<=0.01@64: testpmd_rfc2544 "
        "64 B: latency_avg_us = "), err
    assert "SLA loss_pct<=0.01: testpmd_rfc2544 64 B: loss_pct = " in out and ", met" in out
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    assert suite.tests == 2 and suite.failures == 1 and suite.errors == 0
    failed = [case for case in suite if case.result]
    assert isinstance(failed[0].result[0], Failure)
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok" and doc["task"]["label"] == "ci"
    assert leftovers(task_id) == []


def test_imix_reaches_the_dut_in_its_proportions(results_conf, tmp_path):
    """IMIX through testpmd: the bytes per frame testpmd received are the mix's mean
    (less the FCS a veth does not carry), with the 64 B latency probes mixed in."""
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64, "IMIX"]},
                 "--rate", "1%")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert [r["frame_size"] for r in doc["results"]] == [64, "IMIX"]
    imix = doc["results"][1]
    mean = (7 * 64 + 4 * 594 + 1518) / 12
    assert imix["frame_mix"] == {"label": "IMIX", "weights": {"64": 7, "594": 4, "1518": 1},
                                 "avg_size": round(mean, 2), "cycle": 12}
    assert imix["throughput_mbps"] == pytest.approx((mean + 20) * 8 * imix["throughput_pps"]
                                                    / 1e6)
    [trial] = [t for t in doc["trials"] if t["frame_size"] == "IMIX"]
    assert trial["requested_rate_pps"] == pytest.approx(0.01 * 2 * 1e9 / 8 / (mean + 20))
    counters = [k["kpis"] for k in doc["kpis"] if k["source"] == "testpmd0"]
    before, after = counters[0], counters[1]  # after the 64 B trial, after the IMIX trial
    frames_in = sum(after[f"port{p}_ipackets"] - before[f"port{p}_ipackets"] for p in (0, 1))
    bytes_in = sum(after[f"port{p}_ibytes"] - before[f"port{p}_ibytes"] for p in (0, 1))
    probes = trial["extra"]["probe_packets"]
    expected = ((frames_in - probes) * (mean - 4) + probes * 60) / frames_in
    assert bytes_in / frames_in == pytest.approx(expected, rel=0.02)
    assert "IMIX" in out
    assert leftovers(task_id) == []
