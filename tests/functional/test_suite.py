"""Suites in the lab: three samples with their task args run as one; a failing case
does not stop the others, and Ctrl-C keeps what finished."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

from tests.conftest import NSB, ROOT, requires_root
from tests.functional.lab import leftovers
from tests.functional.trex_lab import env_with_trex, requires_trex

SUITE = ROOT / "samples" / "suites" / "lab_suite.yaml"


def _nsb(results_conf, *argv, **popen):
    return subprocess.Popen([*NSB, "--config-file", str(results_conf), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env_with_trex(), **popen)


def _record(results):
    found = list((results / "suites").glob("*.json"))
    return json.loads(found[0].read_text()) if found else None


def test_three_samples_run_as_one_suite(results_conf, tmp_path):
    requires_root()
    requires_trex()
    junit = tmp_path / "suite.xml"
    proc = _nsb(results_conf, "task", "start", "--suite", str(SUITE), "--junit", str(junit))
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    record = _record(tmp_path / "results")
    assert record["status"] == "ok"
    assert [c["name"] for c in record["cases"]] == ["testpmd_rfc2544", "testpmd_back2back",
                                                    "two_chains"]
    for case in record["cases"]:
        assert case["status"] == "ok" and case["exit_code"] == 0, case
        results = json.loads((tmp_path / "results" / case["task_id"] / "results.json")
                             .read_text())
        assert results["task"]["label"] == f"suite {record['suite_id']} {case['name']}"
        assert case["answers"] and case["answers"][0]["frame_size"] == 64
        assert leftovers(case["task_id"]) == []
    assert [c["check"] for c in record["cases"][2]["sla"]] == ["ndr_pps>=1000@64",
                                                               "loss_pct<=0.01"]
    (tests,) = ET.parse(junit).getroot()
    names = [(t.get("classname"), t.get("name")) for t in tests]
    assert names == [("lab_daily", "testpmd_rfc2544"), ("lab_daily.testpmd_rfc2544",
                                                        "ndr_pps>=1000@64"),
                     ("lab_daily", "testpmd_back2back"), ("lab_daily", "two_chains"),
                     ("lab_daily.two_chains", "ndr_pps>=1000@64"),
                     ("lab_daily.two_chains", "loss_pct<=0.01")]
    assert tests.get("failures") == "0" and tests.get("errors") == "0"
    assert f"suite lab_daily ({record['suite_id']})" in out
    listed = _nsb(results_conf, "task", "list", "--suite", record["suite_id"])
    shown, _ = listed.communicate(timeout=60)
    assert all(c["task_id"] in shown for c in record["cases"])
    page = tmp_path / "suite.html"
    html = _nsb(results_conf, "report", "html", record["suite_id"], "-o", str(page))
    assert html.wait(timeout=120) == 0
    text = page.read_text()
    assert 'id="suite"' in text and all(c["name"] in text for c in record["cases"])


def test_a_failing_case_does_not_stop_the_others_and_ctrl_c_keeps_what_finished(
        results_conf, tmp_path):
    """Case one cannot start (lcores on a CPU the machine lacks: pre-flight, exit 3);
    case two runs; case three is interrupted by SIGINT: the record keeps all three."""
    requires_root()
    requires_trex()
    suite = tmp_path / "suite.yaml"
    suite.write_text(f'''schema: "nsb:suite:0.1"
name: mixed
test_cases_dir: "{ROOT / "samples"}"
test_cases:
  - name: no_such_cpu
    file_name: chains/tc_testpmd_chains.yaml
    task_args: {{core_pool: "63", duration_s: 1}}
  - name: quick
    file_name: tc_testpmd_netns_rfc2544.yaml
    task_args: {{duration_s: 1, packet_sizes: [64], test_precision: 4.0}}
  - name: long
    file_name: chains/tc_testpmd_chains.yaml
    task_args: {{duration_s: 30, test_precision: 0.1}}
''')
    proc = _nsb(results_conf, "task", "start", "--suite", str(suite))
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        record = _record(tmp_path / "results")
        if record and len(record["cases"]) == 2:
            time.sleep(15)  # the third case is running
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.5)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    record = _record(tmp_path / "results")
    assert record["status"] == "interrupted"
    statuses = [(c["name"], c["status"], c["exit_code"]) for c in record["cases"]]
    assert statuses == [("no_such_cpu", "error", 3), ("quick", "ok", 0),
                        ("long", "interrupted", 130)], statuses
    assert "no CPU" in record["cases"][0]["error"] or "63" in record["cases"][0]["error"]
    for case in record["cases"]:
        assert leftovers(case["task_id"]) == []
