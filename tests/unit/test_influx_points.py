"""InfluxDB output pieces without a server: points, settings, spool, background writer."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from nsb import frames, plugins
from nsb.errors import NsbError, TaskError
from nsb.events import (
    KpiSample,
    PlatformFacts,
    ResultReady,
    ScenarioSummary,
    TaskFinished,
    TaskStarted,
    TrialDone,
    TrialStarted,
)
from nsb.outputs.influxdb import points as ip
from nsb.outputs.influxdb.client import Sender, SendError, classify
from nsb.outputs.influxdb.output import InfluxDbOutput
from nsb.outputs.influxdb.settings import MASK, InfluxSettings, list_opts, resolve
from nsb.outputs.influxdb.spool import Spool
from nsb.outputs.influxdb.writer import LIVE, SPOOLING, BackgroundWriter, retry_delays
from nsb.runinfo import RunInfo
from nsb.sessions import SessionCounts, SessionLoad
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from nsb.trial import LatencyStats, Trial, TrialResult

T0 = 1_700_000_000.25
PLAN = {"scenarios": [{"name": "sc", "traffic_generator": {"tg0": {"type": "trafgen"}},
                       "traffic_profile": {"type": "binsearch"}}]}
SCENARIOS = (ScenarioSummary("sc", "tg0", "binsearch"),)


def builder() -> ip.PointBuilder:
    b = ip.PointBuilder.for_task_file("t1", "/x/tc_demo.yaml", {"lab": "pod3"})
    b.points(TaskStarted("t1", "", task_file="/x/tc_demo.yaml", description="", plan=PLAN,
                         results_dir="/r", timestamp=T0, scenarios=SCENARIOS))
    return b


def trial_done(timestamp=T0 + 1, verdict="pass", index=3) -> TrialDone:
    latency = LatencyStats(samples=10, min_us=5.0, avg_us=7.5, max_us=20.0,
                           percentiles_us={"p50": 7.0, "p99.9": 19.5})
    result = TrialResult(trial=Trial(frame_size=64, rate_pps=1000.0, duration_s=2.0, flows=16),
                         tx_packets=2000, rx_packets=1990, elapsed_s=2.1, latency=latency,
                         ports={"xe0": {"tx_packets": 1000, "rx_packets": 995},
                                "xe1": {"tx_packets": 1000, "rx_packets": 995}},
                         extra={"requested_packets": 2000, "probe_packets": 4, "note": "text"})
    return TrialDone("t1", "sc", iteration=0, trial_index=index, result=result, verdict=verdict,
                     rate_pct=50.0, lower_pct=25.0, upper_pct=75.0, reason="ok",
                     timestamp=timestamp)


def test_trial_becomes_one_trial_point_and_two_per_port():
    points = builder().points(trial_done())
    trial = points[0]
    assert trial.measurement == "nsb_trial"
    assert trial.time_ns == round((T0 + 1) * 1e9)
    assert dict(trial.tags) == {"lab": "pod3", "task_id": "t1", "test_case": "tc_demo",
                                "scenario": "sc", "frame_size": "64", "verdict": "pass",
                                "generator": "tg0", "profile": "binsearch"}
    assert dict(trial.fields) == {
        "requested_packets": 2000.0, "probe_packets": 4.0, "iteration": 0.0,
        "trial_index": 3.0, "duration_s": 2.0, "flows": 16.0, "requested_rate_pps": 1000.0,
        "requested_rate_pct": 50.0, "tx_rate_pps": 1000.0, "rx_rate_pps": 995.0,
        "tx_rate_pct": 50.0, "rx_rate_pct": 49.75, "tx_mbps": 0.672, "rx_mbps": 0.66864,
        "tx_packets": 2000.0, "rx_packets": 1990.0, "lost_packets": 10.0, "loss_pct": 0.5,
        "elapsed_s": 2.1, "generator_limited": 0.0, "passed": 1.0, "search_lower_pct": 25.0,
        "search_upper_pct": 75.0, "latency_samples": 10.0, "latency_min_us": 5.0,
        "latency_avg_us": 7.5, "latency_max_us": 20.0, "latency_p50_us": 7.0,
        "latency_p99_9_us": 19.5}
    ports = [(p.measurement, p.tags["port"], p.tags["direction"], dict(p.fields))
             for p in points[1:]]
    assert ports == [
        ("nsb_trial_port", "xe0", "tx", {"packets": 1000.0, "rate_pps": 500.0, "mbps": 0.336,
                                         "iteration": 0.0, "trial_index": 3.0}),
        ("nsb_trial_port", "xe0", "rx", {"packets": 995.0, "rate_pps": 497.5, "mbps": 0.33432,
                                         "iteration": 0.0, "trial_index": 3.0}),
        ("nsb_trial_port", "xe1", "tx", {"packets": 1000.0, "rate_pps": 500.0, "mbps": 0.336,
                                         "iteration": 0.0, "trial_index": 3.0}),
        ("nsb_trial_port", "xe1", "rx", {"packets": 995.0, "rate_pps": 497.5, "mbps": 0.33432,
                                         "iteration": 0.0, "trial_index": 3.0})]
    assert all(p.tags["generator"] == "tg0" and p.tags["frame_size"] == "64" for p in points[1:])


def test_result_point_flattens_extras_and_skips_text():
    event = ResultReady("t1", "sc", iteration=1, frame_size=1518, throughput_pps=81274.0,
                        throughput_mbps=999.99, line_rate_pct=99.9, loss_pct=0.0, latency=None,
                        limited_by="dut", trials=9, tx_packets=5, rx_packets=5,
                        profile="mlrsearch", timestamp=T0 + 2,
                        extra={"ndr_pps": 80000, "sweep": {"50": {"rate_pps": 4.0e4,
                                                                   "latency": None}},
                               "mode": "ndr", "ok": True})
    [point] = builder().points(event)
    assert point.measurement == "nsb_result"
    assert dict(point.tags) == {"lab": "pod3", "task_id": "t1", "test_case": "tc_demo",
                                "scenario": "sc", "frame_size": "1518", "limited_by": "dut",
                                "profile": "mlrsearch", "generator": "tg0"}
    assert dict(point.fields) == {"ndr_pps": 80000.0, "sweep_50_rate_pps": 40000.0, "ok": 1.0,
                                  "iteration": 1.0, "throughput_pps": 81274.0,
                                  "throughput_mbps": 999.99, "line_rate_pct": 99.9,
                                  "loss_pct": 0.0, "trials": 9.0, "tx_packets": 5.0,
                                  "rx_packets": 5.0, "frame_bytes": 1518.0,
                                  "warning_count": 0.0}


def test_kpi_samples_one_point_each_keys_as_they_are():
    b = builder()
    common = {"lab": "pod3", "task_id": "t1", "test_case": "tc_demo", "scenario": "sc",
              "node": "sut"}
    vnf = b.points(KpiSample("t1", "sc", source="testpmd0", node="sut", trial_index=4,
                             kpis={"port0_ipackets": 10.0, "rate.x": 2, "time": 1.5,
                                   "name": "text"}, timestamp=T0 + 3))
    assert [(p.measurement, dict(p.tags), dict(p.fields)) for p in vnf] == [
        ("nsb_kpi", {**common, "source": "testpmd0", "kind": "vnf", "vnf": "testpmd0"},
         {"port0_ipackets": 10.0, "rate.x": 2.0, "kpi_time": 1.5, "trial_index": 4.0})]
    nfvi = b.points(KpiSample("t1", "sc", source="nfvi:testpmd0", node="sut", trial_index=4,
                              kpis={"cpu_user_pct": 99.5, "pid": 42.0}, timestamp=T0 + 3))
    assert [(p.measurement, dict(p.tags), dict(p.fields)) for p in nfvi] == [
        ("nsb_kpi", {**common, "source": "nfvi:testpmd0", "kind": "nfvi", "vnf": "testpmd0"},
         {"cpu_user_pct": 99.5, "pid": 42.0, "trial_index": 4.0})]
    cores = b.points(KpiSample("t1", "sc", source="node:sut", node="sut", trial_index=None,
                               kpis={"cpu0_util_pct": 12.5, "cpu11_util_pct": 100.0},
                               timestamp=T0 + 3))
    assert [(p.measurement, dict(p.tags), dict(p.fields)) for p in cores] == [
        ("nsb_kpi", {**common, "source": "node:sut", "kind": "node"},
         {"cpu0_util_pct": 12.5, "cpu11_util_pct": 100.0})]
    assert all(p.time_ns == round((T0 + 3) * 1e9) for p in [*vnf, *nfvi, *cores])
    assert b.points(KpiSample("t1", "sc", source="x", node="n", kpis={"a": "text"})) == []


def test_platform_facts_strings_are_tags_numbers_fields():
    facts = {"hostname": "sut1", "kernel": "6.1.0", "cpu_model": "Xeon Gold 6230",
             "cpus": 40, "memory_gib": 187.5, "kernel_cmdline": "quiet isolcpus=2-5",
             "isolated_cpus": "2-5", "nics": {"xe0": {"pci": "0000:3b:00.0"}, "xe1": {}},
             "versions": {"dpdk": "22.11.4-1", "openvswitch": "3.1.0"}}
    [point] = builder().points(PlatformFacts("t1", "", node="sut", facts=facts, timestamp=T0))
    assert point.measurement == "nsb_platform"
    assert dict(point.tags) == {"lab": "pod3", "task_id": "t1", "test_case": "tc_demo",
                                "node": "sut", "hostname": "sut1", "kernel": "6.1.0",
                                "cpu_model": "Xeon Gold 6230", "isolated_cpus": "2-5",
                                "dpdk_version": "22.11.4-1", "openvswitch_version": "3.1.0"}
    assert dict(point.fields) == {"cpus": 40.0, "memory_gib": 187.5, "nics": 2.0}


def test_task_points_and_events_without_points():
    b = builder()
    [done] = b.points(TaskFinished("t1", "", status="error", error="boom", duration_s=12.5,
                                   timestamp=T0 + 9))
    assert (done.measurement, done.tags["status"], dict(done.fields)) == (
        "nsb_task", "error", {"duration_s": 12.5})
    started = ip.PointBuilder("t1", "tc").points(TaskStarted(
        "t1", "", task_file="tc.yaml", description="", plan=PLAN, results_dir="/r",
        scenarios=SCENARIOS))
    assert started[0].tags["status"] == "running"
    assert dict(started[0].fields) == {"duration_s": 0.0, "scenarios": 1.0}
    probe = TrialStarted("t1", "sc", iteration=0, trial_index=0,
                         trial=Trial(64, 1.0, 1.0), rate_pct=1, lower_pct=0, upper_pct=2,
                         trials_left=3)
    assert b.points(probe) == []


def test_points_of_one_series_never_share_a_timestamp():
    b = builder()
    first = b.points(trial_done(timestamp=T0 + 5, index=1))[0]
    second = b.points(trial_done(timestamp=T0 + 5, index=2))[0]
    earlier = b.points(trial_done(timestamp=T0 + 4, index=3))[0]
    other = b.points(trial_done(timestamp=T0 + 5, verdict="fail", index=4))[0]
    assert second.time_ns == first.time_ns + 1
    assert earlier.time_ns == first.time_ns + 2  # clock went back: still after the last
    assert other.time_ns == first.time_ns  # another series (verdict tag) keeps its own


def test_line_protocol_escapes_and_keeps_every_float_exactly():
    point = ip.InfluxPoint("nsb_platform", {"cpu_model": "Xeon Gold, 6230=x", "empty": ""},
                           {"tiny": 1e-05, "big": 1.2345678901234567e+16, "third": 1 / 3,
                            "whole": 5.0}, 1_700_000_000_123_456_789)
    line = point.line()
    assert line == ("nsb_platform,cpu_model=Xeon\\ Gold\\,\\ 6230\\=x "
                    "big=1.2345678901234568e+16,third=0.3333333333333333,tiny=1e-05,whole=5 "
                    "1700000000123456789")
    values = dict(item.split("=") for item in line.split(" ")[-2].split(","))
    assert float(values["third"]) == 1 / 3 and float(values["tiny"]) == 1e-05
    assert "i" not in values["whole"]


def test_numbers_only():
    assert ip.number(True) == 1.0 and ip.number(3) == 3.0
    assert ip.number(float("nan")) is None and ip.number(float("inf")) is None
    assert ip.number("7") is None and ip.number(None) is None
    assert ip.field_name("p99.9") == "p99.9" and ip.field_name("a b") == "a b"
    assert ip.field_name("time") == "kpi_time" and ip.field_name("_value") == "kpi__value"


# ----------------------------------------------------------------------------- settings

def test_settings_precedence_defaults_conf_environment_task():
    conf = {"url": "http://conf:8086", "org": "conf-org", "token": "conf-token",
            "batch_size": 10}
    s = resolve({}, conf, environ={})
    assert (s.url, s.org, s.token, s.batch_size, s.bucket) == (
        "http://conf:8086", "conf-org", "conf-token", 10, "nsb")
    s = resolve({}, conf, environ={"NSB_INFLUXDB_TOKEN": "env-token"})
    assert s.token == "env-token"
    s = resolve({"url": "https://task:8086/", "token": "task-token", "batch_size": 3}, conf,
                environ={"NSB_INFLUXDB_TOKEN": "env-token"})
    assert (s.url, s.token, s.batch_size, s.org) == ("https://task:8086", "task-token", 3,
                                                     "conf-org")


def test_secrets_never_shown():
    s = resolve({"api": "v1", "username": "nsb", "password": "hunter2"}, {}, environ={})
    assert "hunter2" not in repr(s) and "hunter2" not in json.dumps(s.public())
    assert s.public()["password"] == MASK and s.public()["username"] == "nsb"
    assert "hunter2" not in json.dumps(s.destination())
    assert "token" not in s.public()  # v2 settings are not shown for a v1 output
    t = resolve({"token": "tok-123"}, {}, environ={})
    assert "tok-123" not in repr(t) and t.public()["token"] == MASK
    assert "tok-123" not in json.dumps(t.destination())


@pytest.mark.parametrize("options, api", [
    ({"database": "x"}, "v1"), ({"username": "u"}, "v1"), ({"bucket": "b"}, "v2"),
    ({"org": "o", "token": "t"}, "v2"), ({}, "v2"), ({"api": "v1", "database": "d"}, "v1"),
])
def test_the_keys_of_an_output_say_which_api_it_means(options, api):
    assert resolve(options, {}, environ={}).api == api


@pytest.mark.parametrize("options, key, words", [
    ({"database": "x", "bucket": "y"}, "database", "api: v1"),
    ({"api": "v1", "token": "x"}, "token", "api: v2"),
    ({"url": "influx:8086"}, "url", "http(s) URL"),
    ({"url": "http://u:p@influx:8086"}, "url", "not the URL"),
    ({"bucket": ""}, "bucket", "needs a bucket"),
])
def test_settings_errors_name_the_key(options, key, words):
    with pytest.raises(ValueError) as info:
        resolve(options, {}, environ={})
    assert info.value.args[0] == key and words in info.value.args[1]


def test_config_options_are_oslo_opts_with_secrets_marked():
    [(group, opts)] = list_opts()
    assert group == "influxdb"
    by_name = {opt.name: opt for opt in opts}
    assert by_name["token"].secret and by_name["password"].secret
    assert not by_name["url"].secret
    assert set(by_name) == set(InfluxDbOutput.OPTIONS_SCHEMA["properties"])


def output(tmp_path: Path, options: dict, defaults: dict | None = None) -> InfluxDbOutput:
    from types import SimpleNamespace

    spec = PluginSpec("influxdb", options, Where(LocatedDocument(options, "t.yaml"), ()))
    run = RunInfo("t1", SimpleNamespace(file=Path("/x/tc_demo.yaml"), args={}), tmp_path)
    if defaults is not None:
        run = SimpleNamespace(task_id="t1", task=run.task, results_dir=tmp_path,
                              output_defaults={"influxdb": defaults})
    return InfluxDbOutput(spec, plugins.check_options(InfluxDbOutput, spec), run)


def test_output_describe_masks_and_task_errors_point_at_the_key(tmp_path):
    out = output(tmp_path, {"url": "http://h:8086", "token": "s3cr3t-token", "org": "o"})
    assert out.describe()["token"] == MASK
    assert "s3cr3t-token" not in json.dumps(out.describe())
    with pytest.raises(TaskError, match="database"):
        output(tmp_path, {"database": "nsb", "org": "o"})
    with pytest.raises(TaskError, match="batch_siz"):
        output(tmp_path, {"batch_siz": 3})
    with pytest.raises(NsbError, match=r"nsb.conf \[influxdb\] url"):
        output(tmp_path, {}, defaults={"url": "ftp://x"})
    assert output(tmp_path, {}, defaults={"url": "http://conf:1"}).settings.url == "http://conf:1"


def test_retry_delays_grow_exponentially_up_to_the_cap():
    s = InfluxSettings(retry_interval_s=0.5, exponential_base=3.0, max_retry_interval_s=10.0)
    delays = retry_delays(s)
    assert [next(delays) for _ in range(6)] == [0.5, 1.5, 4.5, 10.0, 10.0, 10.0]


def test_http_status_classes():
    assert [classify(s) for s in (None, 500, 503, 429, 401, 403, 404, 400, 413, 422)] == [
        "transient", "transient", "transient", "transient", "access", "access", "access",
        "rejected", "rejected", "rejected"]


# ----------------------------------------------------------------------------- spool

def test_spool_pending_and_mark_sent(tmp_path):
    spool = Spool(tmp_path)
    assert spool.pending().lines == []
    spool.append(["a 1", "b 2"], {"api": "v2", "url": "http://h"})
    spool.append(["c 3"])
    with open(spool.path, "a") as out:
        out.write("d 4")  # a line still being written is not pending yet
    pending = spool.pending()
    assert pending.lines == ["a 1", "b 2", "c 3"]
    assert pending.ends == [4, 8, 12]
    spool.mark_sent(pending.ends[1], 2)
    assert spool.pending().lines == ["c 3"] and spool.pending().start == 8
    assert json.loads(spool.sent_path.read_text())["sent_points"] == 2
    assert spool.destination() == {"api": "v2", "url": "http://h"}
    with open(spool.path, "a") as out:
        out.write("\n")
    assert spool.pending().lines == ["c 3", "d 4"]
    spool.sent_path.write_text("garbage")
    with pytest.raises(ValueError, match="damaged"):
        spool.pending()


# ----------------------------------------------------------------------------- writer

class ScriptedSender(Sender):
    """Fails with the scripted errors in order, then succeeds; records what it took."""

    def __init__(self, errors: list[SendError]):
        self.errors = list(errors)
        self.calls = 0
        self.accepted: list[str] = []

    def send(self, lines):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        self.accepted.extend(lines)


def writer_with(tmp_path, sender, **settings):
    base = {"flush_interval_s": 0.0, "retry_interval_s": 0.0, "max_retry_interval_s": 0.0,
            "batch_size": 2}
    w = BackgroundWriter(lambda s: sender, InfluxSettings(**{**base, **settings}),
                         Spool(tmp_path), "t1")
    w.start()
    return w


def transient(n):
    return [SendError("transient", "connection refused") for _ in range(n)]


def test_writer_retries_transient_failures_then_sends_once(tmp_path):
    sender = ScriptedSender(transient(3))
    w = writer_with(tmp_path, sender, max_retry_time_s=3600.0)
    w.put(["a 1", "b 2"])
    assert w.flush(timeout=60)
    w.close()
    assert sender.accepted == ["a 1", "b 2"] and sender.calls == 4
    assert (w.sent_points, w.spooled_points, w.state) == (2, 0, LIVE)
    assert not Spool(tmp_path).path.exists()


def test_writer_spools_when_retries_run_out_and_probes_later(tmp_path):
    sender = ScriptedSender(transient(2))
    w = writer_with(tmp_path, sender, max_retry_time_s=0.0)
    w.put(["a 1", "b 2"])
    assert w.flush(timeout=60)
    assert (w.state, w.spooled_points) == (SPOOLING, 2)
    w.put(["c 3", "d 4"])  # the probe fails too: spooled
    assert w.flush(timeout=60)
    w.put(["e 5"])  # the server is back: written, not spooled
    w.close()
    assert sender.accepted == ["e 5"]
    assert Spool(tmp_path).pending().lines == ["a 1", "b 2", "c 3", "d 4"]
    assert (w.sent_points, w.spooled_points, w.state) == (1, 4, LIVE)
    assert Spool(tmp_path).destination()["url"] == "http://localhost:8086"


def test_writer_spools_without_asking_again_until_the_probe_interval(tmp_path):
    sender = ScriptedSender(transient(1))
    w = writer_with(tmp_path, sender, max_retry_time_s=0.0, max_retry_interval_s=3600.0)
    w.put(["a 1"])
    assert w.flush(timeout=60)
    w.put(["b 2", "c 3"])
    w.close()
    assert sender.calls == 1 and sender.accepted == []
    assert Spool(tmp_path).pending().lines == ["a 1", "b 2", "c 3"]


def test_writer_access_errors_spool_at_once_rejections_go_aside(tmp_path):
    sender = ScriptedSender([SendError("access", "HTTP 401: unauthorized", 401)])
    w = writer_with(tmp_path, sender, max_retry_time_s=3600.0)
    w.put(["a 1"])
    assert w.flush(timeout=60)
    assert sender.calls == 1 and w.state == SPOOLING  # no retry: the user must act
    w.close()
    sender = ScriptedSender([SendError("rejected", "HTTP 400: field type conflict", 400)])
    w = writer_with(tmp_path / "b", sender, max_retry_time_s=3600.0)
    w.put(["x 1", "y 2"])
    w.put(["z 3"])
    w.close()
    spool = Spool(tmp_path / "b")
    assert spool.rejected_path.read_text() == "x 1\ny 2\n"
    assert sender.accepted == ["z 3"] and not spool.path.exists()
    assert (w.rejected_points, w.sent_points, w.state) == (2, 1, LIVE)


def test_writer_close_when_interrupted_spools_the_rest(tmp_path):
    sender = ScriptedSender(transient(10_000))
    w = writer_with(tmp_path, sender, max_retry_time_s=3600.0, retry_interval_s=3600.0)
    w.put(["a 1"])
    w.put(["b 2", "c 3", "d 4"])
    join = w._thread.join
    calls = []

    def interrupted_join(*args):
        if not calls:
            calls.append(1)
            raise KeyboardInterrupt
        return join(*args)

    w._thread.join = interrupted_join
    with pytest.raises(KeyboardInterrupt):
        w.close()
    assert Spool(tmp_path).pending().lines == ["a 1", "b 2", "c 3", "d 4"]
    assert w.spooled_points == 4 and sender.accepted == []


def test_writer_put_never_waits_for_the_server(tmp_path):
    gate = threading.Event()

    class Blocked(Sender):
        def __init__(self):
            self.accepted = []

        def send(self, lines):
            gate.wait()
            self.accepted.extend(lines)

    sender = Blocked()
    w = writer_with(tmp_path, sender)
    for n in range(100):
        w.put([f"m v={n}"])  # would deadlock the test if put waited for send
    assert not w.flush(timeout=0.01)
    gate.set()
    w.close()
    assert sender.accepted == [f"m v={n}" for n in range(100)]


def test_nsb_conf_influxdb_group_feeds_the_output_and_push(tmp_path):
    from oslo_config import cfg

    from nsb.outputs.influxdb import push as results_push
    from nsb.outputs.influxdb.settings import conf_options

    conf_file = tmp_path / "nsb.conf"
    conf_file.write_text("[influxdb]\nurl = http://conf-host:8086\napi = v1\n"
                         "database = lab\npassword = from-conf\ntags = lab:pod3,dut:gen10\n"
                         "max_retry_time_s = 5\n")
    conf = cfg.ConfigOpts()
    for group, opts in list_opts():
        conf.register_opts(opts, group=group)
    conf(args=[], default_config_files=[str(conf_file)], default_config_dirs=[])
    values = conf_options(conf)
    assert (values["url"], values["api"], values["database"], values["password"],
            values["tags"], values["max_retry_time_s"]) == (
        "http://conf-host:8086", "v1", "lab", "from-conf", {"lab": "pod3", "dut": "gen10"}, 5.0)
    out = output(tmp_path, {"username": "u"}, defaults=values)
    assert (out.settings.api, out.settings.password, out.settings.username) == (
        "v1", "from-conf", "u")
    assert out.describe()["password"] == MASK
    assert conf_options(cfg.ConfigOpts()) == {}  # group not registered: defaults only
    # push: the run's target wins over nsb.conf, the command line over both
    Spool(tmp_path).append(["m v=1 1"], {"url": "http://run-host:8086", "api": "v1",
                                         "database": "run_db", "retention_policy": "",
                                         "username": "run_user"})
    s = results_push.settings_for(tmp_path, conf)
    assert (s.url, s.database, s.username, s.password) == (
        "http://run-host:8086", "run_db", "run_user", "from-conf")
    s = results_push.settings_for(tmp_path, conf, url="http://cli:8086", password=None)
    assert (s.url, s.password) == ("http://cli:8086", "from-conf")
    s = results_push.settings_for(tmp_path, conf, api="v2", token="t", bucket="b")
    assert (s.api, s.bucket, s.token, s.url) == ("v2", "b", "t", "http://run-host:8086")
    with pytest.raises(NsbError, match="token"):
        results_push.settings_for(tmp_path, conf, token="t")  # the run wrote with api v1


def test_an_imix_result_is_tagged_by_its_label_and_ordered_by_its_mean_size():
    mix = frames.from_weights(frames.SIMPLE_IMIX)
    event = ResultReady("t1", "sc", iteration=0, frame_size=mix, throughput_pps=1000.0,
                        throughput_mbps=3.0, line_rate_pct=0.1, loss_pct=0.0, latency=None,
                        limited_by="dut", trials=3, timestamp=T0 + 2)
    [point] = builder().points(event)
    assert dict(point.tags)["frame_size"] == "IMIX"
    assert dict(point.fields)["frame_bytes"] == pytest.approx((7 * 64 + 4 * 594 + 1518) / 12)


def test_an_unconfirmed_answer_carries_its_warnings_to_influxdb():
    event = ResultReady("t1", "sc", iteration=0, frame_size=64, throughput_pps=1.0e6,
                        throughput_mbps=672.0, line_rate_pct=6.7, loss_pct=0.02, latency=None,
                        limited_by="dut", trials=9, profile="binsearch", timestamp=T0 + 2,
                        warnings=("the confirmation lost 0.02%", "a latency trial lost"))
    [point] = builder().points(event)
    assert point.fields["warning_count"] == 2.0
    assert point.fields["warnings"] == "the confirmation lost 0.02%; a latency trial lost"
    assert 'warnings="the confirmation lost 0.02%; a latency trial lost"' in point.line()


def test_an_mrr_result_carries_its_trials_receive_rates_to_the_last_bit():
    from nsb.report import trend_influx

    rates = [52341.09795132824, 1 / 3, 49999.99999999999]
    event = ResultReady("t1", "sc", iteration=0, frame_size=64, throughput_pps=1.0,
                        throughput_mbps=1.0, line_rate_pct=1.0, loss_pct=0.0, latency=None,
                        limited_by="dut", trials=3, profile="mrr", timestamp=T0 + 2,
                        extra={"mrr": {"receive_rates_pps": rates, "mean_pps": 1.0}})
    [point] = builder().points(event)
    assert point.fields["mrr_mean_pps"] == 1.0
    row = {"time": 7, "throughput_pps": 1.0, "mrr_receive_rates_pps":
           point.fields["mrr_receive_rates_pps"]}
    (_, read) = trend_influx._point("t1", row, "")
    assert read.samples == tuple(rates)  # exactly what the results file gives jumpavg
    assert "mrr_receive_rates_pps" not in builder().points(
        ResultReady("t1", "sc", iteration=0, frame_size=64, throughput_pps=1.0,
                    throughput_mbps=1.0, line_rate_pct=1.0, loss_pct=0.0, latency=None,
                    limited_by="dut", trials=3, timestamp=T0 + 2))[0].fields


def test_each_service_chain_of_a_trial_and_a_result_is_a_point_tagged_with_it():
    from dataclasses import replace

    from nsb import chains

    done = trial_done(verdict="fail")
    latency = LatencyStats(samples=5, min_us=4.0, avg_us=6.0, max_us=9.0,
                           percentiles_us={"p99": 8.0})
    shares = (chains.ChainCounts(0, 1000, 1000, latency), chains.ChainCounts(1, 1000, 990))
    done = replace(done, result=replace(done.result, chains=shares))
    points = [p for p in builder().points(done) if p.measurement == "nsb_trial_chain"]
    assert [p.tags["chain"] for p in points] == ["0", "1"]
    assert points[1].tags["verdict"] == "fail" and points[1].tags["frame_size"] == "64"
    assert points[1].fields["loss_pct"] == 1.0 and points[1].fields["rx_packets"] == 990.0
    assert points[0].fields["tx_rate_pps"] == pytest.approx(500.0)  # its half of 1000 pps
    assert points[0].fields["latency_p99_us"] == 8.0 and "latency_avg_us" not in points[1].fields
    event = ResultReady("t1", "sc", iteration=0, frame_size=64, throughput_pps=2000.0,
                        throughput_mbps=1.3, line_rate_pct=1.0, loss_pct=0.0, latency=None,
                        limited_by="dut", trials=7, tx_packets=5, rx_packets=5,
                        profile="binsearch", timestamp=T0 + 2,
                        extra={"chains": [
                            {"chain": k, "throughput_pps": 1000.0, "tx_packets": 10,
                             "rx_packets": 10, "loss_pct": 0.0,
                             "latency": {"samples": 3, "p99_us": 7.0}} for k in (0, 1)],
                            "first_failing_chain": {"chain": 1, "loss_pct": 3.0,
                                                    "rate_pps": 3000.0, "chains_failed": [1]}})
    result, *per_chain = builder().points(event)
    assert result.measurement == "nsb_result" and result.fields["first_failing_chain_chain"] == 1
    assert [p.measurement for p in per_chain] == ["nsb_result_chain"] * 2
    assert [p.fields["failed_first"] for p in per_chain] == [0.0, 1.0]
    assert per_chain[0].fields["latency_p99_us"] == 7.0
    assert per_chain[1].tags["chain"] == "1" and per_chain[1].tags["limited_by"] == "dut"


def stateful_trial(index=5) -> TrialDone:
    """A CPS trial through NAT as the lab measured one: most connections not
    established, some reset, a flow table the generator filled."""
    load = SessionLoad("tcp_cps", 20000.0, request_bytes=64, response_bytes=64)
    counts = SessionCounts(intended=20000, attempted=19000, established=4916,
                           failed={"not_established": 14000, "Reset": 84}, retransmitted=8291,
                           generator_errors={"flow_overflow": 1000}, duration_s=1.0,
                           dut_sessions=5348, bytes={"client_to_server": 1280000,
                                                     "server_to_client": 314624})
    result = TrialResult(trial=Trial(64, 0.0, 1.0, sessions=load), tx_packets=58651,
                         rx_packets=35708, elapsed_s=1.0, sessions=counts,
                         extra={"astf_wall_s": 1.65})
    return TrialDone("t1", "sc", iteration=0, trial_index=index, result=result,
                     verdict="fail", rate_pct=100.0, lower_pct=2.5, upper_pct=100.0,
                     reason="lost", timestamp=T0 + 1)


def test_a_stateful_trial_has_a_point_of_its_connections_failed_by_reason():
    points = builder().points(stateful_trial())
    assert [p.measurement for p in points] == ["nsb_trial", "nsb_trial_sessions"]
    sessions = points[1]
    assert dict(sessions.tags) == {"lab": "pod3", "task_id": "t1", "test_case": "tc_demo",
                                   "scenario": "sc", "frame_size": "64", "verdict": "fail",
                                   "program": "tcp_cps", "generator": "tg0",
                                   "profile": "binsearch"}
    assert dict(sessions.fields) == {
        "cps_asked": 20000.0, "request_bytes": 64.0, "response_bytes": 64.0, "hold_s": 0.0,
        "intended": 20000.0, "attempted": 19000.0, "established": 4916.0,
        "never_attempted": 1000.0, "retransmitted": 8291.0, "active_at_end": 0.0,
        "duration_s": 1.0, "cps": 4916.0, "offered_cps": 19000.0, "loss_pct": 75.42,
        "dut_sessions": 5348.0, "failed_total": 14084.0, "failed_not_established": 14000.0,
        "failed_reset": 84.0, "generator_errors_total": 1000.0,
        "generator_error_flow_overflow": 1000.0, "bytes_client_to_server": 1280000.0,
        "bytes_server_to_client": 314624.0, "iteration": 0.0, "trial_index": 5.0}
    # the trial's own point stays about frames: no connection counts flattened into it
    assert not any(name.startswith(("failed", "intended")) for name in points[0].fields)
    assert [p.measurement for p in builder().points(trial_done())].count(
        "nsb_trial_sessions") == 0


def test_a_stateful_answer_carries_its_kind_rate_and_sessions_on_its_result_point():
    stateful = {"kind": "concurrent_sessions", "program": "long_lived", "cps": 2000.0,
                "cps_asked": 2000.0, "established_cps": 2000.0, "sessions": 2919,
                "dut_sessions": 2919, "trial_index": 5, "generator_ceiling_cps": 38312.0,
                "counts": {"intended": 2919, "failed": {"reset": 2}, "retransmitted": 9,
                           "never_attempted": 0, "bytes": {"client_to_server": 0}}}
    event = ResultReady("t1", "sc", iteration=0, frame_size=64, throughput_pps=6000.0,
                        throughput_mbps=4.03, line_rate_pct=0.02, loss_pct=0.0, latency=None,
                        limited_by="dut", trials=7, profile="concurrent_sessions",
                        timestamp=T0 + 2, extra={"stateful": stateful})
    [point] = builder().points(event)
    fields = dict(point.fields)
    assert fields["stateful_kind"] == "concurrent_sessions"
    assert {k: fields[k] for k in ("cps", "cps_asked", "established_cps", "sessions",
                                   "dut_sessions", "generator_ceiling_cps", "failed_total",
                                   "never_attempted", "retransmitted")} == {
        "cps": 2000.0, "cps_asked": 2000.0, "established_cps": 2000.0, "sessions": 2919.0,
        "dut_sessions": 2919.0, "generator_ceiling_cps": 38312.0, "failed_total": 2.0,
        "never_attempted": 0.0, "retransmitted": 9.0}
    assert not any(name.startswith("stateful_") and name != "stateful_kind" for name in fields)
    assert 'stateful_kind="concurrent_sessions"' in point.line()
