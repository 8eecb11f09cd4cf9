"""Run history: time-sortable task ids, labels, `nsb task list` and `nsb task show`."""

import dataclasses
import json
import re

from nsb import engine
from nsb.runinfo import new_task_id, short_tag
from tests.doubles.simulated_dut import SimulatedDutGenerator
from tests.unit.test_pipeline import build


def test_task_ids_sort_by_start_time_and_are_never_taken():
    earlier = new_task_id(lambda _: False, now=1_795_000_000)
    later = new_task_id(lambda _: False, now=1_795_000_001)
    assert re.fullmatch(r"\d{6}-\d{6}-[0-9a-f]{6}", earlier)
    assert earlier < later
    taken = {new_task_id(lambda _: False, now=0) for _ in range(50)}
    fresh = new_task_id(lambda candidate: candidate in taken or len(taken) < 0, now=0)
    assert fresh not in taken
    assert short_tag(earlier) == earlier[-6:] and short_tag("abcd1234") == "abcd1234"


def _run(tmp_path, label, capacity, now):
    plan = build(tmp_path, SimulatedDutGenerator(capacity))
    task_id = new_task_id(lambda c: (tmp_path / c).exists(), now=now)
    run = dataclasses.replace(plan.run, task_id=task_id, results_dir=tmp_path / task_id,
                              label=label)
    plan.run = run
    plan.context.run = run
    for output in plan.outputs:
        output.run = run
    engine.execute(plan)
    return task_id


def test_task_list_shows_runs_newest_first_with_test_case_label_and_ndr(tmp_path, nsb_main):
    (tmp_path / "broken").mkdir()  # before the runs: the oldest entry
    (tmp_path / "broken" / "results.json").write_text("{not json")
    ids = [_run(tmp_path, label, capacity, now)
           for label, capacity, now in (("gen9", 100_000.0, 1_795_000_000),
                                        ("", 200_000.0, 1_795_000_100),
                                        ("gen10", 300_000.0, 1_795_000_200))]
    code, out, err = nsb_main("task", "list", "--results-dir", str(tmp_path), "-n", "0")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["STARTED", "(UTC)", "TASK", "ID", "TEST", "CASE", "LABEL",
                                "STATUS", "NDR"]
    listed = [line for line in lines[1:] if "tc_testpmd_netns_rfc2544" in line]
    assert [line.split()[2] for line in listed] == ids[::-1]  # newest first
    assert "gen10" in listed[0] and "gen9" in listed[2]
    assert all(" ok " in line and "64 B" in line and "128 B" in line for line in listed)
    assert any("broken" in line and "unreadable" in line for line in lines)
    code, out, _ = nsb_main("task", "list", "--results-dir", str(tmp_path), "--limit", "1")
    assert len(out.splitlines()) == 2 and ids[-1] in out


def test_task_show_takes_a_prefix_and_prints_record_and_table(tmp_path, nsb_main):
    task_id = _run(tmp_path, "gen9", 100_000.0, 1_795_000_000)
    code, out, err = nsb_main("task", "show", task_id[:13], "--results-dir", str(tmp_path))
    assert code == 0, err
    assert f"task:       {task_id}" in out and "label:      gen9" in out
    assert "status:     ok" in out and "Throughput (pps)" in out
    doc = json.loads((tmp_path / task_id / "results.json").read_text())
    assert doc["task"]["label"] == "gen9"
