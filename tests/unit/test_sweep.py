"""Sweeps: the points and their order, the dry run, results tagged with their point,
the scaling table and charts, comparisons against a stored sweep, bad values."""

import json

import pytest
import yaml

from nsb import engine, sweep_tags
from nsb.events import KpiSample, LimitedBy, ResultReady
from nsb.outputs.file import FileOutput
from nsb.report import html, loading, sweep_charts
from nsb.report import sweep as report_sweep
from nsb.runinfo import RunInfo
from nsb.task import sweep
from tests.conftest import SAMPLE
from tests.doubles.null_context import NullContext
from tests.doubles.simulated_dut import SimulatedDutGenerator
from tests.unit.test_report import result, run_report

TRAFGEN = json.dumps({"generator": "trafgen", "packet_sizes": [64]})


def sweep_task(tmp_path, section: str, body_extra: str = "") -> str:
    """The lab sample with a ``sweep:`` section put at its top."""
    text = SAMPLE.read_text().replace('schema: "nsb:task:0.1"\n',
                                      f'schema: "nsb:task:0.1"\n{section}\n', 1)
    path = tmp_path / "tc_sweep.yaml"
    path.write_text(text + body_extra)
    return str(path)


# --- points ---------------------------------------------------------------------------------

def test_every_combination_the_first_name_changing_slowest():
    axes = sweep.from_flags(["pmd_cores=1,2,4", "flows=1,1000"])
    assert sweep.points(axes) == [
        {"pmd_cores": 1, "flows": 1}, {"pmd_cores": 1, "flows": 1000},
        {"pmd_cores": 2, "flows": 1}, {"pmd_cores": 2, "flows": 1000},
        {"pmd_cores": 4, "flows": 1}, {"pmd_cores": 4, "flows": 1000}]


def test_flag_values_are_numbers_booleans_or_text():
    (axis,) = sweep.from_flags(["mask=0x2, 0x6,3,2.5,true,io"])
    assert axis.values == ("0x2", "0x6", 3, 2.5, True, "io")
    assert sweep.point_label({"mask": "0x6", "ht": False}) == "mask=0x6,ht=false"


@pytest.mark.parametrize("flag, message", [
    ("flows", "give NAME=VALUE1,VALUE2"), ("1x=2", "give NAME=VALUE1,VALUE2"),
    ("flows=1,,2", "an empty value"), ("flows=", "an empty value"),
    ("flows=1,2,1", "1 is listed twice"),
])
def test_bad_flags_say_what_is_allowed(flag, message):
    with pytest.raises(sweep.TaskError) as caught:
        sweep.from_flags([flag])
    assert str(caught.value).startswith("--sweep: ") and message in str(caught.value)


def test_the_same_name_twice_on_the_command_line_is_an_error():
    with pytest.raises(sweep.TaskError, match="given twice"):
        sweep.from_flags(["flows=1", "flows=2"])


def test_too_many_points_are_refused():
    axes = sweep.from_flags(["a=" + ",".join(map(str, range(20))),
                             "b=" + ",".join(map(str, range(20)))])
    with pytest.raises(sweep.TaskError, match="400 combinations; at most 256"):
        sweep.combine([], axes, {}, "--task-args")


# --- loading and the dry run ----------------------------------------------------------------

def test_dry_run_shows_every_point_in_order(nsb_main, tmp_path):
    path = sweep_task(tmp_path, "sweep: {flows: [1, 16], forward_mode: [io, mac]}")
    code, out, err = nsb_main("task", "start", path, "--task-args", TRAFGEN, "--dry-run")
    assert code == 0, err
    plan = yaml.safe_load(out)
    points = [{"flows": f, "forward_mode": m} for f in (1, 16) for m in ("io", "mac")]
    assert plan["sweep"] == points
    assert [s["sweep"] for s in plan["scenarios"]] == points
    assert [s["name"] for s in plan["scenarios"]] == [
        f"testpmd_rfc2544@{sweep.point_label(p)}" for p in points]
    for scenario, point in zip(plan["scenarios"], points, strict=True):
        assert scenario["traffic_generator"]["tg0"]["options"]["flows"] == point["flows"]
        assert scenario["vnfs"]["testpmd0"]["options"]["forward_mode"] == point["forward_mode"]


def test_the_flag_replaces_a_file_axis_and_task_args_pin_one(nsb_main, tmp_path):
    path = sweep_task(tmp_path, "sweep: {flows: [1, 16], forward_mode: [io, mac]}")
    args = json.dumps({"generator": "trafgen", "packet_sizes": [64], "forward_mode": "mac"})
    code, out, err = nsb_main("task", "start", path, "--task-args", args,
                              "--sweep", "flows=2,4,8", "--dry-run")
    assert code == 0, err
    assert yaml.safe_load(out)["sweep"] == [{"flows": 2}, {"flows": 4}, {"flows": 8}]


def test_a_task_without_a_sweep_is_unchanged(nsb_main):
    code, out, err = nsb_main("task", "start", str(SAMPLE), "--task-args", TRAFGEN, "--dry-run")
    assert code == 0, err
    plan = yaml.safe_load(out)
    assert "sweep" not in plan and [s["name"] for s in plan["scenarios"]] == ["testpmd_rfc2544"]


@pytest.mark.parametrize("section, message", [
    ("sweep: {flows: []}", "sweep.flows: must be a list of numbers, strings or booleans"),
    ("sweep: {flows: 16}", "sweep.flows: must be a list"),
    ("sweep: {flows: [1, {a: 2}]}", "sweep.flows[1]: {\"a\": 2} is not a value to sweep"),
    ("sweep: {flows: [1, 1]}", "sweep.flows: 1 is listed twice"),
    ("sweep: [flows]", "sweep: must map task args to their values"),
    ("sweep: {flowz: [1, 2]}", "sweep.flowz: 'flowz' is not used by the task's templates "
                               "(did you mean 'flows'?)"),
])
def test_bad_sweep_values_give_one_located_line_and_exit_2(nsb_main, tmp_path, section,
                                                           message):
    path = sweep_task(tmp_path, section)
    code, out, err = nsb_main("task", "start", path, "--task-args", TRAFGEN, "--dry-run")
    line = SAMPLE.read_text().splitlines().index('schema: "nsb:task:0.1"') + 2
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"nsb: error: {path}:{line}: {message}"
                                        + err.strip().split(message, 1)[1]]


def test_a_name_both_swept_and_set_is_an_error(nsb_main):
    args = json.dumps({"generator": "trafgen", "flows": 4})
    code, _, err = nsb_main("task", "start", str(SAMPLE), "--task-args", args,
                            "--sweep", "flows=1,2", "--dry-run")
    assert code == 2
    assert err.strip() == ("nsb: error: --sweep: flows: also given in --task-args; sweep it "
                           "or set it, not both")


def test_a_sweep_may_not_change_the_context(nsb_main):
    code, _, err = nsb_main("task", "start", str(SAMPLE), "--task-args", TRAFGEN,
                            "--sweep", "link=veth,memif", "--dry-run")
    assert code == 2
    assert "--sweep: link: at link=memif the task's context differs" in err
    assert len(err.strip().splitlines()) == 1


# --- tagging and the results of a run -------------------------------------------------------

def _result_event(scenario="s@flows=1") -> ResultReady:
    return ResultReady("t", scenario, iteration=0, frame_size=64, throughput_pps=1.0,
                       throughput_mbps=1.0, line_rate_pct=1.0, loss_pct=0.0, latency=None,
                       limited_by=LimitedBy.DUT, trials=1, extra={"noise": 0.1})


def test_results_are_tagged_with_their_point_and_nothing_else_is():
    seen = []
    emit = sweep_tags.tagging(seen.append, {"flows": 16})
    emit(_result_event())
    emit(KpiSample("t", "s", source="x", node="n", kpis={"a": 1.0}))
    assert seen[0].extra == {"noise": 0.1, "sweep": {"flows": 16}}
    assert not hasattr(seen[1], "extra")
    assert sweep_tags.tagging(seen.append, {}) == seen.append


CAPACITY = {1: 1_000_000.0, 16: 1_800_000.0, 256: 2_400_000.0}  # a DUT that scales with flows


def swept_run(tmp_path, task_id="sweep01", capacity=CAPACITY, flows="1,16,256"):
    """A real results file of a swept task, each point's DUT simulated."""
    task, _ = sweep.load(SAMPLE, {"generator": "trafgen", "packet_sizes": [64, 512]},
                         [f"flows={flows}"], "--task-args")
    run = RunInfo(task_id, task, tmp_path / task_id)
    real = engine.plan(task, run)
    for scenario in real.scenarios:
        scenario.vnfs = []
        scenario.generator = SimulatedDutGenerator(capacity[scenario.spec.sweep["flows"]])
    plan = engine.Plan(task, run, NullContext(task.context, {}, run), real.scenarios,
                       [FileOutput(task.outputs[0], {}, run)])
    engine.execute(plan)
    return loading.load(task_id, tmp_path)


def test_a_swept_run_is_one_task_with_each_result_tagged(tmp_path):
    task = swept_run(tmp_path)
    assert [(r["sweep"], r["frame_size"]) for r in task.results] == [
        ({"flows": f}, size) for f in (1, 16, 256) for size in (64, 512)]
    (found,) = report_sweep.sweeps(task.results)
    assert found.scenario == "testpmd_rfc2544" and found.labels == ["flows=1", "flows=16",
                                                                    "flows=256"]
    for flows, capacity in CAPACITY.items():
        measured = found.means[f"flows={flows}"][64]
        line_pps = 100 * measured["throughput_pps"] / measured["line_rate_pct"]
        # within the search's precision (2 % of line rate in the sample)
        assert capacity - 0.02 * line_pps <= measured["throughput_pps"] <= capacity


# --- scaling table and charts ---------------------------------------------------------------

def records(points: dict, scenario="ovs", iterations=1) -> list[dict]:
    """Results of a sweep: {pmd_cores value: {frame: pps}}."""
    out = []
    for value, by_frame in points.items():
        for iteration in range(iterations):
            for frame, pps in by_frame.items():
                record = result(frame, pps * (1 + iteration / 10), scenario=f"{scenario}@pmd="
                                f"{value}", iteration=iteration)
                out.append({**record, "sweep": {"pmd": value}})
    return out


SWEPT = {1: {64: 1_000_000, 1518: 800_000}, 2: {64: 1_900_000, 1518: 810_000},
         4: {64: 3_500_000, 1518: 812_000}}


def test_scaling_table_has_a_row_per_frame_and_a_column_per_point():
    (found,) = report_sweep.sweeps(records(SWEPT, iterations=2))
    headers, cells = report_sweep.scaling_table(found)
    assert headers == ["Frame (B)", "pmd=1 (pps)", "pmd=2 (pps)", "pmd=4 (pps)",
                       "pmd=2 / pmd=1", "pmd=4 / pmd=1"]
    assert cells == [["64", "1,050,000", "1,995,000", "3,675,000", "x1.90", "x3.50"],
                     ["1518", "840,000", "850,500", "852,600", "x1.01", "x1.01"]]


def test_chart_data_one_line_per_point_and_one_per_frame_size():
    (found,) = report_sweep.sweeps(records(SWEPT))
    assert sweep_charts.by_frame_data(found) == [
        ("pmd=1", ["64", "1518"], [1_000_000, 800_000]),
        ("pmd=2", ["64", "1518"], [1_900_000, 810_000]),
        ("pmd=4", ["64", "1518"], [3_500_000, 812_000])]
    title, lines = sweep_charts.by_value_data(found)
    assert title == "pmd"
    assert lines == [("64", [1, 2, 4], [1_000_000, 1_900_000, 3_500_000]),
                     ("1518", [1, 2, 4], [800_000, 810_000, 812_000])]
    figure = sweep_charts.throughput_by_value(found)
    assert figure.layout.xaxis.type == "linear" and list(figure.data[0].x) == [1, 2, 4]


def test_comparison_matches_sweep_points_not_positions():
    base = records(SWEPT)
    stored = records({2: {64: 2_090_000}, 4: {64: 3_150_000}, 8: {64: 5_000_000}})
    (match,) = report_sweep.matched([base, stored])
    headers, cells = report_sweep.comparison_table(*match, ["new", "old"])
    assert headers == ["Point", "Frame (B)", "new (pps)", "old (pps)", "old vs new (%)"]
    assert cells == [["pmd=1", "64", "1,000,000", "-", "-"],
                     ["pmd=1", "1518", "800,000", "-", "-"],
                     ["pmd=2", "64", "1,900,000", "2,090,000", "+10.00"],
                     ["pmd=2", "1518", "810,000", "-", "-"],
                     ["pmd=4", "64", "3,500,000", "3,150,000", "-10.00"],
                     ["pmd=4", "1518", "812,000", "-", "-"]]


def test_report_table_prints_the_scaling_and_the_comparison(tmp_path, capsys):
    swept_run(tmp_path, "new01")
    swept_run(tmp_path, "old01", capacity={1: 500_000.0, 16: 900_000.0, 256: 1_200_000.0},
              flows="1,16,256")
    assert run_report("report", "table", "new01", "old01", "--results-dir", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "testpmd_rfc2544: throughput per sweep point (task new01)" in out
    assert "testpmd_rfc2544 sweep: old01 vs new01" in out
    assert run_report("report", "table", "new01", "old01", "--results-dir", str(tmp_path),
                      "--format", "json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["task_id"] for s in doc["sweeps"]] == ["new01", "old01"]
    assert doc["sweeps"][0]["points"] == [{"flows": 1}, {"flows": 16}, {"flows": 256}]
    assert run_report("report", "table", "new01", "--results-dir", str(tmp_path),
                      "--format", "markdown") == 0
    assert "| Frame (B) | flows=1 (pps) | flows=16 (pps) | flows=256 (pps) |" in \
        capsys.readouterr().out


def test_html_report_has_the_sweep_table_and_both_charts(tmp_path):
    tasks = [swept_run(tmp_path, "new01"), swept_run(tmp_path, "old01")]
    page = html.render(tasks)
    for element in ("t1-sweep1-table", "t1-sweep1-frames-chart", "t1-sweep1-values-chart",
                    "t2-sweep1-table", "cmp-sweep1-table"):
        assert f'id="{element}"' in page
    single = html.render(tasks[:1])
    assert 'id="cmp-sweep1-table"' not in single and 'id="t1-sweep1-table"' in single


def test_the_ovs_dpdk_sample_sweeps_pmd_cores_into_the_pmd_mask(nsb_main):
    sample = SAMPLE.parent / "vswitch" / "tc_ovs_dpdk_pmd_sweep.yaml"
    code, out, err = nsb_main("task", "start", str(sample), "--dry-run")
    assert code == 0, err
    plan = yaml.safe_load(out)
    assert plan["sweep"] == [{"pmd_cores": 1}, {"pmd_cores": 2}, {"pmd_cores": 4}]
    masks = [s["vnfs"]["ovs0"]["options"]["pmd_cpu_mask"] for s in plan["scenarios"]]
    assert masks == ["0x4", "0xc", "0x3c"]
    code, out, err = nsb_main("task", "start", str(sample), "--sweep", "pmd_cores=2,3",
                              "--task-args", '{"pmd_first_core": 4}', "--dry-run")
    assert code == 0, err
    assert [s["vnfs"]["ovs0"]["options"]["pmd_cpu_mask"]
            for s in yaml.safe_load(out)["scenarios"]] == ["0x30", "0x70"]
