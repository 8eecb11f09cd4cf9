"""results.json's format: version and nsb version, the published schema, one name
per KPI, one numbering of trials, loss tolerances named with their unit."""

import csv
import io
import json

import pytest

from nsb import __version__, engine, kpi_names, sla
from nsb.outputs.influxdb import names
from nsb.outputs.influxdb.points import latency_fields
from nsb.outputs.results_format import FORMAT
from nsb.report import formats, html_tables, loading
from nsb.trial import LatencyStats
from tests import results_schema
from tests.conftest import SAMPLE
from tests.doubles.simulated_dut import SimulatedDutGenerator
from tests.unit.test_pipeline import build
from tests.unit.test_report import result, write_task


@pytest.fixture
def written(tmp_path):
    """The results.json a run with a simulated DUT writes."""
    engine.execute(build(tmp_path, SimulatedDutGenerator(100_000.0)))
    (path,) = tmp_path.glob("*/results.json")
    return path, json.loads(path.read_text())


def test_a_run_names_the_format_and_nsb_version_and_follows_the_schema(written, tmp_path):
    path, doc = written
    assert list(doc)[:2] == ["format", "nsb_version"]
    assert doc["format"] == FORMAT == "nsb-results/1" and doc["nsb_version"] == __version__
    assert results_schema.check(doc) is doc
    assert results_schema.check_tree(tmp_path) == 1


def test_the_schema_refuses_what_nsb_must_not_write(written):
    _, doc = written
    dotted = json.loads(json.dumps(doc))
    dotted["results"][0]["latency"]["p99.9_us"] = 1.0
    assert any("p99.9_us" in p for p in results_schema.problems(dotted))
    for broken in ({k: v for k, v in doc.items() if k != "nsb_version"},
                   {**doc, "format": "nsb-results/2"},
                   {**doc, "results": [{**doc["results"][0], "limited_by": "cpu"}]},
                   {**doc, "trials": [{**doc["trials"][0], "trial_index": -1}]}):
        with pytest.raises(AssertionError, match="does not follow results.schema.json"):
            results_schema.check(broken)


def test_one_name_per_kpi_in_json_csv_influxdb_and_slas(written, tmp_path):
    path, doc = written
    latency = doc["results"][0]["latency"]
    assert "p99_9_us" in latency and not any("." in key for key in latency)
    task = loading.load(str(path), tmp_path)
    (row, *_) = csv.DictReader(io.StringIO(formats.render([task], "csv")))
    assert float(row["latency_p99_9_us"]) == latency["p99_9_us"]
    stats = LatencyStats(samples=1, min_us=1.0, avg_us=2.0, max_us=3.0,
                         percentiles_us={"p99.9": 2.5})
    assert latency_fields(stats)["latency_p99_9_us"] == 2.5
    assert names.latency_field("p99.9") == "latency_p99_9_us" == kpi_names.stat("latency_p99_9_us")
    assert sla.parse("latency_p99_9_us<=50").metric == "latency_p99_9_us"
    assert sla.parse("latency_p99.9_us<=50").metric == "latency_p99_9_us"  # the earlier name
    (outcome,) = sla.check([sla.parse("latency_p99_9_us<=1G@64")], doc["results"][:1])
    assert outcome.passed and outcome.measured == latency["p99_9_us"]


def test_results_of_earlier_nsb_still_read(tmp_path):
    old = result(64, 1_000_000, latency_avg=10.0)
    assert old["latency"]["p99.9_us"] == 30.0
    write_task(tmp_path, "01d00001", [old])
    task = loading.load("01d00001", tmp_path)
    assert task.results[0]["latency"]["p99_9_us"] == 30.0
    (row,) = csv.DictReader(io.StringIO(formats.render([task], "csv")))
    assert row["latency_p99_9_us"] == "30.0" and row["pdv_us"] == "25.0"


def test_a_newer_format_is_one_located_line(tmp_path_factory, nsb_main):
    tmp_path = tmp_path_factory.mktemp("newer")  # not a file nsb wrote: left unchecked
    write_task(tmp_path, "f0000001", [result(64, 1)])
    path = tmp_path / "f0000001" / "results.json"
    path.write_text(json.dumps({"format": "nsb-results/9", **json.loads(path.read_text())}))
    code, out, err = nsb_main("report", "table", str(path))
    assert code == 2 and out == ""
    assert err == (f"nsb: error: {path}: format: written by a newer nsb (nsb-results/9, nsb ?); "
                   "this nsb reads up to nsb-results/1\n")


def test_trials_are_numbered_from_0_in_json_and_html(written):
    _, doc = written
    assert [t["trial_index"] for t in doc["trials"]][:3] == [0, 1, 2]
    page = html_tables.trials_table(doc["trials"], "t")
    first_cells = [row.split("<td>")[1].split("</td>")[0]
                   for row in page.split("<tr>")[2:]]  # header row, then one per trial
    assert first_cells == [str(t["trial_index"]) for t in doc["trials"]]


def _task_with_profile(tmp_path, profile: str):
    text = SAMPLE.read_text()
    start, end = text.index("    traffic_profile:"), text.index("    runner:")
    task_file = tmp_path / "t.yaml"
    task_file.write_text(text[:start] + f"    traffic_profile: {profile}\n" + text[end:])
    return str(task_file)


@pytest.mark.parametrize("kind", ["binsearch", "fastndr", "fixed, rate_pct: 50", "ramp"])
def test_loss_tolerance_is_named_in_percent_with_the_earlier_name_an_alias(
        kind, tmp_path, nsb_main):
    for given in ("tolerated_loss_pct: 0.5", "tolerated_loss: 0.5"):
        task = _task_with_profile(tmp_path, f"{{type: {kind}, {given}}}")
        code, out, err = nsb_main("task", "start", task, "--dry-run")
        assert code == 0, err
        assert "tolerated_loss_pct: 0.5" in out and "tolerated_loss:" not in out
    task = _task_with_profile(tmp_path, f"{{type: {kind}, tolerated_loss: 1, "
                                        "tolerated_loss_pct: 1}")
    code, _, err = nsb_main("task", "start", task, "--dry-run")
    assert code == 2 and err.count("\n") == 1
    assert "tolerated_loss: 'tolerated_loss' is another name of 'tolerated_loss_pct'" in err
    task = _task_with_profile(tmp_path, f"{{type: {kind}, tolerated_loss: 150}}")
    code, _, err = nsb_main("task", "start", task, "--dry-run")
    assert code == 2 and "traffic_profile.tolerated_loss: 150 is above the maximum 100" in err


def test_mlrsearch_goals_keep_their_loss_as_a_ratio(tmp_path, nsb_main):
    task = _task_with_profile(tmp_path, "{type: mlrsearch, goals: [{name: NDR, loss_ratio: 2}]}")
    code, _, err = nsb_main("task", "start", task, "--dry-run")
    assert code == 2 and "loss_ratio" in err and "2" in err
