"""A sweep in the lab: testpmd with trafgen, three flow counts, one task, the scaling
table printed and drawn, nothing left behind."""

import json
import re
import subprocess

import pytest

from tests.conftest import NSB, requires_root
from tests.functional.lab import leftovers, results_of, snapshot, start

POINTS = [1, 16, 256]


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def _figure(page: str, chart_id: str) -> dict:
    """The data plotly draws in the chart ``chart_id`` of an HTML report."""
    found = re.search(r'Plotly\.newPlot\(\s*"' + re.escape(chart_id) + r'",\s*(\[.*?\]),\s*\{',
                      page, re.S)
    assert found, f"no chart {chart_id}"
    return {"data": json.loads(found.group(1))}


@pytest.mark.slow  # 75 s of lab runs; the sweep's expansion and charts are unit-tested
def test_three_point_sweep_runs_as_one_task_and_draws_its_scaling(results_conf, tmp_path):
    before = snapshot()
    args = {"generator": "trafgen", "packet_sizes": [64], "duration_s": 1,
            "bidirectional": False}
    proc = start(results_conf, args, "--sweep", "flows=" + ",".join(map(str, POINTS)))
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok"
    assert [r["sweep"] for r in doc["results"]] == [{"flows": f} for f in POINTS]
    assert [r["scenario"] for r in doc["results"]] == [f"testpmd_rfc2544@flows={f}"
                                                       for f in POINTS]
    for result in doc["results"]:  # each point's value reached the generator
        trials = [t for t in doc["trials"] if t["scenario"] == result["scenario"]]
        assert trials and {t["flows"] for t in trials} == {result["sweep"]["flows"]}
        assert result["throughput_pps"] > 0
    assert doc["plan"]["sweep"] == [{"flows": f} for f in POINTS]
    assert "testpmd_rfc2544: throughput per sweep point" in out
    measured = [f"{r['throughput_pps']:,.0f}" for r in doc["results"]]
    row = next(line for line in out.splitlines() if re.match(r"^\W*64\W", line)
               and all(value in line for value in measured))
    print(row)

    page_file = tmp_path / "report.html"
    done = subprocess.run(NSB + ["--config-file", str(results_conf), "report", "html", task_id,
                                 "-o", str(page_file)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    page = page_file.read_text()
    assert 'id="t1-sweep1-table"' in page
    by_frame = _figure(page, "t1-sweep1-frames-chart")["data"]
    assert [trace["name"] for trace in by_frame] == [f"flows={f}" for f in POINTS]
    by_value = _figure(page, "t1-sweep1-values-chart")["data"]
    assert len(by_value) == 1 and by_value[0]["x"] == POINTS
    assert by_value[0]["y"] == pytest.approx([r["throughput_pps"] for r in doc["results"]])
    assert leftovers(task_id) == []
    assert snapshot() - before == set()
