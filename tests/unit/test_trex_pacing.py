"""Whether TRex kept a trial's schedule is told by its own tx counters at the trial's end
plus the tolerance, never by the client's wall time: checked against a simulated TRex of
known pace (tests/doubles/paced_trex.py) whose port-state event may arrive late."""

import time

import pytest

from nsb.trial import Trial
from nsb.vnfs.trex import pacing
from tests.doubles.paced_trex import PacedTrexClient, PacedTrexGen


def _run(capacity_pps: float, rate_pps: float, duration_s: float, event_delay_s: float = 0.0,
         start_delay_s: float = 0.0):
    client = PacedTrexClient(capacity_pps, event_delay_s, start_delay_s)
    gen = PacedTrexGen(client)
    trial = Trial(64, rate_pps, duration_s)
    client.start(rate_pps, duration_s)
    return pacing.wait(gen, trial, time.monotonic()), client


def test_a_late_port_state_event_is_not_a_late_generator():
    # TRex sends every frame on time, its event comes 0.25 s late (seen on a busy core)
    pace, client = _run(capacity_pps=1e9, rate_pps=100_000, duration_s=0.5, event_delay_s=0.25)
    assert not pace.lagged and pace.sent_for_s == 0.5
    assert client.stopped_at is None  # nothing was stopped


def test_a_generator_that_cannot_keep_the_rate_is_stopped_at_the_trials_end_plus_tolerance():
    pace, client = _run(capacity_pps=50_000, rate_pps=100_000, duration_s=0.5,
                        start_delay_s=0.03)
    assert pace.lagged and "still sending" in pace.note
    # stopped near 0.525 s, not when its 50,000 frames would have been out (1 s)
    sent = client._sent(client.stopped_at)
    assert sent < client.frames
    assert pace.sent_for_s == pytest.approx(0.525, abs=0.05)
    # its pace is what its counters showed: the simulated data plane's 50,000 pps
    assert pace.pace_pps == pytest.approx(50_000, rel=0.05)


def test_a_long_trial_is_stopped_at_its_first_checkpoint_when_far_behind():
    pace, client = _run(capacity_pps=10_000, rate_pps=100_000, duration_s=8.0)
    assert pace.lagged and "by its schedule" in pace.note
    assert client._sent(client.stopped_at) < 0.5 * 100_000 * 2.0  # a quarter in, not 8 s


def test_behind_allows_the_start_skew_and_the_tolerance():
    assert not pacing.behind(95_000, 100_000, 1.0 + pacing.START_SKEW_S, 0.05)
    assert pacing.behind(94_000, 100_000, 1.0 + pacing.START_SKEW_S, 0.05)
    assert pacing.checkpoints(2.0) == [] and pacing.checkpoints(8.0) == [2.0, 4.0, 6.0]


def test_a_trial_that_ended_late_within_the_tolerance_is_timed_by_trex_s_counter():
    """TRex sent 2 % slower than asked (its last frame within the 5 % tolerance) and its
    data plane started 20 ms after ``start`` returned: the seconds it took are read from
    its tx counter, to within 1 %, not the trial's nominal second."""
    pace, client = _run(capacity_pps=98_000, rate_pps=100_000, duration_s=1.0,
                        start_delay_s=0.02)
    assert not pace.lagged
    took = client.frames / client.capacity_pps
    assert pace.seconds_for(client.frames, Trial(64, 100_000, 1.0)) == \
        pytest.approx(took, rel=0.01)
    assert pace.measured_s == pytest.approx(took, rel=0.01)


def test_a_trial_on_schedule_takes_its_duration_never_less():
    pace, client = _run(capacity_pps=1e9, rate_pps=100_000, duration_s=0.6, start_delay_s=0.02)
    assert not pace.lagged and pace.measured_s == pytest.approx(0.6, rel=0.01)
    assert pace.seconds_for(client.frames, Trial(64, 100_000, 0.6)) >= 0.6


def test_a_burst_is_not_timed_here():
    """A back-to-back burst's rate is its profile's business (its frames by when they
    were known out): no readings of its own at the start and the end."""
    client = PacedTrexClient(1e9)
    gen = PacedTrexGen(client)
    trial = Trial(64, 100_000, 0.1, burst_frames=10_000)
    client.start(100_000, 0.1)
    pace = pacing.wait(gen, trial, time.monotonic(), pacing.BURST_ALLOWANCE_S)
    assert pace.measured_s is None and client.stats_reads == 0
    assert pace.seconds_for(10_000, trial) == 0.1
