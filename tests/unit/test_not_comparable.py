"""A frame size the traffic generator limited is not comparable: in `report table`,
the HTML comparison and the SLA gate (exit 5, apart from a missed SLA's 4)."""

import dataclasses
import json

import pytest
from junitparser import JUnitXml, Skipped

from nsb import engine, sla
from nsb.report import compare, formats, html_tables, loading
from nsb.runinfo import new_task_id
from tests.doubles.simulated_dut import SimulatedDutGenerator
from tests.unit.test_pipeline import build
from tests.unit.test_report import result, write_task


def _limited(frame, pps, limited_by):
    return {**result(frame, pps), "limited_by": limited_by}


def _tasks(tmp_path, base, other):
    write_task(tmp_path, "aaaa0001", base)
    write_task(tmp_path, "bbbb0002", other)
    return [loading.load(t, tmp_path) for t in ("aaaa0001", "bbbb0002")]


def test_a_generator_limited_side_makes_the_frame_size_not_comparable(tmp_path):
    tasks = _tasks(tmp_path, [_limited(64, 1_000_000, "generator"), _limited(1518, 800_000, "dut")],
                   [_limited(64, 806_000, "dut"), _limited(1518, 900_000, "upper_bound")])
    ((_, rows),) = compare.compare_all(tasks)
    assert [row.comparable(1) for row in rows] == [False, True]
    headers, cells = formats.comparison_table(["A", "B"], rows)
    assert headers[4] == "A limited by" and headers[8] == "B limited by"
    assert cells[0][4] == ("generator", "text") and cells[0][8] == ("dut", "text")
    assert cells[0][-1] == ("not comparable", compare.NOT_COMPARABLE)
    assert cells[1][-1] == ("+12.50", "better")
    assert compare.not_comparable_lines(["A", "B"], rows) == [
        "64 B: B vs A not comparable, the generator set the number "
        "(limited by A: generator, B: dut)"]
    doc = json.loads(formats.render(tasks, "json"))
    assert [r["comparable"] for r in doc["comparison"]] == [[False], [True]]
    assert doc["comparison"][0]["limited_by"] == ["generator", "dut"]
    markdown = formats.render(tasks, "markdown", ["A", "B"])
    assert "| not comparable |" in markdown and "- 64 B: B vs A not comparable" in markdown
    page = html_tables.comparison_tables(["A", "B"], rows, "cmp1")
    assert '<td class="not-comparable">not comparable</td>' in page
    assert "<li>64 B: B vs A not comparable" in page and "-19.40" not in page


def test_with_three_tasks_only_the_pair_with_the_generator_limit_is_apart(tmp_path):
    write_task(tmp_path, "cccc0003", [_limited(64, 900_000, "generator")])
    tasks = [*_tasks(tmp_path, [_limited(64, 1_000_000, "dut")], [_limited(64, 1_100_000, "dut")]),
             loading.load("cccc0003", tmp_path)]
    ((_, (row,)),) = compare.compare_all(tasks)
    assert [row.comparable(1), row.comparable(2)] == [True, False]
    _, (cells,) = formats.comparison_table(["A", "B", "C"], [row])
    assert cells[-2:] == [("+10.00", "better"), ("not comparable", compare.NOT_COMPARABLE)]


def test_sla_regression_on_a_generator_limited_side_is_not_comparable():
    baseline = [_limited(64, 1_000_000, "generator"), _limited(1518, 800_000, "dut")]
    run = [_limited(64, 806_000, "dut"), _limited(1518, 700_000, "dut")]
    far, near = sla.check([sla.parse("regression_pct<=5")], run, baseline)
    assert not far.comparable and not far.passed
    assert "NOT COMPARABLE" in far.message and "baseline: generator" in far.message
    assert near.comparable and not near.passed and near.message.endswith("MISSED")
    (short,) = sla.check([sla.parse("ndr_pps>=1M@64")], [_limited(64, 900_000, "generator")])
    assert not short.comparable and "this run: generator" in short.message
    (enough,) = sla.check([sla.parse("ndr_pps>=800k@64")], [_limited(64, 900_000, "generator")])
    assert enough.passed and enough.comparable  # the DUT forwarded at least that


def test_junit_marks_a_not_comparable_check_skipped(tmp_path):
    outcomes = sla.check([sla.parse("regression_pct<=5")], [_limited(64, 5, "generator")],
                         [_limited(64, 10, "dut")])
    path = tmp_path / "j.xml"
    sla.write_junit(path, sla.junit(outcomes, "t", "tc", "ok"))
    (suite,) = list(JUnitXml.fromfile(str(path)))
    assert suite.failures == 0 and suite.skipped == 1
    (case,) = list(suite)
    assert isinstance(case.result[0], Skipped)


def _run(tmp_path, capacity, max_tx, now):
    plan = build(tmp_path, SimulatedDutGenerator(capacity, max_tx_pps=max_tx))
    task_id = new_task_id(lambda c: (tmp_path / c).exists(), now=now)
    run = dataclasses.replace(plan.run, task_id=task_id, results_dir=tmp_path / task_id)
    plan.run = plan.context.run = run
    for output in plan.outputs:
        output.run = run
    engine.execute(plan)
    return task_id


def test_task_gate_exits_5_when_the_generator_set_the_numbers(tmp_path, nsb_main):
    """Two runs whose generator topped out at different rates: not a DUT regression."""
    baseline = _run(tmp_path, 1e9, 100_000.0, 1_795_000_000)
    noisy = _run(tmp_path, 1e9, 80_000.0, 1_795_000_100)
    junit = tmp_path / "gate.xml"
    code, out, err = nsb_main("task", "gate", noisy, "--results-dir", str(tmp_path),
                              "--sla", "regression_pct<=5", "--baseline", baseline,
                              "--junit", str(junit))
    assert code == 5, err
    assert err.startswith("nsb: error: SLA not comparable (2 of 2 checks; ")
    assert out.count("NOT COMPARABLE") == 2 and "MISSED" not in out
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    assert suite.failures == 0 and suite.skipped == 2
    code, _, err = nsb_main("task", "gate", noisy, "--results-dir", str(tmp_path),
                            "--sla", "regression_pct<=5", "--sla", "loss_pct<0",
                            "--baseline", baseline)
    assert code == 4 and err.startswith("nsb: error: SLA missed (2 of 4 checks)"), err
    code, out, _ = nsb_main("report", "table", baseline, noisy, "--results-dir", str(tmp_path))
    assert code == 0 and "not comparable" in out and "-20.00" not in out


def _unconfirmed(frame, pps):
    return {**_limited(frame, pps, "dut"),
            "warnings": ["the confirmation at the answer's rate lost 0.04%"]}


def test_an_unconfirmed_answer_is_not_comparable_in_reports_and_the_gate(tmp_path):
    tasks = _tasks(tmp_path, [_unconfirmed(64, 1_000_000), _limited(1518, 800_000, "dut")],
                   [_limited(64, 806_000, "dut"), _limited(1518, 900_000, "dut")])
    ((_, rows),) = compare.compare_all(tasks)
    assert [row.comparable(1) for row in rows] == [False, True]
    (line,) = compare.not_comparable_lines(["A", "B"], rows)
    assert line.startswith("64 B: B vs A not comparable, an answer was not confirmed (A: "
                           "the confirmation at the answer's rate lost 0.04%")
    (check,) = sla.check([sla.parse("ndr_pps>=500k@64")], [_unconfirmed(64, 1_000_000)])
    assert not check.comparable and "NOT COMPARABLE: the answer was not confirmed" in \
        check.message
    (regression,) = sla.check([sla.parse("regression_pct<=5")], [_unconfirmed(64, 1_000_000)],
                              [_limited(64, 1_000_000, "dut")])
    assert not regression.comparable


def test_the_table_and_the_html_summary_show_an_unconfirmed_answer(tmp_path):
    from rich.console import Console

    from nsb.report import summary, table

    record = _unconfirmed(64, 1_000_000)
    console = Console(width=160, record=True)
    console.print(table.render([record]))
    text = console.export_text()
    assert "dut (unconfirmed)" in text
    assert "! 64 B: the confirmation at the answer's rate lost 0.04%" in text
    page = html_tables.summary_table([summary.row("t", record)], "s1")
    assert "<th>Warnings</th>" in page and "lost 0.04%" in page


def test_answers_under_change_compare_in_their_own_unit_and_not_with_frames(tmp_path):
    def reset(seconds):
        return {**result(64, 50_000), "limited_by": "none",
                "reset": {"reset_time_s": seconds, "blocked_time_s": seconds}}

    tasks = _tasks(tmp_path, [reset(0.4)], [reset(0.3)])
    ((_, rows),) = compare.compare_all(tasks)
    (row,) = rows
    assert row.kind == "reset" and compare.table_keys(rows) == ["reset_time_s",
                                                               "blocked_time_s"]
    assert row.values["reset_time_s"] == [0.4, 0.3]
    assert row.diff_pct["reset_time_s"] == [pytest.approx(-25.0)]
    assert compare.verdict(compare.BY_KEY["reset_time_s"], -25.0) == "better"  # shorter
    mixed = _tasks(tmp_path / "mixed", [reset(0.4)], [result(64, 50_000)])
    ((_, rows),) = compare.compare_all(mixed)
    assert not rows[0].comparable(1)
