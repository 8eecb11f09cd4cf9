"""SLA gates: parsing, checking against results, JUnit that a JUnit parser reads,
and `nsb task gate` exit codes on runs of simulated DUTs."""

import pytest
from junitparser import Error, Failure, JUnitXml

from nsb import sla
from nsb.errors import TaskError
from tests.unit.test_history import _run


def test_parse_reads_metric_operator_value_suffix_and_frame():
    assert sla.parse("ndr_pps>=1.2M@64") == sla.Sla("ndr_pps>=1.2M@64", "ndr_pps", ">=",
                                                    1.2e6, 64)
    assert sla.parse(" latency_p99.9_us <= 50 ").frame_size is None
    with pytest.raises(TaskError, match="unknown metric 'ndr' .*metrics: ndr_pps"):
        sla.parse("ndr>=1")
    with pytest.raises(TaskError, match="is not METRIC OP VALUE"):
        sla.parse("ndr_pps=>1")


RESULTS = [{"scenario": "s", "frame_size": 64, "throughput_pps": 1_000_000.0,
            "latency": {"p99_us": 40.0}},
           {"scenario": "s", "frame_size": 1518, "throughput_pps": 800_000.0,
            "latency": None}]


def test_check_applies_each_sla_to_the_results_it_names():
    outcomes = sla.check([sla.parse("ndr_pps>=900k@64"), sla.parse("latency_p99_us<=50")],
                         RESULTS)
    assert [(o.frame_size, o.passed) for o in outcomes] == [(64, True), (64, True),
                                                            (1518, False)]
    assert outcomes[2].message == "latency_p99_us<=50: s 1518 B has no latency_p99_us"
    (missing,) = sla.check([sla.parse("ndr_pps>=1@128")], RESULTS)
    assert not missing.passed and "no result at 128 B" in missing.message


def test_regression_compares_with_the_baseline_at_each_frame_size():
    baseline = [{"scenario": "other", "frame_size": 64, "throughput_pps": 1_060_000.0},
                {"scenario": "other", "frame_size": 1518, "throughput_pps": 800_000.0}]
    outcomes = sla.check([sla.parse("regression_pct<=5")], RESULTS, baseline)
    assert [round(o.measured, 2) for o in outcomes] == [5.66, 0.0]
    assert [o.passed for o in outcomes] == [False, True]
    with pytest.raises(TaskError, match="give --baseline"):
        sla.check([sla.parse("regression_pct<=5")], RESULTS)


def test_junit_is_read_by_a_junit_parser(tmp_path):
    outcomes = sla.check([sla.parse("ndr_pps>=900k")], RESULTS)
    path = tmp_path / "j.xml"
    sla.write_junit(path, sla.junit(outcomes, "t1", "tc", "error", "testpmd0 died"))
    suites = list(JUnitXml.fromfile(str(path)))
    (suite,) = suites
    assert suite.tests == 3 and suite.failures == 1 and suite.errors == 1
    cases = {case.name: case for case in suite}
    assert isinstance(cases["run"].result[0], Error)
    assert cases["ndr_pps>=900k [s 64 B]"].result == []
    assert isinstance(cases["ndr_pps>=900k [s 1518 B]"].result[0], Failure)


def test_task_gate_exits_4_on_a_miss_and_writes_junit(tmp_path, nsb_main):
    baseline = _run(tmp_path, "gen9", 100_000.0, 1_795_000_000)
    slower = _run(tmp_path, "gen10", 50_000.0, 1_795_000_100)
    junit = tmp_path / "gate.xml"
    code, out, err = nsb_main("task", "gate", slower, "--results-dir", str(tmp_path),
                              "--sla", "regression_pct<=5", "--baseline", baseline,
                              "--junit", str(junit))
    assert code == 4, err
    assert err.startswith("nsb: error: SLA missed (2 of 2 checks): regression_pct<=5: ")
    assert out.count("MISSED") == 2
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    assert suite.failures == 2
    code, out, err = nsb_main("task", "gate", slower, "--results-dir", str(tmp_path),
                              "--sla", "ndr_pps>=1k")
    assert code == 0 and out.count(", met") == 2, err
    code, _, err = nsb_main("task", "gate", slower, "--results-dir", str(tmp_path),
                            "--sla", "nonsense")
    assert code == 2 and "--sla: 'nonsense' is not METRIC OP VALUE" in err
