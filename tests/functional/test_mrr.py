"""MRR in the lab: the quick-start sample with --rate mrr, TRex into testpmd over memif.
Each trial's receive rate is its frames received over the seconds TRex sent them, the
answer their mean and standard deviation, and the frames TRex received are what
testpmd sent (its own telemetry)."""

from __future__ import annotations

import statistics

import pytest

from tests.conftest import requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex


def test_mrr_is_the_mean_of_the_trials_receive_rates_and_testpmd_sent_them(results_conf,
                                                                          tmp_path):
    requires_root()
    requires_trex()
    proc = start(results_conf, {"packet_sizes": [64]}, "--rate", "mrr", env=env_with_trex())
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    trials = doc["trials"]
    assert len(trials) == 10 and all(t["duration_s"] == 1 for t in trials)
    (result,) = doc["results"]
    mrr = result["mrr"]
    rates = [t["rx_packets"] / t["elapsed_s"] for t in trials]
    assert mrr["receive_rates_pps"] == pytest.approx(rates)
    assert result["throughput_pps"] == pytest.approx(statistics.fmean(rates))
    assert mrr["stdev_pps"] == pytest.approx(statistics.stdev(rates))
    testpmd = [k["kpis"] for k in doc["kpis"] if k["source"] == "testpmd0"][-1]
    assert testpmd["port0_opackets"] + testpmd["port1_opackets"] == \
        sum(t["rx_packets"] for t in trials)
    if result["limited_by"] == "generator":  # over memif TRex is slowed, never dropped:
        assert "the generator and the DUT cannot be told apart" in result["limited_reason"]
    assert leftovers(task_id) == []
