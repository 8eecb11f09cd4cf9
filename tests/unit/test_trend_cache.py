"""What the trends keep between runs (nsb.report.trend_cache): each test's jumpavg state
is extended with the new runs and each run's results.json is read once, and the answers
(groups, the newest run's class, the marks for Grafana, the gate) are those counted from
the first run whatever happened to the history or to the cache in between."""

from __future__ import annotations

import json
import logging
import random
import shutil

import pytest

from nsb.report import trend, trend_cache, trend_groups, trend_influx


def _run(results, n, value, task_id=None, limited=False, status="ok"):
    """One finished run (task ids sort by start time); its id."""
    task_id = task_id or f"261101-{n:06d}-aaaaaa"
    folder = results / task_id
    folder.mkdir(exist_ok=True)
    result = {"scenario": "s", "profile": "binsearch", "frame_size": 64,
              "throughput_pps": value, "warnings": [], "timestamp": 1.8e9 + 3600 * n,
              "limited_by": "generator" if limited else "dut"}
    folder.joinpath("results.json").write_text(json.dumps({
        "task": {"id": task_id, "status": status, "file": "/x/tc_step.yaml"},
        "results": [result]}))
    return task_id


def _levels(*steps, seed=1):
    """(runs, level) steps as answers with 0.5 % noise."""
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-0.005, 0.005)) for runs, level in steps
            for _ in range(runs)]


def _history(results, values, start=0):
    return [_run(results, start + n, value) for n, value in enumerate(values)]


def _answers(results, until=None):
    """Everything the trends say: the report's JSON, the marks and the gate's class."""
    found = trend.trends(results, until)
    marks = [(m.tags, m.fields, m.time_ns) for m in trend_influx.marks(found)]
    return trend.as_json(found), marks, [(t.newest, t.change_pct) for t in found]


def _from_the_first_run(results, until=None):
    """The same history with nothing kept: copied without the cache."""
    fresh = results.parent / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.copytree(results, fresh, ignore=shutil.ignore_patterns(trend_cache.FOLDER))
    answers = _answers(fresh, until)
    shutil.rmtree(fresh)
    return answers


@pytest.fixture
def results(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    return folder


@pytest.fixture
def counted(monkeypatch):
    """The runs each classification counted, and from which state (None: the first)."""
    calls = []
    classify = trend_groups.classify

    def spy(runs, state=None):
        calls.append((len(runs), None if state is None else state.runs))
        return classify(runs, state)

    monkeypatch.setattr(trend_groups, "classify", spy)
    return calls


def test_new_runs_extend_the_kept_groups_and_answer_as_counting_from_the_first(
        results, counted):
    _history(results, _levels((40, 1e6)))
    trend.trends(results)
    assert counted == [(40, None)]
    ids = _history(results, _levels((5, 0.99e6), (12, 0.9e6), seed=2), start=40)
    answers = _answers(results)
    assert counted[1:] == [(57, 40)]  # the 17 new runs only
    assert answers == _from_the_first_run(results)
    (found,) = json.loads(answers[0])
    assert found["newest"] == "regression" and found["groups"][-1]["first"] == ids[5]
    counted.clear()
    assert _answers(results) == answers and counted == []  # nothing new: nothing counted


@pytest.mark.parametrize("change", ["added before the newest", "removed", "changed",
                                    "left out", "above the largest"])
def test_a_history_changed_before_its_newest_run_is_counted_from_the_first(
        results, counted, caplog, change):
    ids = _history(results, _levels((30, 1e6), (10, 0.9e6)))
    trend.trends(results)
    if change == "added before the newest":
        _run(results, 20, 0.95e6, task_id="261101-000020-bbbbbb")
    elif change == "removed":
        shutil.rmtree(results / ids[12])
    elif change == "changed":
        _run(results, 33, 1e6, task_id=ids[33])
    elif change == "left out":
        _run(results, 7, 1e6, task_id=ids[7], limited=True)
    else:
        _run(results, 40, 1.2e6)
    counted.clear()
    with caplog.at_level(logging.DEBUG, logger="nsb.report.trend_cache"):
        answers = _answers(results)
    assert counted == [(counted[0][0], None)]
    assert "counted from the first run" in caplog.text
    assert answers == _from_the_first_run(results)


def test_a_damaged_or_foreign_cache_is_counted_anew_and_said_to_be(results, caplog):
    _history(results, _levels((25, 1e6), (8, 1.1e6)))
    expected = _answers(results)
    (state_file,) = (results / trend_cache.FOLDER / "groups").iterdir()
    index = results / trend_cache.FOLDER / "runs.json"
    data = bytearray(state_file.read_bytes())
    data[len(data) // 2] ^= 0x40  # a flipped bit in the arrays
    state_file.write_bytes(bytes(data))
    header, _, body = index.read_bytes().partition(b"\n")
    index.write_bytes(header + b"\n" + body.replace(b"1000", b"1001", 1))
    with caplog.at_level(logging.DEBUG, logger="nsb.report.trend_cache"):
        assert _answers(results) == expected
    assert "runs.json not used (damaged)" in caplog.text
    assert "counted from the first run" in caplog.text and "not used" in caplog.text
    state_file.write_bytes(b"not a state")
    index.write_text("{")
    assert _answers(results) == expected


def test_each_results_file_is_read_once_until_it_changes(results, monkeypatch):
    ids = _history(results, _levels((10, 1e6)))
    trend.trends(results)
    read = []
    original = trend.input_file.read_text
    monkeypatch.setattr(trend.input_file, "read_text",
                        lambda path, *args, **kwargs: read.append(path.parent.name) or
                        original(path, *args, **kwargs))
    trend.trends(results)
    assert read == []
    _run(results, 4, 0.5e6, task_id=ids[4])  # written again: another file
    new = _run(results, 10, 1e6)
    (found,) = trend.trends(results)
    assert sorted(read) == [ids[4], new]
    assert found.points[4].value == 0.5e6


def test_a_run_written_while_it_ran_is_read_again_when_it_finished(results):
    _history(results, _levels((6, 1e6)))
    running = _run(results, 6, 0.4e6, status="running")
    (found,) = trend.trends(results)
    assert running not in [p.task_id for p in found.points]
    _run(results, 6, 0.99e6, task_id=running)
    (found,) = trend.trends(results)
    assert found.points[-1].task_id == running and found.points[-1].value == 0.99e6


def test_a_gate_on_an_earlier_run_answers_for_the_history_up_to_it(results, counted):
    ids = _history(results, [2e6] + _levels((20, 1e6), (10, 0.9e6)))
    trend.trends(results)
    counted.clear()
    answers = _answers(results, until=ids[25])
    assert counted == []  # the largest run is before it: the kept state answers
    assert answers == _from_the_first_run(results, until=ids[25])
    (found,) = json.loads(answers[0])
    assert found["points"][-1]["task_id"] == ids[25] and found["newest"] == "regression"
    counted.clear()
    answers = _answers(results)
    assert counted == []  # the state after every run was kept, not replaced
    assert answers == _from_the_first_run(results)


def test_a_directory_nsb_cannot_write_to_keeps_nothing_and_answers_alike(
        results, monkeypatch, caplog):
    _history(results, _levels((15, 1e6), (6, 0.8e6)))
    expected = _from_the_first_run(results)

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(trend_cache.tempfile, "mkstemp", refused)
    with caplog.at_level(logging.DEBUG, logger="nsb.report.trend_cache"):
        assert _answers(results) == expected
    assert "trend cache not kept" in caplog.text and "Permission denied" in caplog.text
    assert not any((results / trend_cache.FOLDER).rglob("*.*"))


def test_an_answer_that_is_no_number_is_left_out_and_said_to_be(results):
    _history(results, _levels((6, 1e6)))
    odd = _run(results, 6, float("nan"))
    (found,) = trend.trends(results)
    assert [(p.task_id, p.left_out) for p in found.left_out] == [(odd, "no number")]
    assert found.newest == "left out (no number)" and len(found.groups) == 1


def test_a_gate_before_the_largest_run_counts_its_own_history_and_keeps_the_whole(
        results, counted):
    ids = _history(results, _levels((20, 1e6), (10, 0.9e6)) + [2e6])
    trend.trends(results)
    counted.clear()
    answers = _answers(results, until=ids[25])
    assert counted == [(26, None)]
    assert answers == _from_the_first_run(results, until=ids[25])
    counted.clear()
    trend.trends(results)
    assert counted == []
