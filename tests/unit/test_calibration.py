"""--calibrate's twin: the task's lab with only the generator, its ports cabled to each
other, each cps scenario without its VNFs; its answers become the ceilings."""

from __future__ import annotations

import pytest

from nsb import calibration
from nsb.errors import TaskError
from nsb.task import loader
from tests.conftest import ROOT

SAMPLES = ROOT / "samples" / "stateful"


def _task(name: str, **args):
    return loader.load(SAMPLES / name, {"generator_ceiling_cps": 1, **args})


def test_the_twin_is_the_generator_port_to_port_without_the_dut():
    task = _task("tc_astf_cps_nftables_nat.yaml")
    twin = calibration.twin(task)
    assert set(twin.context.options["nodes"]) == {"tg"}
    assert twin.context.options["links"] == [["tg:xe0", "tg:xe1"]]
    (scenario,) = twin.scenarios
    assert scenario.name == "cps_nat_calibration" and scenario.vnfs == ()
    assert scenario.generator == task.scenarios[0].generator
    assert "generator_ceiling_cps" not in scenario.profile.options
    assert scenario.profile.options["program"] == "tcp_cps"


def test_the_ceilings_go_to_the_scenarios_they_were_measured_for():
    task = _task("tc_astf_cps_nftables_nat.yaml")
    found = calibration.ceilings([{"scenario": "cps_nat_calibration",
                                   "stateful": {"kind": "cps", "cps": 45250.0}},
                                  {"scenario": "other", "stateful": None}])
    assert found == {"cps_nat_calibration": 45250.0}
    (scenario,) = calibration.with_ceilings(task, found).scenarios
    assert scenario.profile.options["generator_ceiling_cps"] == 45250.0


@pytest.mark.parametrize("name, words", [
    ("tc_astf_sessions_nftables.yaml", "ceiling for 'cps' scenarios; this task has none"),
    ("tc_astf_http_firewall_pod.yaml", "takes the DUT out in the embedded lab (netns context)"),
])
def test_a_task_nsb_cannot_calibrate_is_one_located_line(name, words):
    task = loader.load(SAMPLES / name, {})
    with pytest.raises(TaskError) as raised:
        calibration.twin(task)
    assert words in str(raised.value) and raised.value.line is not None
