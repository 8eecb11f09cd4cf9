"""A stateful answer's KPIs wherever results go: the summary row and CSV, the SLA gate,
the comparison and the trend read it in its own unit (connections a second, sessions
held), never as the packets of the trial behind it. The results are real files: the
stateful profiles run over a DUT of known capacity and nsb's file output writes them."""

from __future__ import annotations

import csv
import io
import json

import pytest

from nsb import sla, stateful_kpis
from nsb.errors import TaskError
from nsb.report import compare, formats, html, loading, stateful_html, summary, trend
from nsb.traffic_profiles.stateful.concurrent import ConcurrentSessionsProfile
from nsb.traffic_profiles.stateful.cps import CpsProfile
from tests.doubles.stateful_dut import StatefulDutDouble, make_profile, stateful_run
from tests.unit.test_report import result as frame_result
from tests.unit.test_report import write_task


def cps_run(results_dir, task_id, dut_cps, generator_cps=1e9, start=None, **options):
    profile = make_profile(CpsProfile, "cps", lower_cps=500, upper_cps=20000,
                           precision_pct=2, duration=1, **options)
    stateful_run(results_dir, task_id, "cps_nat", profile,
                 StatefulDutDouble(dut_cps=dut_cps, generator_cps=generator_cps), start)
    return loading.load(task_id, results_dir)


def sessions_run(results_dir, task_id, table):
    profile = make_profile(ConcurrentSessionsProfile, "concurrent_sessions",
                           lower_sessions=100, upper_sessions=10000, precision_pct=2,
                           open_cps=2000)
    stateful_run(results_dir, task_id, "sessions", profile, StatefulDutDouble(dut_sessions=table))
    return loading.load(task_id, results_dir)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A CPS answer of a DUT admitting 2938 connections/s, and a concurrent-sessions
    answer of a DUT holding 2919, as results.json holds them."""
    directory = tmp_path_factory.mktemp("results")
    return {"dir": directory, "cps": cps_run(directory, "cps00001", 2938),
            "sessions": sessions_run(directory, "ses00001", 2919)}


# --- the summary row and CSV ------------------------------------------------------------------

def test_the_summary_row_and_csv_carry_a_stateful_answer_in_its_own_unit(runs):
    (cps,) = summary.rows(runs["cps"])
    answer = runs["cps"].results[0]["stateful"]
    assert cps["stateful_kind"] == "cps"
    assert 2938 * 0.98 - 1 <= cps["cps"] <= 2938  # within the search's precision
    assert cps["cps"] == answer["cps"] and cps["dut_sessions"] == answer["dut_sessions"]
    assert cps["sessions"] is None and cps["throughput_pps"] > 7 * 2800  # its packets
    (held,) = summary.rows(runs["sessions"])
    assert held["stateful_kind"] == "concurrent_sessions"
    assert 2919 * 0.98 - 1 <= held["sessions"] <= 2919 and held["dut_sessions"] == \
        held["sessions"]
    rows = list(csv.DictReader(io.StringIO(formats.render(
        [runs["cps"], runs["sessions"]], "csv"))))
    assert [r["stateful_kind"] for r in rows] == ["cps", "concurrent_sessions"]
    assert float(rows[0]["cps"]) == cps["cps"] and rows[0]["sessions"] == ""
    assert int(rows[1]["sessions"]) == held["sessions"]
    assert int(rows[1]["dut_sessions"]) == held["dut_sessions"]


def test_a_frame_answer_has_the_stateful_columns_empty(tmp_path):
    write_task(tmp_path, "frames01", [frame_result(64, 1_000_000)])
    (row,) = summary.rows(loading.load("frames01", tmp_path))
    assert all(row[key] is None for key in ("stateful_kind", "cps", "sessions",
                                            "dut_sessions"))
    (line,) = csv.DictReader(io.StringIO(formats.render([loading.load("frames01", tmp_path)],
                                                         "csv")))
    assert line["cps"] == "" and line["throughput_pps"] == "1000000.0"


def test_markdown_shows_stateful_answers_in_their_own_table(runs):
    text = formats.render([runs["cps"]], "markdown")
    assert "| Test | Program | Answer | Connections/s |" in text
    assert "connections/s |" in text and "| Frame (B) |" not in text


# --- SLAs --------------------------------------------------------------------------------------

def test_cps_and_sessions_slas_read_the_stateful_answers(runs):
    results = runs["cps"].results + runs["sessions"].results
    found = summary.rows(runs["cps"])[0]["cps"]
    met, missed = sla.check([sla.parse("cps>=2k"), sla.parse("cps>=3k")], results)
    assert (met.passed, met.measured, met.frame_size) == (True, found, "cps")
    assert not missed.passed and missed.comparable and "MISSED" in missed.message
    (held,) = sla.check([sla.parse("sessions>=2800")], results)
    assert held.passed and held.scenario == "sessions"
    dut = sla.check([sla.parse("dut_sessions>=2800")], results)
    assert [o.scenario for o in dut] == ["cps_nat", "sessions"] and all(o.passed for o in dut)
    # frame metrics leave connection answers alone: their packets are not the answer
    (none,) = sla.check([sla.parse("ndr_pps>=1")], results)
    assert not none.passed and none.message == "ndr_pps>=1: no result"


def test_a_frame_size_on_a_stateful_metric_is_one_line():
    with pytest.raises(TaskError, match=r"'cps>=50k@64': cps is a stateful answer's, measured "
                                        r"in connections, not at a frame size: drop '@64'"):
        sla.parse("cps>=50k@64")
    assert sla.parse("sessions>=1M").value == 1e6


def test_a_stateful_sla_without_a_stateful_answer_is_missed_and_says_what_it_wanted():
    frames = [frame_result(64, 1_000_000)]
    (missed,) = sla.check([sla.parse("sessions>=1")], frames)
    assert not missed.passed and missed.message == \
        "sessions>=1: no result of kind concurrent_sessions"
    (anyone,) = sla.check([sla.parse("dut_sessions>=1")], frames)
    assert anyone.message == "dut_sessions>=1: no result that is stateful"


def test_a_generator_limited_cps_answer_under_its_threshold_is_not_comparable(tmp_path):
    limited = cps_run(tmp_path, "gen00001", 40000, generator_cps=9000)
    assert limited.results[0]["limited_by"] == "generator"
    (short,) = sla.check([sla.parse("cps>=10k")], limited.results)
    assert not short.comparable and "NOT COMPARABLE" in short.message
    (enough,) = sla.check([sla.parse("cps>=5k")], limited.results)
    assert enough.passed and enough.comparable


def test_a_regression_compares_stateful_answers_in_connections(tmp_path, runs):
    slower = cps_run(tmp_path, "cps00002", 2500)
    (outcome,) = sla.check([sla.parse("regression_pct<=5")], slower.results,
                           runs["cps"].results)
    base, now = (stateful_kpis.value(r.results[0]) for r in (runs["cps"], slower))
    assert outcome.measured == pytest.approx(100.0 * (base - now) / base)
    assert not outcome.passed and outcome.frame_size == "cps"


# --- compare -----------------------------------------------------------------------------------

def test_two_runs_stateful_answers_compare_on_their_connections(tmp_path, runs):
    faster = cps_run(tmp_path, "cps00003", 4000)
    ((match, (row,)),) = compare.compare_all([runs["cps"], faster])
    assert row.kind == "cps" and row.comparable(1)
    base, other = row.values["cps"]
    assert row.diff_pct["cps"][0] == pytest.approx(100.0 * (other - base) / base)
    headers, (cells,) = formats.comparison_table(["A", "B"], [row])
    assert headers[:4] == ["Answer", "A Connections/s", "A DUT sessions", "A limited by"]
    assert cells[0] == ("cps", "") and cells[1] == (f"{base:,.0f}", "")
    assert cells[-1] == (f"{row.diff_pct['cps'][0]:+.2f}", "better")
    assert not any("pps" in header or "Mbps" in header for header in headers)


def test_a_difference_within_the_search_precision_is_the_same(tmp_path, runs):
    close = cps_run(tmp_path, "cps00004", 2938 * 1.01)
    ((_, (row,)),) = compare.compare_all([runs["cps"], close])
    assert row.uncertainty == [2.0, 2.0]  # the profile's precision_pct
    assert compare.verdict(compare.BY_KEY["cps"], row.diff_pct["cps"][0],
                           compare.within(row, compare.BY_KEY["cps"], 1)) == "same"


def test_answers_of_different_kinds_or_a_generator_limited_one_are_not_comparable(
        tmp_path, runs):
    write_task(tmp_path, "frames02", [frame_result(64, 1_000_000, scenario="cps_nat")])
    frames = loading.load("frames02", tmp_path)
    ((_, (row,)),) = compare.compare_all([runs["cps"], frames])
    assert not row.comparable(1)
    assert compare.not_comparable_lines(["A", "B"], [row]) == [
        "cps: B vs A not comparable, the answers are of different kinds (A: cps, B: frames)"]
    limited = cps_run(tmp_path, "gen00002", 40000, generator_cps=9000)
    ((_, (row,)),) = compare.compare_all([runs["cps"], limited])
    assert not row.comparable(1) and "generator" in row.limited_by[1]


# --- trend -------------------------------------------------------------------------------------

def test_a_stateful_answer_is_a_trend_point_in_its_own_unit_apart_from_frames(tmp_path):
    for index, dut_cps in enumerate([3000, 3010, 2990, 3005, 2000, 2010, 1990]):
        cps_run(tmp_path, f"2612{index:02d}-000000-cps", dut_cps, start=1.79e9 + 3600 * index)
    cps_run(tmp_path, "261207-000000-gen", 40000, generator_cps=9000, start=1.79e9 + 3600 * 7)
    (found,) = trend.trends(tmp_path)
    assert found.test[3] == "connections/s" and found.unit == "connections/s"
    assert found.name.endswith("cps_nat cps connections/s")
    counted = [p.value for p in found.points if not p.left_out]
    answers = [stateful_kpis.value(loading.load(p.task_id, tmp_path).results[0])
               for p in found.points if not p.left_out]
    assert counted == answers and all(1900 < v < 3100 for v in counted)
    assert [p.left_out for p in found.points][-1] == "generator-limited"
    assert [g["runs"] for g in found.groups] == [4, 3]
    assert trend.rows([found])[0][3].endswith("connections/s")
    doc = json.loads(trend.as_json([found]))
    assert doc[0]["unit"] == "connections/s" and "cps" in doc[0]["points"][0]


# --- the HTML report ---------------------------------------------------------------------------

def test_the_html_report_draws_a_stateful_scenario_in_connections(runs, tmp_path):
    page = html.render([runs["cps"]])
    for element in ("t1-s1-summary-table", "t1-s1-stateful-table", "t1-s1-cps-chart",
                    "t1-s1-failed-chart"):
        assert f'id="{element}"' in page, element
    # its 64 B packets are neither a throughput answer nor a frame search
    assert 'id="t1-s1-throughput-chart"' not in page and "trajectory-64" not in page
    assert 'id="t1-s1-sessions-chart"' not in page  # a cps answer held no sessions
    assert 'id="t1-s1-sessions-chart"' in html.render([runs["sessions"]])
    write_task(tmp_path, "frames03", [frame_result(64, 1_000_000)])
    assert "stateful-table" not in html.render([loading.load("frames03", tmp_path)])


def test_the_stateful_table_escapes_what_the_results_file_says():
    odd = {"scenario": "s", "frame_size": 64, "limited_by": "dut<b>",
           "stateful": {"kind": "cps", "program": "/p/<i>.py", "cps": 10.0,
                        "counts": {"failed": {"x<y": 3}, "loss_pct": 1.0}}}
    table_html = stateful_html.answers_table([odd], "t")
    assert "&lt;i&gt;.py" in table_html and "x&lt;y 3" in table_html
    assert "<b>" not in table_html and "<i>" not in table_html


def test_a_results_file_whose_stateful_answer_is_the_wrong_shape_is_one_line(tmp_path):
    write_task(tmp_path, "odd00001", [{**frame_result(64, 1), "stateful": {"cps": "fast"}}])
    with pytest.raises(TaskError, match=r"results.*stateful.*cps"):
        loading.load("odd00001", tmp_path)


def test_the_html_comparison_of_two_cps_runs_draws_their_connection_rates(tmp_path, runs):
    faster = cps_run(tmp_path, "cps00005", 4000)
    page = html.render([runs["cps"], faster], ["A", "B"])
    assert 'id="cmp1-cps-chart"' in page and 'id="cmp1-throughput-chart"' not in page
    ((_, (row,)),) = compare.compare_all([runs["cps"], faster])
    assert f"{row.diff_pct['cps'][0]:+.1f} %" in page
