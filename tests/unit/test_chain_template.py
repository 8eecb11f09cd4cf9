"""A scenario's chain template laid out N times (nsb.task.chain_template): nodes, links,
VNFs, the generator's ports and pairs, lcores from a declared pool, in every context
that declares nodes by name; what it cannot do is one line at the template."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import ROOT

TEMPLATES = ROOT / "tests" / "data" / "chain_templates"


def dry_run(nsb_main, task, **args):
    code, out, err = nsb_main("task", "start", str(task), "--task-args", json.dumps(args),
                              "--dry-run")
    assert code == 0, err
    return yaml.safe_load(out)


def test_two_nfs_per_chain_are_joined_in_order_and_each_takes_its_own_cores(nsb_main):
    plan = dry_run(nsb_main, TEMPLATES / "two_nf_chains.yaml")
    links = plan["context"]["links"]
    assert links == ["tg:xe0 <-> fw0:xe0", "fw0:xe1 <-> rt0:xe0", "rt0:xe1 <-> tg:xe1",
                     "tg:xe2 <-> fw1:xe0", "fw1:xe1 <-> rt1:xe0", "rt1:xe1 <-> tg:xe3"]
    nodes = plan["context"]["nodes"]
    assert {n["interfaces"]["xe0"]["type"] for name, n in nodes.items() if name != "tg"} \
        == {"memif"}
    macs = [i["mac"] for n in nodes.values() for i in n["interfaces"].values()]
    assert len(set(macs)) == len(macs) == 12  # every port its own MAC (and address)
    (scenario,) = plan["scenarios"]
    # testpmd lists its main lcore (0) before its forwarding one; l3fwd forwards on all
    assert scenario["chains"] == {
        0: {"ports": ["xe0", "xe1"], "vnfs": {"fw0": {"lcores": "0,1"}, "rt0": {"lcores": "2"}}},
        1: {"ports": ["xe2", "xe3"], "vnfs": {"fw1": {"lcores": "0,3"}, "rt1": {"lcores": "4"}}}}
    assert scenario["traffic_generator"]["tg0"]["options"]["port_pairs"] == [
        ["xe0", "xe1"], ["xe2", "xe3"]]


def test_chains_may_share_a_pool_when_the_task_says_so(nsb_main):
    plan = dry_run(nsb_main, TEMPLATES / "two_nf_chains.yaml", chains=3, pool="1-2",
                   shared=True)
    chains = plan["scenarios"][0]["chains"]
    lcores = [v["lcores"] for c in chains.values() for v in c["vnfs"].values()]
    assert lcores == ["0,1", "2", "0,1", "2", "0,1", "2"]


def test_cnf_chains_are_pods_with_the_templates_node_keys(nsb_main):
    plan = dry_run(nsb_main, TEMPLATES / "cnf_chains_k8s.yaml")
    k8s = plan["context"]["contexts"][1]
    assert k8s["links"] == ["tg:xe0 <-> cnf0:xe0", "cnf0:xe1 <-> tg:xe1",
                            "tg:xe2 <-> cnf1:xe0", "cnf1:xe1 <-> tg:xe3"]
    assert set(k8s["pods"]) == {"cnf0-k8s", "cnf1-k8s"}
    assert k8s["pods"]["cnf1-k8s"]["images"] == ["local/nsb-dpdk:22.11"]


def test_pvp_chains_of_vms_go_through_the_switch(nsb_main):
    plan = dry_run(nsb_main, TEMPLATES / "vm_pvp_chains_libvirt.yaml")
    chains = plan["scenarios"][0]["chains"]
    assert {k: list(c["vnfs"]) for k, c in chains.items()} == {0: ["ovs0", "vm0"],
                                                              1: ["ovs0", "vm1"]}
    vms = plan["context"]["contexts"][1]
    assert vms["links"] == ["tg:xe0 <-> vm0:xe0 via host:br0", "vm0:xe1 <-> tg:xe1 via host:br0",
                            "tg:xe2 <-> vm1:xe0 via host:br0", "vm1:xe1 <-> tg:xe3 via host:br0"]


def _bad(tmp_path, old: str, new: str):
    text = (TEMPLATES / "two_nf_chains.yaml").read_text()
    assert old in text
    task = tmp_path / "bad.yaml"
    task.write_text(text.replace(old, new))
    return task


@pytest.mark.parametrize("old, new, expected", [
    ("type: l3fwd}", "type: prox}",
     "bad.yaml:12: scenarios[0].vnfs[1].type: prox takes no lcores"),
    ("memory_mb: 256}", "memory_mb: 256, lcores: '1'}",
     "bad.yaml:11: scenarios[0].chain.nfs[0].options: an NF's cores come from chain.cores"),
    ("{name: rt,", "{name: fw,", "bad.yaml:12: scenarios[0].chain.nfs[1].name: NF name "
     "'fw' twice"),
    ("tg: {role: TrafficGen}", "tg: {role: TrafficGen, interfaces: {xe2: {}}}",
     "bad.yaml:9: scenarios[0].chain: the generator's node 'tg' already declares xe2"),
    ("    chains: {{ chains | default(2) }}\n", "",
     "bad.yaml:8: scenarios[0].chain: a chain template needs chains: N"),
    ("options: {flows: 4}", "options: {flows: 4, port_pairs: [[xe0, xe1]]}",
     "bad.yaml:9: scenarios[0].chain: the chain template sets the generator's port_pairs"),
    ("      nfs:\n", "      context: kubernetes\n      nfs:\n",
     "bad.yaml:10: scenarios[0].chain.context: no context of the task can host the chains "
     "named 'kubernetes'"),
    ("      nfs:\n", "      link: tap\n      nfs:\n",
     "bad.yaml:10: scenarios[0].chain.link: 'tap' is not allowed; allowed: 'memif', 'veth', "
     "'vhostuser'"),
    ("type: trex, node: tg, options: {flows: 4}",
     "type: prox_irq_gen, node: tg, options: {prox_config: gen.cfg}",
     "bad.yaml:9: scenarios[0].chain: generator type 'prox_irq_gen' sends from the ports its "
     "own config names"),
], ids=["no-lcores", "lcores-given", "same-name", "port-taken", "no-count", "pairs-given",
        "no-such-context", "bad-link", "prox-generator"])
def test_what_a_template_cannot_lay_out_is_one_line(nsb_main, tmp_path, old, new, expected):
    code, _, err = nsb_main("task", "start", str(_bad(tmp_path, old, new)), "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert expected in line, line


def test_standalone_ovs_dpdk_chains_are_vms_on_networks_of_their_own(nsb_main):
    plan = dry_run(nsb_main, TEMPLATES / "vm_pvp_chains_standalone.yaml", chains=3)
    standalone = plan["context"]["contexts"][1]
    assert standalone["links"] == [
        "tg:xe0 <-> vnf_0:xe0", "vnf_0:xe1 <-> tg:xe1", "tg:xe2 <-> vnf_1:xe0",
        "vnf_1:xe1 <-> tg:xe3", "tg:xe4 <-> vnf_2:xe0", "vnf_2:xe1 <-> tg:xe5"]
    assert [vm["mgmt"]["ip"] for vm in standalone["vms"].values()] == \
        ["10.253.7.5", "10.253.7.6", "10.253.7.7"]
    nodes = plan["context"]["nodes"]
    # each chain's networks: its own subnets, the generator's ports at their gateways
    assert [nodes["tg"]["interfaces"][f"xe{n}"]["ip"] for n in range(6)] == [
        "152.16.100.20/24", "152.17.40.20/24", "152.16.101.20/24", "152.17.41.20/24",
        "152.16.102.20/24", "152.17.42.20/24"]
    assert nodes["vnf_2"]["interfaces"]["xe1"]["ip"] == "152.17.42.10/24"
    (scenario,) = plan["scenarios"]
    assert {k: c["ports"] for k, c in scenario["chains"].items()} == {
        0: ["xe0", "xe1"], 1: ["xe2", "xe3"], 2: ["xe4", "xe5"]}
    assert list(scenario["vnfs"]) == ["vnf_0", "vnf_1", "vnf_2"]


@pytest.mark.parametrize("old, new, expected", [
    ("mgmt_cidr: 10.253.7.5/24}\n",
     "mgmt_cidr: 10.253.7.5/24}\n        - {name: rt, type: l3fwd}\n",
     "bad.yaml:16: scenarios[0].chain.nfs: a StandaloneOvsDpdk chain is one VM (PVP), not 2"),
    ("      nfs:\n", "      cores: {pool: '1'}\n      nfs:\n",
     "bad.yaml:16: scenarios[0].chain.cores: a VM's NF runs on the guest's CPUs"),
    ("nsbsa4, nsbsa5]", "nsbsa4]", "bad.yaml:15: scenarios[0].chain.phy_ports: 3 chain(s) "
     "need 6 phy_ports (the host NICs cabled to the generator, two per chain in order); "
     "the template gives 5"),
    ("{mgmt_cidr: 10.253.7.5/24}", "{mgmt_cidr: 10.253.7.5/24, vcpus: 2}",
     "bad.yaml:20: scenarios[0].chain.nfs[0].node: a StandaloneOvsDpdk VM takes only "
     "mgmt_cidr from its node keys, not vcpus"),
    ("      phy_ports:", "      context: netns\n      phy_ports:",
     "bad.yaml:16: scenarios[0].chain.phy_ports: phy_ports are the host NICs of a "
     "StandaloneOvsDpdk context's chains; a netns context cables its own"),
    ("{mgmt_cidr: 10.253.7.5/24}", "{mgmt_cidr: 10.253.7.253/24}",
     "bad.yaml:20: scenarios[0].chain.nfs[0].node.mgmt_cidr: 3 VMs from 10.253.7.253/24 need "
     "addresses up to 10.253.7.255, beyond 10.253.7.0/24"),
    ("{mgmt_cidr: 10.253.7.5/24}", "{mgmt_cidr: 10.253.7/24}",
     "bad.yaml:20: scenarios[0].chain.nfs[0].node.mgmt_cidr: not an address/prefix"),
], ids=["two-nfs", "cores", "too-few-phy-ports", "node-key", "phy-ports-elsewhere",
        "mgmt-beyond-subnet", "mgmt-not-an-address"])
def test_what_a_standalone_template_cannot_lay_out_is_one_line(nsb_main, tmp_path, old, new,
                                                                expected):
    text = (TEMPLATES / "vm_pvp_chains_standalone.yaml").read_text()
    assert old in text
    task = tmp_path / "bad.yaml"
    task.write_text(text.replace(old, new))
    (tmp_path / "host.yaml").write_text((TEMPLATES / "host.yaml").read_text())
    code, _, err = nsb_main("task", "start", str(task), "--dry-run", "--task-args",
                            json.dumps({"chains": 3}))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert expected in line, line
