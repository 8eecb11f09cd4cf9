"""A search the generator limits reports the highest loss-free rate it measured,
never 0, with every profile; and the pieces that measure how fast trafgen really
sent and when testpmd really forwards."""

import pytest

from nsb import units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.binsearch import BinSearchProfile
from nsb.traffic_profiles.fastndr import FastNdrProfile
from nsb.traffic_profiles.measurer import Measurer
from nsb.traffic_profiles.mlrsearch import MlrSearchProfile
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.trafgen import parse_trafgen_report
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator

LINE_64 = units.line_rate_pps(64, 1, ports=2)
PROFILES = {
    "binsearch": (BinSearchProfile, {"packet_sizes": [64], "duration": 1, "tolerated_loss": 0.0,
                                     "test_precision": 1.0, "lower_bound": 0.0,
                                     "upper_bound": 100.0, "interface_speed_gbps": 1}),
    "mlrsearch": (MlrSearchProfile, {"packet_sizes": [64], "interface_speed_gbps": 1}),
    "fastndr": (FastNdrProfile, {"packet_sizes": [64], "interface_speed_gbps": 1}),
}


def run(tg, kind):
    cls, options = PROFILES[kind]
    events = []
    make_profile(cls, **options).execute(Measurer(tg, "t1", "s", events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


@pytest.mark.parametrize("kind", sorted(PROFILES))
def test_every_trial_generator_limited_still_gives_the_rate_measured(kind):
    # the generator sends at most 1 % of line rate, far below the DUT and below any
    # rate the search asks for: before, the answer was 0 pps
    tg = SimulatedDutGenerator(capacity_pps=0.9 * LINE_64, max_tx_pps=0.01 * LINE_64)
    trials, results = run(tg, kind)
    result = results[0]  # mlrsearch adds its PDR after the NDR
    assert all(r.limited_by == "generator" and r.throughput_pps > 0 for r in results)
    loss_free = [t.result.tx_rate_pps for t in trials if t.result.lost_packets == 0]
    assert result.throughput_pps == pytest.approx(max(loss_free))
    assert result.throughput_pps == pytest.approx(0.01 * LINE_64, rel=0.01)
    assert "the DUT's limit was not reached" in result.limited_reason or \
        "could not send" in result.limited_reason


def test_a_dut_limited_search_with_no_passing_trial_still_reports_zero():
    tg = SimulatedDutGenerator(capacity_pps=0.0001 * LINE_64)
    trials, (result,) = run(tg, "binsearch")
    assert result.limited_by == "dut" and result.throughput_pps == 0.0
    # no answer is said in words, with what was tried
    assert result.limited_reason.startswith("no rate at or above the lower bound passed; "
                                            "tried 8 rates, ")
    assert result.extra["evidence"]["full_trials_passed"] == 0


def test_trafgen_report_gives_frames_and_its_own_send_time():
    out = ("Running! Hang up with ^C!\n\r       20000 packets outgoing\n"
           "\r     1200000 bytes outgoing\n"
           "\r           1 sec, 13009 usec on CPU0 (20000 packets)\n")
    assert parse_trafgen_report(out, 0, None) == (20000, pytest.approx(1.013009))


def test_testpmd_ready_only_when_every_port_is_started_with_link_up():
    info = {"dev_started": 1}
    up, down = {"status": "UP"}, {"status": "DOWN"}
    ports = {0: "xe0", 1: "xe1"}
    ready = {"/ethdev/info,0": info, "/ethdev/link_status,0": up,
             "/ethdev/info,1": info, "/ethdev/link_status,1": up}
    assert dpdk_telemetry.ports_not_forwarding(ready, ports) == ""
    assert dpdk_telemetry.ports_not_forwarding(
        {**ready, "/ethdev/link_status,1": down}, ports) == "port 1 (xe1) link up"
    assert dpdk_telemetry.ports_not_forwarding(
        {**ready, "/ethdev/info,0": {"dev_started": 0}}, ports) == "port 0 (xe0) to start"
    assert dpdk_telemetry.ports_not_forwarding({}, {0: "xe0"}) == "port 0 (xe0) to exist"


class StallingLinkDut(SimulatedDutGenerator):
    """A DUT behind a link that pushes back (memif, virtio): asked up to 5 % of line rate
    more than it forwards, it stalls the link and the generator lags with nothing lost,
    or (``alternate``: every other such trial, as the lab's throttled CNF does) it drops
    what it cannot take; asked more, the generator sends and the DUT drops."""

    def __init__(self, capacity_pps, alternate):
        super().__init__(capacity_pps)
        self.alternate = alternate
        self.in_band = 0

    def run_trial(self, trial):
        import dataclasses

        result = super().run_trial(trial)
        if self.capacity_pps < trial.rate_pps <= self.capacity_pps + 0.05 * LINE_64:
            self.in_band += 1
            if self.alternate and self.in_band % 2:
                return result  # dropped
            sent = round(self.capacity_pps * trial.duration_s)  # lagged, nothing lost
            return dataclasses.replace(result, tx_packets=sent, rx_packets=sent,
                                       generator_limited=True)
        return result


@pytest.mark.parametrize("fraction, limited_by", [(0.1777, "dut"), (0.174, "generator"),
                                                  (0.1518, "generator")])
def test_a_dut_that_stalls_its_link_is_the_limit_when_its_loss_pins_it(fraction, limited_by):
    """The search ends on a lag (no loss) just above the DUT's rate. The DUT lost frames
    at 18.75 % of line rate, which the generator did send: within test_precision (1 %)
    of the lag's 17.77 %, that pins the DUT's limit between the two (the answer is the
    fastest loss-free trial, the lag's); 1.35 % or more apart, the search cannot tell
    (the generator's)."""
    capacity = fraction * LINE_64
    trials, (result,) = run(StallingLinkDut(capacity, alternate=True), "binsearch")
    judged = [t for t in trials if t.verdict != "pass"]
    assert judged[-1].verdict == "generator_limited"  # the lag decided the last interval
    assert result.limited_by == limited_by
    loss_free = [t.result.tx_rate_pps for t in trials if t.result.lost_packets == 0]
    assert result.throughput_pps == pytest.approx(max(loss_free))
    assert result.throughput_pps <= capacity * 1.0001
    _, (never,) = run(StallingLinkDut(capacity, alternate=False), "binsearch")
    assert never.limited_by == "generator"  # no loss near the lag: nothing pins the DUT


def test_the_evidence_names_a_trial_of_its_own_frame_size_in_every_search():
    """A frame size's trials are let go once it is answered; the id of one of them may be
    a later object's (the next frame size's answer, a copy with its confirmation's
    latency), which must not be taken for the freed trial (a 1518 B answer's evidence
    named a 64 B trial)."""
    tg = SimulatedDutGenerator(capacity_pps=0.9 * LINE_64, max_tx_pps=0.01 * LINE_64)
    events = []
    options = {**PROFILES["binsearch"][1], "packet_sizes": [64, 128, 256, 512, 1024, 1518]}
    make_profile(BinSearchProfile, **options).execute(Measurer(tg, "t1", "s", events.append))
    frame_of = {e.trial_index: e.result.trial.frame_size for e in events
                if isinstance(e, TrialDone)}
    for result in (e for e in events if isinstance(e, ResultReady)):
        assert frame_of[result.extra["evidence"]["trial_index"]] == result.frame_size


def test_a_result_is_found_by_identity_not_by_an_id_a_freed_one_had():
    measurer = Measurer(SimulatedDutGenerator(capacity_pps=LINE_64), "t1", "s", lambda e: None)
    kept, stranger = object(), object()
    measurer._trials[id(stranger)] = (kept, 7, "paths")  # as if a freed trial had its id
    assert measurer._index_of(stranger, []) is None
    assert measurer._path_of(stranger) == (None, None)
