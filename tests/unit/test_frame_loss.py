"""The frame-loss-rate profile (RFC 2544 26.3) against a DUT of known loss per rate."""

from dataclasses import replace

import pytest

from nsb.events import ResultReady, TrialDone
from nsb.report import rfc2544
from nsb.traffic_profiles.frame_loss import FrameLossProfile
from nsb.traffic_profiles.measurer import Measurer
from tests.doubles.buffered_dut import LossCurveDut
from tests.doubles.profiles import make_profile

SPEED = 10


def run(loss_at, **options):
    options = {"packet_sizes": [64], "interface_speed_gbps": SPEED, "duration": 1, **options}
    events = []
    dut = LossCurveDut(loss_at, SPEED)
    make_profile(FrameLossProfile, **options).execute(Measurer(dut, "t1", "s", events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


def knee(capacity_pct):
    """A DUT forwarding ``capacity_pct`` % of line rate: it loses the excess."""
    return lambda pct: max(0.0, 100.0 * (pct - capacity_pct) / pct)


@pytest.mark.parametrize("capacity", [35.0, 72.0, 95.0])
def test_the_curve_is_the_duts_loss_per_step(capacity):
    trials, (result,) = run(knee(capacity))
    curve = result.extra["frame_loss_curve"]
    lossy = [p for p in range(100, 0, -10) if p > capacity]
    expected_steps = lossy + [lossy[-1] - 10, lossy[-1] - 20]
    assert [p["rate_pct"] for p in curve] == expected_steps
    for point in curve:
        assert point["loss_pct"] == pytest.approx(knee(capacity)(point["rate_pct"]), abs=1e-4)
    assert [p["lost_packets"] > 0 for p in curve][-2:] == [False, False]
    assert result.extra["curve_complete"] is True
    assert result.line_rate_pct == pytest.approx(expected_steps[-2])  # highest loss-free step
    assert result.limited_by == "dut"
    assert len(trials) == len(curve) == result.trials


def test_step_and_upper_bound_options():
    _, (result,) = run(knee(50.0), step_pct=5, upper_bound=80)
    assert [p["rate_pct"] for p in result.extra["frame_loss_curve"]] == [80, 75, 70, 65, 60,
                                                                          55, 50, 45]


def test_a_loss_between_clean_steps_restarts_the_count():
    """Two successive loss-free steps end the curve, not two loss-free steps."""
    losses = {100.0: 5.0, 90.0: 0.0, 80.0: 1.0, 70.0: 0.0, 60.0: 0.0, 50.0: 0.0}
    _, (result,) = run(lambda pct: losses.get(pct, 0.0))
    assert [p["rate_pct"] for p in result.extra["frame_loss_curve"]] == [100, 90, 80, 70, 60]
    assert result.line_rate_pct == pytest.approx(70.0)


def test_no_loss_at_the_maximum_rate_is_two_trials():
    trials, (result,) = run(lambda pct: 0.0)
    assert [p["rate_pct"] for p in result.extra["frame_loss_curve"]] == [100, 90]
    assert result.limited_by == "upper_bound"


def test_a_curve_that_never_gets_clean_says_so():
    _, (result,) = run(lambda pct: 1.0, step_pct=10, upper_bound=40)
    assert [p["rate_pct"] for p in result.extra["frame_loss_curve"]] == [40, 30, 20, 10]
    assert result.extra["curve_complete"] is False
    assert result.throughput_pps == 0


def test_steps_coarser_than_rfc_2544s_ten_percent_are_one_located_line(nsb_main, tmp_path):
    from tests.conftest import ROOT

    sample = ROOT / "samples" / "rfc2544" / "tc_testpmd_frame_loss.yaml"
    code, _, err = nsb_main("task", "validate", str(sample), "--task-args", '{"step_pct": 25}')
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "tc_testpmd_frame_loss.yaml:61:" in line and "step_pct" in line and "10" in line


def test_a_generator_short_of_the_top_step_is_the_limit():
    """No loss, but the generator sent less than asked: the DUT's limit was not reached."""
    events = []
    dut = LossCurveDut(lambda pct: 0.0, SPEED)
    original = dut.run_trial

    def short(trial):
        result = original(trial)
        return replace(result, tx_packets=result.tx_packets // 2,
                       rx_packets=result.rx_packets // 2, generator_limited=True)

    dut.run_trial = short
    prof = make_profile(FrameLossProfile, packet_sizes=[64], interface_speed_gbps=SPEED,
                        duration=1)
    prof.execute(Measurer(dut, "t1", "s", events.append))
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    assert result.limited_by == "generator"
    assert "the DUT's limit was not reached" in result.limited_reason
    assert [p["sent_pct"] for p in result.extra["frame_loss_curve"]] == pytest.approx([50, 45])


def test_the_report_draws_loss_against_offered_load():
    _, results = run(knee(60.0), packet_sizes=[64, 1518])
    records = [{"frame_size": r.frame_size, **r.extra} for r in results]
    fig = rfc2544.frame_loss_curve(records)
    assert [trace.name for trace in fig.data] == ["64 B", "1518 B"]
    assert list(fig.data[0].x) == [p["rate_pct"] for p in records[0]["frame_loss_curve"]]
    assert list(fig.data[0].y) == [p["loss_pct"] for p in records[0]["frame_loss_curve"]]
    html = rfc2544.section(records, "t1-s1", lambda fig, cid, kind: f"<{cid}>")
    assert "<t1-s1-frame-loss-chart>" in html and "RFC 2544" in html
