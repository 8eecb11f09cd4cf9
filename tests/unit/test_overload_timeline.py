"""Overload recovery read from timelines of known shape: a queue that fills in the
overload and drains after it (latency back when drained, no frame lost after it), a DUT
that goes on losing (not recovered), readings whose latency is as noisy as here."""

from __future__ import annotations

import pytest

from nsb import sla
from nsb.intervals import IntervalSample
from nsb.report import overload_table
from nsb.traffic_profiles.overload_timeline import analyse, record
from nsb.trial import LatencyStats

STEP = 0.1


def timeline(lost: dict[int, int], latency: dict[int, float], readings: int = 60,
             default_us: float = 500.0):
    """1,000 frames a reading; ``lost`` and ``latency`` by reading index."""
    return [IntervalSample(k, k * STEP, (k + 1) * STEP, 1000, 1000 - lost.get(k, 0),
                           LatencyStats(50, 1, latency.get(k, default_us), 1e5),
                           last=k == readings - 1)
            for k in range(readings)]


def test_a_queue_that_drains_after_the_overload_is_back_when_drained():
    # overload from 2.0 to 3.0 s: loss in it, a full queue (50 ms) draining for 0.4 s
    lost = {k: 300 for k in range(20, 30)}
    latency = {**{k: 60000.0 for k in range(20, 30)}, 30: 45000.0, 31: 30000.0,
               32: 15000.0, 33: 2000.0}
    r = analyse(timeline(lost, latency), 2.0, 3.0, warmup_s=0.5, margin_pct=10)
    assert r.lost_in_overload == 3000 and r.lost_after == 0 and r.lost_before == 0
    assert r.sent_in_overload == 10000 and r.overload_readings_s == pytest.approx(1.0)
    assert r.loss_recovery_s == 0.0
    assert r.latency_recovery_s == pytest.approx(0.4)  # the end of reading 33
    assert r.latency_before_us == 500 and r.latency_peak_us == 60000
    assert r.recovered and record(r)["overload_s"] == pytest.approx(1.0)


def test_loss_that_goes_on_after_the_overload_is_timed_and_loss_to_the_end_is_none():
    lost = {k: 300 for k in range(20, 35)}
    r = analyse(timeline(lost, {}), 2.0, 3.0, warmup_s=0.5, margin_pct=10)
    assert r.loss_recovery_s == pytest.approx(0.5) and r.lost_after == 1500
    never = analyse(timeline({k: 300 for k in range(20, 59)}, {}), 2.0, 3.0, 0.5, 10)
    assert never.loss_recovery_s is None and not never.recovered


def test_frames_in_flight_at_a_reading_are_no_loss():
    r = analyse(timeline({5: 15, 40: 40, 41: -40}, {}), 2.0, 3.0, warmup_s=0.5,
                margin_pct=10)
    assert r.loss_recovery_s == 0.0  # 40 is within a tenth of a reading's frames


def test_frames_counted_late_are_lost_nowhere():
    """Frames the generator counted two readings late, before, in and after the
    overload: none lost; 300 lost for good in the overload are its own."""
    r = analyse(timeline({7: 20, 9: -20, 21: 300, 24: 50, 26: -50, 40: 30, 42: -30}, {}),
                2.0, 3.0, warmup_s=0.5, margin_pct=10)
    assert (r.lost_before, r.lost_in_overload, r.lost_after) == (0, 300, 0)


def test_latency_as_noisy_as_the_readings_before_is_back():
    noisy = {k: (350.0 if k % 2 else 650.0) for k in range(60)}
    noisy.update({k: 60000.0 for k in range(20, 31)})
    r = analyse(timeline({}, noisy), 2.0, 3.0, warmup_s=0.5, margin_pct=10)
    # 650 us is 30 % above the mean of 500, but within the readings' own spread
    assert r.latency_recovery_s == pytest.approx(0.1)
    # a hiccup of this machine's later is not the overload's
    assert analyse(timeline({}, {**noisy, 50: 5000.0}), 2.0, 3.0, 0.5, 10) \
        .latency_recovery_s == pytest.approx(0.1)
    high = {**noisy, **{k: 5000.0 for k in range(31, 60)}}
    assert analyse(timeline({}, high), 2.0, 3.0, 0.5, 10).latency_recovery_s is None


def test_the_sla_and_the_summary_read_the_overload_answer():
    answer = {"steady_pps": 15000, "overload_pps": 30000, "overload_s": 1,
              "trials": [{}], "loss_recovery_s": {"mean": 0.0, "stdev": 0, "trials": 1},
              "latency_recovery_s": {"mean": 0.4, "stdev": 0, "trials": 1},
              "recovered": True, "overload_recovery_s": 0.4}
    result = {"scenario": "s", "frame_size": 64, "throughput_pps": 15000, "limited_by": "none",
              "overload": answer}
    (outcome,) = sla.check([sla.parse("overload_recovery_s<=0.3")], [result])
    assert outcome.measured == 0.4 and not outcome.passed
    (row,) = overload_table.rows([result])
    assert row[1] == "15,000 / 30,000" and row[5] == "0.400" and row[6] == "yes"


def test_each_trial_s_timeline_is_drawn_with_its_event_marked():
    from nsb.report import event_timeline

    drawn = []

    def chart(fig, chart_id, kind):
        drawn.append((fig, chart_id, kind))
        return f"<div id='{chart_id}'></div>"

    intervals = [{"trial_index": t, "start_s": k * 0.1, "end_s": (k + 1) * 0.1,
                  "tx_pps": 1000.0, "rx_pps": 0.0 if 20 <= k < 24 else 1000.0,
                  "lost_packets": 100 if 20 <= k < 24 else 0, "latency": None}
                 for t in (3, 4) for k in range(40)]
    result = {"reset": {"trials": [{"trial_index": 3, "event_start_s": 2.0,
                                    "event_end_s": 2.4}]}}
    html = event_timeline.section([result, {"throughput_pps": 1}], intervals, "s0", chart)
    assert "Timeline of each trial" in html and "s0-event0-3-chart" in html
    ((fig, _, kind),) = drawn  # trial 4 has no outage recorded: not drawn
    assert kind == "event-timeline"
    (shape,) = fig.layout.shapes
    assert (shape.x0, shape.x1) == (2.0, 2.4)
    assert [t.name for t in fig.data] == ["sent pps", "received pps", "lost per reading"]
    assert event_timeline.section([{"throughput_pps": 1}], intervals, "s0", chart) == ""
