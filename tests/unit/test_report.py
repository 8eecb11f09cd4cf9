"""Reports from results files: lookup, summary formats, comparison numbers, HTML page."""

import argparse
import csv
import io
import json

import pytest

from nsb import engine, units
from nsb.errors import NsbError, TaskError
from nsb.outputs.file import FileOutput
from nsb.report import commands, compare, formats, html, loading, summary, table
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import SAMPLE
from tests.doubles.null_context import NullContext
from tests.doubles.simulated_dut import SimulatedDutGenerator

# HPE/Intel NFVi report, Table 3 (PHY-VM-VM-PHY, one queue, two PMDs): average pps of
# Gen10 and Gen9 per frame size and the "Gen10 vs. Gen9 Improvement (%)" column
HPE_TABLE_3 = [  # frame, Gen10 pps, Gen9 pps, improvement %
    (64, 5_837_092, 5_049_933, 15.59), (128, 5_333_702, 4_660_117, 14.45),
    (256, 4_629_236, 4_312_267, 7.35), (512, 3_893_095, 3_694_233, 5.38),
    (1024, 2_839_343, 2_689_288, 5.58), (1280, 2_547_826, 2_439_059, 4.46),
    (1518, 2_374_471, 2_307_668, 2.89),
]


def result(frame, pps, scenario="l3fwd", iteration=0, speed_gbps=25.0, ports=2,
           latency_avg=None):
    latency = None
    if latency_avg is not None:
        latency = {"samples": 100, "min_us": latency_avg / 2, "avg_us": latency_avg,
                   "max_us": latency_avg * 4, "p50_us": latency_avg, "p90_us": latency_avg * 1.5,
                   "p99_us": latency_avg * 2, "p99.9_us": latency_avg * 3,
                   "histogram": [{"le_us": 10, "count": 40}, {"le_us": 100, "count": 60}]}
    return {"scenario": scenario, "iteration": iteration, "frame_size": frame,
            "throughput_pps": float(pps), "throughput_mbps": units.pps_to_mbps(pps, frame),
            "line_rate_pct": units.pps_to_pct(pps, frame, speed_gbps, ports), "loss_pct": 0.0,
            "latency": latency, "limited_by": "dut", "trials": 7, "profile": "binsearch"}


def write_task(results_dir, task_id, results, scenarios=("l3fwd",), description="",
               status="ok", trials=(), platform=None, error=""):
    doc = {"task": {"id": task_id, "file": "/lab/tc.yaml", "description": description,
                    "args": {}, "started": 1.7e9, "finished": 1.7e9 + 60, "status": status,
                    "error": error, "duration_s": 60.0},
           "plan": {"scenarios": [{"name": s, "traffic_profile": {
               "type": "binsearch", "interface_speed_gbps": 25}} for s in scenarios]},
           "platform": platform or {}, "trials": list(trials), "results": results, "kpis": []}
    directory = results_dir / task_id
    directory.mkdir(parents=True)
    (directory / "results.json").write_text(json.dumps(doc))
    return directory


@pytest.fixture
def hpe(tmp_path):
    """The report's Gen9 and Gen10 numbers as two tasks' results."""
    write_task(tmp_path, "gen9", [result(f, g9, latency_avg=20.0) for f, _, g9, _ in HPE_TABLE_3])
    write_task(tmp_path, "gen10", [result(f, g10, latency_avg=15.0)
                                   for f, g10, _, _ in HPE_TABLE_3])
    return [loading.load("gen9", tmp_path), loading.load("gen10", tmp_path)]


def simulated_results(results_dir, task_id="abcd1234", capacity_pps=100_000.0, iterations=1):
    """A real results file from the pipeline, with the simulated DUT double."""
    task = loader.load(SAMPLE, {"packet_sizes": [64, 128]})
    run = RunInfo(task_id, task, results_dir / task_id)
    real = engine.plan(task, run)
    scenario = real.scenarios[0]
    scenario.vnfs = []
    scenario.generator = SimulatedDutGenerator(capacity_pps)
    if iterations > 1:
        scenario.runner.options["iterations"] = iterations
    plan = engine.Plan(task, run, NullContext(task.context, {}, run), real.scenarios,
                       [FileOutput(task.outputs[0], {}, run)])
    engine.execute(plan)
    return loading.load(task_id, results_dir)


def run_report(*argv):
    parser = argparse.ArgumentParser(prog="nsb")
    parser.add_argument("--config-file", action="append")
    commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


# --- comparison numbers ---------------------------------------------------------------------

def test_comparison_reproduces_the_hpe_gen10_vs_gen9_improvement_column(hpe):
    (match, rows), = compare.compare_all(hpe)
    assert match.label == "l3fwd"
    assert [r.frame_size for r in rows] == [f for f, *_ in HPE_TABLE_3]
    diffs = [round(r.diff_pct["throughput_pps"][0], 2) for r in rows]
    assert diffs == [improvement for *_, improvement in HPE_TABLE_3]
    # the same difference in Mbps and % of line rate (same frame, same line)
    for r in rows:
        assert r.diff_pct["throughput_mbps"][0] == pytest.approx(r.diff_pct["throughput_pps"][0])
        assert r.diff_pct["line_rate_pct"][0] == pytest.approx(r.diff_pct["throughput_pps"][0])
    assert [round(r.values["line_rate_pct"][1], 2) for r in rows][:2] == [7.85, 12.63]
    headers, cells = formats.comparison_table(["Gen9", "Gen10"], rows)
    assert headers[-1] == "Gen10 vs Gen9 (%)"
    assert [row[-1] for row in cells] == [(f"+{i:.2f}", "better") for *_, i in HPE_TABLE_3]
    assert cells[0][:2] == [("64", ""), ("5,049,933", "")]
    assert cells[0][4] == ("dut", "text") and cells[0][5] == ("5,837,092", "")


def test_difference_is_negative_when_the_baseline_was_faster(hpe):
    (_, rows), = compare.compare_all(list(reversed(hpe)))  # Gen10 is now the baseline
    first = rows[0]
    assert first.values["throughput_pps"] == [5_837_092, 5_049_933]
    assert first.diff_pct["throughput_pps"][0] == pytest.approx(
        (5_049_933 - 5_837_092) / 5_837_092 * 100)
    assert round(first.diff_pct["throughput_pps"][0], 2) == -13.49
    throughput, latency = compare.BY_KEY["throughput_pps"], compare.BY_KEY["latency_avg_us"]
    assert compare.verdict(throughput, first.diff_pct["throughput_pps"][0]) == "worse"
    # latency went from 15 to 20 us: +33.33 %, and up is worse for latency
    assert first.diff_pct["latency_avg_us"][0] == pytest.approx(100 / 3)
    assert compare.verdict(latency, first.diff_pct["latency_avg_us"][0]) == "worse"
    assert compare.verdict(latency, -5.0) == "better"
    assert compare.verdict(throughput, 0.0) == "same"


def test_percent_difference_has_no_value_without_a_baseline():
    assert compare.pct_diff(0.0, 10.0) is None
    assert compare.pct_diff(None, 10.0) is None
    assert compare.pct_diff(10.0, None) is None
    assert compare.pct_diff(10.0, 10.0) == 0.0
    assert compare.pct_diff(200.0, 150.0) == -25.0
    assert formats.signed_pct(None) == "-"
    assert formats.signed_pct(-25.0) == "-25.00"


def test_scenarios_match_by_name_then_in_order(tmp_path):
    write_task(tmp_path, "a", [result(64, 100, "ovs"), result(64, 10, "vpp")], ("ovs", "vpp"))
    write_task(tmp_path, "b", [result(64, 200, "ovs_dpdk"), result(64, 30, "vpp")],
               ("ovs_dpdk", "vpp"))
    tasks = [loading.load("a", tmp_path), loading.load("b", tmp_path)]
    compared = compare.compare_all(tasks)
    assert [(m.label, m.names) for m, _ in compared] == [
        ("vpp", ("vpp", "vpp")), ("ovs vs ovs_dpdk", ("ovs", "ovs_dpdk"))]
    assert compared[0][1][0].diff_pct["throughput_pps"] == [200.0]
    assert compared[1][1][0].diff_pct["throughput_pps"] == [100.0]


def test_frame_sizes_only_one_task_measured_have_no_difference(tmp_path):
    write_task(tmp_path, "a", [result(64, 100), result(1518, 50)])
    write_task(tmp_path, "b", [result(64, 110), result(512, 70)])
    (_, rows), = compare.compare_all([loading.load("a", tmp_path), loading.load("b", tmp_path)])
    assert [r.frame_size for r in rows] == [64, 512, 1518]
    assert [r.diff_pct["throughput_pps"][0] for r in rows] == [pytest.approx(10.0), None, None]
    assert [r.runs for r in rows] == [[1, 1], [0, 1], [1, 0]]
    _, cells = formats.comparison_table(["a", "b"], rows)
    assert cells[1][1] == ("-", "") and cells[1][-1] == ("-", "same")


def test_iterations_are_averaged_before_comparing(tmp_path):
    write_task(tmp_path, "a", [result(64, 100, iteration=0), result(64, 300, iteration=1)])
    write_task(tmp_path, "b", [result(64, 300)])
    tasks = [loading.load("a", tmp_path), loading.load("b", tmp_path)]
    means = summary.mean_by_frame(tasks[0], "l3fwd")
    assert means[64]["runs"] == 2 and means[64]["throughput_pps"] == 200.0
    (_, rows), = compare.compare_all(tasks)
    assert rows[0].values["throughput_pps"] == [200.0, 300.0]
    assert rows[0].diff_pct["throughput_pps"] == [50.0]
    assert rows[0].runs == [2, 1]


def test_a_comparison_of_single_runs_says_their_spread_is_not_measured(tmp_path):
    write_task(tmp_path, "a", [result(64, 100)])
    write_task(tmp_path, "b", [result(64, 150)])
    write_task(tmp_path, "c", [result(64, 100, iteration=i) for i in range(3)])
    write_task(tmp_path, "d", [result(64, 150, iteration=i) for i in range(3)])
    single = [loading.load(t, tmp_path) for t in "ab"]
    (_, rows), = compare.compare_all(single)
    assert compare.single_run_note(rows) == compare.SINGLE_RUN_NOTE
    assert f"Note: {compare.SINGLE_RUN_NOTE}." in formats.render(single, "markdown")
    assert compare.SINGLE_RUN_NOTE in html.render(single)
    repeated = [loading.load(t, tmp_path) for t in "cd"]
    (_, rows), = compare.compare_all(repeated)
    assert compare.single_run_note(rows) is None
    assert "Note:" not in formats.render(repeated, "markdown")


def test_three_tasks_compare_each_with_the_first(tmp_path):
    for task_id, pps in (("a", 100), ("b", 150), ("c", 80)):
        write_task(tmp_path, task_id, [result(64, pps)])
    tasks = [loading.load(t, tmp_path) for t in "abc"]
    (_, rows), = compare.compare_all(tasks)
    assert rows[0].diff_pct["throughput_pps"] == [50.0, -20.0]
    headers, cells = formats.comparison_table(["a", "b", "c"], rows)
    assert headers[-2:] == ["b vs a (%)", "c vs a (%)"]
    assert cells[0][-2:] == [("+50.00", "better"), ("-20.00", "worse")]


# --- summary formats ------------------------------------------------------------------------

def test_csv_of_a_tunnel_s_answer_has_its_outer_frame(tmp_path):
    tunnelled = {**result(114, 1000), "outer_frame_size": 164}
    write_task(tmp_path, "vx", [tunnelled, result(64, 2000)])
    parsed = list(csv.DictReader(io.StringIO(formats.render([loading.load("vx", tmp_path)],
                                                            "csv"))))
    assert [(r["frame_size"], r["outer_frame_size"]) for r in parsed] == [("114", "164"),
                                                                          ("64", "")]


def test_csv_has_one_row_per_result_with_plain_numbers(tmp_path):
    task = simulated_results(tmp_path)
    parsed = list(csv.DictReader(io.StringIO(formats.render([task], "csv"))))
    assert list(parsed[0]) == summary.COLUMNS
    assert [int(r["frame_size"]) for r in parsed] == [64, 128]
    for row, record in zip(parsed, task.results, strict=True):
        assert row["task_id"] == "abcd1234" and row["scenario"] == "testpmd_rfc2544"
        assert float(row["throughput_pps"]) == record["throughput_pps"]
        assert float(row["line_rate_pct"]) == record["line_rate_pct"]
        assert float(row["latency_p99_9_us"]) == record["latency"]["p99_9_us"]
        assert row["limited_by"] == record["limited_by"]
        assert int(row["trials"]) == record["trials"]


def test_json_has_the_summary_and_the_comparison(tmp_path):
    one = simulated_results(tmp_path, "aaaa0001", 100_000.0)
    two = simulated_results(tmp_path, "bbbb0002", 200_000.0)
    single = json.loads(formats.render([one], "json"))
    assert single["comparison"] == []
    assert [r["throughput_pps"] for r in single["summary"]] == [
        r["throughput_pps"] for r in one.results]
    assert single["tasks"][0]["id"] == "aaaa0001" and single["tasks"][0]["status"] == "ok"
    both = json.loads(formats.render([one, two], "json"))
    assert len(both["summary"]) == 4
    assert [r["frame_size"] for r in both["comparison"]] == [64, 128]
    for row, a, b in zip(both["comparison"], one.results, two.results, strict=True):
        assert row["tasks"] == ["aaaa0001", "bbbb0002"]
        assert row["throughput_pps"] == [a["throughput_pps"], b["throughput_pps"]]
        expected = (b["throughput_pps"] - a["throughput_pps"]) / a["throughput_pps"] * 100
        assert row["diff_pct"]["throughput_pps"] == [pytest.approx(expected)]
        assert expected > 0  # the second DUT is faster


def test_markdown_and_text_show_the_same_cells_as_the_terminal_table(tmp_path):
    task = simulated_results(tmp_path)
    cells = table.rows(task.results)
    text = formats.render([task], "markdown")
    lines = text.splitlines()
    assert lines[0] == "### testpmd_rfc2544 (task abcd1234)"
    assert lines[2] == "| " + " | ".join(table.HEADERS) + " |"
    assert lines[4] == "| " + " | ".join(cells[0]) + " |"
    assert lines[5] == "| " + " | ".join(cells[1]) + " |"
    from rich.console import Console

    console = Console(file=io.StringIO(), width=200)
    for grid in formats.text_tables([task]):
        console.print(grid)
    shown = console.file.getvalue()
    assert "testpmd_rfc2544 (task abcd1234)" in shown
    for cell in cells[0]:
        assert cell in shown


def test_text_and_markdown_add_the_comparison_for_several_tasks(hpe):
    markdown = formats.render(hpe, "markdown", ["Gen9", "Gen10"])
    assert "### l3fwd: Gen10 vs Gen9" in markdown
    assert "| 64 | 5,049,933 |" in markdown and "| +15.59 |" in markdown
    titles = [t.title for t in formats.text_tables(hpe, ["Gen9", "Gen10"])]
    assert titles == ["l3fwd (task gen9)", "l3fwd (task gen10)", "l3fwd: Gen10 vs Gen9"]


def test_several_iterations_get_one_table_each(tmp_path):
    task = simulated_results(tmp_path, iterations=2)
    groups = formats.summary_groups(task)
    assert [title for title, _ in groups] == ["testpmd_rfc2544, iteration 1",
                                               "testpmd_rfc2544, iteration 2"]
    assert [[r["frame_size"] for r in results] for _, results in groups] == [[64, 128]] * 2


# --- finding results ------------------------------------------------------------------------

def test_task_found_by_id_prefix_and_path(tmp_path):
    directory = write_task(tmp_path, "84cda5c9", [result(64, 1)])
    write_task(tmp_path, "84ffffff", [result(64, 2)])
    assert loading.load("84cda5c9", tmp_path).id == "84cda5c9"
    assert loading.load("84c", tmp_path).id == "84cda5c9"
    assert loading.load(str(directory), "/nonexistent").id == "84cda5c9"
    assert loading.load(str(directory / "results.json"), "/nonexistent").id == "84cda5c9"
    with pytest.raises(TaskError, match="ambiguous.*84cda5c9, 84ffffff"):
        loading.load("84", tmp_path)


def test_unknown_task_names_where_it_looked(tmp_path):
    with pytest.raises(TaskError) as caught:
        loading.load("deadbeef", tmp_path / "results", "results_dir from /etc/nsb/nsb.conf")
    message = str(caught.value)
    assert message == (f"no results for task 'deadbeef': looked for {tmp_path}/results/deadbeef/"
                       "results.json (results_dir from /etc/nsb/nsb.conf)")
    assert "\n" not in message
    with pytest.raises(TaskError, match=f"looked for {tmp_path}/nowhere/x"):
        loading.load(f"{tmp_path}/nowhere/x", tmp_path)


def test_broken_results_file_is_a_user_error(tmp_path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text("{not json")
    with pytest.raises(TaskError, match="bad/results.json: not a results file"):
        loading.load("bad", tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "results.json").write_text("[1, 2]")
    with pytest.raises(TaskError, match="not an nsb results file"):
        loading.load("other", tmp_path)


# --- commands -------------------------------------------------------------------------------

def test_report_table_prints_only_the_table(tmp_path, capsys):
    task = simulated_results(tmp_path)
    assert run_report("report", "table", "abcd", "--results-dir", str(tmp_path),
                      "--format", "csv") == 0
    assert capsys.readouterr().out == formats.render([task], "csv")
    assert run_report("report", "table", "abcd1234", "--results-dir", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "testpmd_rfc2544 (task abcd1234)" in out
    assert table.rows(task.results)[0][1] in out


def test_report_uses_results_dir_of_the_configuration(tmp_path, results_conf, capsys):
    simulated_results(tmp_path / "results")
    assert run_report("--config-file", str(results_conf), "report", "table", "abcd1234",
                      "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["tasks"][0]["id"] == "abcd1234"
    with pytest.raises(TaskError) as caught:
        run_report("--config-file", str(results_conf), "report", "table", "feedf00d")
    assert str(caught.value) == (f"no results for task 'feedf00d': looked for {tmp_path}/results/"
                                 f"feedf00d/results.json (results_dir from {results_conf})")


def test_report_html_writes_the_file_and_prints_its_path(tmp_path, capsys, monkeypatch):
    simulated_results(tmp_path, "aaaa0001")
    simulated_results(tmp_path, "bbbb0002", 120_000.0)
    out = tmp_path / "r.html"
    assert run_report("report", "html", "aaaa0001", "bbbb0002", "--results-dir", str(tmp_path),
                      "-o", str(out)) == 0
    assert capsys.readouterr().out == f"{out}\n"
    page = out.read_text()
    assert 'id="cmp1-throughput-table"' in page and 'id="t2-s1-summary-table"' in page
    monkeypatch.chdir(tmp_path)
    assert run_report("report", "html", "aaaa0001", "--results-dir", str(tmp_path)) == 0
    assert capsys.readouterr().out == "nsb-report-aaaa0001.html\n"
    assert (tmp_path / "nsb-report-aaaa0001.html").stat().st_size > 1_000_000
    assert run_report("report", "html", "aaaa0001", "--results-dir", str(tmp_path),
                      "-o", "-") == 0
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")


def test_labels_must_match_the_tasks(tmp_path, capsys):
    simulated_results(tmp_path, "aaaa0001")
    with pytest.raises(NsbError, match="2 --label for 1 task"):
        run_report("report", "table", "aaaa0001", "--results-dir", str(tmp_path),
                   "--label", "x", "--label", "y")
    assert run_report("report", "table", "aaaa0001", "aaaa0001", "--results-dir", str(tmp_path),
                      "--format", "markdown", "--label", "before", "--label", "after") == 0
    assert "### testpmd_rfc2544: after vs before" in capsys.readouterr().out


# --- the HTML page --------------------------------------------------------------------------

def test_page_is_self_contained(tmp_path):
    page = html.render([simulated_results(tmp_path)])
    assert "<script src" not in page.replace(" ", "") and "<link" not in page
    assert "Plotly.newPlot" in page
    assert page.count('class="plotly-graph-div"') == len(
        {"t1-s1-throughput-chart", "t1-s1-latency-chart", "t1-s1-trajectory-64-chart",
         "t1-s1-trajectory-128-chart"})
    for chart_id in ("t1-s1-throughput-chart", "t1-s1-latency-chart",
                     "t1-s1-trajectory-64-chart", "t1-s1-trajectory-128-chart"):
        assert f'id="{chart_id}"' in page
    assert "No NFVi samples" in page


def test_text_from_results_is_escaped(tmp_path):
    evil = "<script>alert('x')</script>"
    write_task(tmp_path, "x1", [result(64, 100)], description=evil, status="error", error=evil,
               trials=[{"scenario": "l3fwd", "trial_index": 0, "iteration": 0,
                        "frame_size": 64, "requested_rate_pct": 10.0,
                        "requested_rate_pps": 1e5, "tx_rate_pps": 1e5, "rx_rate_pps": 1e5,
                        "loss_pct": 0.0, "verdict": "pass", "reason": evil,
                        "search_lower_pct": 10.0, "search_upper_pct": 100.0}],
               platform={"sut": {"cpu_model": evil, "nics": {}, "versions": {}}})
    page = html.render([loading.load("x1", tmp_path)], [evil])
    assert evil not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert 'class="banner"' in page  # the run failed: said at the top


def test_interrupted_run_without_results_still_has_a_report(tmp_path):
    write_task(tmp_path, "int1", [], status="interrupted", error="interrupted by SIGINT")
    page = html.render([loading.load("int1", tmp_path)])
    assert "No results: no frame size finished." in page
    assert "interrupted by SIGINT" in page


def test_nsb_report_commands_through_the_cli(tmp_path, nsb_main):
    simulated_results(tmp_path, "cafe0001")
    code, out, err = nsb_main("report", "table", "cafe0001", "--results-dir", str(tmp_path),
                              "--format", "csv")
    assert code == 0, err
    assert out.splitlines()[0].startswith("task_id,") and "cafe0001" in out
    code, out, err = nsb_main("report", "html", "cafe0001", "--results-dir", str(tmp_path),
                              "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert out.strip() == str(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    code, out, err = nsb_main("report", "table", "nosuch", "--results-dir", str(tmp_path))
    assert code == 2 and len(err.strip().splitlines()) == 1


def _with_evidence(frame, pps, failing_pps, **more):
    record = result(frame, pps, **more)
    record["evidence"] = {"lowest_failing_pps": failing_pps, "full_trials_passed": 1}
    return record


def test_a_difference_inside_the_results_uncertainty_is_not_marked_and_says_why(tmp_path):
    """Search interval 3 %: +1.2 % is noise, +5 % is a change; -0.001 % is not green."""
    write_task(tmp_path, "base", [_with_evidence(64, 1_000_000, 1_030_000),
                                  _with_evidence(1518, 800_000, 804_000)])
    write_task(tmp_path, "other", [_with_evidence(64, 1_012_000, 1_020_000),
                                   _with_evidence(1518, 840_000, 844_000)])
    write_task(tmp_path, "same", [_with_evidence(64, 999_990, 1_030_000),
                                  _with_evidence(1518, 800_000, 804_000)])
    tasks = [loading.load(t, tmp_path) for t in ("base", "other", "same")]
    (_, rows), = compare.compare_all(tasks)
    assert [round(u, 2) for u in rows[0].uncertainty] == [3.0, 0.79, 3.0]
    headers, cells = formats.comparison_table(["base", "other", "same"], rows)
    assert cells[0][-2] == ("+1.20 (within ±3.00)", "same")
    assert cells[0][-1][1] == "same"  # -0.00
    assert cells[1][-2] == ("+5.00", "better")
    text = formats.render(tasks, "markdown", ["base", "other", "same"])
    assert "+1.20 (within ±3.00)" in text


def test_spread_over_iterations_counts_as_uncertainty():
    results = [result(64, pps, iteration=i) for i, pps in enumerate((100, 104, 96))]
    assert summary.uncertainty_pct(results) == pytest.approx(4.0)
    assert summary.uncertainty_pct([result(64, 100)]) is None


def test_several_iterations_end_with_their_mean_and_spread_in_80_columns(tmp_path):
    from rich.console import Console

    write_task(tmp_path, "iters", [result(64, pps, iteration=i)
                                   for i, pps in enumerate((14_000_000, 14_560_000, 13_440_000))])
    task = loading.load("iters", tmp_path)
    assert table.mean_rows(task.results) == [
        ["64", "3", "14,000,000", "4.00", "13,440,000", "14,560,000",
         f"{units.pps_to_pct(14_000_000, 64, 25.0, 2):,.2f}"]]
    console = Console(width=80, record=True)
    for rendered in formats.text_tables([task]):
        console.print(rendered)
    text = console.export_text()
    assert "l3fwd: mean of 3 iterations (task iters)" in text
    assert "14,000,000" in text and "4.00" in text and "…" not in text
    assert "l3fwd, iteration 3 (task iters)" in text


def test_html_shows_the_dut_configuration_from_the_plan(tmp_path):
    directory = write_task(tmp_path, "dut", [result(64, 1_000_000)])
    doc = json.loads((directory / "results.json").read_text())
    doc["plan"]["scenarios"][0].update(name="l3fwd", vnfs={"testpmd0": {
        "type": "testpmd", "node": "sut", "options": {
            "forward_mode": "io", "cores": 2, "rxd": 1024, "config": "a\nb"}}},
        traffic_generator={"tg0": {"type": "trafgen", "node": "tg", "options": {"flows": 16}}})
    (directory / "results.json").write_text(json.dumps(doc))
    page = html.render([loading.load("dut", tmp_path)])
    assert "<h3>DUT configuration</h3>" in page
    assert ("<td>l3fwd</td><td>testpmd0</td><td>VNF</td><td>testpmd</td><td>sut</td>"
            "<td>cores=2; forward_mode=io; rxd=1024</td>") in page
    assert "<td>tg0</td><td>generator</td><td>trafgen</td><td>tg</td><td>flows=16</td>" in page


def test_a_search_at_a_few_percent_is_drawn_on_its_own_range():
    from nsb.report import charts

    trials = [{"frame_size": 64, "requested_rate_pct": pct, "tx_rate_pps": 0,
               "search_lower_pct": 0.0, "search_upper_pct": 100.0, "verdict": "pass"}
              for pct in (1.0, 2.0, 3.0)]
    low, high = charts.searched_range(trials)
    assert 0.0 <= low < 1.0 and 3.0 < high < 4.0
    fig = charts.trajectory(trials, 64)
    assert list(fig.layout.yaxis.range) == [low, high]


def test_pdv_is_the_99_9th_percentile_delay_less_the_minimum(tmp_path):
    write_task(tmp_path, "pdv", [result(64, 1_000_000, latency_avg=10.0), result(128, 900_000)])
    rows = summary.rows(loading.load("pdv", tmp_path))
    assert rows[0]["pdv_us"] == pytest.approx(30.0 - 5.0)  # p99.9 = 3 x avg, min = avg / 2
    assert rows[1]["pdv_us"] is None
    page = html.render([loading.load("pdv", tmp_path)])
    assert "<th>PDV (us)</th>" in page and "25.0" in page


def test_a_generator_limited_answer_has_no_search_interval_uncertainty():
    record = _with_evidence(64, 100_000, 1_000_000)
    record["limited_by"] = "generator"  # trafgen sent 100 kpps of the 900 kpps asked
    record["evidence"]["rate_pps"] = 900_000.0
    assert summary.uncertainty_pct([record]) is None
    record["limited_by"] = "dut"
    assert summary.uncertainty_pct([record]) == pytest.approx(100 * (1e6 - 9e5) / 9e5)


def test_repeated_runs_say_how_far_each_answer_is_from_its_median(tmp_path):
    from rich.console import Console

    from nsb.report import repeatability

    rates = (2_231_108, 2_169_672, 2_078_828, 2_666_436, 2_692_735)  # measured in the lab
    results = [{**result(64, pps, iteration=i), "limited_by": "generator"}
               for i, pps in enumerate(rates)]
    results += [result(1518, pps, iteration=i) for i, pps in enumerate((812_000, 800_000,
                                                                         806_000))]
    (small, large) = repeatability.per_frame(results)
    assert small.median_pps == 2_231_108 and small.runs == 5
    assert small.within_pct == pytest.approx(100 * (2_692_735 - 2_231_108) / 2_231_108)
    assert not small.repeats and large.repeats
    assert small.line().startswith("64 B: 5 runs, median 2,231,108 pps, every run within "
                                   "±20.7 % of it: does NOT repeat within ±5 % (limited by: "
                                   "5 generator)")
    console = Console(width=80, record=True)
    console.print(table.render_means(results))
    assert "1518 B: 3 runs, median 806,000 pps" in console.export_text()
    assert repeatability.per_frame([result(64, 1)]) == []  # one run says nothing


def test_repeat_runs_the_profile_that_many_times(nsb_main):
    import yaml

    from tests.conftest import SAMPLE

    code, out, err = nsb_main("task", "start", "--dry-run", "--repeat", "5", str(SAMPLE))
    assert code == 0, err
    runner = yaml.safe_load(out)["scenarios"][0]["runner"]
    assert runner["type"] == "Iteration" and runner["iterations"] == 5
    code, _, err = nsb_main("task", "validate", "--repeat", "0", str(SAMPLE))
    assert code == 2 and "--repeat: must be at least 1, got 0" in err
