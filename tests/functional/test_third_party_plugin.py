"""A plugin package installed with pip is found by name and used by a task."""

import json
import subprocess
import sys

import pytest

from tests.conftest import NSB, ROOT

PACKAGE = ROOT / "tests" / "plugins" / "nsb_example_plugin"


@pytest.fixture(scope="module")
def example_plugin():
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run(pip + ["install", "--no-deps", "--no-build-isolation", str(PACKAGE)],
                   check=True)
    yield
    subprocess.run(pip + ["uninstall", "-y", "nsb-example-plugin"], check=True)


def test_plugin_list_shows_third_party_plugins(example_plugin):
    out = subprocess.run(NSB + ["plugin", "list"], capture_output=True, text=True,
                         check=True).stdout
    assert "example_sim_tg" in out
    assert "Example generator: a simulated DUT that forwards up to capacity_pps." in out
    assert "example_local" in out


TASK = """\
schema: "nsb:task:0.1"
context:
  type: example_local
  nodes:
    tg: {interfaces: {p0: {}, p1: {}}}
scenarios:
  - name: sim
    traffic_generator: {name: tg0, type: example_sim_tg, node: tg,
                        options: {capacity_pps: 123456}}
    traffic_profile: PROFILE
"""


def run_task(tmp_path, profile: str, text: str = TASK):
    """The example plugin's context and generator with this traffic profile (line 10),
    or the task ``text``."""
    task = tmp_path / "task.yaml"
    task.write_text(text.replace("PROFILE", profile))
    done = subprocess.run(NSB + ["task", "start", str(task), "--results-dir",
                                 str(tmp_path / "results")],
                          capture_output=True, text=True, timeout=120)
    return task, done


def test_task_runs_with_third_party_context_and_generator(example_plugin, tmp_path):
    _, done = run_task(tmp_path, "{type: binsearch, packet_sizes: [64, 256], duration: 1, "
                                 "test_precision: 0.05, interface_speed_gbps: 1}")
    assert done.returncode == 0, done.stderr
    (results_file,) = (tmp_path / "results").glob("*/results.json")
    doc = json.loads(results_file.read_text())
    assert [r["frame_size"] for r in doc["results"]] == [64, 256]
    for result in doc["results"]:
        line_pps = 1e9 / 8 / (result["frame_size"] + 20)
        assert 123456 - 0.05 / 100 * line_pps <= result["throughput_pps"] <= 123456
    assert "Throughput (pps)" in done.stdout


def test_imix_with_a_generator_that_sends_one_size_is_one_line(example_plugin, tmp_path):
    """A generator says whether it can send a frame mix (SENDS_FRAME_MIX); the
    example's cannot, so IMIX is refused at the key, before anything runs."""
    task, done = run_task(tmp_path, "{type: binsearch, packet_sizes: [64, IMIX], duration: 1}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert f"{task}:10: scenarios[0].traffic_profile.packet_sizes: IMIX: generator " \
           "'example_sim_tg' sends one frame size at a time; generators that send a mix: " \
           in done.stderr
    assert "prox_tg" in done.stderr and "trafgen" in done.stderr
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


ALL_KINDS = """\
schema: "nsb:task:0.1"
context:
  type: example_local
  nodes:
    tg: {interfaces: {p0: {}, p1: {}}}
    sut: {interfaces: {p0: {}, p1: {}}}
scenarios:
  - name: all_kinds
    vnfs:
      - {name: sleeper0, type: example_sleeper, node: sut}
    traffic_generator: {name: tg0, type: example_sim_tg, node: tg,
                        options: {capacity_pps: 100000}}
    traffic_profile: {type: example_step_down, rates_pct: [100, 50, 10, 5],
                      interface_speed_gbps: 1, duration: 0.5}
    runner: {type: example_repeat, times: 2}
outputs:
  - {type: file}
  - {type: example_csv}
"""


def test_a_task_runs_with_one_third_party_plugin_of_each_kind(example_plugin, tmp_path):
    """The example package's context, VNF, generator, profile, runner and output
    (shown whole in docs/development/plugins.md) in one task."""
    _, done = run_task(tmp_path, "", ALL_KINDS)
    assert done.returncode == 0, done.stderr
    (results_file,) = (tmp_path / "results").glob("*/results.json")
    doc = json.loads(results_file.read_text())
    # 100000 pps of 64 B is 6.7 % of 1 Gbit/s: 100, 50 and 10 % fail, 5 % passes
    assert [r["iteration"] for r in doc["results"]] == [0, 1]
    for result in doc["results"]:
        assert result["line_rate_pct"] == pytest.approx(5, rel=1e-3)  # rounded to whole pps
        assert result["limited_by"] == "dut"
    rows = (results_file.parent / "trials.csv").read_text().splitlines()
    assert rows[0] == "iteration,frame_size,rate_pps,tx,rx,verdict"
    assert [row.split(",")[-1] for row in rows[1:]] == ["fail", "fail", "fail", "pass"] * 2
    sleeper = [k["kpis"]["uptime_s"] for k in doc["kpis"] if k["source"] == "sleeper0"]
    assert len(sleeper) == 8 and sleeper == sorted(sleeper)  # after every trial
    assert "sleep" not in subprocess.run(["pgrep", "-af", "sleep 3600"], capture_output=True,
                                         text=True).stdout  # stopped at teardown


FROM_THE_DOCS = """\
schema: "nsb:task:0.1"
context:
  type: example_local
  nodes:
    tg: {interfaces: {p0: {}, p1: {}}}
    sut: {interfaces: {p0: {}, p1: {}}}
scenarios:
  - name: ladder
    vnfs:
      - {name: load0, type: example_loadavg, node: sut}
    traffic_generator: {name: tg0, type: example_sim_tg, node: tg,
                        options: {capacity_pps: 100000}}
    traffic_profile: {type: example_ladder, steps_pct: [1, 2, 5, 10],
                      packet_sizes: [64, 1518], interface_speed_gbps: 1}
outputs:
  - {type: file}
"""


def test_a_profile_and_a_vnf_written_from_the_docs_alone_run(example_plugin, tmp_path):
    """The ladder profile declares only its own option; the task's packet_sizes and line
    rate, and --frame-size and --duration, reach it through the base class; it reports
    the Measurement measure() returned. The load VNF's KPIs follow every trial."""
    task = tmp_path / "task.yaml"
    task.write_text(FROM_THE_DOCS)
    done = subprocess.run(NSB + ["task", "start", str(task), "--results-dir",
                                 str(tmp_path / "results"), "--frame-size", "64",
                                 "--frame-size", "128", "--duration", "0.2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (results_file,) = (tmp_path / "results").glob("*/results.json")
    doc = json.loads(results_file.read_text())
    assert [r["frame_size"] for r in doc["results"]] == [64, 128]
    assert {t["duration_s"] for t in doc["trials"]} == {0.2}
    # 100000 pps is 6.7 % of 1 Gbit/s at 64 B and 11.8 % at 128 B: 5 % and 10 % pass
    assert [r["line_rate_pct"] for r in doc["results"]] == pytest.approx([5, 10], rel=1e-3)
    assert [r["limited_by"] for r in doc["results"]] == ["dut", "upper_bound"]
    loads = [k for k in doc["kpis"] if k["source"] == "load0"]
    assert len(loads) == len(doc["trials"]) and all(k["kpis"]["load_1m"] >= 0 for k in loads)


def test_the_example_plugins_keep_the_plugin_contract(example_plugin):
    """The contract every installed plugin is held to (tests/unit/test_plugin_contract.py),
    checked in a fresh interpreter that sees the package pip just installed."""
    code = ("from tests.unit.test_plugin_contract import test_plugin_contract as check\n"
            "check('nsb.contexts', 'example_local')\n"
            "check('nsb.vnfs', 'example_sim_tg')\n"
            "check('nsb.vnfs', 'example_sleeper')\n"
            "check('nsb.vnfs', 'example_loadavg')\n"
            "check('nsb.traffic_profiles', 'example_step_down')\n"
            "check('nsb.traffic_profiles', 'example_ladder')\n"
            "check('nsb.runners', 'example_repeat')\n"
            "check('nsb.outputs', 'example_csv')\n"
            "print('contract kept')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "contract kept" in done.stdout, done.stderr


def test_docs_plugins_md_shows_the_example_plugins_as_they_are():
    """docs/development/plugins.md shows each example module whole and the task above:
    they are the code these tests install and run, so the page cannot drift from it."""
    from tests.doc_examples import ROOT as DOCS_ROOT
    from tests.doc_examples import parse

    page = DOCS_ROOT / "docs" / "development" / "plugins.md"
    shown = [e for e in parse(page) if e.kind == "checked-by"]
    modules = sorted((PACKAGE / "nsb_example_plugin").glob("[!_]*.py"))
    for module in modules:
        name = str(module.relative_to(ROOT))
        [block] = [e for e in shown if name in e.note]
        assert block.text == module.read_text(), f"{block.where} differs from {name}"
    [task] = [e for e in shown if "ALL_KINDS" in e.note]
    assert task.text == ALL_KINDS
    [task] = [e for e in shown if "FROM_THE_DOCS" in e.note]
    assert task.text == FROM_THE_DOCS
    assert len(shown) == len(modules) + 2
