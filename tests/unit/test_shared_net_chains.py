"""Service chains on one network (NFVbench's service_chain_shared_net): one port pair,
each chain's frames to its first NF's MAC, OVS forwarding by it, each chain counted
by TRex's flow statistics; what TRex's counts say of each chain when its port sent
fewer frames than its streams made."""

import random

import pytest
import yaml

from nsb.contexts.base import Link
from nsb.nodes.node import Endpoint
from nsb.paths import switch_crossings
from nsb.vnfs.trex import shared_net
from tests.task_edits import edited
from tests.unit.test_chains import HAND_WRITTEN, SAMPLE

SHARED = '{"chains": 3, "link": "vhostuser", "shared_net": true}'


def _plan(nsb_main, args=SHARED, task=str(SAMPLE)):
    code, out, err = nsb_main("task", "start", task, "--task-args", args, "--dry-run")
    assert code == 0, err
    return yaml.safe_load(out)


def test_the_chains_share_one_port_pair_and_each_is_sent_to_its_own_mac(nsb_main):
    plan = _plan(nsb_main)
    (scenario,) = plan["scenarios"]
    assert {k: c["ports"] for k, c in scenario["chains"].items()} == \
        {k: ["xe0", "xe1"] for k in range(3)}
    assert {k: sorted(c["vnfs"]) for k, c in scenario["chains"].items()} == \
        {k: ["ovs0", f"testpmd{k}"] for k in range(3)}
    gen = scenario["traffic_generator"]["tg0"]
    assert gen["options"]["port_pairs"] == [["xe0", "xe1"]]
    assert gen["options"]["chain_destinations"] == ["testpmd0:xe0", "testpmd1:xe0",
                                                    "testpmd2:xe0"]
    nodes = plan["context"]["nodes"]
    macs = [nodes[f"testpmd{k}"]["interfaces"]["xe0"]["mac"] for k in range(3)]
    assert [line.split(" to ")[1].split(" ")[0] for line in gen["chain_streams"]] == macs
    # one network each way: one switch port for each of TRex's ports, a subnet each
    flows = scenario["vnfs"]["ovs0"]["flows"]
    from_xe0 = [f for f in flows if f.startswith("priority=100,in_port=br0-0a,")]
    assert sorted(f.split("dl_dst=")[1].split(",")[0] for f in from_xe0) == sorted(macs)
    assert len(scenario["vnfs"]["ovs0"]["vhost_user_ports"]) == 2 + 2 * 3
    assert [nodes[f"testpmd{k}"]["interfaces"]["xe0"]["ip"] for k in range(3)] == \
        ["10.0.1.2/24", "10.0.1.3/24", "10.0.1.4/24"]
    assert nodes["tg"]["interfaces"]["xe0"]["ip"] == "10.0.1.1/24"


def test_nfvbenchs_shared_net_lays_out_the_same_chains(nsb_main, tmp_path):
    task = edited(SAMPLE, tmp_path, {"    chains: {{ chains | default(2) }}\n":
                                     "    chains: 3\n    service_chain_shared_net: true\n"},
                  "chains.yaml")
    ours = _plan(nsb_main)["scenarios"][0]
    nfvbench = _plan(nsb_main, '{"link": "vhostuser"}', task)["scenarios"][0]
    assert nfvbench["chains"] == ours["chains"]
    assert nfvbench["vnfs"]["ovs0"]["flows"] == ours["vnfs"]["ovs0"]["flows"]


@pytest.mark.parametrize("args, old, new, expected", [
    (SHARED.replace("}", ', "isolate": 0, "load_pct": 1}'), "", "",
     "traffic_profile.type: the isolation profile sends each chain its own rate on its own "
     "port pairs"),
    (SHARED, "        bidirectional: false\n", "        bidirectional: true\n",
     "chain_destinations: chains on one network are sent from one port pair, one way"),
    (SHARED.replace("}", ', "generator": "trafgen"}'), "", "",
     "scenarios[0].chain.shared_net: chains on one network are told apart by TRex's flow "
     "statistics (a pg_id per chain); generator type 'trafgen' cannot: give type trex"),
], ids=["isolation", "both-ways", "trafgen"])
def test_what_chains_on_one_network_cannot_do_is_one_line(nsb_main, tmp_path, args, old, new,
                                                          expected):
    task = edited(SAMPLE, tmp_path, {old: new}, "chains.yaml") if old else str(SAMPLE)
    code, _, err = nsb_main("task", "start", task, "--task-args", args, "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert expected in line, line


def test_shared_net_without_a_template_is_one_line(nsb_main, tmp_path):
    task = tmp_path / "hand.yaml"
    task.write_text(HAND_WRITTEN.replace("    chains: %s\n",
                                         "    chains: 2\n    service_chain_shared_net: true\n"))
    code, _, err = nsb_main("task", "start", str(task), "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "hand.yaml:12: scenarios[0].service_chain_shared_net: chains on one shared " \
        "network are laid out by a chain template" in line, line


def test_an_interface_in_two_links_needs_them_shared_via_one_bridge(nsb_main, tmp_path):
    task = tmp_path / "t.yaml"
    task.write_text(HAND_WRITTEN.replace(
        "  links: [[tg:xe0, a:xe0], [a:xe1, tg:xe1], [tg:xe2, b:xe0], [b:xe1, tg:xe3]]",
        "  links: [[tg:xe0, a:xe0], [a:xe1, tg:xe1], [tg:xe0, b:xe0], [b:xe1, tg:xe3]]") % "2")
    code, _, err = nsb_main("task", "start", str(task), "--dry-run")
    assert code == 2
    assert "interface 'tg:xe0' is already in link 0" in err


def test_a_walk_stops_at_a_port_several_links_share():
    """Which link a frame takes at a shared network's port is the switch's choice: no
    crossing there; the other ports of its links still cross to it."""
    hub, a, b = (Endpoint("host", p) for p in ("br0-0a", "br0-0b", "br0-2b"))
    links = [Link(Endpoint("tg", "xe0"), Endpoint(f"nf{k}", "xe0"), "br0", hub, port,
                  shared=True) for k, port in enumerate((a, b))]
    crossing = switch_crossings(links)
    assert hub not in crossing
    assert crossing[a] == hub and crossing[b] == hub


def test_what_each_chain_was_sent_when_trex_sent_every_frame_it_made():
    assert shared_net.split([100, 60], [90, 60], 160, 150) == ([100, 60], 0)


@pytest.mark.parametrize("made, got, port_tx, port_rx, expected", [
    # nothing lost: each chain was sent what came back (measured: 8,846 made per chain,
    # 1,490 kept back by the port, testpmd0 and testpmd1 forwarded 8,087 and 8,115)
    ([8846, 8846], [8087, 8115], 16202, 16202, [8087, 8115]),
    # chain 1 lost 40 more than the 10 unsent frames can hide
    ([100, 100], [100, 50], 190, 150, [100, 90]),
    # a loss of 10 that either chain may have had: in proportion to what each may have
    ([100, 100], [60, 50], 120, 110, [64, 56]),
])
def test_what_each_chain_was_sent_when_trex_kept_frames_back(made, got, port_tx, port_rx,
                                                            expected):
    sent, unsent = shared_net.split(made, got, port_tx, port_rx)
    assert sent == expected and unsent == sum(made) - port_tx


def test_the_split_never_gives_a_chain_a_loss_it_cannot_have_had():
    """Simulated trials whose truth is known: TRex's streams made ``made`` frames per
    chain, the port sent some of each, the chains lost some of what they were sent. The
    split's counts add up to the port's, lie between what came back and what was made,
    are exact when nothing was lost or nothing was kept back, and give every chain at
    least the loss it certainly had."""
    rng = random.Random(7)
    for _ in range(2000):
        chains = rng.randint(1, 5)
        made = [rng.randint(0, 1000) for _ in range(chains)]
        true_sent = [m - rng.randint(0, m // 4) for m in made]
        got = [s - (rng.randint(0, s // 3) if rng.random() < 0.5 else 0) for s in true_sent]
        sent, unsent = shared_net.split(made, got, sum(true_sent), sum(got))
        assert unsent == sum(made) - sum(true_sent)
        assert sum(sent) == sum(true_sent)
        assert all(g <= s <= m for g, s, m in zip(got, sent, made, strict=True))
        if sum(got) == sum(true_sent) or unsent == 0:
            assert sent == (got if unsent else true_sent)
        for s, t, g, m in zip(sent, true_sent, got, made, strict=True):
            certain = max(0, m - unsent - g)  # what it lost however the unsent fell
            assert t - g >= certain and s - g >= certain


def test_each_chains_counts_come_from_its_own_pg_ids():
    flow = {100: {"tx_pkts": {"total": 90}, "rx_pkts": {"total": 80}},
            101: {"tx_pkts": {"total": 10}, "rx_pkts": {"total": 10}},
            102: {"tx_pkts": {"total": 50}, "rx_pkts": {"total": 50}}}
    per_chain, unsent = shared_net.counts({"flow_stats": flow}, 2, 150, 140)
    assert unsent == 0
    assert [(c["tx_packets"], c["rx_packets"]) for c in per_chain.values()] == \
        [(100, 90), (50, 50)]
    assert shared_net.burst_share(7, 3, 0) == 3 and shared_net.burst_share(7, 3, 2) == 2


def test_a_first_failing_chain_found_in_a_trial_trex_kept_frames_back_in_says_so():
    from nsb.report import table
    from tests.unit.test_chains import RESULT

    first = {**RESULT["first_failing_chain"], "frames_kept_back": 1490}
    (line,) = table.warning_lines([{**RESULT, "first_failing_chain": first}])
    assert line.endswith("TRex kept 1,490 frames back there, so which chains lost is "
                         "partly inferred")
