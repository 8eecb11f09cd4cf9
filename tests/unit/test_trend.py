"""Trends (nsb report trend, task gate --trend) on synthetic histories whose steps are
known: jumpavg's groups begin at the run the step was made, the newest run is a
regression, a progression or normal, and what is not the DUT's speed is left out."""

from __future__ import annotations

import json
import random
import re

import pytest

from nsb.report import trend


def _history(tmp_path, values, limited=(), args=None, chains=None, spread=()):
    """One finished run per value, in time order (task ids sort by start time); with
    ``spread``, each an MRR run of trials at value * (1 + each part of it)."""
    ids = []
    for n, value in enumerate(values):
        task_id = f"261101-{n:06d}-aaaaaa"
        folder = tmp_path / task_id
        folder.mkdir()
        result = {"scenario": "s", "profile": "mrr", "frame_size": 64,
                  "throughput_pps": value, "warnings": [], "timestamp": 1.8e9 + 3600 * n,
                  "limited_by": "generator" if n in limited else "dut"}
        if spread:
            result["mrr"] = {"receive_rates_pps": [value * (1 + d) for d in spread]}
        if chains:
            result["chains"] = [{"chain": k, "throughput_pps": value * share}
                                for k, share in enumerate(chains)]
        folder.joinpath("results.json").write_text(json.dumps({
            "task": {"id": task_id, "status": "ok", "file": "/x/tc_mrr.yaml",
                     "args": args or {}}, "results": [result]}))
        ids.append(task_id)
    return ids


def _noisy(level, runs, seed):
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-0.005, 0.005)) for _ in range(runs)]


def test_a_step_down_is_a_regression_found_at_the_run_it_was_made(tmp_path):
    ids = _history(tmp_path, _noisy(1e6, 8, 1) + _noisy(0.9e6, 6, 2))
    (found,) = trend.trends(tmp_path)
    assert [g["runs"] for g in found.groups] == [8, 6]
    assert found.groups[1]["first"] == ids[8] and found.groups[1]["comment"] == "regression"
    assert found.newest == "regression"
    assert found.change_pct == pytest.approx(-10, abs=1)


# the means of five lab runs in CI (tests/functional/test_trend_lab.py): as bare numbers
# jumpavg splits every run after the first two, since nothing says how noisy a run is
LAB_MEANS = [52341.1, 52250.5, 50433.6, 29663.6, 26930.2]
TRIAL_SPREAD = (-0.07, -0.03, 0.0, 0.01, 0.03, 0.06)  # as that lab's trials spread


def test_an_mrr_run_is_its_trials_so_a_step_is_weighed_against_their_spread(tmp_path):
    bare, trials = tmp_path / "bare", tmp_path / "trials"
    bare.mkdir()
    trials.mkdir()
    _history(bare, LAB_MEANS)
    (found,) = trend.trends(bare)
    assert [g["runs"] for g in found.groups] == [2, 1, 1, 1]
    ids = _history(trials, LAB_MEANS, spread=TRIAL_SPREAD)
    (found,) = trend.trends(trials)
    assert found.points[0].samples == pytest.approx([v * (1 + d) for v in LAB_MEANS[:1]
                                                     for d in TRIAL_SPREAD])
    assert [(g["first"], g["runs"], g["comment"]) for g in found.groups] == \
        [(ids[0], 3, "normal"), (ids[3], 2, "regression")]
    assert found.groups[1]["avg"] == pytest.approx(sum(LAB_MEANS[3:]) / 2)


def test_a_step_up_is_a_progression_and_a_flat_history_is_normal(tmp_path):
    up = tmp_path / "up"
    up.mkdir()
    _history(up, _noisy(1e6, 6, 3) + _noisy(1.2e6, 4, 4))
    (found,) = trend.trends(up)
    assert found.newest == "progression" and found.change_pct == pytest.approx(20, abs=1)
    flat = tmp_path / "flat"
    flat.mkdir()
    _history(flat, _noisy(1e6, 12, 5))
    (found,) = trend.trends(flat)
    assert found.newest == "normal" and len(found.groups) == 1


def test_generator_limited_runs_are_left_out_and_said_to_be(tmp_path):
    values = _noisy(1e6, 8, 6)
    values[3] = 0.5e6  # the generator fell short that day: not the DUT's speed
    _history(tmp_path, values, limited=(3,))
    (found,) = trend.trends(tmp_path)
    assert found.newest == "normal" and len(found.groups) == 1
    assert [p.task_id for p in found.left_out] == ["261101-000003-aaaaaa"]
    (row,) = trend.rows([found])
    assert row[2] == "1 (generator-limited)"


def test_each_chain_and_each_set_of_args_is_its_own_test(tmp_path):
    _history(tmp_path, _noisy(1e6, 6, 7) + _noisy(0.8e6, 4, 8), chains=[0.5, 0.5],
             args={"chains": 2})
    found = trend.trends(tmp_path)
    assert [t.test[-1] for t in found] == [None, 0, 1]
    assert all(t.newest == "regression" for t in found)
    assert 'tc_mrr {"chains":2} s mrr 64 B chain 1' == found[2].name


def test_the_gate_exits_4_on_a_regression_and_judges_a_run_by_the_history_before_it(
        nsb_main, tmp_path):
    ids = _history(tmp_path, _noisy(1e6, 8, 9) + _noisy(0.9e6, 5, 10))
    code, out, err = nsb_main("task", "gate", ids[-1], "--trend", "--results-dir",
                              str(tmp_path))
    assert code == 4, err
    assert "TREND tc_mrr s mrr 64 B: regression (-" in out and "% from the group before" in out
    assert "trend: 1 of 1 tests regressed" in err
    code, out, _ = nsb_main("task", "gate", ids[7], "--trend", "--results-dir", str(tmp_path))
    assert code == 0 and "TREND tc_mrr s mrr 64 B: normal" in out


def test_the_report_lists_the_groups(nsb_main, tmp_path):
    _history(tmp_path, _noisy(1e6, 5, 11) + _noisy(0.7e6, 3, 12))
    code, out, _ = nsb_main("report", "trend", "--results-dir", str(tmp_path), "--format",
                            "json")
    assert code == 0
    (shown,) = json.loads(out)
    assert shown["newest"] == "regression" and [g["runs"] for g in shown["groups"]] == [5, 3]


def test_the_html_page_draws_each_test_and_marks_where_its_group_began(nsb_main, tmp_path):
    ids = _history(tmp_path, _noisy(1e6, 6, 13) + _noisy(0.8e6, 3, 14), limited=(2,))
    page = tmp_path / "trend.html"
    code, _, err = nsb_main("report", "trend", "--results-dir", str(tmp_path), "--html",
                            str(page))
    assert code == 0, err
    from nsb.report import trend_html

    (found,) = trend.trends(tmp_path)
    fig = trend_html.figure(found)
    marks = [t for t in fig.data if t.name == "regression"]
    assert len(marks) == 1 and list(marks[0].x) == [ids[6]]
    assert [t.name for t in fig.data if t.name == "left out"] == ["left out"]
    text = page.read_text()
    assert 'id="trend-table"' in text and 'data-kind="trend"' in text


def test_brackets_in_a_tests_args_are_shown_not_taken_for_markup(nsb_main, tmp_path):
    _history(tmp_path, _noisy(1e6, 3, 15), args={"v": "[red]"})
    code, out, _ = nsb_main("report", "trend", "--results-dir", str(tmp_path))
    assert code == 0 and '"[red]"' in out


def test_the_marks_for_grafana_put_the_change_at_the_step_run_only(tmp_path):
    """nsb_trend points: one per counted run at its result time, change -1 where the
    regression began (and nowhere else), the group averages as jumpavg found them."""
    from nsb.report import trend_influx

    ids = _history(tmp_path, _noisy(1e6, 8, 1) + _noisy(0.9e6, 6, 2), limited=(4,),
                   args={"rate": "mrr"})
    (found,) = trend.trends(tmp_path)
    marks = trend_influx.marks([found])
    assert len(marks) == 13  # the generator-limited run is no point of the trend
    assert {m.measurement for m in marks} == {"nsb_trend"}
    assert marks[0].tags == {"test_case": "tc_mrr", "task_args": '{"rate":"mrr"}',
                             "scenario": "s", "profile": "mrr", "frame_size": "64"}
    changes = [(m.time_ns, m.fields["change"]) for m in marks if m.fields["change"]]
    assert changes == [(round((1.8e9 + 3600 * 8) * 1e9), -1.0)]
    step = next(m for m in marks if m.fields["change"])
    assert step.fields["change_pct"] == pytest.approx(found.change_pct)
    assert step.fields["text"].startswith(f"regression at run {ids[8]}: tc_mrr")
    assert [m.fields["group_avg_pps"] for m in marks] == \
        [found.groups[0]["avg"]] * 7 + [found.groups[1]["avg"]] * 6
    assert "change_pct" not in marks[0].fields and "in a group of 7 runs" in marks[0].fields[
        "text"]
    assert "nsb_trend,chain=" not in marks[0].line()  # no empty chain tag on an aggregate


def test_an_influxdb_that_cannot_be_read_is_one_line(capsys):
    import socket

    from nsb.cli import main

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = main(["report", "trend", "--influx", "--url", f"http://127.0.0.1:{port}",
                 "--api", "v1", "--database", "nsb"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"InfluxDB at http://127.0.0.1:{port} database nsb: cannot query" in err


def _own_history(tmp_path, kind: str, answers: list[dict], profile: str):
    """One finished run per answer of a test under change (``kind``: the result's key)."""
    for n, answer in enumerate(answers):
        task_id = f"261101-{n:06d}-bbbbbb"
        folder = tmp_path / task_id
        folder.mkdir(parents=True)
        results = [{"scenario": "s", "profile": profile, "frame_size": size,
                    "throughput_pps": 1000.0, "warnings": [], "limited_by": "none",
                    "timestamp": 1.8e9 + 3600 * n, kind: value}
                   for size, value in answer.items()]
        folder.joinpath("results.json").write_text(json.dumps({
            "task": {"id": task_id, "status": "ok", "file": "/x/tc_change.yaml"},
            "results": results}))


def test_answers_under_change_trend_in_their_own_metric_lower_or_higher_better(tmp_path):
    """A longer reset time and a smaller MAC capacity are regressions; each frame size
    and each metric is a test of its own; an answer without its number is left out."""
    resets = [{64: {"reset_time_s": v}, 1518: {"reset_time_s": 0.4}}
              for v in _noisy(0.4, 8, 1) + _noisy(0.6, 6, 2)]
    resets[3][64]["reset_time_s"] = None
    _own_history(tmp_path / "reset", "reset", resets, "reset_time")
    macs = [{64: {"mac_capacity": v, "learning_rate_pps": 3e4}}
            for v in [2000] * 8 + [1000] * 6]
    _own_history(tmp_path / "mac", "mac_learning", macs, "mac_learning")
    by_name = {t.name: t for t in trend.trends(tmp_path / "reset")}
    short = by_name["tc_change s reset_time reset_time_s at 64 B"]
    assert short.unit == "reset_time_s" and short.newest == "regression"
    assert short.groups[-1]["avg"] == pytest.approx(0.6, rel=0.01)
    assert [p.left_out for p in short.points].count("no answer") == 1
    assert by_name["tc_change s reset_time reset_time_s at 1518 B"].newest == "normal"
    found = {t.unit: t for t in trend.trends(tmp_path / "mac")}
    assert found["mac_capacity"].newest == "regression"
    assert found["mac_learning_rate_pps"].newest == "normal"
    (row,) = trend.rows([short])
    assert re.match(r"7: 0\.\d{3} reset_time_s; 6: 0\.\d{3} reset_time_s$", row[3]), row


def test_a_shorter_reconfiguration_is_a_progression_of_its_blocked_time(tmp_path):
    answers = [{64: {"reset_time_s": v, "blocked_time_s": v}}
               for v in _noisy(0.3, 8, 3) + _noisy(0.1, 6, 4)]
    _own_history(tmp_path, "reset", answers, "reconfig")
    (found,) = trend.trends(tmp_path)
    assert found.unit == "blocked_time_s" and found.newest == "progression"
