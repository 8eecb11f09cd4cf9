"""Links through a switch: two wires each, the ends stay each other's peers."""

import pytest

from nsb.contexts import topology
from nsb.contexts.base import Context, Endpoint
from nsb.errors import TaskError
from nsb.task.model import Where
from nsb.task.yaml_lines import parse
from nsb.vnfs.ovs.stats import flow_count, pmd_stats

NODES = {"tg": {"interfaces": {"xe0": {}, "xe1": {}}}, "host": {"bridges": ["br0"]},
         "vm": {"interfaces": {"eth0": {}, "eth1": {}}}}
LINKS = [{"ends": ["tg:xe0", "vm:eth0"], "via": "br0"},
         {"ends": ["vm:eth1", "tg:xe1"], "via": "host:br0"}]


class Wired(Context):
    def deploy(self):
        pass

    def undeploy(self):
        pass


def build(links=LINKS):
    where = Where(parse("x: 1\n", "task.yaml"), ())
    context = Wired.__new__(Wired)
    context.nodes = topology.build_nodes(NODES)
    context.links = topology.build_links(links, context.nodes, where)
    context.connect_peers()
    return context


def test_a_link_via_a_bridge_is_two_wires_to_switch_ports():
    context = build()
    first = context.links[0]
    assert first.wires() == [(Endpoint("tg", "xe0"), Endpoint("host", "br0-0a")),
                             (Endpoint("host", "br0-0b"), Endpoint("vm", "eth0"))]
    assert set(context.nodes["host"].interfaces) == {"br0-0a", "br0-0b", "br0-1a", "br0-1b"}
    assert str(first) == "tg:xe0 <-> vm:eth0 via host:br0"


def test_ends_through_a_switch_are_peers_and_switch_ports_face_their_wire():
    context = build()
    tg_xe0 = context.nodes["tg"].interfaces["xe0"]
    vm_eth0 = context.nodes["vm"].interfaces["eth0"]
    assert tg_xe0.peer == Endpoint("vm", "eth0") and tg_xe0.peer_mac == vm_eth0.mac
    assert context.nodes["host"].interfaces["br0-0a"].peer == Endpoint("tg", "xe0")
    assert context.nodes["host"].interfaces["br0-1b"].peer == Endpoint("tg", "xe1")


def test_unknown_bridge_lists_the_known_ones():
    with pytest.raises(TaskError, match=r"bridge 'br1' is provided by 0 nodes.*host:br0"):
        build([{"ends": ["tg:xe0", "vm:eth0"], "via": "br1"}])


PMD = """pmd thread numa_id 0 core_id 1:
  packets received: 1000
  emc hits: 600
  megaflow hits: 390
  miss with success upcall: 10
  idle cycles: 5000 (50.00%)
  processing cycles: 5000 (50.00%)
  avg cycles per packet: 10.00 (10000/1000)
main thread:
  packets received: 20
  simple match hits: 20
"""


def test_pmd_stats_are_summed_over_threads():
    kpis = pmd_stats(PMD)
    assert kpis["packets_received"] == 1020 and kpis["emc_hits"] == 600
    assert kpis["simple_match_hits"] == 20 and kpis["upcalls"] == 10
    assert kpis["pmd_threads"] == 2
    assert kpis["cycles_per_packet"] == pytest.approx(5000 / 1020)


def test_datapath_flow_count_skips_headers():
    dump = "flow-dump from the main thread:\nrecirc_id(0),in_port(2) actions:3\n" \
           "recirc_id(0),in_port(3) actions:2\n"
    assert flow_count(dump) == 2
