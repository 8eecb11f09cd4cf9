"""The soak profile: a long trial read per interval, the intervals summing to the trial,
the worst intervals, a rate from a stored NDR, and the intervals in every output."""

import json
import logging
from types import SimpleNamespace

import pytest

from nsb import plugins
from nsb.errors import TaskError
from nsb.events import ResultReady, SoakInterval, TrialDone
from nsb.intervals import IntervalSample
from nsb.outputs import records
from nsb.outputs.influxdb.points import PointBuilder
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from nsb.traffic_profiles import soak_run
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.soak import SoakProfile
from nsb.trial import LatencyStats, Trial, TrialResult
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator


class SamplingDut(SimulatedDutGenerator):
    """Reads its counters while sending: interval k loses k frames, its latency grows."""

    SAMPLES_INTERVALS = True

    def run_sampled(self, trial, interval_s, on_interval):
        self.trials.append(trial)
        per_interval = round(trial.rate_pps * interval_s)
        count = round(trial.duration_s / interval_s)
        tx = rx = 0
        for k in range(count):
            latency = LatencyStats(samples=10, min_us=5, avg_us=10 + k, max_us=20 + 10 * k,
                                   histogram=[(10.0, 5), (20.0 + 10 * k, 5)])
            on_interval(IntervalSample(k, k * interval_s, (k + 1) * interval_s, per_interval,
                                       per_interval - k, latency, last=k == count - 1))
            tx, rx = tx + per_interval, rx + per_interval - k
        return TrialResult(trial=trial, tx_packets=tx, rx_packets=rx,
                           elapsed_s=trial.duration_s)


def soak(generator, **options):
    options = {"packet_sizes": [64], "duration": 60, "interval_s": 10, "rate_pps": 1000,
               **options}
    events = []
    make_profile(SoakProfile, **options).execute(Measurer(generator, "t1", "s", events.append))
    return events


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_intervals_are_consecutive_and_sum_to_the_trial():
    events = soak(SamplingDut(1e9), tolerated_loss_pct=1)
    intervals, (done,), (result,) = of(events, SoakInterval), of(events, TrialDone), \
        of(events, ResultReady)
    samples = [e.sample for e in intervals]
    assert [s.index for s in samples] == list(range(6))
    assert all(a.end_s == b.start_s for a, b in zip(samples, samples[1:], strict=False))
    assert sum(s.tx_packets for s in samples) == done.result.tx_packets == 60_000
    assert sum(s.rx_packets for s in samples) == done.result.rx_packets
    assert {e.trial_index for e in intervals} == {done.trial_index}
    # every interval comes before the trial's end
    assert events.index(intervals[-1]) < events.index(done)
    soaked = result.extra["soak"]
    assert soaked["intervals"] == 6 and soaked["lossy_intervals"] == 5
    assert [w["interval"] for w in soaked["worst"]] == [5, 4, 3, 2, 1]  # most loss first
    assert soaked["worst"][0]["latency"]["max_us"] == 70


def test_a_generator_that_cannot_sample_runs_pieces_and_says_so(caplog):
    dut = SimulatedDutGenerator(capacity_pps=800)
    with caplog.at_level(logging.WARNING):
        events = soak(dut, duration=25, interval_s=10)
    assert [t.duration_s for t in dut.trials] == [10, 10, 5]
    warnings = [r.message for r in caplog.records if "cannot be read while" in r.message]
    assert len(warnings) == 1
    samples = [e.sample for e in of(events, SoakInterval)]
    assert [(s.start_s, s.end_s, s.last) for s in samples] == [(0, 10, False), (10, 20, False),
                                                               (20, 25, True)]
    (done,) = of(events, TrialDone)
    assert done.result.trial.duration_s == 25
    assert sum(s.tx_packets for s in samples) == done.result.tx_packets == 25_000
    assert sum(s.rx_packets for s in samples) == done.result.rx_packets == 20_000
    assert done.verdict == "fail"  # 20 % lost


def test_a_stop_between_pieces_keeps_what_was_sent():
    """The runner's stop (checked after each piece) ends the soak at the third piece."""
    dut = SimulatedDutGenerator(capacity_pps=1e9)
    stops = iter([False, False, True])
    samples = []
    send = soak_run.sender(dut, 10, samples.append, lambda: next(stops))
    result = send(Trial(64, 100, 60))
    assert [(s.index, s.last) for s in samples] == [(0, False), (1, False), (2, True)]
    assert result.tx_packets == 3000 and result.trial.duration_s == 30


def test_merged_latency_adds_histograms():
    a = LatencyStats(samples=4, min_us=2, avg_us=5, max_us=9, histogram=[(10.0, 4)])
    b = LatencyStats(samples=4, min_us=1, avg_us=15, max_us=30, histogram=[(10.0, 1),
                                                                           (30.0, 3)])
    merged = soak_run.merged_latency([a, None, b])
    assert (merged.samples, merged.min_us, merged.avg_us, merged.max_us) == (8, 1, 10, 30)
    assert merged.histogram == [(10.0, 5), (30.0, 3)]
    assert merged.percentiles_us["p50"] == 10.0 and merged.percentiles_us["p90"] == 30.0


def _stored(tmp_path, task_id, results):
    folder = tmp_path / task_id
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({
        "task": {"id": task_id, "status": "ok"}, "plan": {"scenarios": [{"name": "s"}]},
        "trials": [], "results": results}))


def _with_run(tmp_path, **options):
    spec = PluginSpec("soak", options, Where(LocatedDocument(options, "t.yaml"), ()))
    run = SimpleNamespace(results_dir=tmp_path / "this-task")
    return SoakProfile(spec, plugins.check_options(SoakProfile, spec), run)


def test_the_rate_is_a_share_of_a_stored_ndr(tmp_path):
    _stored(tmp_path, "250101-000000-abcdef", [
        {"scenario": "s", "iteration": 0, "frame_size": 64, "throughput_pps": 2e6,
         "throughput_mbps": 1, "line_rate_pct": 1},
        {"scenario": "s", "iteration": 0, "frame_size": 1518, "throughput_pps": 5e5,
         "throughput_mbps": 1, "line_rate_pct": 1}])
    profile = _with_run(tmp_path, packet_sizes=[64, 1518], ndr_task="250101", ndr_pct=90,
                        duration=20, interval_s=10)
    assert profile.rate(64, 2)[0] == pytest.approx(1.8e6)
    assert profile.rate(1518, 2)[0] == pytest.approx(4.5e5)
    events = []
    dut = SimulatedDutGenerator(capacity_pps=1e9)
    profile.execute(Measurer(dut, "t2", "s", events.append))
    assert [t.rate_pps for t in dut.trials] == pytest.approx([1.8e6, 1.8e6, 4.5e5, 4.5e5])


def test_a_stored_task_without_that_frame_size_is_one_located_line(tmp_path):
    _stored(tmp_path, "250101-000000-abcdef", [
        {"scenario": "s", "iteration": 0, "frame_size": 64, "throughput_pps": 2e6,
         "throughput_mbps": 1, "line_rate_pct": 1}])
    with pytest.raises(TaskError) as error:
        _with_run(tmp_path, packet_sizes=[128], ndr_task="250101", duration=20)
    assert error.value.key_path.endswith("ndr_task")
    assert "no NDR above 0 for 128 B; it has: 64 B" in str(error.value)
    with pytest.raises(TaskError, match="no results for task 'nope'"):
        _with_run(tmp_path, packet_sizes=[64], ndr_task="nope", duration=20)


def test_an_interval_longer_than_the_soak_is_refused():
    with pytest.raises(TaskError, match="interval_s 30 is longer than the duration 20"):
        make_profile(SoakProfile, rate_pps=1, duration=20, interval_s=30)


def test_intervals_reach_the_results_and_influxdb():
    latency = LatencyStats(samples=3, min_us=4, avg_us=6, max_us=9,
                           percentiles_us={"p99": 10.0}, histogram=[(10.0, 3)])
    event = SoakInterval("t1", "s", trial_index=3, frame_size=64, rate_pps=100.0,
                         sample=IntervalSample(2, 20.0, 30.0, 1000, 990, latency))
    record = records.record(event)
    assert record["event"] == "SoakInterval"
    assert (record["interval"], record["start_s"], record["lost_packets"]) == (2, 20.0, 10)
    assert record["loss_pct"] == pytest.approx(1.0) and record["latency"]["p99_us"] == 10.0
    (point,) = PointBuilder("t1", "tc").points(event)
    assert point.measurement == "nsb_soak"
    assert point.tags["trial_index"] == "3" and point.tags["frame_size"] == "64"
    assert point.fields["loss_pct"] == pytest.approx(1.0)
    assert point.fields["latency_max_us"] == 9 and point.fields["tx_rate_pps"] == 100


def test_the_report_draws_loss_and_latency_over_time_and_the_worst_intervals(tmp_path):
    from nsb.report import html, loading

    latency = {"samples": 10, "min_us": 5, "avg_us": 8, "max_us": 90, "p99_us": 80}
    intervals = [{"scenario": "s", "trial_index": 0, "frame_size": 64, "interval": k,
                  "start_s": 10.0 * k, "end_s": 10.0 * (k + 1), "tx_packets": 1000,
                  "rx_packets": 1000 - 7 * (k == 2), "lost_packets": 7 * (k == 2),
                  "loss_pct": 0.7 * (k == 2), "rx_pps": 100.0, "last": k == 3,
                  "latency": {**latency, "max_us": 90 + k}} for k in range(4)]
    estimates = [{"scenario": "s", "trial_index": k, "frame_size": 64, "load_pps": 1e6,
                  "estimate_pps": 9e5 + k, "stdev_pps": 1e4 / (k + 1)} for k in range(3)]
    _stored(tmp_path, "250101-000000-abcdef", [])
    path = tmp_path / "250101-000000-abcdef" / "results.json"
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "trials": [{"scenario": "s", "trial_index": 0,
                                                   "frame_size": 64}],
                                "soak_intervals": intervals, "plr_estimates": estimates}))
    task = loading.load("250101", tmp_path)
    assert len(task.soak_intervals) == 4 and len(task.plr_estimates) == 3
    page = html.render([task])
    assert "Soak, 64 B: 4 intervals over 40 s, 1 with loss" in page
    assert 'data-kind="soak-loss"' in page and 'data-kind="soak-latency"' in page
    assert 'data-kind="plrsearch"' in page
    table = page[page.index('-soak0-worst-table"'):]
    rows = table[:table.index("</table>")].split("<tr>")[2:]
    assert [row.split("<td>")[1].split("<")[0] for row in rows] == ["2", "3", "1", "0"]
