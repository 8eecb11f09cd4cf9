"""A noisy neighbour in the lab, for real: stress-ng pinned to testpmd's core while TRex
measures testpmd's receive rate, alternating with trials without it. What ran where is
read back from the node; the answer's numbers are its trials'; the neighbour is gone
afterwards; a CPU the node does not have is one located line."""

from __future__ import annotations

import statistics
import subprocess
import time

import pytest

from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

SAMPLE = ROOT / "samples" / "neighbour" / "tc_testpmd_noisy_neighbour.yaml"


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


def test_a_neighbour_on_the_dut_s_core_is_measured_with_what_ran_where(results_conf,
                                                                       tmp_path):
    proc = start(results_conf, {"trials": 2, "cpus": "1"}, task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    n = result["neighbour"]
    # the kernel's own word on where it ran: stress-ng's parent and its one worker on CPU 1
    assert n["ran"]["node"] == "sut" and n["ran"]["stressor"] == "cpu"
    assert n["ran"]["workers"] == 1 and n["ran"]["cpus_allowed"] == ["1"]
    # the answer is the trials': alternating without / with, their receive rates
    trials = doc["trials"]
    assert [("with the" in t["reason"]) for t in trials] == [False, True, False, True]
    assert n["without"]["receive_rates_pps"] == pytest.approx(
        [t["rx_rate_pps"] for t in trials[0::2]])
    assert n["with"]["mean_pps"] == pytest.approx(
        statistics.fmean(t["rx_rate_pps"] for t in trials[1::2]))
    drop = 100 * (n["without"]["mean_pps"] - n["with"]["mean_pps"]) / n["without"]["mean_pps"]
    assert n["drop_pct"] == pytest.approx(drop)
    assert n["within_spread"] == (abs(drop) <= n["spread_pct"])
    assert n["reported_drop_pct"] == (0.0 if n["within_spread"] else pytest.approx(drop))
    assert "Neighbour" in out and "cpu x1 on CPU 1 of sut" in out
    assert leftovers(task_id) == []
    assert subprocess.run(["pgrep", "-f", f"nsb-{task_id}-neighbour"]).returncode == 1


def test_a_neighbour_on_a_cpu_the_node_lacks_is_one_located_line(results_conf):
    proc = start(results_conf, {"cpus": "1,4096"}, task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if "4096" in line]
    assert len(lines) == 1 and "tc_testpmd_noisy_neighbour.yaml" in lines[0]
    assert "neighbour" in lines[0] and "Traceback" not in err


@pytest.mark.slow  # 12 s; the search's logic against DUTs of known NDR is a unit test
def test_ndr_searches_with_and_without_the_neighbour(results_conf, tmp_path):
    """measure: ndr: each of the trials with and without is a binary search; its NDR is
    its highest trial that lost nothing, every trial above that in its search lost
    frames, and the drop is those NDRs'."""
    # 1 % of 10 Gbit/s is 148,810 pps: below TRex's pace over veth here (about 170,000),
    # above testpmd's with the neighbour on its core (about 93,000)
    proc = start(results_conf, {"trials": 2, "cpus": "1", "measure": "ndr", "duration_s": 1,
                                "precision_pct": 20, "link": "veth", "rate_pct": 1,
                                "lower_pct": 0.05}, task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    assert leftovers(task_id) == []
    if result["limited_by"] == "generator":  # a loaded machine: TRex could not send 1 %
        assert "the generator could not send" in result["limited_reason"]
        assert any(t["verdict"] == "generator_limited" for t in doc["trials"])
        return
    n = result["neighbour"]
    assert n["measure"] == "ndr" and n["ran"]["cpus_allowed"] == ["1"]
    searches: dict[str, list] = {}
    for trial in doc["trials"]:  # each search's trials, by the reason's words
        searches.setdefault(trial["reason"].split(": NDR search")[0], []).append(trial)
    assert len(searches) == 4, list(searches)
    found = {"without": [], "with": []}
    for name, trials in searches.items():
        passed = [t for t in trials if t["verdict"] == "pass"]
        best = max(passed, key=lambda t: t["requested_rate_pct"])
        assert all(t["verdict"] == "fail" for t in trials
                   if t["requested_rate_pct"] > best["requested_rate_pct"])
        assert all(t["rx_packets"] == t["tx_packets"] for t in passed)
        found["with" if "with the" in name else "without"].append(best["rx_rate_pps"])
    for key in found:
        assert n[key]["receive_rates_pps"] == pytest.approx(found[key])


def _neighbour_namespaces(proc, seen: dict) -> None:
    """Until ``proc`` ends: the network namespace (``ip netns identify``) of every
    stress-ng process of an nsb neighbour on this machine, and the CPUs it may run on."""
    from pathlib import Path

    while proc.poll() is None:
        for entry in Path("/proc").iterdir():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                if not (cmdline.startswith("stress-ng") and "-neighbour.log" in cmdline):
                    continue
                allowed = next(line.split()[1] for line in (entry / "status").read_text()
                               .splitlines() if line.startswith("Cpus_allowed_list"))
            except (OSError, StopIteration, ValueError):
                continue
            netns = subprocess.run(["ip", "netns", "identify", entry.name],
                                   capture_output=True, text=True).stdout.strip()
            seen[entry.name] = (netns, allowed)
        time.sleep(0.1)


@pytest.mark.slow  # 50 s: the lab's neighbour test is in make test
def test_a_neighbour_on_an_ssh_pod_runs_on_the_dut_s_server(results_conf, tmp_path):
    """The sample on a pod over SSH: testpmd and the neighbour on vnf_0, TRex on tg_0.
    The host's own /proc sees the neighbour's processes in vnf_0's namespace (where its
    sshd runs) on the CPU asked; the answer is the trials'; nothing is left there."""
    import threading

    from tests.functional.test_baremetal_sample import lab_pod, started_by_nsb

    with lab_pod(tmp_path, names=("tg_0", "vnf_0")) as (pod, nodes):
        proc = start(results_conf, {"pod": str(pod), "trex_path": str(
            ROOT.parent / "shared" / "tools" / "trex"), "trials": 2, "cpus": "1"},
            task=SAMPLE, env=env_with_trex())
        seen: dict = {}
        watcher = threading.Thread(target=_neighbour_namespaces, args=(proc, seen),
                                   daemon=True)
        watcher.start()
        out, err = proc.communicate(timeout=900)
        watcher.join(5)
        assert proc.returncode == 0, err
        task_id, doc = results_of(tmp_path / "results")
        for node in nodes.values():
            assert started_by_nsb(node, ("testpmd", "stress-ng", "t-rex-64")) == []
        sut_netns = nodes["sut"].netns
    (result,) = doc["results"]
    ran = result["neighbour"]["ran"]
    assert ran["node"] == "vnf_0" and ran["runs_in"].startswith("node vnf_0 (root@"), ran
    assert ran["workers"] == 1 and ran["cpus_allowed"] == ["1"], ran
    assert seen and all(found == (sut_netns, "1") for found in seen.values()), seen
    trials = doc["trials"]
    assert [("with the" in t["reason"]) for t in trials] == [False, True, False, True]
    assert result["neighbour"]["with"]["receive_rates_pps"] == pytest.approx(
        [t["rx_rate_pps"] for t in trials[1::2]])
    assert "cpu x1 on CPU 1 of vnf_0" in out
    assert leftovers(task_id) == []
