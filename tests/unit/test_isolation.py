"""The isolation profile against simulated chains whose coupling is known: chains that
share one core (a limit on what they forward together) lose when one of them is
flooded, chains that share nothing do not; the report's figures are the trials' own."""

from __future__ import annotations

import pytest

from nsb import chains, units
from nsb.events import ResultReady, TrialDone
from nsb.traffic_profiles.isolation import IsolationProfile
from nsb.traffic_profiles.measurer import Measurer
from tests.conftest import ROOT
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedChainsGenerator

LINE = units.line_rate_pps(64, 1, ports=1)  # one port's line rate at 1 Gbit/s


def run(shared_pps=None, **options):
    gen = SimulatedChainsGenerator([0.5 * LINE] * 3, shared_pps=shared_pps)
    profile = make_profile(IsolationProfile, packet_sizes=[64], duration=1,
                           interface_speed_gbps=1, **{"rate_pct": 2, "load_pct": 30,
                                                      **options})
    events = []
    profile.execute(Measurer(gen, "t", "s", events.append,
                             service_chains=chains.split(gen.port_pairs(), 3)))
    trials = [e for e in events if isinstance(e, TrialDone)]
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    return gen, trials, result


def test_a_flooded_chain_on_a_shared_core_hurts_the_others_and_says_how_much():
    shared = 0.1 * LINE  # the three chains forward 10 % of a port's line rate together
    gen, trials, result = run(shared_pps=shared, disturbed_chain=1)
    baseline, disturbed = gen.trials
    each = 0.02 * LINE
    assert baseline.pair_rates_pps == pytest.approx((each, each, each))
    assert disturbed.pair_rates_pps == pytest.approx((each, 0.3 * LINE, each))
    assert [t.verdict for t in trials] == ["pass", "fail"]
    report = result.extra["isolation"]
    assert report["disturbed_chain"] == 1 and report["isolated"] is False
    assert report["baseline_clean"] is True
    assert report["disturbed_sent_pps"] == pytest.approx(0.3 * LINE, rel=1e-3)
    squeeze = shared / (0.34 * LINE)  # what each chain keeps of what it is sent
    assert [r["chain"] for r in report["chains"]] == [0, 2]
    for row, share in zip(report["chains"], [trials[1].result.chains[0],
                                            trials[1].result.chains[2]], strict=True):
        assert row["baseline"]["loss_pct"] == 0
        assert row["disturbed"]["loss_pct"] == pytest.approx(share.loss_pct)
        assert row["disturbed"]["loss_pct"] == pytest.approx(100 * (1 - squeeze), abs=0.01)
        assert row["change"]["rx_pps"] == pytest.approx(
            row["disturbed"]["rx_pps"] - row["baseline"]["rx_pps"])
        assert row["change"]["rx_pps"] < 0 and row["change"]["latency_avg_us"] > 0
    measured = [c for c in trials[1].result.chains if c.chain != 1]
    assert result.throughput_pps == pytest.approx(sum(c.rx_packets for c in measured))
    assert result.limited_by == "dut"


def test_chains_that_share_nothing_are_isolated():
    _, trials, result = run(disturbed_chain=0)
    report = result.extra["isolation"]
    assert report["isolated"] is True and [t.verdict for t in trials] == ["pass", "pass"]
    assert all(r["change"]["loss_pct"] == 0 and r["change"]["rx_pps"] == 0
               for r in report["chains"])
    assert result.throughput_pps == pytest.approx(2 * 0.02 * LINE, rel=1e-3)
    assert result.loss_pct == 0


class PairTimedChains(SimulatedChainsGenerator):
    """Times each pair apart, as a trafgen per pair does: chain 0's sender, when it is
    sent more than ``keeps_pps``, takes that much longer than the trial's second; the
    trial lasts as long as its slowest sender."""

    def __init__(self, keeps_pps: float):
        super().__init__([0.5 * LINE] * 3)
        self.keeps_pps = keeps_pps

    def run_trial(self, trial):
        from dataclasses import replace

        result = super().run_trial(trial)
        ports = {name: dict(counts) for name, counts in result.ports.items()}
        slowest = trial.duration_s
        for index, (tx, _) in enumerate(self.port_pairs()):
            sent = ports[tx]["tx_packets"]
            seconds = max(trial.duration_s, sent / self.keeps_pps) if index == 0 \
                else trial.duration_s
            ports[tx]["tx_seconds"] = seconds
            slowest = max(slowest, seconds)
        return replace(result, ports=ports, elapsed_s=slowest)


def test_each_chains_rate_is_over_its_own_seconds_where_the_generator_times_pairs_apart():
    gen = PairTimedChains(keeps_pps=0.1 * LINE)  # chain 0 asked 0.3 LINE: three seconds
    profile = make_profile(IsolationProfile, packet_sizes=[64], duration=1, rate_pct=2,
                           load_pct=30, interface_speed_gbps=1, disturbed_chain=0)
    events = []
    profile.execute(Measurer(gen, "t", "s", events.append,
                             service_chains=chains.split(gen.port_pairs(), 3)))
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    disturbed = [e for e in events if isinstance(e, TrialDone)][1].result
    assert disturbed.elapsed_s == pytest.approx(3.0, rel=1e-3)
    report = result.extra["isolation"]
    # chain 0 was sent its 0.3 LINE frames over its own three seconds
    assert report["disturbed_sent_pps"] == pytest.approx(0.1 * LINE, rel=1e-3)
    for row in report["chains"]:  # the others got all they were sent in their one second
        assert row["disturbed"]["rx_pps"] == pytest.approx(0.02 * LINE, rel=1e-3)
        assert row["change"]["rx_pps"] == pytest.approx(0, abs=1)
    assert result.throughput_pps == pytest.approx(2 * 0.02 * LINE, rel=1e-3)
    shares = {c["chain"]: c["tx_rate_pps"] for c in
              [c.record(disturbed) for c in disturbed.chains]}
    assert shares[1] == pytest.approx(0.02 * LINE, rel=1e-3)


def test_a_disturbed_chain_losing_alone_does_not_fail_the_others():
    """Chain 0 flooded beyond its own capacity loses frames; the others do not: the
    disturbed trial passes (only the measured chains are judged)."""
    gen = SimulatedChainsGenerator([0.1 * LINE, 0.5 * LINE, 0.5 * LINE])
    profile = make_profile(IsolationProfile, packet_sizes=[64], duration=1, rate_pct=2,
                           load_pct=30, interface_speed_gbps=1)
    events = []
    profile.execute(Measurer(gen, "t", "s", events.append,
                             service_chains=chains.split(gen.port_pairs(), 3)))
    trials = [e for e in events if isinstance(e, TrialDone)]
    assert trials[1].result.chains[0].loss_pct > 50
    assert trials[1].verdict == "pass"
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    assert result.extra["isolation"]["isolated"] is True


ISOLATION_TASK = """\
schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {role: TrafficGen}
scenarios:
  - name: s
    chains: %s
    chain:
      nfs: [{name: pmd, type: testpmd}]
    traffic_generator: {name: tg0, type: trex, node: tg}
    traffic_profile: {type: isolation, packet_sizes: [64], rate_pct: 1, load_pct: 5,
                      disturbed_chain: %s}
"""


@pytest.mark.parametrize("count, disturbed, expected", [
    (1, 0, "scenarios[0].traffic_profile.type: the isolation profile needs chains: N "
     "(2 or more)"),
    (2, 2, "scenarios[0].traffic_profile.disturbed_chain: disturbed_chain 2: the scenario "
     "has chains 0 to 1"),
])
def test_an_isolation_without_chains_to_disturb_is_one_line(nsb_main, tmp_path, count,
                                                            disturbed, expected):
    task = tmp_path / "iso.yaml"
    task.write_text(ISOLATION_TASK % (count, disturbed))
    code, _, err = nsb_main("task", "start", str(task), "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert expected in line, line


def test_the_summary_says_it_in_the_words_the_chains_page_shows():
    from nsb.report.table import isolation_lines

    readme = (ROOT / "docs" / "how-to" / "service-chains.md").read_text()
    block = readme.split("<!-- example: checked-by tests/unit/test_isolation.py -->\n```\n",
                         1)[1].split("```", 1)[0]
    record = {"frame_size": 64, "isolation": {
        "disturbed_chain": 0, "disturbed_sent_pps": 297620.0, "disturbed_loss_pct": 0.0,
        "load_pct": 2, "neighbour": "stress-ng --cpu 1", "isolated": True,
        "baseline_clean": True,
        "chains": [{"chain": 1, "baseline": {"loss_pct": 0.0, "rx_pps": 7441.0,
                                             "latency_avg_us": 1497.8},
                    "disturbed": {"loss_pct": 0.0, "rx_pps": 7441.0,
                                  "latency_avg_us": 1217.0}}]}}
    assert isolation_lines(record) == block.strip("\n").splitlines()


def test_the_html_report_has_the_isolation_table():
    from nsb.report import html_tables

    _, _, result = run(shared_pps=0.1 * LINE, disturbed_chain=1)
    record = {"frame_size": 64, "isolation": result.extra["isolation"]}
    made = html_tables.isolation_table([record], "s-isolation-table")
    assert made.count("<tr>") == 3 and made.count("chain 1 disturbed: NOT isolated") == 2
    assert html_tables.isolation_table([{"frame_size": 64}], "x") == ""
