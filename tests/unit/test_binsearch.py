"""The binsearch profile against a simulated DUT of known capacity."""

import pytest

from nsb import units
from nsb.events import LimitedBy, ResultReady, TrialDone, Verdict
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from nsb.traffic_profiles.binsearch import BinSearchProfile
from nsb.traffic_profiles.measurer import Measurer
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator

DEFAULTS = {"packet_sizes": [64], "duration": 1, "tolerated_loss": 0.0, "test_precision": 0.1,
            "lower_bound": 0.0, "upper_bound": 100.0, "interface_speed_gbps": 1}


def profile(**overrides):
    return make_profile(BinSearchProfile, **{**DEFAULTS, **overrides})


def run(tg, prof, should_stop=lambda: False):
    events = []
    prof.execute(Measurer(tg, "t1", "s", events.append, should_stop=should_stop))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


@pytest.mark.parametrize("frame", [64, 512, 1518])
@pytest.mark.parametrize("capacity_pct", [3.3, 41.0, 87.7])
def test_finds_capacity_within_precision(frame, capacity_pct):
    line = units.line_rate_pps(frame, 1, ports=2)
    capacity = capacity_pct / 100 * line
    prof = profile(packet_sizes=[frame])
    trials, results = run(SimulatedDutGenerator(capacity), prof)
    (result,) = results
    assert result.limited_by == "dut"
    assert result.throughput_pps <= capacity
    assert result.throughput_pps >= capacity - 0.1 / 100 * line
    assert result.line_rate_pct == pytest.approx(100 * result.throughput_pps / line)
    assert result.loss_pct == 0
    assert len(trials) == prof.trials_per_frame() == result.trials
    assert trials[0].rate_pct == 100.0  # NSB starts at the upper bound
    assert any(t.verdict == "fail" and t.rate_pct > result.line_rate_pct for t in trials)


def test_upper_bound_passing_ends_the_search():
    trials, (result,) = run(SimulatedDutGenerator(1e12), profile())
    assert len(trials) == 1
    assert result.limited_by == "upper_bound"
    assert result.line_rate_pct == pytest.approx(100.0)


def test_tolerated_loss_is_in_percent():
    line = units.line_rate_pps(64, 1, ports=2)
    capacity = 0.30 * line
    _, (strict,) = run(SimulatedDutGenerator(capacity), profile(tolerated_loss=0.0))
    _, (loose,) = run(SimulatedDutGenerator(capacity), profile(tolerated_loss=10.0))
    assert strict.throughput_pps <= capacity
    # 10% loss tolerated: passes up to capacity / 0.9
    assert capacity < loose.throughput_pps <= capacity / 0.9
    assert 0 < loose.loss_pct <= 10.0


def test_generator_limit_is_not_reported_as_dut_limit():
    line = units.line_rate_pps(64, 1, ports=2)
    tg = SimulatedDutGenerator(capacity_pps=0.9 * line, max_tx_pps=0.2 * line)
    trials, (result,) = run(tg, profile())
    assert result.limited_by == "generator"
    assert result.throughput_pps <= 0.2 * line
    assert any(t.verdict == "generator_limited" for t in trials)
    assert all(t.verdict != "fail" for t in trials)
    limited = next(t for t in trials if t.verdict == "generator_limited")
    assert "generator could not send" in limited.reason


def test_every_trial_records_interval_and_reason():
    trials, _ = run(SimulatedDutGenerator(1000.0), profile(test_precision=5))
    for before, after in zip(trials, trials[1:], strict=False):
        assert after.upper_pct - after.lower_pct <= before.upper_pct - before.lower_pct
    assert all(t.reason for t in trials)


def test_stop_request_ends_without_a_result():
    tg = SimulatedDutGenerator(1000.0)
    trials, results = run(tg, profile(), lambda: len(tg.trials) >= 3)
    assert len(trials) == 3
    assert results == []


def test_several_frame_sizes_each_get_a_result():
    trials, results = run(SimulatedDutGenerator(50_000.0),
                          profile(packet_sizes=[64, 128, 1518], test_precision=1))
    assert [r.frame_size for r in results] == [64, 128, 1518]


def test_bounds_must_be_ordered():
    from nsb.errors import TaskError

    with pytest.raises(TaskError, match="lower_bound 50 must be below upper_bound 40"):
        profile(lower_bound=50, upper_bound=40)


def test_nsb_name_is_the_same_plugin():
    from nsb import plugins

    spec = PluginSpec("ProxBinSearchProfile", {}, Where(LocatedDocument({}, "t"), ()))
    assert plugins.load_class("nsb.traffic_profiles", spec) is BinSearchProfile


class FlakyDut(SimulatedDutGenerator):
    """Double: loses frames on chosen trial numbers (1-based), whatever the rate."""

    def __init__(self, capacity_pps, bad_trials):
        super().__init__(capacity_pps)
        self.bad_trials = set(bad_trials)

    def run_trial(self, trial):
        result = super().run_trial(trial)
        if len(self.trials) in self.bad_trials:
            from dataclasses import replace

            return replace(result, rx_packets=result.rx_packets - 10)
        return result


def test_confirmation_repeats_a_pass_and_a_failed_repeat_fails_the_rate():
    line = units.line_rate_pps(64, 1, ports=2)
    # 100% and 50% fail, 25% passes, and its confirmation (trial 4) loses frames
    tg = FlakyDut(0.30 * line, bad_trials={4})
    trials, (result,) = run(tg, profile(confirmation=1, test_precision=5))
    failed_confirmation = [t for t in trials if t.reason.startswith("confirmation 1/1")
                           and t.verdict == "fail"]
    assert [t.rate_pct for t in failed_confirmation] == [25.0]
    assert result.line_rate_pct < 25.0
    # the reported rate passed twice: the trial and its confirmation
    final = [t for t in trials if t.verdict == "pass"
             and t.result.tx_rate_pps == pytest.approx(result.throughput_pps)]
    assert len(final) == 2
    assert result.throughput_pps <= 0.30 * line


def test_verification_steps_down_until_full_trials_pass():
    line = units.line_rate_pps(64, 1, ports=2)
    capacity = 0.30 * line
    plain = SimulatedDutGenerator(capacity)
    _, (first,) = run(plain, profile(test_precision=1))
    searched = len(plain.trials)
    # the first verification trial fails (transient loss), the next step down passes
    tg = FlakyDut(capacity, bad_trials={searched + 1})
    trials, (result,) = run(tg, profile(test_precision=1, verification_trials=2))
    verifications = [t for t in trials if t.reason.startswith("verification")]
    assert verifications[0].verdict == "fail"
    assert result.extra["verification_steps"] == 1
    assert result.extra["verified_rate_pct"] == pytest.approx(first.line_rate_pct - 1, abs=0.01)
    assert [t.verdict for t in verifications[1:]] == ["pass", "pass"]


def test_latency_at_fractions_of_ndr():
    line = units.line_rate_pps(64, 1, ports=2)
    tg = SimulatedDutGenerator(0.5 * line)
    trials, (result,) = run(tg, profile(test_precision=1, latency_at=[10, 50, 90]))
    sweep = result.extra["latency_at_ndr_pct"]
    assert list(sweep) == ["10", "50", "90"]
    for pct, point in sweep.items():
        assert point["rate_pps"] == pytest.approx(result.throughput_pps * float(pct) / 100)
        assert point["loss_pct"] == 0
    # the simulated latency rises with load
    assert sweep["10"]["latency"]["avg_us"] < sweep["90"]["latency"]["avg_us"]
    assert [t.verdict for t in trials[-3:]] == ["latency"] * 3


def test_verdicts_and_limits_are_the_typed_values_outputs_rely_on():
    line = units.line_rate_pps(64, 1, ports=2)
    cases = [(SimulatedDutGenerator(0.4 * line), LimitedBy.DUT),
             (SimulatedDutGenerator(1e12), LimitedBy.UPPER_BOUND),
             (SimulatedDutGenerator(0.9 * line, max_tx_pps=0.2 * line), LimitedBy.GENERATOR)]
    for tg, limited_by in cases:
        trials, (result,) = run(tg, profile())
        assert type(result.limited_by) is LimitedBy and result.limited_by == limited_by
        assert all(type(t.verdict) is Verdict for t in trials)
        assert {t.verdict for t in trials} <= set(Verdict)


class LossyWithLatency(SimulatedDutGenerator):
    """A DUT that loses frames in trials with latency streams above ``lossy_above`` pps
    (its latency frames take another path) while throughput-only trials at the same
    rate pass: the search's answer is only as good as its confirmation."""

    def __init__(self, capacity_pps, lossy_above: float, times: int = 99):
        super().__init__(capacity_pps)
        self.lossy_above, self.times = lossy_above, times

    def run_trial(self, trial):
        result = super().run_trial(trial)
        if trial.latency and trial.rate_pps > self.lossy_above and self.times > 0:
            from dataclasses import replace

            self.times -= 1
            return replace(result, rx_packets=result.rx_packets - 44)
        return result


def test_a_lossy_confirmation_sends_the_search_below_it():
    line = units.line_rate_pps(64, 1, ports=2)
    tg = LossyWithLatency(0.50 * line, lossy_above=0.40 * line, times=1)  # a transient
    trials, (result,) = run(tg, profile(test_precision=1, search_latency=False))
    confirmations = [t for t in trials if t.reason.startswith("confirmation with latency")]
    assert [c.verdict for c in confirmations] == ["fail", "pass"]
    # the answer is the confirmed rate: below where the confirmation lost, loss-free,
    # with the confirmation's latency
    assert result.throughput_pps < confirmations[0].result.tx_rate_pps
    assert result.throughput_pps == pytest.approx(confirmations[-1].result.tx_rate_pps)
    assert result.loss_pct == 0 and result.latency is not None
    assert result.extra["failed_confirmations"] == 1 and result.warnings == ()
    assert result.limited_by == "dut"  # the lossy confirmation above it, whatever came after
    # every confirmation runs at the rate its search passed at, never a lower one
    for confirmation in confirmations:
        asked = confirmation.result.trial.rate_pps
        assert any(t.verdict == "pass" and t.result.trial.rate_pps == asked
                   and not t.reason.startswith("confirmation") for t in trials)


def test_an_answer_that_never_confirms_carries_a_warning_and_its_loss():
    line = units.line_rate_pps(64, 1, ports=2)
    tg = LossyWithLatency(0.50 * line, lossy_above=0.0)
    trials, (result,) = run(tg, profile(test_precision=1, search_latency=False,
                                        max_confirmations=1))
    assert result.extra["failed_confirmations"] == 2
    (warning,) = result.warnings
    assert "the answer is not confirmed" in warning and "lost" in warning
    confirmations = [t for t in trials if t.reason.startswith("confirmation")]
    assert [t.verdict for t in confirmations] == ["fail"] * 2
    # what was measured at the rate reported: its loss, not the search's loss-free trial
    assert result.loss_pct == confirmations[-1].result.loss_pct > 0
    assert result.throughput_pps == confirmations[-1].result.tx_rate_pps


class LagsWithLatency(SimulatedDutGenerator):
    """A generator that sends trials with latency streams at ``lagging`` of the rate
    asked (its latency streams cost it its pace), ``times`` times; throughput-only
    trials keep their schedule. The DUT loses nothing below its capacity."""

    def __init__(self, capacity_pps, lagging: float, times: int = 99):
        super().__init__(capacity_pps)
        self.lagging, self.times = lagging, times

    def run_trial(self, trial):
        from dataclasses import replace

        if not (trial.latency and self.times > 0):
            return super().run_trial(trial)
        self.times -= 1
        result = super().run_trial(replace(trial, rate_pps=trial.rate_pps * self.lagging))
        return replace(result, trial=trial, generator_limited=True,
                       intended_packets=round(trial.rate_pps * trial.duration_s),
                       generator_note="the generator lagged")


def test_a_confirmation_sent_short_is_tried_again_and_confirms_when_it_reaches_the_rate():
    line = units.line_rate_pps(64, 1, ports=2)
    tg = LagsWithLatency(0.50 * line, lagging=0.9, times=2)
    trials, (result,) = run(tg, profile(test_precision=1, search_latency=False))
    confirmations = [t for t in trials if t.reason.startswith("confirmation with latency")]
    assert [c.verdict for c in confirmations] == ["generator_limited"] * 2 + ["pass"]
    assert "again (2 of 4" in confirmations[1].reason
    assert result.warnings == ()
    assert result.throughput_pps == pytest.approx(confirmations[-1].result.tx_rate_pps)
    assert result.extra["latency_measured_at_pps"] == pytest.approx(result.throughput_pps)


def test_a_confirmation_never_sent_at_the_answer_s_rate_leaves_its_latency_unconfirmed():
    """The answer (a throughput-only trial that passed) stands; the warning says the
    confirmation reached 90 % of its rate, where its latency was measured."""
    line = units.line_rate_pps(64, 1, ports=2)
    tg = LagsWithLatency(0.50 * line, lagging=0.9)
    trials, (result,) = run(tg, profile(test_precision=1, search_latency=False,
                                        max_confirmations=1))
    confirmations = [t for t in trials if t.reason.startswith("confirmation with latency")]
    assert [c.verdict for c in confirmations] == ["generator_limited"] * 2
    assert result.warnings == ()  # the rate stands as the search measured it
    (warning,) = result.extra["latency_warnings"]
    reached = confirmations[-1].result.tx_rate_pps
    assert reached == pytest.approx(0.9 * result.throughput_pps, rel=1e-3)
    assert "the latency at the answer is unconfirmed" in warning
    assert f"latency measured at {reached:,.0f} pps" in warning
    assert result.extra["latency_measured_at_pps"] == reached
    assert result.latency is not None and result.loss_pct == 0
    assert result.throughput_pps == pytest.approx(confirmations[-1].result.trial.rate_pps)


class LagsAboveAndLosesOnce(LossyWithLatency):
    """A generator that sends 92 % of any rate asked above ``steady_pps`` (short,
    generator-limited: the faster it is asked, the faster it sends, as TRex lagging on
    a busy core); the first trial with latency streams loses frames."""

    def __init__(self, capacity_pps, steady_pps):
        super().__init__(capacity_pps, lossy_above=0.0, times=1)
        self.steady_pps = steady_pps

    def run_trial(self, trial):
        from dataclasses import replace

        if trial.rate_pps <= self.steady_pps:
            return super().run_trial(trial)
        result = super().run_trial(replace(trial, rate_pps=trial.rate_pps * 0.92))
        return replace(result, trial=trial, generator_limited=True,
                       intended_packets=round(trial.rate_pps * trial.duration_s))


def test_a_lossy_confirmation_overrules_what_the_generator_sent_short_above_it():
    """The fastest loss-free trial was one the generator sent short (asked 100 %, sent
    92 %); its confirmation lost frames: the answer is then below the rate that
    confirmation was asked, never a short trial asked at or above it."""
    line = units.line_rate_pps(64, 1, ports=2)
    tg = LagsAboveAndLosesOnce(0.95 * line, steady_pps=0.2 * line)
    trials, (result,) = run(tg, profile(test_precision=1, search_latency=False))
    confirmations = [t for t in trials if t.reason.startswith("confirmation with latency")]
    assert confirmations[0].verdict == "fail"
    lossy_asked = confirmations[0].result.trial.rate_pps
    assert lossy_asked == pytest.approx(0.92 * line)  # the first answer: a short trial's pace
    backing = next(t for t in trials if t.trial_index == result.extra["evidence"]["trial_index"])
    assert backing.result.trial.rate_pps < lossy_asked
    assert result.throughput_pps < confirmations[0].result.tx_rate_pps


def test_latency_at_zero_is_no_load_and_a_lossy_latency_trial_is_a_warning():
    line = units.line_rate_pps(64, 1, ports=2)
    prof = profile(test_precision=1, latency_at=[0, 90, 99])
    # the search, the no-load trial, then the trial at 90 % loses frames
    tg = FlakyDut(0.50 * line, bad_trials={prof.trials_per_frame() + 2})
    trials, (result,) = run(tg, prof)
    no_load = [t for t in trials if "no load" in t.reason]
    (trial,) = no_load
    assert trial.result.trial.latency_only
    assert trial.result.trial.rate_pps == 9000 * 2  # CSIT's 9 kpps per direction
    assert result.extra["latency_at_ndr_pct"]["0"]["rate_pps"] == 18_000
    (warning,) = result.warnings
    assert "latency trial at 90% of the NDR" in warning


def test_a_negative_latency_point_is_one_located_line():
    from nsb.errors import TaskError

    with pytest.raises(TaskError) as raised:
        profile(latency_at=[-1, 50])
    assert "latency_at" in str(raised.value) and "\n" not in str(raised.value)


def test_below_a_failed_confirmation_the_last_pass_stands_when_nothing_passes_again():
    """The confirmation of the answer loses frames, the one rate tried below it (between
    the last two passes, then narrower than test_precision) loses too: the answer is
    the pass below them, confirmed, not 'no rate passed'."""
    line = units.line_rate_pps(64, 1, ports=2)
    clean = run(FlakyDut(0.39 * line, bad_trials=[]), profile(test_precision=1,
                                                             search_latency=False))[0]
    first_answer = clean[-1].result.trial.rate_pps
    tg = FlakyDut(0.39 * line, bad_trials=[len(clean), len(clean) + 1])
    trials, (result,) = run(tg, profile(test_precision=1, search_latency=False))
    failed, below, confirmed = trials[len(clean) - 1:]
    assert failed.reason.startswith("confirmation with latency") and failed.verdict == "fail"
    assert below.verdict == "fail" and below.result.trial.rate_pps < first_answer
    assert confirmed.reason.startswith("confirmation with latency")
    assert confirmed.verdict == "pass"
    assert result.limited_by == "dut" and result.throughput_pps > 0
    assert result.throughput_pps == pytest.approx(confirmed.result.tx_rate_pps)
    passes = [t.result.trial.rate_pps for t in trials if t.verdict == "pass"
              and not t.reason.startswith("confirmation")]
    assert confirmed.result.trial.rate_pps == max(r for r in passes if r < first_answer)


def test_a_latency_trial_sent_short_is_labelled_with_the_rate_it_reached():
    from nsb.traffic_profiles import latency_trials

    line = units.line_rate_pps(64, 1, ports=2)
    tg = LagsWithLatency(0.50 * line, lagging=0.8)
    events = []
    swept = latency_trials.sweep(Measurer(tg, "t1", "s", events.append), 64, 0.4 * line,
                                 [50], 1.0, None, 1)
    point = swept.points["50"]
    assert point["rate_pps"] == pytest.approx(0.2 * line)
    assert point["sent_pps"] == pytest.approx(0.16 * line, rel=1e-3)
    (warning,) = swept.warnings
    assert f"sent at only {point['sent_pps']:,.0f} pps" in warning


def test_a_passing_confirmation_sent_slower_than_the_answer_leaves_the_answer_s_rate():
    """TRex sent the confirmation's frames in time by its pacing, but over a longer span
    than the answer's own trial (4.86 Mpps by its clock against 5.16): the answer is the
    faster rate the search measured without loss, its latency labelled as measured at the
    slower one."""
    from nsb.events import Verdict
    from nsb.traffic_profiles.latency_trials import confirmed
    from nsb.traffic_profiles.measurer import Measurement
    from nsb.trial import LatencyStats, Trial, TrialResult

    asked = Trial(frame_size=64, rate_pps=5_580_357, duration_s=1.0)
    answer = TrialResult(trial=asked, tx_packets=5_564_950, rx_packets=5_564_950,
                         elapsed_s=1.0, generator_limited=True, measured_tx_pps=5_157_903)
    again = Trial(frame_size=64, rate_pps=5_157_903, duration_s=1.0, latency=True)
    slower = TrialResult(trial=again, tx_packets=5_157_906, rx_packets=5_157_906,
                         elapsed_s=1.0, measured_tx_pps=4_862_413,
                         latency=LatencyStats(100, 5, 6, 9))
    best, warnings = confirmed(answer, Measurement(8, slower, Verdict.PASS, "loss 0%"))
    assert best.tx_rate_pps == 5_157_903 and best.latency == slower.latency
    (warning,) = warnings
    assert "latency measured at 4,862,413 pps" in warning and "more slowly" in warning
    in_step = TrialResult(trial=again, tx_packets=5_157_906, rx_packets=5_157_906,
                          elapsed_s=1.0, measured_tx_pps=5_150_000)
    assert confirmed(answer, Measurement(8, in_step, Verdict.PASS, "")) == (in_step, ())
