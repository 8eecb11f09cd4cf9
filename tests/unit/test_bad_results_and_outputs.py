"""Results files of the wrong shape through every command that reads one, and output
paths nsb cannot write: one ``nsb: error:`` line (a line per wrong part), exit 2,
never a traceback."""

import copy
import json
import os

import pytest

from tests.unit.test_bad_input_files import assert_one_line
from tests.unit.test_report import simulated_results

WRONG = [[], "x", 7, {}, None, [1, "a"], True]


@pytest.fixture(scope="module")
def results_doc(tmp_path_factory):
    """A results file as a run writes it, with every part the reports read filled in."""
    directory = tmp_path_factory.mktemp("results")
    task = simulated_results(directory)
    doc = json.loads(task.path.read_text())
    doc["platform"] = {"tg": {"kernel": "6.1", "nics": {"xe0": {"driver": "ice"}},
                              "versions": {"dpdk": "23.11"}}}
    kpi = {"scenario": doc["results"][0]["scenario"], "timestamp": 1.7e9, "trial_index": 0}
    doc["kpis"] = [{**kpi, "source": "nfvi:testpmd", "node": "sut",
                    "kpis": {"cpu_user_pct": 10.0, "rss_kb": 2048}},
                   {**kpi, "source": "vnf0", "node": "sut", "kpis": {"rx_packets": 5}}]
    doc["results"][0]["latency"] = {"samples": 3, "min_us": 1.0, "avg_us": 5.0, "max_us": 9.0,
                                    "histogram": [{"le_us": 10, "count": 3}]}
    return doc


@pytest.fixture
def work(tmp_path_factory):
    """Where the broken results files go: not a tmp_path, whose results files must follow
    the published schema."""
    return tmp_path_factory.mktemp("bad")


def _paths(value, path=()):
    """Every key path of a document, lists by their first item only."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list) and value:
        yield from _paths(value[0], (*path, 0))


def _cases(doc):
    """Each part replaced by each wrong value, in turns (all parts, a few values each)."""
    paths = [p for p in _paths(doc) if p and p[0] != "format"]
    return [(p, WRONG[i % len(WRONG)]) for i, p in enumerate(paths)] + \
           [(p, WRONG[(i + 3) % len(WRONG)]) for i, p in enumerate(paths)]


def _commands(directory, out):
    return [("report", "table", directory), ("report", "table", directory, directory),
            ("report", "table", directory, "--format", "csv"), ("task", "show", directory),
            ("report", "html", directory, "-o", out),
            ("task", "gate", directory, "--sla", "ndr_pps>=1")]


def test_results_of_the_wrong_shape_never_give_a_traceback(nsb_main, work, results_doc):
    directory = work / "t"
    directory.mkdir()
    cases = _cases(results_doc)
    assert len(cases) > 100
    refused = 0
    for number, (path, wrong) in enumerate(cases):
        doc = copy.deepcopy(results_doc)
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = wrong
        (directory / "results.json").write_text(json.dumps(doc))
        command = _commands(str(directory), str(work / "r.html"))[number % 6]
        code, _, err = nsb_main(*command)
        assert "Traceback" not in err, (path, wrong, err)
        if code == 2:
            refused += 1
            lines = err.strip().splitlines()
            assert lines and all(line.startswith("nsb: error: ") for line in lines), err
            assert all(str(directory) in line or results_doc["task"]["id"] in line
                       for line in lines), (path, wrong, err)
        else:
            assert code in (0, 1, 4, 5), (path, wrong, code, err)
    assert refused > len(cases) / 3  # most wrong types are refused, not shown


@pytest.mark.parametrize("part,wrong,where", [
    (("plan", "scenarios"), "x", "plan.scenarios"),
    (("plan",), [], "plan"),
    (("results", 0, "latency"), "x", "results[0].latency"),
    (("task", "duration_s"), "12", "task.duration_s"),
    (("kpis", 0, "kpis"), [1], "kpis[0].kpis"),
])
def test_a_wrong_type_is_located_in_the_results_file(nsb_main, work, results_doc, part, wrong,
                                                     where):
    doc = copy.deepcopy(results_doc)
    parent = doc
    for key in part[:-1]:
        parent = parent[key]
    parent[part[-1]] = wrong
    (work / "results.json").write_text(json.dumps(doc))
    for command in (("report", "table"), ("task", "show"), ("report", "html", "-o", "-")):
        code, _, err = nsb_main(*command[:2], str(work), *command[2:])
        assert_one_line(code, err, f"{work}/results.json", where)


def _unwritable(tmp_path):
    """Output paths nsb cannot write, and what the error says about each."""
    (tmp_path / "loop").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop")
    (tmp_path / "file").write_text("")
    (tmp_path / "dir").mkdir()
    return {"loop": "loop of symbolic links", "loop/sub": "loop of symbolic links",
            "file": "Not a directory", "file/sub": "Not a directory"}


def test_grafana_export_into_a_path_it_cannot_write_is_one_line(nsb_main, tmp_path):
    for name, says in _unwritable(tmp_path).items():
        code, _, err = nsb_main("grafana", "export", str(tmp_path / name))
        assert_one_line(code, err, str(tmp_path / name), says)
    code, out, err = nsb_main("grafana", "export", str(tmp_path / "missing" / "made"))
    assert code == 0 and (tmp_path / "missing/made/dashboards/nsb.yaml").is_file(), err


def test_report_html_into_a_path_it_cannot_write_is_one_line(nsb_main, tmp_path, results_doc):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "results.json").write_text(json.dumps(results_doc))
    _unwritable(tmp_path)
    for name, says in {"loop": "loop of symbolic links", "dir": "is a directory",
                       "missing/r.html": "no directory", "file/r.html": "Not a directory"}.items():
        code, _, err = nsb_main("report", "html", str(tmp_path / "t"), "-o", str(tmp_path / name))
        assert_one_line(code, err, str(tmp_path / name), says)
    code, _, err = nsb_main("task", "gate", str(tmp_path / "t"), "--sla", "ndr_pps>=1",
                            "--junit", str(tmp_path / "dir"))
    assert "Traceback" not in err and "dir: is a directory" in err, err


def test_a_log_directory_nsb_cannot_write_in_is_one_line_before_anything_runs(
        nsb_main, tmp_path, monkeypatch):
    from tests.conftest import SAMPLE

    logs = tmp_path / "logs"
    logs.mkdir()
    conf = tmp_path / "nsb.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {tmp_path}/results\nlog_dir = {logs}\n")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(logs)
                        else real_access(path, mode))  # as a user without root's rights
    code, _, err = nsb_main("--config-file", str(conf), "task", "start", str(SAMPLE))
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith(f"nsb: error: cannot write in {logs}")
    assert not (tmp_path / "results").exists()  # no empty results directory left behind
