"""Suite files (nsb.task.suite): Yardstick's format and nsb's, every case checked before
any runs, a bad case one line at the case; the suite's JUnit and exit code."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from nsb import suite_record
from nsb.task import suite
from tests.conftest import ROOT

SAMPLES = ROOT / "samples" / "suites"


def test_nsb_suites_give_each_case_its_args_name_and_checks():
    loaded = suite.load(SAMPLES / "lab_suite.yaml")
    assert loaded.name == "lab_daily"
    assert [c.name for c in loaded.cases] == ["testpmd_rfc2544", "testpmd_back2back",
                                              "two_chains"]
    assert loaded.cases[2].file == ROOT / "samples" / "chains" / "tc_testpmd_chains.yaml"
    assert loaded.cases[2].task_args == {"chains": 2, "duration_s": 1, "test_precision": 2.0}
    assert [s.text for s in loaded.cases[2].slas] == ["ndr_pps>=1000@64", "loss_pct<=0.01"]
    assert not any(c.skipped for c in loaded.cases)


def test_yardsticks_suites_take_args_per_pod_and_keep_constraints(monkeypatch):
    monkeypatch.delenv("NODE_NAME", raising=False)
    monkeypatch.delenv("INSTALLER_TYPE", raising=False)
    plain, constrained = suite.load(SAMPLES / "yardstick_suite.yaml").cases
    assert plain.name == "tc_testpmd_netns_rfc2544"
    assert plain.task_args == {"duration_s": 1, "packet_sizes": [64]}  # 'default'
    assert constrained.skipped == "constraint: NODE_NAME is unset"
    monkeypatch.setenv("NODE_NAME", "huawei-pod1")
    monkeypatch.setenv("INSTALLER_TYPE", "compass")
    _, constrained = suite.load(SAMPLES / "yardstick_suite.yaml").cases
    assert constrained.skipped == "" and constrained.task_args == {"chains": 3}
    monkeypatch.setenv("INSTALLER_TYPE", "fuel")
    _, constrained = suite.load(SAMPLES / "yardstick_suite.yaml").cases
    assert constrained.skipped == "constraint installer: compass (INSTALLER_TYPE is fuel)"


def _suite(tmp_path, body: str):
    path = tmp_path / "suite.yaml"
    path.write_text(f'schema: "nsb:suite:0.1"\ntest_cases_dir: "{ROOT / "samples"}"\n'
                    f"test_cases:\n{body}")
    return path


@pytest.mark.parametrize("body, expected", [
    ("  - {file_name: no_such.yaml}\n",
     "suite.yaml:4: test_cases[0].file_name: no task file"),
    ("  - {file_name: tc_testpmd_netns_rfc2544.yaml, name: a}\n"
     "  - {file_name: chains/tc_testpmd_chains.yaml, name: a}\n",
     "suite.yaml:5: test_cases[1]: two cases named 'a'"),
    ("  - {file_name: tc_testpmd_netns_rfc2544.yaml, sla: ['ndr>=5']}\n",
     "suite.yaml:4: test_cases[0].sla[0]: unknown metric 'ndr'"),
    ("  - {file_name: tc_testpmd_netns_rfc2544.yaml}\n"
     "  - {file_name: tc_testpmd_netns_rfc2544.yaml, name: bad, task_args: {duration_s: -1}}\n",
     "suite.yaml:5: test_cases[1]: case bad: "),
    ("  - {file_name: tc_testpmd_netns_rfc2544.yaml, name: typo, task_args: {duraton_s: 1}}\n",
     "suite.yaml:4: test_cases[0]: case typo: "),
    ("  - {file_name: tc_testpmd_netns_rfc2544.yaml, repeat: 2}\n",
     "suite.yaml:4: test_cases[0].repeat: unknown key"),
], ids=["missing-file", "same-name", "bad-sla", "bad-arg-value", "unused-arg", "unknown-key"])
def test_a_bad_case_is_one_line_and_nothing_runs(nsb_main, tmp_path, body, expected):
    results = tmp_path / "results"
    code, out, err = nsb_main("task", "start", "--suite", str(_suite(tmp_path, body)),
                              "--results-dir", str(results))
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert expected in line, line
    assert not results.exists()  # nothing ran, no suite record


YARDSTICK_TWICE = f"""schema: "yardstick:suite:0.1"
name: twice
test_cases_dir: "{ROOT / "samples"}"
test_cases:
  - file_name: tc_testpmd_netns_rfc2544.yaml
    task_args: {{default: '{{"duration_s": 1, "packet_sizes": [64]}}'}}
  - file_name: tc_testpmd_netns_rfc2544.yaml
    task_args: {{default: '{{"duration_s": 2, "packet_sizes": [64]}}'}}
  - file_name: chains/tc_testpmd_chains.yaml
"""


def test_a_file_listed_twice_is_two_cases_named_by_the_args_that_differ(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(YARDSTICK_TWICE)
    first, second, other = suite.load(path).cases
    assert (first.name, second.name) == ("tc_testpmd_netns_rfc2544[duration_s=1]",
                                         "tc_testpmd_netns_rfc2544[duration_s=2]")
    assert (first.task_args["duration_s"], second.task_args["duration_s"]) == (1, 2)
    assert other.name == "tc_testpmd_chains"  # listed once: its file's name


def test_cases_alike_are_named_by_their_place_and_a_given_name_stays(tmp_path):
    body = ("  - {file_name: tc_testpmd_netns_rfc2544.yaml}\n"
            "  - {file_name: tc_testpmd_netns_rfc2544.yaml, task_args: {duration_s: 2}}\n"
            "  - {file_name: tc_testpmd_netns_rfc2544.yaml}\n"
            "  - {file_name: chains/tc_testpmd_chains.yaml, name: tc_testpmd_chains}\n"
            "  - {file_name: chains/tc_testpmd_chains.yaml}\n")
    names = [c.name for c in suite.load(_suite(tmp_path, body)).cases]
    assert names == ["tc_testpmd_netns_rfc2544#1", "tc_testpmd_netns_rfc2544[duration_s=2]",
                     "tc_testpmd_netns_rfc2544#2", "tc_testpmd_chains",
                     "tc_testpmd_chains#1"]


def test_a_file_listed_twice_runs_twice_with_a_row_and_a_testcase_each(
        nsb_main, tmp_path, monkeypatch):
    """The runs are stood in for (each case's plan and args reach run_plan); the
    suite's record, table and JUnit file are the real ones."""
    from nsb.cli import task_start

    ran = []

    def run_plan(plan, conf, results):
        ran.append((plan.run.task_id, plan.run.label))
        results.append({"scenario": plan.task.scenarios[0].name, "frame_size": 64,
                        "throughput_pps": 1000.0 * len(ran), "limited_by": "dut"})

    monkeypatch.setattr(task_start, "run_plan", run_plan)
    path = tmp_path / "suite.yaml"
    path.write_text(YARDSTICK_TWICE)
    junit = tmp_path / "suite.xml"
    code, out, err = nsb_main("task", "start", "--suite", str(path), "--results-dir",
                              str(tmp_path / "results"), "--junit", str(junit))
    assert code == 0, err
    assert len(ran) == 3 and len({task_id for task_id, _ in ran}) == 3
    (record,) = (tmp_path / "results" / "suites").glob("*.json")
    run = suite_record.load(tmp_path / "results", record.stem)
    twice = ["tc_testpmd_netns_rfc2544[duration_s=1]", "tc_testpmd_netns_rfc2544[duration_s=2]"]
    assert [c.name for c in run.cases] == [*twice, "tc_testpmd_chains"]
    assert [c.task_id for c in run.cases] == [task_id for task_id, _ in ran]
    assert ran[1][1] == f"suite {run.suite_id} {twice[1]}"
    assert [c.answers[0]["throughput_pps"] for c in run.cases] == [1000.0, 2000.0, 3000.0]
    assert all(name in out for name in twice)  # a row each in the table
    (tests,) = ET.parse(junit).getroot()
    assert [t.get("name") for t in tests] == [*twice, "tc_testpmd_chains"]


def test_task_args_are_the_cases_own(nsb_main, tmp_path):
    body = "  - {file_name: tc_testpmd_netns_rfc2544.yaml}\n"
    code, _, err = nsb_main("task", "start", "--suite", str(_suite(tmp_path, body)),
                            "--task-args", "{}")
    assert code == 2 and "--suite: each case of a suite has its own task args" in err


def _run() -> suite_record.SuiteRun:
    run = suite_record.SuiteRun("261128-000000-abcdef", "daily", "s.yaml")
    run.cases = [
        suite_record.CaseRun("a", "a.yaml", {}, "ok", "t1", answers=[
            {"frame_size": 64, "throughput_pps": 1e6, "limited_by": "dut"}],
            sla=[{"check": "ndr_pps>=2M@64", "passed": False, "comparable": True,
                  "message": "missed"}], exit_code=4),
        suite_record.CaseRun("b", "b.yaml", {}, "error", "t2", exit_code=3, error="boom"),
        suite_record.CaseRun("c", "c.yaml", {}, "skipped", error="constraint: unset")]
    return run


def test_the_junit_file_has_a_case_per_task_and_per_check():
    root = ET.fromstring(suite_record.junit(_run()).split("\n", 1)[1])
    (tests,) = root
    assert [(c.get("classname"), c.get("name")) for c in tests] == [
        ("daily", "a"), ("daily.a", "ndr_pps>=2M@64"), ("daily", "b"), ("daily", "c")]
    assert (tests.get("tests"), tests.get("failures"), tests.get("errors"),
            tests.get("skipped")) == ("4", "1", "1", "1")
    assert tests[2].find("error").text == "boom"


def test_the_suites_exit_code_is_its_first_failed_cases_and_its_record_reloads(tmp_path):
    run = _run()
    assert run.exit_code == 4
    run.save(tmp_path)
    again = suite_record.load(tmp_path, "261128-000000")
    assert again == run and suite_record.exists(tmp_path, "261128")
    assert suite_record.table_rows(again)[0] == ["a", "t1", "ok (exit 4)",
                                                 "64 B: 1,000,000 pps (dut)", "0/1 met"]
