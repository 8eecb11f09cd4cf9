"""The back-to-back profile (RFC 2544 26.4) against DUTs of known buffer size."""

import dataclasses
from unittest import mock

import pytest

from nsb import units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.back2back import BackToBackProfile
from nsb.traffic_profiles.measurer import Measurer
from nsb.trial import burst_shares
from nsb.vnfs.trex import streams
from tests.doubles.buffered_dut import BufferedDut
from tests.doubles.profiles import make_profile

SPEED = 10


def run(dut, **options):
    options = {"packet_sizes": [64], "interface_speed_gbps": SPEED, "trials": 3, **options}
    events = []
    make_profile(BackToBackProfile, **options).execute(Measurer(dut, "t1", "s", events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


@pytest.mark.parametrize("buffer_frames", [1, 37, 1000, 65_535])
@pytest.mark.parametrize("forward_share", [0.0, 0.5])
def test_finds_the_longest_loss_free_burst_to_the_frame(buffer_frames, forward_share):
    line = units.line_rate_pps(64, SPEED, ports=2)
    dut = BufferedDut(buffer_frames, forward_pps=forward_share * line)
    expected = dut.longest_loss_free(line)
    trials, (result,) = run(dut)
    b2b = result.extra["back_to_back"]
    assert b2b["bursts_frames"] == [expected] * 3
    assert b2b["mean_frames"] == expected and b2b["stdev_frames"] == 0
    assert b2b["mean_s"] == pytest.approx(expected / line)
    assert result.extra["back_to_back_frames"] == expected
    assert result.limited_by == "dut"
    passed = {t.result.trial.burst_frames for t in trials if t.verdict == "pass"}
    failed = {t.result.trial.burst_frames for t in trials if t.verdict == "fail"}
    assert max(passed) == expected and expected + 1 in failed  # within one frame
    assert all(t.result.trial.rate_pps == pytest.approx(line) for t in trials)
    assert all(not t.result.trial.latency for t in trials)
    assert result.trials == len(trials)


def test_the_spread_of_trials_that_differ():
    """A DUT whose buffer shrinks between trials: min/mean/max/stdev of the trials."""
    dut = BufferedDut(100)
    original = dut.run_trial
    searches = []

    def shrinking(trial):
        if trial.burst_frames == dut_max:  # every search starts with the longest burst
            searches.append(trial)
            dut.buffer_frames = 100 - 10 * (len(searches) - 1)
        return original(trial)

    dut_max = 5000
    dut.run_trial = shrinking
    _, (result,) = run(dut, max_burst_frames=dut_max, trials=3)
    b2b = result.extra["back_to_back"]
    assert b2b["bursts_frames"] == [100, 90, 80]
    assert (b2b["min_frames"], b2b["mean_frames"], b2b["max_frames"]) == (80, 90, 100)
    assert b2b["stdev_frames"] == pytest.approx(10.0)
    line = units.line_rate_pps(64, SPEED, ports=2)
    assert b2b["min_s"] == pytest.approx(80 / line)


def test_a_burst_passing_at_the_longest_ends_the_search():
    trials, (result,) = run(BufferedDut(10**9), max_burst_s=0.001, trials=2)
    assert len(trials) == 2
    longest = round(units.line_rate_pps(64, SPEED, ports=2) * 0.001)
    assert result.extra["back_to_back"]["bursts_frames"] == [longest, longest]
    assert result.limited_by == "upper_bound"


def test_resolution_bounds_the_answer():
    coarse, (result,) = run(BufferedDut(777), resolution_frames=16, trials=1)
    found = result.extra["back_to_back"]["min_frames"]
    assert found <= 777 < found + 16
    fine, _ = run(BufferedDut(777), resolution_frames=1, trials=1)
    assert len(fine) - len(coarse) == 4  # log2(16) halvings fewer


def test_a_generator_that_sends_short_bursts_is_the_limit():
    trials, (result,) = run(BufferedDut(10**6, max_burst=5000), trials=1,
                            max_burst_frames=100_000)
    assert result.limited_by == "generator"
    assert result.extra["back_to_back"]["max_frames"] <= 5000
    assert any(t.verdict == "generator_limited" and "sent 5000 of" in t.reason for t in trials)
    assert result.limited_reason.startswith("trial 1/1: the generator sent 5000 of the burst's")
    assert result.limited_reason.endswith("bounded by what the generator and its ports take "
                                          "in one burst")
    assert result.extra["back_to_back"]["max_frames"] == 5000  # the longest sent whole


def test_rate_pps_sets_the_bursts_rate():
    dut = BufferedDut(50, forward_pps=500_000)
    trials, (result,) = run(dut, rate_pps=1_000_000, trials=1)
    assert {t.result.trial.rate_pps for t in trials} == {1_000_000}
    assert result.extra["back_to_back"]["mean_frames"] == 100
    # seconds of buffering are at line rate, not at the bursts' rate
    assert result.extra["back_to_back"]["mean_s"] == pytest.approx(
        100 / units.line_rate_pps(64, SPEED, ports=2))


def test_trex_sends_a_burst_as_single_burst_streams_that_add_up():
    assert burst_shares(7, 2) == [4, 3]
    assert burst_shares(1, 2) == [1, 0]
    assert burst_shares(None, 2) == [None, None]
    api = mock.MagicMock()
    path = streams.Path(0, 1, mock.MagicMock(address="10.0.0.1", mac="02:00:00:00:00:01"),
                        mock.MagicMock(address="10.0.1.1", mac="02:00:00:00:00:02"), 0,
                        "uplink")
    spec = streams.default_spec(path, 1)
    streams.data_streams(api, path, spec, 64, 1e6, burst=4)
    api.STLTXSingleBurst.assert_called_once_with(total_pkts=4, pps=1e6)
    api.STLTXCont.assert_not_called()
    streams.data_streams(api, path, spec, 64, 1e6)
    api.STLTXCont.assert_called_once_with(pps=1e6)


def test_a_generator_that_cannot_send_bursts_is_one_line_at_plan_time(nsb_main, monkeypatch):
    """The generator's SENDS_BURSTS decides, before anything starts."""
    from nsb.vnfs.prox.tg import ProxTrafficGen
    from nsb.vnfs.trafgen import TrafgenGenerator
    from tests.conftest import ROOT

    assert not ProxTrafficGen.SENDS_BURSTS and "exact count" in ProxTrafficGen.no_burst_reason
    sample = ROOT / "samples" / "rfc2544" / "tc_testpmd_back2back.yaml"
    args = '{"generator": "trafgen"}'
    code, out, err = nsb_main("task", "start", str(sample), "--task-args", args, "--dry-run")
    assert code == 0, err
    assert "type: back2back" in out and "max_burst_frames: 100000" in out
    monkeypatch.setattr(TrafgenGenerator, "SENDS_BURSTS", False)
    monkeypatch.setattr(TrafgenGenerator, "no_burst_reason", "sends by time")
    code, out, err = nsb_main("task", "start", str(sample), "--task-args", args, "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "tc_testpmd_back2back.yaml:53: scenarios[0].traffic_generator.type: " in line
    assert "profile 'back2back' sends bursts: generator 'trafgen' sends by time" in line
    assert "generators that send bursts: " in line and "trex" in line


def test_a_burst_sent_whole_but_slower_than_asked_is_no_pass():
    """A generator that sends every frame but not at the rate (trafgen's send loop):
    the burst proves nothing about back-to-back frames at that rate."""
    dut = BufferedDut(10**6)
    original = dut.run_trial

    def slow(trial):
        return dataclasses.replace(original(trial), generator_limited=True,
                                   measured_tx_pps=trial.rate_pps / 70)

    dut.run_trial = slow
    trials, (result,) = run(dut, trials=1, max_burst_frames=1000)
    assert all(t.verdict == "generator_limited" for t in trials)
    assert "slower than the rate asked" in trials[0].reason
    assert result.limited_by == "generator"
    assert result.extra["back_to_back"]["max_frames"] == 0


def test_the_limit_is_the_side_that_set_it_not_any_earlier_burst():
    """The longest bursts are more than the generator takes in one go, but the DUT's
    buffer ends the search well below that: the answer is the DUT's."""
    dut = BufferedDut(300)
    original = dut.run_trial

    def slow_when_long(trial):  # bursts over 20,000 frames go out slower, losing nothing
        result = original(trial)
        if trial.burst_frames > 20_000:
            return dataclasses.replace(result, rx_packets=result.tx_packets,
                                       generator_limited=True)
        return result

    dut.run_trial = slow_when_long
    trials, (result,) = run(dut, trials=2, max_burst_frames=100_000)
    assert any(t.verdict == "generator_limited" for t in trials)  # the first, longest ones
    assert result.limited_by == "dut" and result.limited_reason == "longer bursts lost frames"
    assert result.extra["back_to_back"]["bursts_frames"] == [300, 300]


def test_frames_the_generators_own_receive_path_dropped_are_not_the_duts_loss():
    dut = BufferedDut(10**6)
    original = dut.run_trial

    def missing(trial):
        result = original(trial)
        if trial.burst_frames > 500:  # longer bursts overflow the generator's receive ring
            return dataclasses.replace(result, rx_packets=result.rx_packets - 7,
                                       rx_missed_packets=7)
        return result

    dut.run_trial = missing
    trials, (result,) = run(dut, trials=1, max_burst_frames=1000)
    assert not any(t.verdict == "fail" for t in trials)
    assert any("receive path dropped 7" in t.reason for t in trials)
    assert result.limited_by == "generator" and result.extra["back_to_back"]["max_frames"] == 500


def test_a_burst_rate_the_generator_cannot_prove_is_a_warning():
    """TRex's counters prove a burst's rate only down to what the client can time:
    bursts of a few milliseconds are said to be proven no faster than that."""
    dut = BufferedDut(40)
    original = dut.run_trial

    def counted(trial):
        result = original(trial)
        within = max(trial.duration_s, 0.02)  # all out by 20 ms, as far as anyone knows
        return dataclasses.replace(result, proven_tx_pps=result.tx_packets / within)

    dut.run_trial = counted
    _, (result,) = run(dut, trials=1)
    proven = result.extra["back_to_back"]["burst_rate_proven_pps"]
    assert proven == pytest.approx(40 / 0.02)
    (warning,) = result.warnings
    assert f"at least {proven:,.0f} pps" in warning
    dut.run_trial = original  # a generator's own clock: no warning
    _, (plain,) = run(dut, trials=1)
    assert plain.warnings == ()
