"""The fastndr profile: short trials find the NDR, one full-length trial proves it."""

from dataclasses import replace

import pytest

from benchmarks.search.sim_dut import SimulatedDut
from nsb import units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.fastndr import FastNdrProfile
from nsb.traffic_profiles.measurer import Measurer
from tests.doubles.profiles import make_profile

LINE = units.line_rate_pps(64, 10)


def profile(**overrides):
    return make_profile(FastNdrProfile, **{"packet_sizes": [64], **overrides})


def run(tg, prof):
    events = []
    prof.execute(Measurer(tg, "t1", "s", events.append))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


@pytest.mark.parametrize("model", ["M0", "M1", "M2"])
@pytest.mark.parametrize("seed", range(5))
def test_answer_is_within_width_below_capacity_and_backed_by_one_full_trial(model, seed):
    capacity = (0.1 + 0.17 * seed) * LINE
    dut = SimulatedDut(model, capacity, seed)
    trials, (result,) = run(dut, profile())
    assert capacity * (1 - 0.005) <= result.throughput_pps <= capacity
    assert result.loss_pct == 0 and result.extra["backed_by_full_trial"]
    full = [t for t in trials if t.result.trial.duration_s == 60.0]
    assert len(full) == 1 and full[0].verdict == "pass"
    assert full[0].result.tx_rate_pps == pytest.approx(result.throughput_pps)
    assert dut.trial_seconds <= 90


def test_buffer_is_detected_from_the_two_max_load_trials():
    dut = SimulatedDut("M2", 0.5 * LINE, 1)
    trials, (result,) = run(dut, profile())
    assert result.extra["buffer_detected"]
    assert result.extra["estimate_pps"] == pytest.approx(0.5 * LINE, rel=1e-6)
    assert [t.reason.split(":")[0] for t in trials[:2]] == ["max load",
                                                            "max load, double length"]
    # the buffer signature is checked once more: a stall in the long trial looks the same
    assert [t.reason.split(":")[0] for t in trials].count("max load, double length, again") == 1


class LongTrialsTire(SimulatedDut):
    """Forwards 2% less in full-length trials than in short ones (heat, a slow leak):
    nothing a short trial can see."""

    def run_trial(self, trial):
        full = self.capacity_pps
        self.capacity_pps = full * (0.98 if trial.duration_s >= 60 else 1.0)
        try:
            return super().run_trial(trial)
        finally:
            self.capacity_pps = full


def test_failed_final_trial_steps_down_from_its_forwarding_rate():
    capacity = 0.3 * LINE
    trials, (result,) = run(LongTrialsTire("M0", capacity, 0), profile())
    finals = [t for t in trials if t.reason.startswith("final")]
    assert [t.verdict for t in finals] == ["fail", "pass"]  # noiseless: no retry at the rate
    assert 0.98 * capacity * (1 - 0.005) <= result.throughput_pps <= 0.98 * capacity


def test_edge_samples_catch_a_dut_that_hides_loss_in_short_trials():
    class ShortTrialsLie(SimulatedDut):
        """Short trials pass up to 2% above capacity (a deep buffer nobody detects)."""

        def run_trial(self, trial):
            result = super().run_trial(trial)
            if trial.duration_s < 60 and trial.rate_pps <= self.capacity_pps * 1.02:
                return replace(result, rx_packets=result.tx_packets)
            return result

    capacity = 0.3 * LINE
    trials, (result,) = run(ShortTrialsLie("M0", capacity, 0), profile())
    passed_short = max(t.result.trial.rate_pps for t in trials
                       if t.verdict == "pass" and t.result.trial.duration_s < 60)
    assert passed_short > 1.01 * capacity  # the bisection alone would prove 1-2% too high
    finals = [t for t in trials if t.reason.startswith("final")]
    assert [t.verdict for t in finals] == ["pass"]  # the forwarding rate at the edge is C
    assert capacity * (1 - 1e-6) <= result.throughput_pps <= capacity
    assert result.extra["noise"] == 0


class Jittery(SimulatedDut):
    """M0 whose capacity in short trials moves by a fixed pattern, and whose first
    full-length trial stalls (10 ms of frames lost)."""

    PATTERN = [0.002, -0.001, 0.0005, -0.002, 0.001, 0.0, -0.0005, 0.0015]

    def __init__(self, capacity_pps):
        super().__init__("M0", capacity_pps, 0)
        self.stalled = False

    def run_trial(self, trial):
        full = self.capacity_pps
        if trial.duration_s < 60:
            self.capacity_pps = full * (1 + self.PATTERN[self.trials % len(self.PATTERN)])
        try:
            result = super().run_trial(trial)
        finally:
            self.capacity_pps = full
        if trial.duration_s >= 60 and not self.stalled:
            self.stalled = True
            return replace(result, rx_packets=result.rx_packets - round(0.010 * trial.rate_pps))
        return result


def test_noisy_dut_is_proven_at_the_second_lowest_edge_sample_and_a_stall_is_retried():
    """With loss_retries: 1 the user tolerates a rerun after a loss: the stall of the
    first full-length trial is retried at the same rate and the pass counts."""
    capacity = 0.4 * LINE
    trials, (result,) = run(Jittery(capacity), profile(loss_retries=1))
    shorts = [t for t in trials if t.result.trial.duration_s < 60]
    edge_rate = shorts[-1].result.trial.rate_pps
    edge = sorted(min(edge_rate, t.result.rx_rate_pps) for t in shorts
                  if t.result.trial.rate_pps == edge_rate)
    assert len(edge) == 12 and edge[0] < edge[-1]
    finals = [t for t in trials if t.reason.startswith("final")]
    assert [t.verdict for t in finals] == ["fail", "pass"]  # the stall: the same rate again
    assert finals[0].result.trial.rate_pps == finals[1].result.trial.rate_pps
    highest_pass = max(t.result.trial.rate_pps for t in shorts if t.verdict == "pass")
    assert highest_pass > edge[1]  # a lucky short pass: the edge samples say lower
    assert result.throughput_pps == pytest.approx(edge[1] - 1, abs=0.5)
    assert result.throughput_pps <= capacity and result.extra["noise"] > 0
    assert result.throughput_pps >= capacity * (1 - 0.005)
    assert result.extra["evidence"]["failed_at_rate"] == 1  # the evidence says so


def test_by_default_a_rate_that_lost_frames_is_not_tried_again():
    """Rare loss must not pass on a second try: after the stall the proof goes lower,
    and the evidence of the answer is one clean full-length trial at its rate."""
    capacity = 0.4 * LINE
    trials, (result,) = run(Jittery(capacity), profile())
    finals = [t for t in trials if t.reason.startswith("final")]
    assert [t.verdict for t in finals] == ["fail", "pass"]
    assert finals[1].result.trial.rate_pps <= finals[0].result.trial.rate_pps * (1 - 0.005)
    assert result.throughput_pps == finals[1].result.tx_rate_pps
    assert result.throughput_pps >= capacity * (1 - 0.01)
    assert result.extra["evidence"] == {
        "rate_pps": finals[1].result.trial.rate_pps, "trial_index": finals[1].trial_index,
        "full_trials_passed": 1, "loss_free_s": 60.0, "failed_at_rate": 0,
        "lowest_failing_pps": pytest.approx(min(
            t.result.trial.rate_pps for t in trials
            if t.verdict == "fail" and t.result.trial.rate_pps > result.throughput_pps))}


class SpikeOnce(SimulatedDut):
    """M0 that loses 1% of one short trial below capacity, in the search."""

    spiked = False

    def run_trial(self, trial):
        result = super().run_trial(trial)
        if (not self.spiked and self.trials > 2 and trial.duration_s < 60
                and trial.rate_pps < 0.999 * self.capacity_pps):
            self.spiked = True
            return replace(result, rx_packets=round(0.99 * result.tx_packets))
        return result


def test_a_loss_spike_below_capacity_is_not_taken_for_the_bound():
    capacity = 0.5 * LINE
    dut = SpikeOnce("M0", capacity, 0)
    trials, (result,) = run(dut, profile())
    spike = next(t for t in trials if t.verdict == "fail" and t.result.trial.rate_pps < capacity)
    again = [t for t in trials if t.result.trial.rate_pps == spike.result.trial.rate_pps
             and t.result.trial.duration_s < 60]
    assert len(again) == 12 and sum(t.verdict == "pass" for t in again) == 11
    assert capacity * (1 - 0.005) <= result.throughput_pps <= capacity


def test_a_stall_in_the_long_max_load_trial_is_not_taken_for_a_buffer():
    class StallSecond(SimulatedDut):
        """M0 that loses 10 ms of frames in its second trial (the long max-load one)."""

        def run_trial(self, trial):
            result = super().run_trial(trial)
            if self.trials == 2:
                return replace(result, rx_packets=result.rx_packets - round(0.01 * trial.rate_pps))
            return result

    capacity = 0.3 * LINE
    trials, (result,) = run(StallSecond("M0", capacity, 0), profile())
    again = [t for t in trials if t.reason.startswith("max load, double length, again")]
    assert len(again) == 1 and again[0].result.rx_rate_pps > trials[1].result.rx_rate_pps
    assert result.extra["buffer_detected"] is False
    assert capacity * (1 - 0.005) <= result.throughput_pps <= capacity


def test_noisy_dut_m3_is_never_over_reported_within_half_a_percent_and_always_backed():
    """400 seeded M3 DUTs (the profile before the edge samples over-reported 13 of them)."""
    errors = []
    for seed in range(400):
        capacity = (0.1 + 0.002 * seed) * LINE
        trials, (result,) = run(SimulatedDut("M3", capacity, seed), profile())
        last = trials[-1]
        assert last.verdict == "pass" and last.result.trial.duration_s == 60.0
        assert last.result.tx_rate_pps == pytest.approx(result.throughput_pps)
        assert result.extra["backed_by_full_trial"]
        errors.append(result.throughput_pps / capacity - 1)
    assert max(errors) <= 0
    # a stall in a final trial now costs a width (the rate is not tried again), so
    # the mean is half a width lower than when stalls were retried
    assert sum(errors) / len(errors) >= -0.006


def test_tolerated_loss_counts_in_the_edge_samples():
    capacity = 0.4 * LINE
    trials, (result,) = run(SimulatedDut("M0", capacity, 0), profile(tolerated_loss=2.0))
    assert capacity / 0.98 * (1 - 0.005) <= result.throughput_pps <= capacity / 0.98


def test_upper_bound_passing():
    trials, (result,) = run(SimulatedDut("M0", 2 * LINE, 0), profile())
    assert result.limited_by == "upper_bound" and len(trials) == 2


def test_generator_that_cannot_sustain_the_final_trial_steps_down():
    from tests.doubles.simulated_dut import SimulatedDutGenerator

    class Tiring(SimulatedDutGenerator):
        """Double: sends anything in short trials, at most 40% of line rate in long ones."""

        def run_trial(self, trial):
            self.max_tx_pps = 0.4 * LINE if trial.duration_s >= 60 else float("inf")
            return super().run_trial(trial)

    trials, (result,) = run(Tiring(0.5 * LINE, ports=1), profile())
    finals = [t for t in trials if t.reason.startswith("final")]
    assert [t.verdict for t in finals] == ["generator_limited", "pass"]
    assert 0.39 * LINE < result.throughput_pps <= 0.4 * LINE
    assert result.limited_by == "generator"


@pytest.mark.parametrize(("model", "within"), [("M2", 0.005), ("M3", 0.01)])
def test_short_trial_mode_says_it_is_not_backed_and_does_not_over_report(model, within):
    capacity = 0.6 * LINE
    trials, (result,) = run(SimulatedDut(model, capacity, 3), profile(prove=False))
    assert result.extra["backed_by_full_trial"] is False
    assert all(t.result.trial.duration_s < 60 for t in trials)
    assert capacity * (1 - within) <= result.throughput_pps <= capacity


def test_bounds_must_be_ordered():
    from nsb.errors import TaskError

    with pytest.raises(TaskError, match="lower_bound 50 must be below upper_bound 40"):
        profile(lower_bound=50, upper_bound=40)


@pytest.mark.parametrize("cls_name", ["fastndr", "mlrsearch"])
def test_the_live_line_has_a_time_left_for_searches_of_mixed_trial_lengths(cls_name):
    """fastndr and mlrsearch mix 1 s and 60 s trials: they say how many traffic seconds
    are left, so the live line never shows ~0:00:00 while a search is running."""
    import io

    from rich.console import Console

    from nsb.progress import Progress
    from nsb.traffic_profiles.mlrsearch import MlrSearchProfile

    cls = FastNdrProfile if cls_name == "fastndr" else MlrSearchProfile
    stream = io.StringIO()
    progress = Progress(Console(file=stream, width=300))
    prof = make_profile(cls, packet_sizes=[64, 128], interface_speed_gbps=10)
    prof.execute(Measurer(SimulatedDut("M0", 0.4 * LINE, 0), "t1", "s", progress.handle))
    lines = stream.getvalue().splitlines()
    assert len(lines) > 10
    assert not [line for line in lines if "left ~0:00:00" in line or "left ?" in line]
    hours, minutes, seconds = lines[0].rsplit("left ~", 1)[1].split(":")
    left_s = 3600 * int(hours) + 60 * int(minutes) + int(seconds)
    assert prof.typical_search_s() < left_s <= 2 * prof.typical_search_s()  # both frames
