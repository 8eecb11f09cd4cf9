"""The stateful profiles against a simulated stateful DUT of known capacity: a search
over connections per second finds the DUT's rate within its precision, one over
concurrent sessions its table's size; connections never attempted are the generator's
shortfall, never the DUT's failure; the DUT's own count is the witness."""

from __future__ import annotations

from dataclasses import replace

import pytest

from nsb.events import LimitedBy, ResultReady, TrialDone, Verdict
from nsb.sessions import SessionCounts, SessionLoad
from nsb.traffic_profiles.measurer import Measurer, TrialHooks
from nsb.traffic_profiles.stateful import answer
from nsb.traffic_profiles.stateful.concurrent import ConcurrentSessionsProfile
from nsb.traffic_profiles.stateful.cps import CpsProfile
from nsb.traffic_profiles.stateful.judge import SessionJudge
from nsb.traffic_profiles.stateful.throughput import StatefulThroughputProfile, StreamJudge
from nsb.trial import Trial, TrialResult
from tests.doubles.profiles import make_profile
from tests.doubles.stateful_dut import StatefulDutDouble as StatefulDut


class Witness(TrialHooks):
    def __init__(self, dut: StatefulDut):
        self.dut = dut
        self.resets = 0

    def sessions_started(self, index, open_only=False, reset=True):
        self.resets += reset

    def sessions_counted(self, index):
        return self.dut.held


def run(profile, dut):
    events, hooks = [], Witness(dut)
    profile.execute(Measurer(dut, "t1", "s", events.append, hooks, profile="stateful"))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)], hooks)


@pytest.mark.parametrize("capacity", [1234, 5000, 31000])
def test_cps_finds_the_dut_s_connection_rate_within_its_precision(capacity):
    profile = make_profile(CpsProfile, lower_cps=100, upper_cps=50000, precision_pct=2,
                           duration=1)
    trials, (result,), hooks = run(profile, StatefulDut(dut_cps=capacity))
    stateful = result.extra["stateful"]
    assert result.limited_by == LimitedBy.DUT
    assert capacity * (1 - 0.02) - 1 <= stateful["cps"] <= capacity
    assert hooks.resets == len(trials)  # the DUT reset before every trial
    assert all(t.result.sessions.dut_sessions == t.result.sessions.established for t in trials)


def test_connections_the_generator_never_attempted_are_its_limit_not_the_dut_s():
    profile = make_profile(CpsProfile, lower_cps=100, upper_cps=50000, precision_pct=2,
                           duration=1)
    trials, (result,), _ = run(profile, StatefulDut(dut_cps=40000, generator_cps=9000))
    assert result.limited_by == LimitedBy.GENERATOR
    assert 9000 * 0.98 - 1 <= result.extra["stateful"]["cps"] <= 9000
    short = [t for t in trials if t.result.sessions.never_attempted]
    assert short and all(t.verdict == Verdict.GENERATOR_LIMITED for t in short)
    assert "never attempted" in short[0].reason


def test_an_answer_within_5_pct_of_the_generator_s_ceiling_is_the_generator_s():
    profile = make_profile(CpsProfile, lower_cps=100, upper_cps=50000, precision_pct=2,
                           duration=1, generator_ceiling_cps=10000)
    _, (result,), _ = run(profile, StatefulDut(dut_cps=9800))
    assert result.limited_by == LimitedBy.GENERATOR
    assert "ceiling" in result.limited_reason
    assert result.extra["stateful"]["generator_ceiling_cps"] == 10000
    profile = make_profile(CpsProfile, lower_cps=100, upper_cps=50000, precision_pct=2,
                           duration=1, generator_ceiling_cps=10000)
    _, (result,), _ = run(profile, StatefulDut(dut_cps=8000))
    assert result.limited_by == LimitedBy.DUT


@pytest.mark.parametrize("table", [777, 3000])
def test_concurrent_sessions_finds_the_dut_s_table_and_its_own_count_backs_it(table):
    profile = make_profile(ConcurrentSessionsProfile, lower_sessions=100,
                           upper_sessions=10000, precision_pct=2, open_cps=2000)
    trials, (result,), _ = run(profile, StatefulDut(dut_sessions=table))
    stateful = result.extra["stateful"]
    assert result.limited_by == LimitedBy.DUT
    assert table * 0.98 - 1 <= stateful["sessions"] <= table
    assert stateful["dut_sessions"] == stateful["sessions"]
    assert all(t.result.trial.sessions.hold_s >= t.result.trial.duration_s for t in trials)


def _counts(**changes) -> TrialResult:
    counts = SessionCounts(intended=1000, attempted=1000, established=1000)
    load = SessionLoad("tcp_cps", 1000.0)
    return TrialResult(trial=Trial(64, 0.0, 1.0, sessions=load), tx_packets=1, rx_packets=1,
                       elapsed_s=1.0, sessions=replace(counts, **changes))


def test_the_session_judge():
    judge = SessionJudge(0.0)
    assert judge(_counts())[0] == Verdict.PASS
    assert judge(_counts(established=990))[0] == Verdict.FAIL
    verdict, why = judge(_counts(attempted=990, established=990))
    assert verdict == Verdict.GENERATOR_LIMITED and "10 never attempted" in why
    assert SessionJudge(1.0)(_counts(established=995))[0] == Verdict.PASS
    retried = _counts(retransmitted=3)
    assert judge(retried)[0] == Verdict.PASS and "3 SYN retransmissions" in judge(retried)[1]
    assert SessionJudge(0.0, strict=True)(retried)[0] == Verdict.FAIL
    held = SessionJudge(0.0, dut_keeps_pct=100.0)
    assert held(_counts(dut_sessions=1000))[0] == Verdict.PASS
    verdict, why = held(_counts(dut_sessions=900))
    assert verdict == Verdict.FAIL and "held at most 900" in why


def test_a_stateful_answer_records_what_it_measured():
    made = answer.record("cps", None, None)
    assert made == {"kind": "cps"}


def test_the_stateful_page_shows_the_columns_nsb_prints():
    from nsb.report.stateful_table import HEADERS
    from tests.doc_examples import ROOT, parse

    (shown,) = [e for e in parse(ROOT / "docs" / "how-to" / "stateful.md")
                if e.kind == "output" and "Answer" in e.text]
    header = next(line for line in shown.text.splitlines() if "Answer" in line)
    assert [cell.strip() for cell in header.strip("┃ \n").split("┃")] == HEADERS


@pytest.mark.parametrize("search", ["binsearch", "mlrsearch"])
@pytest.mark.parametrize("capacity", [7300, 42000])
def test_stateful_throughput_finds_the_dut_s_data_rate_with_its_sessions_held(capacity, search):
    profile = make_profile(StatefulThroughputProfile, sessions=500, lower_pps=1000,
                           upper_pps=100000, precision_pct=2, duration=1, frame_size=128,
                           search=search)
    trials, (result,), hooks = run(profile, StatefulDut(dut_data_pps=capacity))
    stateful = result.extra["stateful"]
    assert result.limited_by == LimitedBy.DUT
    assert result.frame_size == 128
    assert capacity * (1 - 0.02) - 1 <= result.throughput_pps <= capacity
    assert stateful["kind"] == "stateful_throughput" and stateful["sessions"] == 500
    assert stateful["data_pps"] == result.throughput_pps and result.loss_pct == 0.0
    for trial in trials:  # every trial opens the sessions first, then sends the data
        load = trial.result.trial.sessions
        assert load.program == "udp_stream" and load.request_bytes == 128 - 46
        assert round(load.cps * trial.result.trial.duration_s) == 500
        assert load.hold_s == pytest.approx(trial.result.trial.duration_s)
        assert load.data_pps_per_session * 500 == pytest.approx(trial.result.trial.rate_pps)
    assert hooks.resets == len(trials)


def test_stateful_throughput_fails_a_dut_that_drops_sessions_before_their_data():
    profile = make_profile(StatefulThroughputProfile, sessions=500, lower_pps=1000,
                           upper_pps=100000, duration=1)
    trials, (result,), _ = run(profile, StatefulDut(dut_sessions=400))
    assert result.limited_by == LimitedBy.DUT and result.throughput_pps == 0.0
    assert all(t.verdict == Verdict.FAIL for t in trials)  # over its table: not let in


def test_stateful_throughput_a_generator_short_of_data_is_the_generator_s_limit():
    profile = make_profile(StatefulThroughputProfile, sessions=100, lower_pps=1000,
                           upper_pps=100000, duration=1)
    trials, (result,), _ = run(profile, StatefulDut(generator_data_pps=20000))
    assert result.limited_by == LimitedBy.GENERATOR
    assert not any(t.verdict == Verdict.FAIL for t in trials)
    assert result.throughput_pps <= 20000 * 1.001  # what it sent, to its rounding


def test_the_stream_judge_counts_data_after_sessions():
    load = SessionLoad("udp_stream", 1000.0, hold_s=1.0, data_pps_per_session=10, data_s=1)

    def result(**changes):
        counts = SessionCounts(intended=1000, attempted=1000, established=1000,
                               dut_sessions=1000,
                               data={"intended": 10000, "sent": 10000, "received": 10000})
        return TrialResult(trial=Trial(64, 10000.0, 1.0, sessions=load), tx_packets=1,
                           rx_packets=1, elapsed_s=1.0, sessions=replace(counts, **changes))

    judge = StreamJudge(0.0, 100.0)
    assert judge(result())[0] == Verdict.PASS
    verdict, why = judge(result(data={"intended": 10000, "sent": 10000, "received": 9990}))
    assert verdict == Verdict.FAIL and "10 of 10,000 datagrams" in why
    assert StreamJudge(0.5)(result(data={"intended": 10000, "sent": 10000,
                                         "received": 9990}))[0] == Verdict.PASS
    assert judge(result(established=999))[0] == Verdict.FAIL
    assert judge(result(dut_sessions=10))[0] == Verdict.FAIL
    assert judge(result(dut_sessions=None))[0] == Verdict.PASS  # no DUT keeps state


def test_the_stateful_page_shows_the_line_an_ixload_task_ends_in(nsb_main):
    from tests.doc_examples import ROOT, parse

    (shown,) = [e for e in parse(ROOT / "docs" / "how-to" / "stateful.md")
                if e.kind == "output" and "IxLoad" in e.text]
    task = (ROOT / "tests/data/yardstick-samples/samples/vnf_samples/nsut/vfw/"
            "tc_baremetal_http_ixload_1b_Requests-65000_Concurrency.yaml")
    code, _, err = nsb_main("task", "validate", str(task))
    assert code == 2
    said = err.strip().replace(str(task.parent) + "/", "")
    assert said.replace(str(task.parent.relative_to(ROOT)) + "/", "") == shown.text.strip()


def test_a_cps_soak_runs_its_intervals_resetting_the_dut_before_the_first_only():
    from nsb.traffic_profiles.stateful.soak import CpsSoakProfile

    profile = make_profile(CpsSoakProfile, cps=1000, duration=5, interval_s=1)
    trials, (result,), hooks = run(profile, StatefulDut(dut_cps=5000))
    assert len(trials) == 5 and hooks.resets == 1
    assert [t.result.trial.sessions.fresh for t in trials] == [True] + [False] * 4
    assert result.limited_by == LimitedBy.NONE
    assert result.extra["soak"] == {"intervals": 5, "cps": 1000, "worst_loss_pct": 0.0,
                                    "failed_interval": None}
    assert result.extra["stateful"]["cps"] == 1000


def test_a_cps_soak_over_the_dut_s_rate_fails_and_says_which_interval():
    from nsb.traffic_profiles.stateful.soak import CpsSoakProfile

    profile = make_profile(CpsSoakProfile, cps=1000, duration=3, interval_s=1)
    trials, (result,), _ = run(profile, StatefulDut(dut_cps=900))
    assert len(trials) == 3 and result.limited_by == LimitedBy.DUT
    assert result.throughput_pps == 0.0
    assert result.limited_reason.startswith("interval 1 of 3 fail: ")
    assert result.extra["soak"]["failed_interval"] == 1
    assert result.extra["soak"]["worst_loss_pct"] == pytest.approx(10.0)
