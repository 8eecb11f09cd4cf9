"""Trends read from a real InfluxDB 1.6, and their changes written back for Grafana.

A history of runs of a two-chain task goes through the two outputs a run has (the
results file and InfluxDB) event by event. Then `nsb report trend --influx` must
classify it as `nsb report trend` does over the results directory, with the step at
the run where it was put; `--annotate` must mark that run, and the trend dashboard's
annotation and group queries, with Grafana's variables filled in, must find the marks.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from nsb import plugins
from nsb.cli import main
from nsb.events import ResultReady, ScenarioSummary, TaskFinished, TaskStarted, TaskStatus
from nsb.grafana import dashboards
from nsb.outputs.file import FileOutput
from nsb.outputs.influxdb.output import InfluxDbOutput
from nsb.runinfo import RunInfo
from nsb.sessions import SessionCounts
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from tests.functional.tsdb_servers import influxdb1

ARGS = {"chains": 2, "packet_sizes": [64]}
BEFORE, AFTER, STEP_AT = 1_000_000.0, 880_000.0, 8  # runs 0-7 at 1 Mpps, from run 8 -12 %
NOISE = (0.004, -0.003, 0.002, -0.001, 0.003, -0.004, 0.001, 0.0, -0.002, 0.003, 0.001, -0.003)
GENERATOR_LIMITED_RUN, FAILED_RUN = 3, 10


def _spec(kind: str, options: dict) -> PluginSpec:
    return PluginSpec(kind, options, Where(LocatedDocument(options, "t.yaml"), ()))


def run_events(task_id: str, index: int, at: float) -> list:
    level = (BEFORE if index < STEP_AT else AFTER) * (1 + NOISE[index])
    scenario = (ScenarioSummary("chains", "tg0", "mrr"),)
    chains = [{"chain": k, "throughput_pps": level / 2 * (1 + 0.001 * k), "tx_packets": 1,
               "rx_packets": 1, "loss_pct": 0.0} for k in (0, 1)]
    trials = [level * (1 + d) for d in (-0.003, 0.0, 0.003)]  # what jumpavg gets of a run
    status = TaskStatus.ERROR if index == FAILED_RUN else TaskStatus.OK
    return [TaskStarted(task_id, "", task_file="tc_testpmd_chains.yaml", description="",
                        plan={}, results_dir="", timestamp=at, scenarios=scenario),
            ResultReady(task_id, "chains", iteration=0, frame_size=64, throughput_pps=level,
                        throughput_mbps=level * 84 * 8 / 1e6, line_rate_pct=level / 148809.52,
                        loss_pct=0.0, latency=None, trials=3, profile="mrr",
                        limited_by="generator" if index == GENERATOR_LIMITED_RUN else "dut",
                        timestamp=at + 30, extra={"chains": chains, "mrr": {
                            "trials": 3, "duration_s": 1.0, "rate_pct": 100.0,
                            "receive_rates_pps": trials, "mean_pps": level,
                            "stdev_pps": 0.003 * level}}),
            TaskFinished(task_id, "", status=status, duration_s=40.0, timestamp=at + 40)]


def stateful_events(task_id: str, index: int, at: float) -> list:
    """A CPS answer of a DUT whose connection rate drops by a sixth from run STEP_AT;
    its packets (the trial's, seven a connection) are no part of its trend."""
    level = (3000.0 if index < STEP_AT else 2500.0) * (1 + NOISE[index])
    stateful = {"kind": "cps", "program": "tcp_cps", "cps": level, "cps_asked": level,
                "established_cps": level, "sessions": None, "dut_sessions": round(level),
                "counts": SessionCounts(intended=round(level), attempted=round(level),
                                        established=round(level), duration_s=1.0,
                                        dut_sessions=round(level)).record(),
                "trial_index": 3}
    return [TaskStarted(task_id, "", task_file="tc_astf_cps.yaml", description="",
                        plan={}, results_dir="", timestamp=at,
                        scenarios=(ScenarioSummary("cps_nat", "tg0", "cps"),)),
            ResultReady(task_id, "cps_nat", iteration=0, frame_size=64,
                        throughput_pps=7 * level * (1 + 0.05 * (index % 2)),
                        throughput_mbps=1.0, line_rate_pct=0.1, loss_pct=0.0, latency=None,
                        trials=8, profile="cps", timestamp=at + 30,
                        limited_by="generator" if index == GENERATOR_LIMITED_RUN else "dut",
                        extra={"stateful": stateful}),
            TaskFinished(task_id, "", status=TaskStatus.OK, duration_s=40.0, timestamp=at + 40)]


def write_history(tmp_path: Path, server, runs: int, events=run_events,
                  file: str = "/lab/tc_testpmd_chains.yaml") -> Path:
    """``runs`` tasks an hour apart ending now, each through a results file and InfluxDB."""
    results = tmp_path / "results"
    start = time.time() - runs * 3600
    for index in range(runs):
        task_id = time.strftime("%y%m%d-%H%M%S", time.gmtime(start + index * 3600)) + \
            f"-{index:06x}"
        task = SimpleNamespace(file=Path(file), args=ARGS, description="", label="")
        run = RunInfo(task_id, task, results / task_id)
        influx = {"url": server.url, "api": "v1", "database": "nsb_trend", "batch_size": 50,
                  "flush_interval_s": 0.02}
        spec = _spec("influxdb", influx)
        outputs = [FileOutput(_spec("file", {}), {}, run),
                   InfluxDbOutput(spec, plugins.check_options(InfluxDbOutput, spec), run)]
        for out in outputs:
            out.open()
        for event in events(task_id, index, start + index * 3600):
            for out in outputs:
                out.handle(event)
        for out in outputs:
            out.close()
    return results


def documented_query() -> list[str]:
    """The nsb_trend example of docs/reference/influxdb.md."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "influxdb.md").read_text()
    marker = "checked-by tests/functional/test_trend_influx.py"
    return [block.split("```sql\n", 1)[1].split("```")[0].strip()
            for block in text.split("<!-- example: ")[1:] if block.startswith(marker)]


def nsb(capsys, *argv) -> str:
    assert main([*argv]) == 0
    return capsys.readouterr().out


def trends_both_ways(tmp_path, capsys, server, events=run_events,
                     file: str = "/lab/tc_testpmd_chains.yaml"):
    """Twelve runs of ``events`` through both outputs; (the results directory, the
    InfluxDB options, the trends), which InfluxDB and the directory must agree on."""
    results = write_history(tmp_path, server, runs=12, events=events, file=file)
    conn = ["--url", server.url, "--api", "v1", "--database", "nsb_trend"]
    from_dir = json.loads(nsb(capsys, "report", "trend", "--results-dir", str(results),
                              "--format", "json"))
    from_influx = json.loads(nsb(capsys, "report", "trend", "--influx", *conn,
                                 "--format", "json"))
    assert from_influx == from_dir
    return results, conn, from_influx


def test_the_influxdb_history_trends_as_the_results_directory_and_marks_the_step(
        tmp_path, capsys):
    with influxdb1(tmp_path) as server:
        results, conn, from_influx = trends_both_ways(tmp_path, capsys, server)
        names = [t["name"] for t in from_influx]
        assert len(names) == 3 and names[0].startswith(
            'tc_testpmd_chains {"chains":2,"packet_sizes":[64]} chains mrr 64')
        # the aggregate's runs are their trials in both (chains' shares are bare numbers)
        assert all(len(p["trials_pps"]) == 3 for p in from_influx[0]["points"])
        task_ids = sorted(p.parent.name for p in results.glob("*/results.json"))
        for found in from_influx:  # the aggregate and each chain
            assert found["newest"] == "regression"
            assert [g["first"] for g in found["groups"]] == [task_ids[0], task_ids[STEP_AT]]
            assert [p["task_id"] for p in found["points"]] == \
                [t for i, t in enumerate(task_ids) if i != FAILED_RUN]
            assert [p["left_out"] for p in found["points"]].count("generator-limited") == 1

        out = nsb(capsys, "report", "trend", "--results-dir", str(results), "--annotate", *conn)
        assert "30 trend point(s), 3 change(s)" in out  # 10 counted runs x 3 tests
        step = server.query('SELECT "text", "change_pct", "group_avg_pps" FROM "nsb_trend" '
                            'WHERE "change" < 0 GROUP BY "chain"', db="nsb_trend")
        series = step["results"][0]["series"]
        assert len(series) == 3
        step_time = json.loads((results / task_ids[STEP_AT] / "results.json").read_text())[
            "results"][0]["timestamp"]
        for one in series:
            (row,) = one["values"]
            assert row[0] == round(step_time * 1e9)  # the step run's result, to the ns
            assert row[1].startswith(f"regression at run {task_ids[STEP_AT]}")
            assert row[2] == pytest.approx(-12.0, abs=1.0)
        (documented,) = documented_query()
        assert len(server.query(documented, db="nsb_trend")["results"][0]["series"][0][
            "values"]) == 3  # the aggregate's and each chain's step
        before = server.query('SELECT count("change") FROM "nsb_trend"', db="nsb_trend")
        nsb(capsys, "report", "trend", "--influx", "--annotate", *conn)  # again: overwrites
        assert server.query('SELECT count("change") FROM "nsb_trend"', db="nsb_trend") == before

        board = next(b for b in dashboards.dashboards("u") if b["uid"] == "nsb-trend")
        variables = {"$test_case": "tc_testpmd_chains", "$scenario": "chains",
                     "$timeFilter": "time > now() - 2d"}
        queries = [a["target"]["query"] for a in board["annotations"]["list"]]
        queries += [t["query"] for p in board["panels"] for t in p["targets"]
                    if '"nsb_trend"' in t["query"]]
        found = []
        for query in queries:
            for name, value in variables.items():
                query = query.replace(name, value)
            reply = server.query(query, db="nsb_trend")["results"][0]
            assert "error" not in reply, (query, reply)
            found.append(sum(len(s["values"]) for s in reply.get("series", [])))
        assert found == [3, 0, 30]  # regressions, progressions, each run's group average


def test_a_stateful_history_trends_in_connections_from_influxdb_as_from_the_results(
        tmp_path, capsys):
    """A cps answer's trend is its connections a second, keyed by that unit, the same
    from InfluxDB as from the results directory; its marks carry group_avg_cps."""
    with influxdb1(tmp_path) as server:
        results, conn, (found,) = trends_both_ways(
            tmp_path, capsys, server, stateful_events, "/lab/tc_astf_cps.yaml")
        assert found["name"].endswith(" cps_nat cps connections/s")
        assert found["unit"] == "connections/s" and found["newest"] == "regression"
        levels = [p["cps"] for p in found["points"] if not p["left_out"]]
        assert all(2400 < v < 3100 for v in levels)  # connections, not the packets
        assert [p["left_out"] for p in found["points"]].count("generator-limited") == 1
        nsb(capsys, "report", "trend", "--results-dir", str(results), "--annotate", *conn)
        step = server.query('SELECT "text", "group_avg_cps", "cps" FROM "nsb_trend" '
                            'WHERE "change" < 0', db="nsb_trend")
        ((_, text, average, value),) = step["results"][0]["series"][0]["values"]
        assert "connections/s" in text and 2400 < average < 2600 and 2400 < value < 2600
        pps = server.query('SELECT count("group_avg_pps") FROM "nsb_trend"', db="nsb_trend")
        assert "series" not in pps["results"][0]  # no packet rate written for it


def reset_events(task_id: str, index: int, at: float) -> list:
    """A reset_time answer whose outage grows from 0.40 s to 0.60 s at run STEP_AT."""
    level = (0.40 if index < STEP_AT else 0.60) * (1 + NOISE[index])
    spread = {"mean": level, "stdev": 0.002, "min": level, "max": level, "trials": 3}
    reset = {"event": {"type": "pause", "vnf": "testpmd0", "pause_ms": 400}, "trials": [],
             "frame_loss_s": spread, "timestamp_s": spread, "full_rate_back_s": spread,
             "recovered": True, "reset_time_s": level, "blocked_time_s": level,
             "loss_ratio": {}}
    return [TaskStarted(task_id, "", task_file="tc_reset_pause.yaml", description="",
                        plan={}, results_dir="", timestamp=at,
                        scenarios=(ScenarioSummary("testpmd_reset", "tg0", "reset_time"),)),
            ResultReady(task_id, "testpmd_reset", iteration=0, frame_size=64,
                        throughput_pps=20000.0, throughput_mbps=1.0, line_rate_pct=0.1,
                        loss_pct=0.0, latency=None, trials=3, profile="reset_time",
                        timestamp=at + 30,
                        limited_by="generator" if index == GENERATOR_LIMITED_RUN else "none",
                        extra={"offered_pps": 20000.0, "reset": reset}),
            TaskFinished(task_id, "", status=TaskStatus.OK, duration_s=40.0, timestamp=at + 40)]


def test_a_reset_time_history_trends_in_seconds_and_a_longer_outage_is_a_regression(
        tmp_path, capsys):
    """A reset answer's trend is its reset time, keyed by that metric and its frame size,
    the same from InfluxDB as from the results directory; lower is better, so the step
    up is a regression; its marks carry group_avg_reset_time_s, no packet rate."""
    with influxdb1(tmp_path) as server:
        results, conn, (found,) = trends_both_ways(
            tmp_path, capsys, server, reset_events, "/lab/tc_reset_pause.yaml")
        assert found["name"].endswith(" testpmd_reset reset_time reset_time_s at 64 B")
        assert found["unit"] == "reset_time_s" and found["newest"] == "regression"
        assert [g["runs"] for g in found["groups"]] == [STEP_AT - 1, 12 - STEP_AT]
        assert [p["left_out"] for p in found["points"]].count("generator-limited") == 1
        nsb(capsys, "report", "trend", "--results-dir", str(results), "--annotate", *conn)
        step = server.query('SELECT "text", "group_avg_reset_time_s", "reset_time_s" FROM '
                            '"nsb_trend" WHERE "change" < 0', db="nsb_trend")
        ((_, text, average, value),) = step["results"][0]["series"][0]["values"]
        assert "0.400 reset_time_s -> 0.6" in text, text
        assert 0.59 < average < 0.61 and 0.59 < value < 0.61
        pps = server.query('SELECT count("group_avg_pps") FROM "nsb_trend"', db="nsb_trend")
        assert "series" not in pps["results"][0]
