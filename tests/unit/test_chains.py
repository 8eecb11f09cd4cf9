"""Service chains measured apart (nsb.chains): every chain within the tolerance, each
chain's share of the answer and the first to fail, against simulated chains whose
capacities are known; a count the generator's ports cannot carry is one line."""

from dataclasses import replace
from html import escape

import pytest

from nsb import chains, units
from nsb.events import ResultReady, TrialDone
from nsb.loss_budget import Budget, Loss, TrialPaths
from nsb.traffic_profiles.binsearch import BinSearchProfile
from nsb.traffic_profiles.measurer import Measurer, TrialHooks
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedChainsGenerator
from tests.task_edits import edited

PAIRS = [("xe0", "xe1"), ("xe2", "xe3"), ("xe4", "xe5"), ("xe6", "xe7")]


def test_chains_take_the_generators_pairs_in_order():
    two = chains.split(PAIRS, 2)
    assert [c.ports for c in two] == [("xe0", "xe1", "xe2", "xe3"), ("xe4", "xe5", "xe6", "xe7")]
    assert [c.ports for c in chains.split(PAIRS, 4)][3] == ("xe6", "xe7")
    assert chains.problem(PAIRS, 4) == "" and chains.problem(PAIRS, 2) == ""
    assert "4 port pair(s)" in chains.problem(PAIRS, 3)
    assert "(trex, trafgen, prox_tg with port_pairs)" in chains.problem([], 2)


def test_a_chains_counts_are_its_ports():
    ports = {"xe0": {"tx_packets": 100, "rx_packets": 90}, "xe1": {"tx_packets": 100,
             "rx_packets": 100}, "xe2": {"tx_packets": 50, "rx_packets": 0},
             "xe3": {"tx_packets": 0, "rx_packets": 40}}
    first, second = chains.counts(chains.split(PAIRS[:2], 2), ports)
    assert (first.tx_packets, first.rx_packets, first.loss_pct) == (200, 190, 5.0)
    assert (second.tx_packets, second.rx_packets, second.loss_pct) == (50, 40, 20.0)
    assert [c.chain for c in chains.over_tolerance((first, second), 1.0)] == [1, 0]


class LatencyWhenAsked(SimulatedChainsGenerator):
    """Double: latency (each chain's and the whole trial's) only in trials that ask for
    it, as TRex's latency streams, which cost it a tenth of what it sends."""

    def run_trial(self, trial):
        self.max_tx_pps = 0.9 * trial.rate_pps if trial.latency else float("inf")
        result = super().run_trial(trial)
        return result if trial.latency else replace(result, latency=None, pair_latency={})


def run(capacities, tolerated=0.0, send_caps=None, generator=SimulatedChainsGenerator,
        **options):
    gen = generator(capacities, send_caps)
    profile = make_profile(BinSearchProfile, packet_sizes=[64], duration=1,
                           tolerated_loss=tolerated, test_precision=0.1, lower_bound=0.0,
                           upper_bound=100.0, interface_speed_gbps=1, **options)
    events = []
    profile.execute(Measurer(gen, "t1", "s", events.append,
                             service_chains=chains.split(gen.port_pairs(), len(capacities))))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


def test_the_answer_is_where_the_weakest_chain_gives_way_and_it_is_named():
    """Three chains, the second with a third of the others' capacity: the total rate
    found is three times what the weak chain carries (the load is spread evenly), not
    what the aggregate could take, and the weak chain is the first to fail."""
    line = units.line_rate_pps(64, 1, ports=3)
    weak = 0.05 * line
    trials, (result,) = run([0.3 * line, weak, 0.3 * line])
    assert result.limited_by == "dut"
    assert 3 * weak * (1 - 0.01) <= result.throughput_pps <= 3 * weak
    shares = result.extra["chains"]
    assert [s["chain"] for s in shares] == [0, 1, 2]
    assert all(s["loss_pct"] == 0 for s in shares)
    assert sum(s["throughput_pps"] for s in shares) == pytest.approx(result.throughput_pps)
    first = result.extra["first_failing_chain"]
    assert first["chain"] == 1 and first["chains_failed"] == [1]
    # a trial whose aggregate loss was within the tolerance failed on the weak chain
    lenient = [t for t in trials if t.verdict == "fail" and t.result.loss_pct < 50
               and "chain 1 lost" in t.reason]
    assert lenient


def test_a_chain_the_generator_cannot_fill_caps_the_even_split_not_the_total():
    """The generator gets at most ``cap`` frames/s onto chain 1's link and counts only
    those (an egress rate limit on its port); the chains lose nothing below 40 % of
    line. A trial that sent chain 0 its share and chain 1 the cap is generator-limited,
    and its total is no answer (the chains were not loaded alike); the answer is the
    fastest trial whose chains got the same, about twice the cap, and the generator is
    what limited it."""
    line = units.line_rate_pps(64, 1, ports=2)
    cap = 0.05 * line
    trials, (result,) = run([0.4 * line, 0.4 * line], send_caps=[None, cap])
    assert result.limited_by == "generator"
    assert 2 * cap * 0.98 <= result.throughput_pps <= 2 * cap / 0.95
    assert result.loss_pct == 0
    uneven = [t for t in trials if t.result.loss_pct == 0 and
              t.result.chains[1].tx_packets < t.result.chains[0].tx_packets * 0.95]
    assert uneven and all(t.verdict == "generator_limited" for t in uneven)
    assert all("chain 1 was sent" in t.reason for t in uneven
               if t.result.tx_packets >= t.result.intended_packets * 0.95)
    chain_shares = [s["throughput_pps"] for s in result.extra["chains"]]
    assert min(chain_shares) >= max(chain_shares) * 0.95


def test_a_generator_limited_confirmation_gives_each_chain_its_latency():
    """The search without latency; its answer's confirmation (with latency streams) is
    generator-limited without loss, each of the times it is tried: the answer stands,
    with its latency unconfirmed, and takes the whole trial's latency and each chain's from the last
    confirmation, labelled with the rate that confirmation reached."""
    line = units.line_rate_pps(64, 1, ports=2)
    trials, (result,) = run([0.1 * line, 0.1 * line], generator=LatencyWhenAsked,
                            search_latency=False)
    confirmations = [t for t in trials if t.reason.startswith("confirmation with latency")]
    assert len(confirmations) == 1 + 3  # max_confirmations' default: tried three more times
    assert all(t.verdict == "generator_limited" for t in confirmations)
    assert all(t.result.latency is None for t in trials[:-len(confirmations)])
    assert result.latency is not None
    assert result.extra["latency_measured_at_pps"] == confirmations[-1].result.tx_rate_pps
    assert result.warnings == ()
    assert any("the latency at the answer is unconfirmed" in w
               for w in result.extra["latency_warnings"])
    assert [s["chain"] for s in result.extra["chains"]] == [0, 1]
    assert all(s["latency"]["samples"] == 100 for s in result.extra["chains"])


def test_one_short_chain_is_generator_limited_though_the_total_was_near_the_rate():
    """Four chains, one of them sent 10 % below its share: the total is 97.5 % of what
    was asked (within a generator's tolerance), yet the trial is generator-limited and
    says which chain was short."""
    line = units.line_rate_pps(64, 1, ports=4)
    trials, _ = run([0.5 * line] * 4, send_caps=[None, None, None, 0.09 * line])
    at = [t for t in trials if 0.1 * line * 0.999 <= t.result.trial.rate_pps / 4 <= 0.12 * line]
    assert at, [t.result.trial.rate_pps / line for t in trials]
    for t in at:
        if t.result.tx_packets >= t.result.intended_packets * 0.95:
            assert t.verdict == "generator_limited" and "chain 3 was sent" in t.reason


def test_a_tolerance_applies_to_each_chain():
    line = units.line_rate_pps(64, 1, ports=2)
    _, (result,) = run([0.4 * line, 0.1 * line], tolerated=5.0)
    # chain 1 may lose 5 %: it passes up to 0.1 * line / 0.95 per chain
    assert result.throughput_pps <= 2 * 0.1 * line / 0.95 * 1.0001
    assert all(s["loss_pct"] <= 5.0 for s in result.extra["chains"])
    assert result.extra["first_failing_chain"]["chain"] == 1


def test_one_chain_is_the_scenario_as_before():
    line = units.line_rate_pps(64, 1, ports=1)
    gen = SimulatedChainsGenerator([0.2 * line])
    profile = make_profile(BinSearchProfile, packet_sizes=[64], duration=1,
                           tolerated_loss=0.0, test_precision=0.1, lower_bound=0.0,
                           upper_bound=100.0, interface_speed_gbps=1)
    events = []
    profile.execute(Measurer(gen, "t1", "s", events.append))
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    assert "chains" not in result.extra and "first_failing_chain" not in result.extra


SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[2] / "samples" / "chains" / \
    "tc_testpmd_chains.yaml"


def _task(tmp_path, old: str, new: str) -> str:
    return edited(SAMPLE, tmp_path, {old: new}, "chains.yaml")


def test_the_dry_run_shows_every_chain_its_ports_and_vnfs(nsb_main):
    import yaml

    code, out, err = nsb_main("task", "start", str(SAMPLE), "--task-args", '{"chains": 3}',
                              "--dry-run")
    assert code == 0, err
    (scenario,) = yaml.safe_load(out)["scenarios"]
    assert {k: c["ports"] for k, c in scenario["chains"].items()} == \
        {0: ["xe0", "xe1"], 1: ["xe2", "xe3"], 2: ["xe4", "xe5"]}
    assert {k: list(c["vnfs"]) for k, c in scenario["chains"].items()} == \
        {0: ["testpmd0"], 1: ["testpmd1"], 2: ["testpmd2"]}
    assert set(scenario["vnfs"]) == {"testpmd0", "testpmd1", "testpmd2"}


HAND_WRITTEN = """\
schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {role: TrafficGen, interfaces: {xe0: {}, xe1: {}, xe2: {}, xe3: {}}}
    a: {role: VNF, interfaces: {xe0: {}, xe1: {}}}
    b: {role: VNF, interfaces: {xe0: {}, xe1: {}}}
  links: [[tg:xe0, a:xe0], [a:xe1, tg:xe1], [tg:xe2, b:xe0], [b:xe1, tg:xe3]]
scenarios:
  - name: s
    chains: %s
    vnfs:
      - {name: pmd_a, type: testpmd, node: a, options: {lcores: "0,1"}}
      - {name: pmd_b, type: testpmd, node: b}
    traffic_generator:
      name: tg0
      type: trex
      node: tg
      options: {port_pairs: [[xe0, xe1], [xe2, xe3]]}
    traffic_profile: {type: binsearch, packet_sizes: [64]}
"""


def test_chains_written_out_by_hand_find_their_vnfs_on_their_paths(nsb_main, tmp_path):
    import yaml

    task = tmp_path / "hand.yaml"
    task.write_text(HAND_WRITTEN % "2")
    code, out, err = nsb_main("task", "start", str(task), "--dry-run")
    assert code == 0, err
    assert yaml.safe_load(out)["scenarios"][0]["chains"] == {
        0: {"ports": ["xe0", "xe1"], "vnfs": {"pmd_a": {"lcores": "0,1"}}},
        1: {"ports": ["xe2", "xe3"], "vnfs": {"pmd_b": {"lcores": "0-1"}}}}


@pytest.mark.parametrize("args, old, new, expected", [
    ('{"chains": 0}', "", "", "scenarios[0].chains: 0 is below the minimum 1"),
    ('{"chains": "two"}', "", "", "scenarios[0].chains: expected an integer, got 'two'"),
    ('{"chains": 2}', "    chains: {{ chains | default(2) }}\n",
     "    chains: 2\n    service_chain_count: 2\n",
     "scenarios[0].service_chain_count: give chains or service_chain_count, not both"),
    ('{"chains": 2}', "    chains: {{ chains | default(2) }}\n",
     "    chains: 2\n    service_chain_shared_net: true\n",
     "scenarios[0].service_chain_shared_net: chains on one network meet on a switch: give "
     "the chain template link: vhostuser and via: <bridge>"),
    ('{"chains": 3, "core_pool": "1-2", "shared_cores": false}', "", "",
     "scenarios[0].chain.cores.pool: 3 chain(s) of 1 NF(s) with 1 core(s) each need 3 "
     "CPUs; the pool 1-2 has 2"),
    ('{"chains": 3, "max_chains": 2}', "", "",
     "scenarios[0].chain.deployed: deployed 2 is fewer than the 3 chains measured"),
], ids=["zero", "not-a-number", "both-names", "shared-net", "core-pool-too-small",
        "fewer-deployed"])
def test_a_bad_chain_count_is_one_line_before_anything_starts(nsb_main, tmp_path, args, old,
                                                               new, expected):
    task = _task(tmp_path, old, new) if old else str(SAMPLE)
    code, _, err = nsb_main("task", "start", task, "--task-args", args, "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert expected in line, line


def test_pairs_that_do_not_divide_into_the_chains_are_one_line(nsb_main, tmp_path):
    task = tmp_path / "hand.yaml"
    task.write_text(HAND_WRITTEN % "3")
    code, _, err = nsb_main("task", "start", str(task), "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "hand.yaml:11: scenarios[0].chains: 3 chains over the generator's 2 port " \
        "pair(s)" in line, line


def test_nfvbenchs_names_are_taken(nsb_main, tmp_path):
    import yaml

    task = _task(tmp_path, "    chains: {{ chains | default(2) }}\n",
                 "    service_chain_count: 2\n    service_chain_shared_net: false\n")
    code, out, err = nsb_main("task", "start", task, "--dry-run")
    assert code == 0, err
    chains = yaml.safe_load(out)["scenarios"][0]["chains"]
    assert {k: c["ports"] for k, c in chains.items()} == {0: ["xe0", "xe1"],
                                                          1: ["xe2", "xe3"]}


RESULT = {"frame_size": 64, "throughput_pps": 3000.0, "throughput_mbps": 2.016,
          "line_rate_pct": 1.0, "loss_pct": 0.0, "latency": None, "limited_by": "dut",
          "chains": [{"chain": 0, "throughput_pps": 1500.0, "tx_packets": 1500,
                      "rx_packets": 1500, "loss_pct": 0.0,
                      "latency": {"avg_us": 12.5, "p99_us": 40.0}},
                     {"chain": 1, "throughput_pps": 1500.0, "tx_packets": 1500,
                      "rx_packets": 1500, "loss_pct": 0.0, "latency": None}],
          "first_failing_chain": {"chain": 1, "loss_pct": 4.5, "rate_pps": 3500.0,
                                  "chains_failed": [1]}}


def test_the_summary_table_has_a_row_per_chain_and_names_the_first_to_fail():
    from nsb.report import table

    aggregate, first, second = table.rows([RESULT])
    assert aggregate[0] == "64" and first[0] == "chain 0" and second[0] == "chain 1"
    assert first[1] == "1,500" and first[3] == "1.00"  # its share of its own ports' line
    assert first[5] == "- / 12.5 / -" and second[5] == "-"
    (line,) = table.warning_lines([RESULT])
    assert line == ("64 B: chain 1 failed first (lost 4.5 % at 3,500 pps; chains over the "
                    "tolerance there: 1)")
    (line,) = table.warning_lines([LOSSY])
    assert line.endswith("tolerance there: 1); most lost at link tg:xe2 -> testpmd1:xe0: "
                         "lost on the wire")


HOP = {"trial_index": 4, "hop": "link tg:xe2 -> testpmd1:xe0", "kind": "link", "frames": 157,
       "words": "link tg:xe2 -> testpmd1:xe0: lost on the wire"}
LOSSY = {**RESULT, "chains": [{**RESULT["chains"][0], "lossy_hop": None},
                              {**RESULT["chains"][1], "lossy_hop": HOP}]}


def test_each_chains_hop_is_in_the_path_lines_and_the_html_table():
    from nsb.report import html_tables, paths

    assert paths.chain_lines(LOSSY) == [
        "  chain 1: link tg:xe2 -> testpmd1:xe0: lost on the wire (157 frames, trial 4)"]
    assert paths.chain_lines(RESULT) == []  # results from before chains named their hop
    made = html_tables.chains_table([LOSSY], "s-chains-table")
    assert "Lost most at</th>" in made and escape(HOP["words"]) in made


def test_the_html_report_has_a_table_of_the_chains():
    from nsb.report import html_tables

    made = html_tables.chains_table([RESULT], "s-chains-table")
    assert made.count("<tr>") == 3 and "yes: lost 4.5 % at 3,500 pps" in made
    assert html_tables.chains_table([{**RESULT, "chains": []}], "x") == ""


def _swept(count: int, per_chain: float, first: int | None) -> dict:
    shares = [{"chain": k, "throughput_pps": per_chain * (0.5 if k == first else 1.0),
               "tx_packets": 1, "rx_packets": 1, "loss_pct": 0.0} for k in range(count)]
    return {"scenario": f"chains@chains={count}", "sweep": {"chains": count},
            "frame_size": 64, "throughput_pps": sum(s["throughput_pps"] for s in shares),
            "throughput_mbps": 1.0, "line_rate_pct": 1.0, "chains": shares,
            "first_failing_chain": {"chain": first, "loss_pct": 1.0, "rate_pps": 1.0,
                                    "chains_failed": [first]} if first is not None else None}


def test_a_sweep_over_chains_gives_the_density_table_and_figure():
    from nsb.report import sweep, sweep_charts

    (swept,) = sweep.sweeps([_swept(1, 900.0, None), _swept(2, 800.0, 1),
                             _swept(3, 600.0, 2)])
    headers, cells = sweep.density_table(swept)
    assert headers[:4] == ["Frame (B)", "Point", "Chains", "Total (pps)"]
    assert cells == [["64", "chains=1", "1", "900", "900", "900", "-"],
                     ["64", "chains=2", "2", "1,200", "600", "400", "chain 1"],
                     ["64", "chains=3", "3", "1,500", "500", "300", "chain 2"]]
    ((frame, counts, totals, means),) = sweep_charts.density_data(swept)
    assert (frame, counts, totals, means) == ("64", [1, 2, 3], [900.0, 1200.0, 1500.0],
                                              [900.0, 600.0, 500.0])
    figure = sweep_charts.density(swept)
    assert [trace.name for trace in figure.data] == ["64 B, all chains", "64 B, per chain"]
    (plain,) = sweep.sweeps([{**_swept(2, 1.0, None), "chains": []}])
    assert sweep.density_table(plain) is None


class ChainPaths(TrialHooks):
    """Double: each trial's paths as the run lays them out, a direction per chain (sent
    from its pair's first port), its loss on the link into its NF."""

    def __init__(self):
        self.results = {}

    def trial_measured(self, index, result=None):
        self.results[index] = result

    def trial_paths(self, index):
        result = self.results[index]
        budgets = []
        for k in range(len(result.ports) // 2):
            sent = result.ports[f"xe{2 * k}"]["tx_packets"]
            got = result.ports[f"xe{2 * k + 1}"]["rx_packets"]
            losses = (Loss(f"link tg:xe{2 * k} -> nf{k}:xe0", "link", sent - got),) \
                if sent > got else ()
            budgets.append(Budget(f"tg:xe{2 * k} -> tg:xe{2 * k + 1}", sent, got, (), losses,
                                  sender=f"xe{2 * k}"))
        return TrialPaths(tuple(budgets))


def test_each_chain_names_the_hop_that_lost_its_frames():
    """Three chains, the second the weakest: its row names the hop that lost its frames
    in the failed trial just above the answer; the others, which lost nothing there, name
    the hop of the first failed trial above in which they lost frames, or none."""
    line = units.line_rate_pps(64, 1, ports=3)
    gen = SimulatedChainsGenerator([0.3 * line, 0.05 * line, 0.9 * line])
    profile = make_profile(BinSearchProfile, packet_sizes=[64], duration=1,
                           tolerated_loss=0.0, test_precision=0.1, lower_bound=0.0,
                           upper_bound=100.0, interface_speed_gbps=1)
    events = []
    profile.execute(Measurer(gen, "t1", "s", events.append, ChainPaths(),
                             service_chains=chains.split(gen.port_pairs(), 3)))
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    trials = {e.trial_index: e for e in events if isinstance(e, TrialDone)}
    weak, strong, strongest = (result.extra["chains"][k]["lossy_hop"] for k in (1, 0, 2))
    assert weak["hop"] == "link tg:xe2 -> nf1:xe0" and weak["kind"] == "link"
    failed = trials[weak["trial_index"]]
    assert failed.verdict == "fail"
    assert weak["frames"] == failed.result.chains[1].tx_packets - \
        failed.result.chains[1].rx_packets > 0
    # the slowest failed trial above the answer: the first the weak chain gave way in
    above = [t for t in trials.values() if t.verdict == "fail"
             and t.result.trial.rate_pps > failed.result.trial.rate_pps]
    assert all(t.result.chains[1].loss_pct > 0 for t in above)
    assert failed.result.trial.rate_pps == min(
        t.result.trial.rate_pps for t in trials.values() if t.verdict == "fail")
    assert strong["hop"] == "link tg:xe0 -> nf0:xe0"  # chain 0 gave way at higher rates
    assert trials[strong["trial_index"]].result.chains[0].loss_pct > 0
    assert strongest is None  # chain 2 never lost a frame
    assert all(t.result.chains[2].loss_pct == 0 for t in trials.values())
