"""A noisy neighbour in the lab, for real: stress-ng pinned to testpmd's core while TRex
measures testpmd's receive rate, alternating with trials without it. What ran where is
read back from the node; the answer's numbers are its trials'; the neighbour is gone
afterwards; a CPU the node does not have is one located line."""

from __future__ import annotations

import statistics
import subprocess

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
