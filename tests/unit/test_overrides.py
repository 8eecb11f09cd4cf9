"""--frame-size and --duration for any task and profile."""

import re

import pytest

from nsb.errors import TaskError
from nsb.task import loader, overrides
from tests.conftest import SAMPLE

PROX_SAMPLE = SAMPLE.parent / "prox" / "tc_prox_l3fwd.yaml"


def _profile(task):
    return task.scenarios[0].profile


def test_binsearch_gets_frame_sizes_and_duration():
    task = overrides.apply(loader.load(SAMPLE), [128, 256], 7.0)
    assert _profile(task).options["packet_sizes"] == [128, 256]
    assert _profile(task).options["duration"] == 7.0


def test_nsb_profile_files_too():
    task = overrides.apply(loader.load(PROX_SAMPLE, {"context": "netns"}), [64], 10)
    assert _profile(task).options["packet_sizes"] == [64]
    assert _profile(task).options["duration"] == 10


@pytest.mark.parametrize("kind, key", [("fastndr", "final_trial_duration")])
def test_the_full_length_trials_of_fastndr(kind, key, tmp_path):
    text = SAMPLE.read_text()
    start = text.index("    traffic_profile:")
    end = text.index("    runner:")
    task_file = tmp_path / "t.yaml"
    task_file.write_text(text[:start] + f"    traffic_profile: {{type: {kind}}}\n" + text[end:])
    task = overrides.apply(loader.load(task_file), None, 30)
    assert _profile(task).options[key] == 30


def test_mlrsearch_goals_get_the_duration(tmp_path):
    text = SAMPLE.read_text()
    start, end = text.index("    traffic_profile:"), text.index("    runner:")
    task_file = tmp_path / "t.yaml"
    task_file.write_text(text[:start] + "    traffic_profile: {type: mlrsearch, goals: "
                         "[{name: NDR}, {name: PDR, loss_ratio: 0.005}]}\n" + text[end:])
    goals = _profile(overrides.apply(loader.load(task_file), None, 20)).options["goals"]
    assert [(g["name"], g["final_trial_duration"], g["duration_sum"]) for g in goals] == [
        ("NDR", 20, 20), ("PDR", 20, 20)]


def test_bad_overrides_are_one_line(nsb_main):
    with pytest.raises(TaskError, match="--frame-size: 32 is below the minimum"):
        overrides.apply(loader.load(SAMPLE), [32], None)
    code, _, err = nsb_main("task", "validate", str(SAMPLE), "--duration", "0")
    assert code == 2 and err.strip() == ("nsb: error: --duration: must be a positive number "
                                         "of seconds, got 0")


@pytest.mark.parametrize("rate, kind, expected", [
    ("50%", "fixed", {"rate_pct": 50.0}),
    ("2Mpps", "fixed", {"rate_pps": 2e6}),
    ("500kpps", "fixed", {"rate_pps": 5e5}),
    ("ndr_pdr", "mlrsearch", {}),
    ("mrr", "mrr", {}),
])
def test_rate_replaces_the_search_keeping_the_task_s_traffic(rate, kind, expected):
    spec = _profile(overrides.apply(loader.load(SAMPLE), None, None, rate))
    assert spec.type == kind
    assert spec.options["packet_sizes"] == [64, 512, 1518]
    assert spec.options["interface_speed_gbps"] == 1
    for key, value in expected.items():
        assert spec.options[key] == value
    if kind == "fixed":
        assert spec.options["duration"] == 2 and spec.options["tolerated_loss_pct"] == 0.01
    elif kind == "mrr":  # CSIT's trials, not the task's: 10 of 1 s at line rate
        assert set(spec.options) == {"packet_sizes", "interface_speed_gbps"} | (
            {"flows"} & set(spec.options))
    else:
        assert [g["name"] for g in spec.options["goals"]] == ["NDR", "PDR"]
        assert spec.options["goals"][0]["final_trial_duration"] == 2


def test_rate_ndr_keeps_the_task_s_search_and_bad_rates_are_one_line(nsb_main):
    assert _profile(overrides.apply(loader.load(SAMPLE), None, None, "ndr")).type == "binsearch"
    code, _, err = nsb_main("task", "validate", str(SAMPLE), "--rate", "fast")
    assert code == 2 and err.startswith("nsb: error: --rate: 'fast' is not a rate")
    code, out, err = nsb_main("task", "start", "--dry-run", str(SAMPLE), "--rate", "10%")
    assert code == 0 and "type: fixed" in out and "rate_pct: 10.0" in out, err


def test_frame_size_imix_and_its_mix_from_the_task(nsb_main, tmp_path):
    task = overrides.apply(loader.load(SAMPLE), ["64", "imix"], None)
    assert _profile(task).options["packet_sizes"] == [64, "IMIX"]
    for bad, says in (("big", "'big' is not a frame size; give bytes (64-9216) or IMIX"),
                      ("10000", "10000 is above the largest frame nsb sends (9216)")):
        with pytest.raises(TaskError, match=re.escape(f"--frame-size: {says}")):
            overrides.apply(loader.load(SAMPLE), [bad], None)
    text = SAMPLE.read_text()
    start, end = text.index("    traffic_profile:"), text.index("    runner:")
    task_file = tmp_path / "t.yaml"
    task_file.write_text(text[:start] + "    traffic_profile:\n      type: binsearch\n"
                         "      imix: {64: 100, 1518: 40}\n" + text[end:])
    code, _, err = nsb_main("task", "start", "--dry-run", str(task_file), "--frame-size", "IMIX")
    line = text[:start].count("\n") + 3
    assert code == 2 and err.strip() == (
        f"nsb: error: {task_file}:{line}: scenarios[0].traffic_profile.imix: the weights add "
        "up to 140; at most 128 frames make one cycle (divide them by a common factor)")
    # the mix goes with the frame sizes when --rate replaces the search
    task_file.write_text(text[:start] + "    traffic_profile:\n      type: binsearch\n"
                         "      packet_sizes: [IMIX]\n      imix: aaag\n" + text[end:])
    spec = _profile(overrides.apply(loader.load(task_file), None, None, "10%"))
    assert spec.options["packet_sizes"] == ["IMIX"] and spec.options["imix"] == "aaag"


def test_nsbs_trex_task_shows_the_overridden_duration_in_its_plan(nsb_main, tmp_path):
    """NSB's vFW TRex task (its profile's duration comes from the scenario's options,
    30 s): --duration 2 is what the plan shows and what the trials get."""
    import yaml

    from tests.unit.nsb_pods import lab

    task = lab(tmp_path) / "samples/vnf_samples/nsut/vfw/" \
        "tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml"
    code, out, err = nsb_main("task", "start", "--dry-run", "--duration", "2", str(task))
    assert code == 0, err
    profile = yaml.safe_load(out)["scenarios"][0]["traffic_profile"]
    assert profile["type"] == "RFC2544Profile" and profile["duration"] == 2.0
    assert profile["enable_latency"] is False  # NSB's: the trials go without latency streams
