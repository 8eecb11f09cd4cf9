"""NSB's RFC2544Profile and FixedProfile against a simulated DUT of known capacity."""

import pytest

from nsb import units
from nsb.errors import TaskError
from nsb.events import ResultReady, TrialDone
from nsb.frames import FrameMix
from nsb.packets import Direction
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.nsb_fixed import FixedProfile
from nsb.traffic_profiles.nsb_rfc2544 import Rfc2544Profile
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator


def definition(src: str, dst: str, framesize: dict | None = None) -> dict:
    return {"ipv4": {"id": 1,
                     "outer_l2": {"framesize": framesize or {"64B": "100", "128B": "0"}},
                     "outer_l3v4": {"proto": "udp", "srcip4": src, "dstip4": dst,
                                    "count": "1", "ttl": 32, "dscp": 0},
                     "outer_l4": {"srcport": "1234-4321", "dstport": "2001-4001", "count": "1"}}}


PACKETS = {"uplink_0": definition("10.0.2.1-10.0.2.255", "10.0.3.1-10.0.3.255"),
           "downlink_0": definition("10.0.3.1-10.0.3.255", "10.0.2.1-10.0.2.255"),
           "uplink_1": definition("10.1.2.1", "10.1.3.1"),
           "downlink_1": definition("10.1.3.1", "10.1.2.1")}
RFC2544 = {"frame_rate": None, "duration": 1, "interface_speed_gbps": 1, **PACKETS}


def run(tg, profile, should_stop=lambda: False):
    events = []
    profile.execute(Measurer(tg, "t1", "s", events.append, should_stop=should_stop))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


def line(frame=64, ports=2):
    return units.line_rate_pps(frame, 1, ports=ports)


@pytest.mark.parametrize("capacity_pct", [3.3, 41.0, 87.7])
def test_the_search_finds_the_dut_limit_within_the_resolution(capacity_pct):
    tg = SimulatedDutGenerator(capacity_pct / 100 * line())
    trials, (result,) = run(tg, make_profile(Rfc2544Profile, **RFC2544))
    assert trials[0].rate_pct == 100.0  # frame_rate null is 100 % of line rate
    assert result.limited_by == "dut"
    assert result.line_rate_pct <= capacity_pct
    assert result.line_rate_pct >= capacity_pct - 0.2  # resolution 0.1: the last step
    assert result.loss_pct == 0
    assert result.extra["nsb_rate_pct"] == pytest.approx(result.line_rate_pct, rel=1e-6)
    assert result.trials == len(trials)


def test_the_search_bisects_as_nsb_does():
    """Rates halve the interval [0, frame_rate] and are rounded to 5 decimals."""
    tg = SimulatedDutGenerator(0.3 * line())
    trials, _ = run(tg, make_profile(Rfc2544Profile, **{**RFC2544, "frame_rate": 80}))
    assert [t.rate_pct for t in trials[:5]] == [80.0, 40.0, 20.0, 30.0, 35.0]
    assert [t.verdict for t in trials[:5]] == ["fail", "fail", "pass", "pass", "fail"]
    assert trials[1].upper_pct == 40.0 and trials[2].lower_pct == 20.0


def test_a_drop_within_the_allowed_window_is_the_answer():
    """Between low and high NSB stops: 53.125 % drops 5.9 %, 51.5625 % drops 3 %."""
    tg = SimulatedDutGenerator(0.5 * line())
    profile = make_profile(Rfc2544Profile, **{**RFC2544, "allowed_drop_rate": "1 - 5"})
    trials, (result,) = run(tg, profile)
    assert [t.rate_pct for t in trials] == [100.0, 50.0, 75.0, 62.5, 56.25, 53.125, 51.5625]
    assert result.extra["nsb_rate_pct"] == 51.5625
    assert 1 <= result.extra["drop_pct"] <= 5
    assert result.extra["allowed_drop_rate_pct"] == [1.0, 5.0]


def test_a_dut_faster_than_the_line_ends_after_one_trial():
    trials, (result,) = run(SimulatedDutGenerator(1e12), make_profile(Rfc2544Profile,
                                                                      **RFC2544))
    assert len(trials) == 1 and result.limited_by == "upper_bound"
    assert result.line_rate_pct == pytest.approx(100.0)


def test_every_trial_carries_the_packets_of_the_generator_s_port_pairs():
    tg = SimulatedDutGenerator(0.5 * line())
    run(tg, make_profile(Rfc2544Profile, **RFC2544))
    for trial in tg.trials:
        assert [p.name for p in trial.packets] == ["uplink_0", "downlink_0"]  # 2 ports
        assert trial.frame_size == 64 and trial.flows == 1
    tg4 = SimulatedDutGenerator(1e12, ports=4)
    run(tg4, make_profile(Rfc2544Profile, **RFC2544))
    assert [p.name for p in tg4.trials[0].packets] == ["uplink_0", "downlink_0", "uplink_1",
                                                        "downlink_1"]


def test_correlated_traffic_sends_the_uplinks_only():
    tg = SimulatedDutGenerator(0.5 * line())
    profile = make_profile(Rfc2544Profile, **{**RFC2544, "correlated_traffic": True})
    _, (result,) = run(tg, profile)
    assert all(p.direction == Direction.UPLINK for t in tg.trials for p in t.packets)
    assert result.extra["correlated_throughput_fps"] > 0


def test_a_mix_is_sent_byte_weighted_at_the_line_share_asked():
    mix = {"64B": "70", "1518B": "30"}
    packets = {name: definition("1.1.1.1", "2.2.2.2", mix) for name in ("uplink_0",
                                                                         "downlink_0")}
    options = {k: v for k, v in RFC2544.items() if k not in PACKETS}
    profile = make_profile(Rfc2544Profile, **options, **packets)
    frame = profile.frame
    assert isinstance(frame, FrameMix) and frame.weights == {64: 85, 1518: 2}
    assert profile.mix is frame  # the plan refuses it for a generator that sends one size
    tg = SimulatedDutGenerator(1e12)
    run(tg, profile)
    (trial,) = tg.trials
    assert trial.frame_size is frame
    # 100 % of two 1 Gbit/s ports in bytes, whatever the mix
    assert trial.rate_pps * (frame.avg_size + 20) * 8 == pytest.approx(2e9)


def test_generator_limit_is_not_the_dut_s():
    tg = SimulatedDutGenerator(capacity_pps=0.9 * line(), max_tx_pps=0.2 * line())
    trials, (result,) = run(tg, make_profile(Rfc2544Profile, **RFC2544))
    assert result.limited_by == "generator"
    assert any(t.verdict == "generator_limited" for t in trials)


def test_a_stop_ends_the_search_without_an_answer():
    tg = SimulatedDutGenerator(0.3 * line())
    trials, results = run(tg, make_profile(Rfc2544Profile, **RFC2544),
                          lambda: len(tg.trials) >= 3)
    assert len(trials) == 3 and results == []


@pytest.mark.parametrize("options, fragment", [
    ({"frame_rate": 150}, "150 is above the maximum 100"),
    ({"frame_rate": "150%"}, "frame_rate 150 is above 100"),
    ({"frame_rate": "5000fps"}, "does not match the pattern"),
    ({"allowed_drop_rate": "a - b"}, "is not 'low - high'"),
    ({"resolution": 0}, "must be greater than 0"),
    ({"uplink_0": {"ipv4": {"outer_l4": {"srcport": "x"}}}}, "is not a port"),
])
def test_bad_options_are_one_located_line(options, fragment):
    with pytest.raises(TaskError) as caught:
        make_profile(Rfc2544Profile, **{**RFC2544, **options})
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


# -- FixedProfile ------------------------------------------------------------------------

FIXED = {"frame_rate": 100, "flow_number": 10, "frame_size": 64, "duration": 2}


def test_fixed_rate_is_in_pps_as_nsb_fixed_yaml_says():
    tg = SimulatedDutGenerator(1e12)
    trials, (result,) = run(tg, make_profile(FixedProfile, **FIXED))
    (trial,) = tg.trials
    assert trial.rate_pps == 100 and trial.frame_size == 64 and trial.duration_s == 2
    assert trial.flows == 10 and trial.packets == ()
    assert result.throughput_pps == pytest.approx(100) and result.extra["offered_pps"] == 100


def test_fixed_rate_in_percent_and_its_verdict():
    tg = SimulatedDutGenerator(0.25 * line())
    trials, (result,) = run(tg, make_profile(FixedProfile, **{**FIXED, "frame_rate": "50%",
                                                              "interface_speed_gbps": 1}))
    assert tg.trials[0].rate_pps == pytest.approx(0.5 * line())
    assert trials[0].verdict == "fail" and result.limited_by == "dut"
    assert result.throughput_pps == 0 and result.extra["drop_pct"] == pytest.approx(50, 0.01)


def test_fixed_profile_with_packet_definitions():
    options = {"frame_rate": "10%", "duration": 1, **PACKETS}
    tg = SimulatedDutGenerator(1e12)
    run(tg, make_profile(FixedProfile, **options))
    (trial,) = tg.trials
    assert [p.name for p in trial.packets] == ["uplink_0", "downlink_0"]
    with pytest.raises(TaskError, match="give the frame size once"):
        make_profile(FixedProfile, **{**options, "frame_size": 128})
