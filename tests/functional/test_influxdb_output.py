"""The InfluxDB output against real servers started here (tests/functional/tsdb_servers.py).

Debian's InfluxDB 1.6 takes the v1 API (values read back with InfluxQL);
Debian's VictoriaMetrics takes the v2 write API (read back from its raw export,
which keeps duplicates, so a point written twice would show). Runs go through
nsb.engine with the simulated DUT; the servers are stopped mid-run for the
outage tests. Expected points come from replaying the run's events through a
fresh PointBuilder: the same lines the output wrote.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from nsb import engine, plugins
from nsb.chains import ChainCounts
from nsb.errors import NsbError
from nsb.events import (
    Event,
    KpiSample,
    PlatformFacts,
    PlrEstimate,
    ResultReady,
    ScenarioSummary,
    SoakInterval,
    TaskFinished,
    TaskStarted,
    TrialDone,
)
from nsb.grafana import dashboards
from nsb.intervals import IntervalSample
from nsb.loss_budget import Budget, Loss, Point, TrialPaths
from nsb.outputs.file import FileOutput
from nsb.outputs.influxdb import client as influx_client
from nsb.outputs.influxdb import push as results_push
from nsb.outputs.influxdb.names import MEASUREMENTS
from nsb.outputs.influxdb.output import InfluxDbOutput
from nsb.outputs.influxdb.points import InfluxPoint, PointBuilder
from nsb.outputs.influxdb.spool import Spool
from nsb.runinfo import RunInfo
from nsb.sessions import SessionCounts, SessionLoad
from nsb.task import loader
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from nsb.trial import LatencyStats, Trial, TrialResult
from nsb.vnfs.base import Vnf
from tests.conftest import SAMPLE
from tests.doubles.null_context import NullContext
from tests.doubles.simulated_dut import SimulatedDutGenerator
from tests.functional.tsdb_servers import influxdb1, victoria_metrics

TASK_ID = "f00dcafe"
ADMIN = "nsbadmin"
PASSWORD = "pw-Zq8#not-in-logs"
TOKEN = "tok-Vx93-not-in-logs"
WAIT_S = 60.0  # longest wait for the writer to reach a state (a failure, not a timing check)
QUICK = {"flush_interval_s": 0.02, "batch_size": 7, "retry_interval_s": 0.02,
         "max_retry_interval_s": 0.1, "max_retry_time_s": 0.3, "timeout_s": 5.0}


# ----------------------------------------------------------------------------- doubles

class KpiVnf(Vnf):
    """Double: a VNF without processes whose KPIs change every trial."""

    def __init__(self):
        self.name = "vnf0"
        self.spec = SimpleNamespace(type="kpi_double", name="vnf0")
        self.node = SimpleNamespace(name="sut", interfaces={})
        self.options = {}
        self.samples = 0

    def describe(self) -> dict:
        return {"type": "kpi_double", "node": "sut"}

    def instantiate(self) -> None: ...

    def wait_until_ready(self, timeout: float) -> None: ...

    def collect_kpi(self) -> dict[str, float]:
        self.samples += 1
        return {"port0_ipackets": 1000.0 * self.samples, "rx_pps": 1 / 3 + self.samples,
                "cycles_per_packet": 1e-05 * self.samples}

    def terminate(self) -> None: ...


class PortedGenerator(SimulatedDutGenerator):
    """Double: the simulated DUT with per-port counters and hooks before given trials."""

    def __init__(self, hooks: dict | None = None):
        super().__init__(100_000.0)
        self.hooks = dict(hooks or {})

    def run_trial(self, trial: Trial) -> TrialResult:
        hook = self.hooks.pop(len(self.trials), None)
        if hook is not None:
            hook()
        result = super().run_trial(trial)
        half_tx, half_rx = result.tx_packets // 2, result.rx_packets // 2
        ports = {"xe0": {"tx_packets": half_tx, "rx_packets": half_rx},
                 "xe1": {"tx_packets": result.tx_packets - half_tx,
                         "rx_packets": result.rx_packets - half_rx}}
        return dataclasses.replace(result, ports=ports)


# ----------------------------------------------------------------------------- helpers

def make_output(run: RunInfo, options: dict) -> InfluxDbOutput:
    spec = PluginSpec("influxdb", options, Where(LocatedDocument(options, "t.yaml"), ()))
    return InfluxDbOutput(spec, plugins.check_options(InfluxDbOutput, spec), run)


PLAN_ARGS = {"packet_sizes": [64, 1518]}


def make_plan(tmp_path: Path, options: dict, hooks: dict | None = None):
    task = loader.load(SAMPLE, PLAN_ARGS)
    run = RunInfo(TASK_ID, task, tmp_path / "results" / TASK_ID)
    real = engine.plan(task, run)
    scenario = real.scenarios[0]
    scenario.vnfs = [KpiVnf()]
    scenario.generator = PortedGenerator(hooks)
    influx = make_output(run, options)
    outputs = [FileOutput(task.outputs[0], {}, run), influx]
    return engine.Plan(task, run, NullContext(task.context, {}, run), real.scenarios,
                       outputs), influx


def expected_points(events: list[Event], tags: dict | None = None,
                    args: dict | None = None) -> list[InfluxPoint]:
    builder = PointBuilder.for_task_file(TASK_ID, SAMPLE, tags, args)
    return [point for event in events for point in builder.points(event)]


def as_influxql(points: list[InfluxPoint]) -> list[tuple]:
    """Points as InfluxDB 1.x stores them: (measurement, tags, time ns, fields)."""
    return sorted(_key(p.measurement, p.tags, p.time_ns, p.fields) for p in points)


def _key(measurement, tags, stamp, fields) -> tuple:
    return (measurement, tuple(sorted(tags.items())), stamp, tuple(sorted(fields.items())))


def stored_influxql(server, db: str) -> list[tuple]:
    return sorted(_key(*p) for p in server.points(db))


def as_samples(points: list[InfluxPoint]) -> list[tuple]:
    """Points as VictoriaMetrics stores them: one sample per field, millisecond times;
    a string field (a stateful answer's kind, warnings) is a sample of 0 there."""
    return sorted((f"{p.measurement}_{name}", tuple(sorted(p.tags.items())),
                   p.time_ns // 1_000_000, 0 if isinstance(value, str) else value)
                  for p in points for name, value in p.fields.items())


def stored_samples(server, at_least: int) -> list[tuple]:
    """The raw samples once at least ``at_least`` are searchable (VictoriaMetrics makes
    new samples searchable within about a second), then again after that settles."""
    deadline = time.monotonic() + WAIT_S
    while True:
        samples = server.samples()
        if len(samples) >= at_least or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    time.sleep(2.0)  # anything written twice would be searchable by now
    return sorted((n, tuple(sorted(labels.items())), t, v) for n, labels, t, v
                  in server.samples())


def assert_same_samples(stored: list[tuple], expected: list[tuple]) -> None:
    """Equal as multisets; VictoriaMetrics keeps about 12 significant digits of a float."""
    assert len(stored) == len(expected), (len(stored), len(expected))
    for got, want in zip(stored, expected, strict=True):
        assert got[:3] == want[:3], (got, want)
        assert math.isclose(got[3], want[3], rel_tol=1e-11, abs_tol=1e-300), (got, want)


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.02)


def assert_no_secrets(tmp_path: Path, caplog, *secrets: str) -> None:
    assert caplog.records, "nothing was logged: the check below would prove nothing"
    for secret in secrets:
        assert secret not in caplog.text
        for path in tmp_path.rglob("*"):
            if path.is_file() and "influxdb" not in path.parts and \
                    "victoria-metrics" not in path.parts:  # the servers' own data
                assert secret.encode() not in path.read_bytes(), path


def _path(sent: int, received: int) -> TrialPaths:
    """One direction whose loss is half the DUT's receive side, half the link back."""
    rx_drop = (sent - received) // 2
    points = (Point("tg:xe0 tx", sent), Point("sut:xe0 arrived", sent),
              Point("sut:xe0 rx", sent - rx_drop), Point("tg:xe1 rx", received))
    return TrialPaths((Budget("tg:xe0 -> tg:xe1", sent, received, points, (
        Loss("sut:xe0 rx", "rx_dropped", rx_drop),
        Loss("link sut:xe1 -> tg:xe1", "link", sent - received - rx_drop))),))


def synthetic_events() -> list[Event]:
    """One of every kind of event the output turns into points, near now."""
    now = time.time() - 60
    plan = {"scenarios": [{"name": "sc1", "traffic_generator": {"tg0": {}},
                           "traffic_profile": {"type": "binsearch"}}]}
    latency = LatencyStats(samples=1000, min_us=4.25, avg_us=11.125, max_us=97.0,
                           percentiles_us={"p50": 10.5, "p90": 20.0, "p99": 50.0,
                                           "p99.9": 90.125})
    events: list[Event] = [
        TaskStarted(TASK_ID, "", task_file=str(SAMPLE), description="d", plan=plan,
                    results_dir="/r", timestamp=now,
                    scenarios=(ScenarioSummary("sc1", "tg0", "binsearch"),)),
        PlatformFacts(TASK_ID, "", node="sut", timestamp=now + 0.1, facts={
            "hostname": "sut-1", "kernel": "6.1.0-18-amd64", "cpu_model": "Intel Xeon 6230",
            "cpus": 40, "sockets": 2, "memory_gib": 187.6, "hugepages_total": 1024,
            "kernel_cmdline": "BOOT_IMAGE=/vmlinuz isolcpus=2-19", "isolated_cpus": "2-19",
            "nics": {"xe0": {"pci": "0000:3b:00.0"}}, "versions": {"dpdk": "22.11.4-1"}}),
    ]
    for index, (frame, rate, rx) in enumerate([(64, 14880952.0, 29761904),
                                               (64, 7440476.0, 14880952),
                                               (1518, 81274.0, 162500)]):
        result = TrialResult(trial=Trial(frame, rate, 2.0, flows=1024), tx_packets=2 * int(rate),
                             rx_packets=rx, elapsed_s=2.000123, latency=latency,
                             generator_limited=index == 2,
                             ports={"xe0": {"tx_packets": int(rate), "rx_packets": rx // 2}},
                             extra={"requested_packets": 2 * int(rate), "probe_packets": 2000},
                             chains=(ChainCounts(0, int(rate), rx // 2, latency),
                                     ChainCounts(1, int(rate), rx // 2)) if index == 1 else ())
        events.append(TrialDone(TASK_ID, "sc1", iteration=0, trial_index=index, result=result,
                                verdict=["fail", "pass", "generator_limited"][index],
                                rate_pct=100.0 / (index + 1), lower_pct=0.0,
                                upper_pct=100.0, reason="r", timestamp=now + 1 + index,
                                path=_path(int(rate), rx // 2) if index == 0 else None))
        events.append(KpiSample(TASK_ID, "sc1", source="testpmd0", node="sut",
                                kpis={"port0_ipackets": 123456789.0 + index,
                                      "port0_imissed": 0.0}, trial_index=index,
                                timestamp=now + 1.5 + index))
        events.append(KpiSample(TASK_ID, "sc1", source="ovs0", node="sut",
                                kpis={"packets_received": 1e6 * (index + 1),
                                      "emc_hits": 9e5 * (index + 1), "smc_hits": 0.0,
                                      "megaflow_hits": 1e5 * (index + 1), "upcalls": 12.0,
                                      "cycles_per_packet": 310.5, "datapath_flows": 4.0},
                                trial_index=index, timestamp=now + 1.5 + index))
        events.append(KpiSample(TASK_ID, "sc1", source="nfvi:testpmd0", node="sut",
                                kpis={"cpu_user_pct": 99.71, "cpu_system_pct": 0.29,
                                      "rss_kb": 81234.0, "pid": 4242.0,
                                      "ctx_switches_voluntary_per_s": 2.0,
                                      "ctx_switches_nonvoluntary_per_s": 0.5},
                                trial_index=index, timestamp=now + 1.25 + index))
        events.append(KpiSample(TASK_ID, "sc1", source="node:sut", node="sut",
                                kpis={"cpu0_util_pct": 3.5, "cpu2_util_pct": 100.0},
                                trial_index=index, timestamp=now + 1.25 + index))
    events.append(ResultReady(TASK_ID, "sc1", iteration=0, frame_size=64,
                              throughput_pps=7440476.0, throughput_mbps=4999.999872,
                              line_rate_pct=49.99999, loss_pct=0.0, latency=latency,
                              limited_by="dut", trials=2, tx_packets=14880952,
                              rx_packets=14880952, profile="binsearch", timestamp=now + 9,
                              extra={"ndr_lower_pct": 49.5, "sweep": {"50": {"loss_pct": 0.0}},
                                     "chains": [{"chain": k, "throughput_pps": 3720238.0,
                                                 "tx_packets": 7440476, "rx_packets": 7440476,
                                                 "loss_pct": 0.0, "latency": {"samples": 9,
                                                                              "p99_us": 61.5}}
                                                for k in (0, 1)],
                                     "first_failing_chain": {"chain": 1, "loss_pct": 2.5,
                                                             "rate_pps": 14880952.0,
                                                             "chains_failed": [1]}}))
    events += stateful_events(now)
    # an answer of each test under change, flattened into nsb_result's fields
    events.append(ResultReady(TASK_ID, "sc1", iteration=0, frame_size=64,
                              throughput_pps=5e4, throughput_mbps=33.6, line_rate_pct=0.3,
                              loss_pct=0.0, latency=None, limited_by="none", trials=3,
                              profile="reset_time", timestamp=now + 8.5,
                              extra={"reset": {"reset_time_s": 0.39, "blocked_time_s": 0.39},
                                     "overload": {"overload_recovery_s": 0.48},
                                     "neighbour": {"reported_drop_pct": 20.7},
                                     "mac_learning": {"mac_capacity": 500,
                                                      "learning_rate_pps": 50000}}))
    for index in range(3):  # a soak's intervals, then PLRsearch's estimate after a trial
        sample = IntervalSample(index, 2.0 * index, 2.0 * index + 2, 2000000, 2000000 - index,
                                latency=latency)
        events.append(SoakInterval(TASK_ID, "sc1", trial_index=3, frame_size=64,
                                   rate_pps=1e6, sample=sample, timestamp=now + 9.2 + index / 10))
    events.append(PlrEstimate(TASK_ID, "sc1", trial_index=4, frame_size=64,
                              target_loss_ratio=1e-7, load_pps=9e5, duration_s=1.0,
                              lost_packets=3, estimate_pps=8.5e5, stdev_pps=2e4,
                              fits={"stretch": (8.4e5, 2e4), "erf": (8.6e5, 2.5e4)},
                              timestamp=now + 9.6))
    events.append(TaskFinished(TASK_ID, "", status="ok", duration_s=10.5, timestamp=now + 10))
    return events


def stateful_events(now: float) -> list[Event]:
    """A CPS trial that lost connections by two reasons and one the DUT held, then a
    cps and a concurrent_sessions answer (before the frame answer: the documented
    last() per frame size stays the frames')."""
    events: list[Event] = []
    for index, (load, counts) in enumerate([
            (SessionLoad("tcp_cps", 20000.0), SessionCounts(
                intended=20000, attempted=19000, established=4916,
                failed={"not_established": 14000, "reset": 84}, retransmitted=8291,
                generator_errors={"flow_overflow": 1000}, duration_s=1.0,
                dut_sessions=5348, bytes={"client_to_server": 1280000,
                                          "server_to_client": 314624})),
            (SessionLoad("long_lived", 2000.0, hold_s=4.0), SessionCounts(
                intended=2919, attempted=2919, established=2919, duration_s=1.4595,
                dut_sessions=2919))], start=5):
        trial = Trial(64, 0.0, counts.duration_s, sessions=load)
        result = TrialResult(trial=trial, tx_packets=7 * counts.attempted,
                             rx_packets=7 * counts.established, elapsed_s=counts.duration_s,
                             sessions=counts)
        events.append(TrialDone(TASK_ID, "sc1", iteration=0, trial_index=index, result=result,
                                verdict="fail" if counts.lost else "pass", rate_pct=100.0,
                                lower_pct=0.0, upper_pct=100.0, reason="r",
                                timestamp=now + 3 + index / 10))
    for kind, cps, sessions, profile in (("cps", 2938.0, None, "cps"),
                                         ("concurrent_sessions", 2000.0, 2919,
                                          "concurrent_sessions")):
        stateful = {"kind": kind, "program": "tcp_cps", "cps": cps, "cps_asked": cps,
                    "established_cps": cps, "sessions": sessions, "dut_sessions": 2919,
                    "counts": SessionCounts(intended=2921, attempted=2921, established=2919,
                                            failed={"reset": 2}, retransmitted=9,
                                            duration_s=1.0, dut_sessions=2919).record(),
                    "generator_ceiling_cps": 38312.0, "trial_index": 6}
        events.append(ResultReady(TASK_ID, "sc1", iteration=0, frame_size=64,
                                  throughput_pps=20575.0, throughput_mbps=13.83,
                                  line_rate_pct=0.07, loss_pct=0.0, latency=None,
                                  limited_by="dut", trials=8, profile=profile,
                                  timestamp=now + 8 + len(events) / 10,
                                  extra={"stateful": stateful}))
    return events


def documented_influxql() -> list[str]:
    """The InfluxQL statements of docs/reference/influxdb.md this file checks, one per
    comment line."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "influxdb.md").read_text()
    statements = []
    marker = "checked-by tests/functional/test_influxdb_output.py"
    for block in [b.split("```sql\n", 1)[1] for b in text.split("<!-- example: ")[1:]
                  if b.startswith(marker) and "```sql\n" in b]:
        for chunk in block.split("```")[0].split("\n\n"):
            lines = [line for line in chunk.splitlines() if not line.startswith("--")]
            if lines:
                statements.append(" ".join(line.strip() for line in lines))
    return statements


def direct_run(tmp_path: Path) -> RunInfo:
    task = SimpleNamespace(file=SAMPLE, args={})
    return RunInfo(TASK_ID, task, tmp_path / "results" / TASK_ID)


# ----------------------------------------------------------------------------- v1

def test_v1_influxdb16_every_value_reads_back_with_influxql(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    events = synthetic_events()
    with influxdb1(tmp_path, admin=(ADMIN, PASSWORD)) as server:
        out = make_output(direct_run(tmp_path), {
            "url": server.url, "api": "v1", "database": "nsb_ci", "username": ADMIN,
            "password": PASSWORD, "tags": {"lab": "ci"}, **QUICK})
        assert out.describe()["password"] == "<secret>"
        out.open()
        for event in events:
            out.handle(event)
        out.close()
        expected = expected_points(events, {"lab": "ci"})
        assert {p.measurement for p in expected} == set(MEASUREMENTS)  # every one covered
        assert (out.sent_points, out.spooled_points, out.rejected_points) == (len(expected), 0, 0)
        assert stored_influxql(server, "nsb_ci") == as_influxql(expected)
        # the schema's example queries (docs/reference/influxdb.md) run and find this task's points
        queries = documented_influxql()
        assert len(queries) >= 8
        for query in queries:
            reply = server.query(query.replace("$task_id", TASK_ID)
                                 .replace("$timeFilter", "time > now() - 1h"), db="nsb_ci")
            if "$task_id" in query or "test_case" in query:
                assert reply["results"][0].get("series"), query
        reply = server.query(queries[1].replace("$task_id", TASK_ID), db="nsb_ci")
        [series] = reply["results"][0]["series"]
        assert series["tags"] == {"frame_size": "64"}
        assert series["values"][0][1:] == [7440476.0, 49.99999]
    assert not (tmp_path / "results" / TASK_ID / "influxdb.spool.lp").exists()
    assert_no_secrets(tmp_path, caplog, PASSWORD)


def test_every_dashboard_query_runs_on_influxdb16_and_finds_the_run(tmp_path):
    """Each panel's InfluxQL, with Grafana's variables filled in as Grafana would, runs
    on a real InfluxDB 1.6 and returns the points of a run: a query InfluxDB refuses
    (a function it lacks, a regex where it takes none) or one that selects nothing
    fails here. What Grafana then draws from the rows is not shown."""
    events = synthetic_events()
    with influxdb1(tmp_path) as server:
        out = make_output(direct_run(tmp_path), {"url": server.url, "api": "v1",
                                                 "database": "nsb_ci", **QUICK})
        out.open()
        for event in events:
            out.handle(event)
        out.close()
        write_trend_marks(server.url)
        variables = {"$task_id": TASK_ID, "$scenario": "sc1", "$__interval": "1s",
                     "$test_case": SAMPLE.stem, "$timeFilter": "time > now() - 1h"}
        checked = 0
        for board in dashboards.dashboards("influx-uid"):
            annotations = (board.get("annotations") or {}).get("list", [])
            for panel in [*board["panels"], {"title": "annotations",
                                             "targets": [a["target"] for a in annotations]}]:
                for target in panel.get("targets", []):
                    query = target["query"]
                    for name, value in variables.items():
                        query = query.replace(name, value)
                    reply = server.query(query, db="nsb_ci")["results"][0]
                    assert "error" not in reply, f"{panel['title']}: {query}: {reply}"
                    assert reply.get("series"), f"{panel['title']} found nothing: {query}"
                    checked += 1
        assert checked >= 23
        platform = server.query('SELECT last("cpus") FROM "nsb_platform" GROUP BY *',
                                db="nsb_ci")["results"][0]["series"][0]
        assert platform["tags"]["dpdk_version"] == "22.11.4-1"


def write_trend_marks(url: str) -> None:
    """What nsb report trend --annotate writes for the test case of synthetic_events():
    a history with a step down and then up, in the last half hour."""
    from nsb.outputs.influxdb.settings import resolve
    from nsb.report import trend, trend_influx

    now = time.time() - 1800
    levels = [1e6] * 6 + [0.8e6] * 6 + [1.2e6] * 6
    points = [trend.Point(f"t{k:02d}", level * (1 + 0.001 * (k % 3)), "", now + 60 * k)
              for k, level in enumerate(levels)]
    found = trend.classify((SAMPLE.stem, "sc1", "binsearch", 64, None), points)
    assert [g["comment"] for g in found.groups] == ["normal", "regression", "progression"]
    trend_influx.write(resolve({"url": url, "api": "v1", "database": "nsb_ci"}),
                       trend_influx.marks([found]))


def spool_with_a_wrong_password(run: RunInfo, server, events: list[Event]) -> InfluxDbOutput:
    """Every event through an output InfluxDB 1.6 refuses: all of it ends in the spool."""
    out = make_output(run, {"url": server.url, "api": "v1", "database": "nsb_ci",
                            "username": ADMIN, "password": "wrong-" + PASSWORD, **QUICK})
    out.open()
    for event in events:
        out.handle(event)
    out.close()
    return out


def test_v1_wrong_password_spools_everything_then_push_sends_it_once(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    events = synthetic_events()
    run = direct_run(tmp_path)
    with influxdb1(tmp_path, admin=(ADMIN, PASSWORD)) as server:
        out = spool_with_a_wrong_password(run, server, events)
        expected = expected_points(events)
        assert (out.sent_points, out.spooled_points) == (0, len(expected))
        assert "check the token or user" in caplog.text
        spool = Spool(run.results_dir)
        assert spool.pending().lines == [p.line() for p in expected]
        assert spool.destination() == {"url": server.url, "api": "v1", "database": "nsb_ci",
                                       "retention_policy": "", "username": ADMIN}

        with pytest.raises(NsbError, match="after 0 of"):  # still the wrong password
            results_push.push(run.results_dir, results_push.settings_for(
                run.results_dir, {"password": "wrong-" + PASSWORD}))
        assert spool.sent_offset() == 0
        # the password from nsb.conf, everything else from where the run was writing
        settings = results_push.settings_for(run.results_dir, {"password": PASSWORD})
        assert results_push.push(run.results_dir, settings) == len(expected)
        assert stored_influxql(server, "nsb_ci") == as_influxql(expected)
        assert results_push.push(run.results_dir, settings) == 0
        assert stored_influxql(server, "nsb_ci") == as_influxql(expected)
    assert_no_secrets(tmp_path, caplog, PASSWORD)


# ----------------------------------------------------------------------------- v2

def test_v2_victoria_metrics_pipeline_every_sample_once(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    with victoria_metrics(tmp_path) as server:
        plan, out = make_plan(tmp_path, {"url": server.url, "org": "lab", "bucket": "nsb",
                                         "token": TOKEN, **QUICK})
        events: list[Event] = []
        engine.execute(plan, [events.append])
        expected = expected_points(events, args=PLAN_ARGS)
        assert all(p.tags["task_args"] == '{"packet_sizes":[64,1518]}' for p in expected)
        assert {p.measurement for p in expected} == {"nsb_task", "nsb_trial", "nsb_trial_port",
                                                     "nsb_result", "nsb_kpi", "nsb_hop"}
        assert (out.sent_points, out.spooled_points) == (len(expected), 0)
        want = as_samples(expected)
        assert_same_samples(stored_samples(server, len(want)), want)
    results = json.loads((plan.run.results_dir / "results.json").read_text())
    assert results["plan"]["outputs"][1]["token"] == "<secret>"
    assert_no_secrets(tmp_path, caplog, TOKEN)


# ----------------------------------------------------------------------------- outage

@pytest.mark.parametrize("kind", ["v1-influxdb-1.6", "v2-victoria-metrics"])
def test_outage_mid_run_spools_then_push_sends_every_point_exactly_once(tmp_path, caplog, kind):
    caplog.set_level(logging.DEBUG)
    v1 = kind.startswith("v1")
    start = influxdb1(tmp_path, admin=(ADMIN, PASSWORD)) if v1 else victoria_metrics(tmp_path)
    with start as server:
        options = ({"api": "v1", "database": "nsb_ci", "username": ADMIN, "password": PASSWORD}
                   if v1 else {"token": TOKEN, "org": "lab"})
        events: list[Event] = []
        before_outage: list[str] = []

        def stop_server():
            assert out.flush(timeout=WAIT_S)
            assert out.sent_points > 0 and out.spooled_points == 0
            before_outage.extend(p.line() for p in expected_points(events, args=PLAN_ARGS))
            server.stop()

        def restart_server():
            wait_for(lambda: out.spooled_points > 0, "points spooled while the server is down")
            server.start()

        plan, out = make_plan(tmp_path, {"url": server.url, **options, **QUICK},
                              hooks={3: stop_server, 8: restart_server})
        engine.execute(plan, [events.append])
        assert before_outage and not plan.scenarios[0].generator.hooks  # both hooks ran

        expected = expected_points(events, args=PLAN_ARGS)
        lines = [p.line() for p in expected]
        spool = Spool(plan.run.results_dir)
        spooled = spool.pending().lines
        assert spooled and out.spooled_points == len(spooled)
        assert out.sent_points + out.spooled_points == len(expected)
        assert not set(spooled) & set(before_outage)  # sent before the outage: not spooled
        assert set(spooled) <= set(lines) and len(set(spooled)) == len(spooled)

        settings = results_push.settings_for(plan.run.results_dir, {"password": PASSWORD})
        assert results_push.push(plan.run.results_dir, settings) == len(spooled)
        assert results_push.push(plan.run.results_dir, settings) == 0  # nothing new
        if v1:
            assert stored_influxql(server, "nsb_ci") == as_influxql(expected)
        else:
            want = as_samples(expected)
            assert_same_samples(stored_samples(server, len(want)), want)
    assert "unreachable" in caplog.text and f"nsb results push {TASK_ID}" in caplog.text
    assert_no_secrets(tmp_path, caplog, PASSWORD, TOKEN)


def test_push_stopped_half_way_resumes_without_sending_anything_twice(tmp_path, monkeypatch):
    events = synthetic_events()
    expected = expected_points(events)
    run = direct_run(tmp_path)
    spool = Spool(run.results_dir)
    with victoria_metrics(tmp_path) as server:
        spool.append([p.line() for p in expected], {"url": server.url, "api": "v2",
                                                    "org": "", "bucket": "nsb"})
        settings = results_push.settings_for(run.results_dir, {}, batch_size=5)
        real = influx_client.make_sender

        def failing_after_two_batches(s):
            sender = real(s)
            send, calls = sender.send, []

            def send_twice(lines):
                calls.append(len(lines))
                if len(calls) > 2:
                    raise influx_client.SendError("access", "HTTP 403: simulated", 403)
                send(lines)

            sender.send = send_twice
            return sender

        monkeypatch.setattr(influx_client, "make_sender", failing_after_two_batches)
        with pytest.raises(NsbError, match=f"after 10 of {len(expected)} points"):
            results_push.push(run.results_dir, settings)
        monkeypatch.setattr(influx_client, "make_sender", real)
        assert len(spool.pending().lines) == len(expected) - 10
        assert results_push.push(run.results_dir, settings) == len(expected) - 10
        assert results_push.push(run.results_dir, settings) == 0
        want = as_samples(expected)
        assert_same_samples(stored_samples(server, len(want)), want)


def test_cli_results_push_sends_the_spool_once(tmp_path, nsb_main):
    events = synthetic_events()
    run = direct_run(tmp_path)
    with influxdb1(tmp_path, admin=(ADMIN, PASSWORD)) as server:
        spool_with_a_wrong_password(run, server, events)
        expected = expected_points(events)
        argv = ("results", "push", TASK_ID, "--results-dir", str(tmp_path / "results"),
                "--password", PASSWORD)
        code, printed, err = nsb_main(*argv)
        assert code == 0, err
        assert printed.strip().startswith(f"task {TASK_ID}: {len(expected)} point(s) sent to")
        assert stored_influxql(server, "nsb_ci") == as_influxql(expected)
        # a unique prefix names the task; the line says where the run was writing
        code, printed, err = nsb_main("results", "push", TASK_ID[:4], "--results-dir",
                                      str(tmp_path / "results"), "--password", PASSWORD)
        assert code == 0 and printed.strip() == (f"task {TASK_ID}: 0 point(s) sent to "
                                                 f"{server.url} database nsb_ci"), err
        code, printed, err = nsb_main("results", "push", "nosuchtask", "--results-dir",
                                      str(tmp_path / "results"))
        assert code == 2 and len(err.strip().splitlines()) == 1 and "nosuchtask" in err


# ----------------------------------------------------------------------------- nsb.conf

def task_with_outputs(tmp_path: Path, outputs: str | None) -> Path:
    """The lab sample with other outputs (None: no ``outputs`` key, so the default)."""
    head, tail = SAMPLE.read_text().split("\noutputs:\n")
    assert tail == "  - type: file\n"
    path = tmp_path / "tc_conf_outputs.yaml"
    path.write_text(head + ("\noutputs:\n" + outputs if outputs else "\n"))
    return path


def nsb_conf(directory: Path, tmp_path: Path, text: str) -> str:
    """An nsb.conf outside tmp_path (whose files are searched for secrets) with the
    results and logs under tmp_path."""
    path = directory / "nsb.conf"
    path.write_text(f"[DEFAULT]\nresults_dir = {tmp_path}/results\n"
                    f"log_dir = {tmp_path}/logs\n{text}")
    return str(path)


@pytest.fixture
def simulated_start(monkeypatch, nsb_main):
    """``nsb --config-file CONF task start TASK``, in-process: the plan is the engine's
    (outputs from the task and from nsb.conf), with the simulated DUT for its generator
    and VNF. Returns (results dir, events, results.json)."""
    from nsb import leftovers

    real_plan, real_execute = engine.plan, engine.execute
    events: list[Event] = []

    def plan(task, run):
        planned = real_plan(task, run)
        planned.scenarios[0].vnfs = [KpiVnf()]
        planned.scenarios[0].generator = PortedGenerator()
        planned.context = NullContext(task.context, {}, run)
        return planned

    monkeypatch.setattr(engine, "plan", plan)
    monkeypatch.setattr(engine, "execute", lambda p, listeners=(): real_execute(
        p, [*listeners, events.append]))
    monkeypatch.setattr(leftovers, "clean_killed_runs", lambda: None)  # not this test's

    def start(conf: str, task: Path):
        code, _, err = nsb_main("--config-file", conf, "task", "start", str(task),
                                "--task-args", json.dumps(PLAN_ARGS))
        assert code == 0, err
        results_dir = Path(events[0].results_dir)
        results = json.loads((results_dir / "results.json").read_text())
        return results_dir, list(events), results

    return start


def run_points(events: list[Event], task: Path, tags: dict | None = None) -> list[InfluxPoint]:
    """What the run's influxdb output wrote: its events through a fresh PointBuilder."""
    builder = PointBuilder.for_task_file(events[0].task_id, task, tags, PLAN_ARGS)
    return [point for event in events for point in builder.points(event)]


def assert_counts_match_results(stored: list[tuple], results: dict) -> None:
    """Every trial and result in results.json is a point, and no more."""
    by_measurement: dict[str, int] = {}
    for measurement, *_ in stored:
        by_measurement[measurement] = by_measurement.get(measurement, 0) + 1
    assert by_measurement["nsb_trial"] == len(results["trials"]) > 0
    assert by_measurement["nsb_result"] == len(results["results"]) == 2
    assert by_measurement["nsb_task"] == 2  # started, finished


@pytest.mark.parametrize("spelling", ["nsb", "yardstick"])
def test_nsb_conf_outputs_send_a_task_without_influxdb_to_influxdb16(
        tmp_path, tmp_path_factory, caplog, simulated_start, spelling):
    """nsb.conf gives every task the influxdb output (Yardstick's dispatcher and
    [dispatcher_influxdb] read as nsb's outputs and [influxdb]); the task names none."""
    caplog.set_level(logging.DEBUG)
    task = task_with_outputs(tmp_path, None)
    with influxdb1(tmp_path, admin=(ADMIN, PASSWORD)) as server:
        text = (f"outputs = influxdb\n[influxdb]\nurl = {server.url}\ndatabase = nsb_conf\n"
                f"username = {ADMIN}\npassword = {PASSWORD}\n" if spelling == "nsb" else
                f"dispatcher = influxdb\n[dispatcher_influxdb]\ntimeout = 5\n"
                f"target = {server.url}\ndb_name = nsb_conf\nusername = {ADMIN}\n"
                f"password = {PASSWORD}\n")
        results_dir, events, results = simulated_start(
            nsb_conf(tmp_path_factory.mktemp("etc"), tmp_path, text), task)
        stored = stored_influxql(server, "nsb_conf")
        assert stored == as_influxql(run_points(events, task))
        assert_counts_match_results(stored, results)
    outputs = results["plan"]["outputs"]
    assert [(o["type"], o["from"]) for o in outputs] == [("file", "task"),
                                                         ("influxdb", "nsb.conf")]
    assert (outputs[1]["api"], outputs[1]["database"], outputs[1]["password"]) == (
        "v1", "nsb_conf", "<secret>")
    assert not (results_dir / "influxdb.spool.lp").exists()
    assert_no_secrets(tmp_path, caplog, PASSWORD)


def test_a_task_influxdb_output_writes_to_the_conf_database_on_influxdb16(
        tmp_path, tmp_path_factory, caplog, simulated_start):
    """``{type: influxdb}`` in the task, ``url`` and ``database`` in nsb.conf: the v1
    API to that database, not the v2 API's default bucket."""
    caplog.set_level(logging.DEBUG)
    task = task_with_outputs(tmp_path, "  - type: file\n  - type: influxdb\n")
    with influxdb1(tmp_path) as server:
        conf = nsb_conf(tmp_path_factory.mktemp("etc"), tmp_path,
                        f"[influxdb]\nurl = {server.url}\ndatabase = nsb_conf\n")
        results_dir, events, results = simulated_start(conf, task)
        stored = stored_influxql(server, "nsb_conf")
        assert stored == as_influxql(run_points(events, task))
        assert_counts_match_results(stored, results)
    [file_out, influx] = results["plan"]["outputs"]
    assert (influx["from"], influx["api"], influx["settings_from"]) == (
        "task", "v1", {"nsb.conf": ["database", "url"]})
    assert not (results_dir / "influxdb.spool.lp").exists()


def test_nsb_conf_v2_settings_reach_victoria_metrics(tmp_path, tmp_path_factory, caplog,
                                                      simulated_start):
    """The v2 write API from nsb.conf alone; the task's own file output is not doubled."""
    caplog.set_level(logging.DEBUG)
    task = task_with_outputs(tmp_path, None)
    with victoria_metrics(tmp_path) as server:
        conf = nsb_conf(tmp_path_factory.mktemp("etc"), tmp_path,
                        f"outputs = file,influxdb\n[influxdb]\nurl = {server.url}\n"
                        f"org = lab\nbucket = nsb\ntoken = {TOKEN}\ntags = lab:ci\n")
        _, events, results = simulated_start(conf, task)
        want = as_samples(run_points(events, task, {"lab": "ci"}))
        assert_same_samples(stored_samples(server, len(want)), want)
    assert [(o["type"], o["from"]) for o in results["plan"]["outputs"]] == [
        ("file", "task"), ("influxdb", "nsb.conf")]
    assert results["plan"]["outputs"][1]["api"] == "v2"
    assert_no_secrets(tmp_path, caplog, TOKEN)


def test_a_task_option_overrides_nsb_conf(tmp_path, tmp_path_factory, simulated_start):
    """nsb.conf points at InfluxDB 1.6 (database); the task's url and bucket point at
    VictoriaMetrics (v2): every point goes there and none to the conf's database."""
    with influxdb1(tmp_path) as influx, victoria_metrics(tmp_path) as vm:
        task = task_with_outputs(
            tmp_path, f"  - type: file\n  - {{type: influxdb, url: \"{vm.url}\", bucket: nsb}}\n")
        conf = nsb_conf(tmp_path_factory.mktemp("etc"), tmp_path,
                        f"outputs = influxdb\n[influxdb]\nurl = {influx.url}\n"
                        "database = nsb_conf\n")
        _, events, results = simulated_start(conf, task)
        want = as_samples(run_points(events, task))
        assert_same_samples(stored_samples(vm, len(want)), want)
        [series] = influx.query("SHOW DATABASES")["results"][0].get("series", [{}])
        assert ["nsb_conf"] not in series.get("values", [])  # never even created
    [_, influx_out] = results["plan"]["outputs"]
    assert (influx_out["from"], influx_out["api"], influx_out["url"]) == ("task", "v2", vm.url)
