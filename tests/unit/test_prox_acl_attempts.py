"""NSB's ProxACLProfile files load with their ``attempts``: that many trials at
upper_bound per frame size, then the next size."""

import shutil
from pathlib import Path

import pytest
import yaml

from nsb import units
from nsb.errors import TaskError
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.acl import AclProfile
from nsb.traffic_profiles.measurer import Measurer
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator

REPO = Path(__file__).resolve().parents[2]
# NSB's ACL profile files (prox_acl.yaml, prox_heat_acl.yaml) as its samples write them,
# and with attempts
PROFILES = {
    "prox_acl.yaml": {"tolerated_loss": 100.0, "test_precision": 1.0, "packet_sizes": [64],
                      "duration": 5, "lower_bound": 0.0, "upper_bound": 100.0},
    "prox_heat_acl.yaml": {"tolerated_loss": 100.0, "test_precision": 0.001,
                           "packet_sizes": [64], "duration": 5, "lower_bound": 0.0,
                           "upper_bound": 0.5},
    "prox_acl_attempts.yaml": {"tolerated_loss": 100.0, "test_precision": 1.0,
                               "packet_sizes": [64, 128], "duration": 5, "lower_bound": 0.0,
                               "upper_bound": 100.0, "attempts": 3},
}


@pytest.mark.parametrize("name", PROFILES)
def test_nsb_acl_profiles_dry_run(nsb_main, tmp_path, name):
    shutil.copytree(REPO / "samples" / "prox", tmp_path / "prox")
    profile = {"schema": "nsb:traffic_profile:0.1", "name": name[:-5],
               "description": "ACL max no-drop throughput over given packet sizes",
               "traffic_profile": {"traffic_type": "ProxACLProfile", **PROFILES[name]}}
    (tmp_path / "prox" / name).write_text(yaml.safe_dump(profile, sort_keys=False))
    task = tmp_path / "prox" / "tc_prox_l3fwd.yaml"
    task.write_text(task.read_text().replace("traffic_profile: prox_binsearch.yaml",
                                             f"traffic_profile: {name}"))
    code, out, err = nsb_main("task", "start", "--dry-run", str(task),
                              "--task-args", '{"context": "netns"}')
    assert code == 0, err
    shown = yaml.safe_load(out)["scenarios"][0]["traffic_profile"]
    assert shown["type"] == "ProxACLProfile"
    assert shown.get("attempts") == PROFILES[name].get("attempts")
    assert shown["upper_bound"] == PROFILES[name]["upper_bound"]


def test_attempts_are_the_trials_of_each_frame_size():
    line = units.line_rate_pps(64, 10, ports=2)
    profile = make_profile(AclProfile, packet_sizes=[64, 128], upper_bound=50.0, duration=1,
                           tolerated_loss=100.0, interface_speed_gbps=10, attempts=3)
    events = []
    profile.execute(Measurer(SimulatedDutGenerator(0.3 * line), "t", "s", events.append))
    trials = [e for e in events if isinstance(e, TrialDone)]
    results = [e for e in events if isinstance(e, ResultReady)]
    assert [t.result.trial.frame_size for t in trials] == [64] * 3 + [128] * 3
    assert {t.rate_pct for t in trials} == {50.0}
    assert [(r.frame_size, r.extra["samples"]) for r in results] == [(64, 3), (128, 3)]


def test_attempts_below_one_are_refused():
    with pytest.raises(TaskError, match="attempts"):
        make_profile(AclProfile, packet_sizes=[64], attempts=0)
