"""Two real runs of the lab sample: their results.json follow docs/results.schema.json,
and their comparison and SLA gate keep frame sizes the generator limited apart."""

import json
import subprocess

import pytest

from tests.conftest import NSB, requires_root
from tests.functional.lab import leftovers, results_of, start


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def _run(results_conf, results_dir, label):
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64, 1518]}, "--label", label)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return {p.parent.name for p in results_dir.glob("*/results.json")}


def _nsb(results_conf, *argv):
    return subprocess.run(NSB + ["--config-file", str(results_conf), *argv],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # two quick-start runs, 100 s; the suite's real runs gate by SLA in make test
def test_two_runs_compare_and_gate_by_what_limited_them(results_conf, tmp_path):
    results = tmp_path / "results"
    first = _run(results_conf, results, "first")
    (base_id,) = first
    _, base = results_of(results)  # one task so far: checked against the schema
    second = _run(results_conf, results, "second") - first
    (new_id,) = second
    new = json.loads((results / new_id / "results.json").read_text())
    for doc in (base, new):
        assert doc["format"] == "nsb-results/1" and doc["nsb_version"]
    limits = {r["frame_size"]: (b["limited_by"], r["limited_by"])
              for b, r in zip(base["results"], new["results"], strict=True)}
    apart = sorted(f for f, sides in limits.items() if "generator" in sides)

    table = _nsb(results_conf, "report", "table", base_id, new_id, "--format", "json")
    assert table.returncode == 0, table.stderr
    rows = json.loads(table.stdout)["comparison"]
    assert {r["frame_size"]: tuple(r["limited_by"]) for r in rows} == limits
    assert sorted(r["frame_size"] for r in rows if r["comparable"] == [False]) == apart

    gate = _nsb(results_conf, "task", "gate", new_id, "--sla", "regression_pct<=1000",
                "--baseline", base_id)
    lines = [line for line in gate.stdout.splitlines() if line.startswith("SLA ")]
    assert len(lines) == len(limits)
    for frame, sides in limits.items():
        (line,) = [line for line in lines if f" {frame} B:" in line]
        expected = "NOT COMPARABLE" if "generator" in sides else ", met"
        assert expected in line, line
    assert gate.returncode == (5 if apart else 0), gate.stderr
    assert leftovers(base_id) == [] and leftovers(new_id) == []
