"""The engine and the file output, with doubles instead of a lab (no root needed)."""

import json

import pytest

from nsb import engine
from nsb.errors import RunError
from nsb.outputs.file import FileOutput
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import SAMPLE
from tests.doubles.null_context import NullContext
from tests.doubles.simulated_dut import SimulatedDutGenerator


def build(tmp_path, generator):
    task = loader.load(SAMPLE, {"packet_sizes": [64, 128]})
    run = RunInfo("abcd1234", task, tmp_path / "abcd1234")
    real = engine.plan(task, run)
    scenario = real.scenarios[0]
    scenario.vnfs = []
    scenario.generator = generator
    output = FileOutput(task.outputs[0], {}, run)
    context = NullContext(task.context, {}, run)
    return engine.Plan(task, run, context, real.scenarios, [output])


def test_results_file_has_task_trials_and_results(tmp_path):
    plan = build(tmp_path, SimulatedDutGenerator(100_000.0))
    seen = []
    engine.execute(plan, [seen.append])
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    assert doc["task"]["status"] == "ok"
    assert doc["task"]["id"] == "abcd1234"
    assert [r["frame_size"] for r in doc["results"]] == [64, 128]
    assert len(doc["trials"]) == sum(r["trials"] for r in doc["results"])
    assert doc["plan"]["scenarios"][0]["name"] == "testpmd_rfc2544"
    for trial in doc["trials"]:
        assert trial["rx_packets"] <= trial["tx_packets"]
        assert trial["verdict"] in ("pass", "fail", "latency")  # latency: at the answer
    events = (tmp_path / "abcd1234" / "events.jsonl").read_text().splitlines()
    assert json.loads(events[0])["event"] == "TaskStarted"
    assert json.loads(events[-1])["event"] == "TaskFinished"
    assert plan.context.undeployed
    assert type(seen[-1]).__name__ == "TaskFinished"


def test_error_mid_run_keeps_measured_trials_and_tears_down(tmp_path):
    # 64 B's search (9 trials to 0.5 % of line rate) and its confirmation, then 128 B's
    plan = build(tmp_path, SimulatedDutGenerator(100_000.0, fail_after_trials=12))
    with pytest.raises(RunError):
        engine.execute(plan)
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    assert doc["task"]["status"] == "error"
    assert "simulated generator failure" in doc["task"]["error"]
    assert len(doc["trials"]) == 12
    assert len(doc["results"]) == 1  # 64 B finished before the failure
    assert plan.context.undeployed


def test_a_teardown_that_fails_after_an_error_does_not_hide_the_error(tmp_path, caplog):
    plan = build(tmp_path, SimulatedDutGenerator(100_000.0, fail_after_trials=2))

    def broken_undeploy():
        plan.context.undeployed = True
        raise RunError("ssh error while copying a log")

    plan.context.undeploy = broken_undeploy
    with pytest.raises(RunError, match="simulated generator failure"):
        engine.execute(plan)
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    assert "simulated generator failure" in doc["task"]["error"]
    assert "teardown after the error failed too: ssh error while copying a log" in caplog.text
    assert plan.context.undeployed


def test_a_teardown_that_fails_after_a_clean_run_is_the_error(tmp_path):
    plan = build(tmp_path, SimulatedDutGenerator(100_000.0))

    def broken_undeploy():
        raise RunError("bridge busy")

    plan.context.undeploy = broken_undeploy
    with pytest.raises(RunError, match="bridge busy"):
        engine.execute(plan)
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    assert doc["task"]["status"] == "error" and doc["task"]["error"] == "bridge busy"
    assert len(doc["results"]) == 2  # measured before the teardown failed


def test_what_a_context_runs_itself_reports_kpis_after_every_trial(tmp_path):
    from nsb.contexts.base import ContextKpis

    plan = build(tmp_path, SimulatedDutGenerator(100_000.0))
    reads = []

    def collect_kpi():
        reads.append(len(reads))
        return [ContextKpis("ovs_dpdk", "host", {"packets_received": float(len(reads))})]

    plan.context.collect_kpi = collect_kpi
    engine.execute(plan)
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    samples = [k for k in doc["kpis"] if k["source"] == "ovs_dpdk"]
    assert len(samples) == len(doc["trials"]) == len(reads)
    assert [k["trial_index"] for k in samples] == [t["trial_index"] for t in doc["trials"]]
    assert samples[-1]["node"] == "host"
    assert samples[-1]["kpis"]["packets_received"] == len(reads)


def test_failing_output_does_not_stop_the_others(tmp_path):
    plan = build(tmp_path, SimulatedDutGenerator(100_000.0))

    class Broken(FileOutput):
        essential = False  # an extra copy: its failure must not stop the run

        def handle(self, event):
            raise ValueError("disk on fire")

    plan.outputs.insert(0, Broken(plan.task.outputs[0], {"path": str(tmp_path / "x.json")},
                                  plan.run))
    engine.execute(plan)
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    assert len(doc["results"]) == 2


def test_results_file_that_cannot_be_written_stops_the_run_and_keeps_the_last_version(
        tmp_path):
    import errno

    plan = build(tmp_path, SimulatedDutGenerator(100_000.0))
    output = plan.outputs[0]
    writes = []
    real_write = output._write

    def write_twice():  # the start of the task and two trials get written
        if len(writes) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        writes.append(1)
        real_write()

    output._write = write_twice
    with pytest.raises(RunError) as caught:
        engine.execute(plan)
    assert "No space left on device; the run stopped" in str(caught.value)
    doc = json.loads((tmp_path / "abcd1234" / "results.json").read_text())
    assert len(doc["trials"]) == 2 and doc["task"]["status"] == "running"
    assert not list((tmp_path / "abcd1234").glob("*.tmp"))  # no temporary file left


def test_progress_line_names_scenario_interval_rate_and_time_left(tmp_path):
    import io

    from rich.console import Console

    from nsb.progress import Progress

    stream = io.StringIO()
    progress = Progress(Console(file=stream, width=300))
    plan = build(tmp_path, SimulatedDutGenerator(100_000.0))
    engine.execute(plan, [progress.handle])
    lines = stream.getvalue().splitlines()
    assert len(lines) == sum(r.trials for r in progress.results)  # one line per trial
    first = lines[0]
    assert first.startswith("[testpmd_rfc2544] 64 B | interval 0.00-100.00 % | trial 0 at "
                            "100.00 %")
    assert "kpps" in first and "last: fail loss" in first and "elapsed 0:00:00" in first
    assert "left ~" in first
