"""Double: a stateful generator and DUT of known capacity, for the outputs of stateful
trials (results.json, InfluxDB, reports, SLAs) without TRex.

It copies what TRex ASTF through nftables was measured to do in the lab (the runs
behind docs/reference/results.md's stateful example): connections over the DUT's
new-connection rate are attempted and never established (``not_established``), the
DUT's conntrack count is what it admitted, each connection is seven packets and 64
bytes each way. A generator capped below the load never attempts the rest.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

from nsb.events import ScenarioSummary, TaskFinished, TaskStarted
from nsb.outputs.file import FileOutput
from nsb.runinfo import RunInfo
from nsb.sessions import SessionCounts
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from nsb.traffic_profiles.measurer import Measurer, TrialHooks
from nsb.trial import Trial, TrialResult
from tests.doubles.simulated_dut import SimulatedDutGenerator

PACKETS_PER_CONNECTION = 7  # SYN, SYN-ACK, ACK, request, response, FIN exchange (TRex's)


class StatefulDutDouble(SimulatedDutGenerator):
    """Opens at most ``generator_cps`` connections a second through a DUT admitting
    ``dut_cps`` new ones a second and holding at most ``dut_sessions`` at once."""

    SENDS_SESSIONS = True

    def __init__(self, dut_cps=1e9, dut_sessions=10**9, generator_cps=1e9, dut_data_pps=1e12,
                 generator_data_pps=1e12):
        super().__init__(1e9)
        self.dut_cps, self.dut_sessions, self.generator_cps = dut_cps, dut_sessions, generator_cps
        # a stream's data: the DUT forwards at most dut_data_pps, the generator sends at
        # most generator_data_pps (the rest never sent)
        self.dut_data_pps, self.generator_data_pps = dut_data_pps, generator_data_pps
        self.held = 0

    def run_trial(self, trial: Trial) -> TrialResult:
        load = trial.sessions
        intended = round(load.cps * trial.duration_s)
        attempted = min(intended, round(self.generator_cps * trial.duration_s))
        admitted = min(attempted, round(self.dut_cps * trial.duration_s))
        if load.hold_s > 0:  # every session held at once
            admitted = min(admitted, self.dut_sessions)
        self.held = admitted
        data = {}
        if load.data_pps_per_session > 0:
            intended_data = admitted * load.data_packets_per_session
            rate = min(trial.rate_pps, self.generator_data_pps)
            sent = round(intended_data * rate / trial.rate_pps)
            data = {"intended": intended_data, "sent": sent,
                    "received": round(sent * min(1.0, self.dut_data_pps / rate))}
        counts = SessionCounts(
            intended=intended, attempted=attempted, established=admitted,
            failed={"not_established": attempted - admitted} if attempted > admitted else {},
            retransmitted=(attempted - admitted) // 2, duration_s=trial.duration_s,
            dut_sessions=admitted,
            bytes={"client_to_server": 64 * attempted, "server_to_client": 64 * admitted},
            data=data)
        if data:  # a stream: its data's packets, the generator short when it sent less
            short = data["sent"] < 0.95 * data["intended"]
            return TrialResult(trial=trial, tx_packets=data["sent"], rx_packets=data["received"],
                               elapsed_s=load.data_seconds, generator_limited=short,
                               generator_note="it sent less data than asked" if short else "",
                               sessions=counts)
        return TrialResult(trial=trial, tx_packets=PACKETS_PER_CONNECTION * attempted,
                           rx_packets=PACKETS_PER_CONNECTION * admitted,
                           elapsed_s=trial.duration_s, generator_limited=attempted < intended,
                           generator_note="it could not open them" if attempted < intended
                           else "", sessions=counts)


class CountingWitness(TrialHooks):
    """The DUT's own count after each trial: what it admitted."""

    def __init__(self, dut: StatefulDutDouble):
        self.dut = dut

    def sessions_counted(self, index):
        return self.dut.held


def make_profile(cls, name: str, **options):
    """Profile ``cls`` as a task naming it ``name`` with ``options`` builds it."""
    from nsb import plugins

    spec = PluginSpec(name, options, Where(LocatedDocument(options, "t.yaml"), ()))
    return cls(spec, plugins.check_options(cls, spec), run=None)


def stateful_run(results_dir: Path, task_id: str, scenario: str, profile, dut,
                 start: float | None = None, extra_outputs=()) -> Path:
    """A results.json (and every event to ``extra_outputs``) of one scenario whose
    profile runs over ``dut``, as nsb writes them; returns the file."""
    run = RunInfo(task_id, SimpleNamespace(file=f"/lab/tc_{scenario}.yaml", description="",
                                           args={}), results_dir / task_id)
    spec = PluginSpec("file", {}, Where(LocatedDocument({}, "t.yaml"), ()))
    outputs = [FileOutput(spec, {}, run), *extra_outputs]
    for output in outputs:
        output.open()
    clock = iter(range(10**6))
    start = time.time() - 600 if start is None else start

    def emit(event):
        event = _at(event, start + next(clock))
        for output in outputs:
            output.handle(event)

    plan = {"scenarios": [{"name": scenario, "traffic_profile": {
        "type": profile.spec.type, **profile.options}}]}
    emit(TaskStarted(task_id, "", task_file=run.task.file, description="", plan=plan,
                     results_dir=str(results_dir),
                     scenarios=(ScenarioSummary(scenario, "tg0", profile.spec.type),)))
    profile.execute(Measurer(dut, task_id, scenario, emit, CountingWitness(dut),
                             profile=profile.spec.type))
    emit(TaskFinished(task_id, "", status="ok", duration_s=10.0))
    for output in outputs:
        output.close()
    path = results_dir / task_id / "results.json"
    json.loads(path.read_text())  # whole
    return path


def _at(event, timestamp: float):
    """The event at a time of the test's clock: runs sort as they were made."""
    import dataclasses

    return dataclasses.replace(event, timestamp=timestamp)
