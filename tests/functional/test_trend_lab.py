"""A trend over real lab runs: MRR of testpmd, then a slower testpmd, same test.

TRex sends over veth (af_packet) into testpmd in noisy forwarding: each frame costs
testpmd `reads` random memory reads, so testpmd, not TRex, bounds the receive rate and
drops the rest (veth does not push back, as memif does). The history is five runs of
one task file with the same args; before the fourth the DUT gets slower (3x the reads
per frame, the way a new build that does more per frame would), as an engineer's
daily runs would see it. `nsb report trend` must put the step at the fourth run and
call the newest run a regression, and `task gate --trend` must exit 4 at the first
slower run (judged by the history up to it) and at the newest. Whether three noisy
baseline runs are one group is jumpavg's call (tests/unit/test_trend.py checks the
gate before a step on a synthetic history).

On this machine's two shared CPUs testpmd cannot be given more than its one
forwarding core beside TRex's, so the slower DUT is more work per frame, not fewer
cores. The rates measured here: about 48 kpps at 1,000 reads, 25 kpps at 3,000.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.conftest import requires_root
from tests.functional.lab import NSB, leftovers
from tests.functional.trex_lab import env_with_trex, requires_trex

FAST, SLOW = 1000, 3000
RUNS = [FAST, FAST, FAST, SLOW, SLOW]

TASK = """schema: "nsb:task:0.1"
description: testpmd doing {reads} memory reads per frame, MRR over veth
context:
  type: netns
  nodes:
    tg: {{role: TrafficGen, interfaces: {{xe0: {{type: veth}}, xe1: {{type: veth}}}}}}
    sut: {{role: Sut, interfaces: {{xe0: {{type: veth}}, xe1: {{type: veth}}}}}}
  links: [[tg:xe0, sut:xe0], [sut:xe1, tg:xe1]]
scenarios:
  - name: noisy_testpmd
    vnfs:
      - name: testpmd0
        type: testpmd
        node: sut
        options:
          forward_mode: noisy
          noisy_lookups: {{reads: {reads}, memory_mb: 1}}
    traffic_generator:
      name: tg0
      type: trex
      node: tg
      options: {{flows: 16, low_end_core: 0}}
    traffic_profile:
      type: mrr
      packet_sizes: [64]
      trials: {{{{ trials | default(4) }}}}
      duration: 1
      interface_speed_gbps: 1
outputs:
  - type: file
"""


def nsb(results_conf, *argv) -> subprocess.CompletedProcess:
    return subprocess.run(NSB + ["--config-file", str(results_conf), *argv],
                          capture_output=True, text=True, timeout=600, env=env_with_trex())


@pytest.mark.slow  # 80 s of lab runs; the trend's detection is unit-tested (test_trend*)
def test_a_slower_dut_in_the_lab_history_is_a_regression_found_at_its_first_run(
        results_conf, tmp_path):
    requires_root()
    requires_trex()
    task = tmp_path / "tc_noisy_testpmd_mrr.yaml"
    task_ids, rates = [], []
    for reads in RUNS:
        task.write_text(TASK.format(reads=reads))  # the same test, a changed DUT
        run = nsb(results_conf, "task", "start", str(task), "--task-args",
                  json.dumps({"trials": 6}))
        assert run.returncode == 0, run.stderr
        newest = max((tmp_path / "results").glob("*/results.json"))
        doc = json.loads(newest.read_text())
        (result,) = doc["results"]
        assert result["limited_by"] == "dut", result  # testpmd dropped what it could not do
        task_ids.append(doc["task"]["id"])
        rates.append(result["throughput_pps"])
        assert leftovers(task_ids[-1]) == []
    assert max(rates[3:]) < min(rates[:3]), rates  # the DUT really got slower

    trend = nsb(results_conf, "report", "trend", "--format", "json")
    assert trend.returncode == 0, trend.stderr
    (found,) = json.loads(trend.stdout)
    assert [p["task_id"] for p in found["points"]] == task_ids
    # the step's group begins at the first slower run and holds every slower run; where
    # the baseline's own noise splits it (one run 28 % above the others, once) is
    # jumpavg's call on real noise, so only the groups' order is asserted before it
    step = found["groups"][-1]
    assert (step["first"], step["last"], step["comment"]) == \
        (task_ids[3], task_ids[-1], "regression"), (rates, found)
    assert all(g["last"] in task_ids[:3] for g in found["groups"][:-1]), (rates, found)
    assert found["newest"] == "regression" and found["change_pct"] < -20, found
    gate = nsb(results_conf, "task", "gate", task_ids[-1], "--trend")
    assert gate.returncode == 4, gate.stdout + gate.stderr
    # flagged on the day the DUT got slower, judged by the history up to that run
    assert nsb(results_conf, "task", "gate", task_ids[3], "--trend").returncode == 4
