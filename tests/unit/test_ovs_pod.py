"""Bridges on a pod's nodes: the NICs cabled to a link's ends are its switch ports,
the ovs VNF makes OVS-DPDK ``dpdk`` ports of those with a PCI address, and the
vSwitch samples plan on the sample pod with the same task files."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import yaml

from nsb.contexts import topology
from nsb.contexts.base import Endpoint
from nsb.errors import TaskError
from nsb.task.model import Where
from nsb.task.pod_file import load_pod
from nsb.task.yaml_lines import parse
from tests.conftest import ROOT
from tests.doc_examples import examples

SAMPLES = ROOT / "samples" / "vswitch"

POD = """\
nodes:
- name: tg
  role: TrafficGen
  ip: 192.0.2.10
  interfaces:
    xe0: {vpci: "0000:18:00.0", driver: vfio-pci, local_mac: "3c:fd:fe:a0:00:00"}
    xe1: {vpci: "0000:18:00.1", driver: vfio-pci, local_mac: "3c:fd:fe:a0:00:01"}
- name: host
  role: Switch
  ip: 192.0.2.20
  bridges: [br0]
  interfaces:
    xe0: {vpci: "0000:3b:00.0", driver: vfio-pci, peer: "tg:xe0"}
    xe1: {vpci: "0000:3b:00.1", driver: vfio-pci}
    eth5: {}
"""


def _pod(tmp_path: Path, text: str = POD) -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    return path


def _links(tmp_path: Path, links: list, pod: str = POD, extra_nodes: dict | None = None):
    nodes = load_pod(_pod(tmp_path, pod))
    nodes.update(topology.build_nodes(extra_nodes or {}))
    where = Where(parse("links: []\n", str(tmp_path / "task.yaml")), ())
    return nodes, topology.build_links(links, nodes, where)


def _task(tmp_path: Path, links: str, ovs_options: str = "dpdk_init: true") -> Path:
    task = tmp_path / "task.yaml"
    task.write_text(textwrap.dedent(f"""\
        schema: "nsb:task:0.1"
        context:
          type: Node
          file: pod.yaml
          links: {links}
        scenarios:
          - name: s
            vnfs:
              - {{name: ovs0, type: ovs, node: host, options: {{{ovs_options}}}}}
            traffic_generator: {{name: tg0, type: trex, node: tg}}
            traffic_profile: {{type: binsearch, packet_sizes: [64]}}
        """))
    return task


# --- the pod's cables ----------------------------------------------------------------

def test_a_peer_is_a_cable_known_at_both_ends_and_a_link_via_the_bridge_takes_it(tmp_path):
    pod = POD.replace('driver: vfio-pci}\n    eth5', 'driver: vfio-pci, peer: "tg:xe1"}\n'
                      '    eth5')
    nodes, (link,) = _links(tmp_path, [{"ends": ["tg:xe0", "tg:xe1"], "via": "br0"}], pod)
    assert nodes["host"].bridges == ("br0",) and nodes["host"].cabled
    assert nodes["tg"].interfaces["xe0"].cabled_to == Endpoint("host", "xe0")
    assert (link.switch_a, link.switch_b) == (Endpoint("host", "xe0"), Endpoint("host", "xe1"))
    assert set(nodes["host"].interfaces) == {"xe0", "xe1", "eth5"}  # no port made


def test_a_peer_may_be_written_at_the_far_end(tmp_path):
    pod = POD.replace('local_mac: "3c:fd:fe:a0:00:01"}', 'local_mac: "3c:fd:fe:a0:00:01", '
                      'peer: "host:xe1"}')
    _, (link,) = _links(tmp_path, [{"ends": ["tg:xe1", "tg:xe0"], "via": "br0"}], pod)
    assert (link.switch_a, link.switch_b) == (Endpoint("host", "xe1"), Endpoint("host", "xe0"))


def test_an_end_no_nic_is_cabled_to_is_one_line_at_the_link(tmp_path):
    with pytest.raises(TaskError) as caught:
        _links(tmp_path, [{"ends": ["tg:xe0", "tg:xe1"], "via": "br0"}])
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'task.yaml'}") and "\n" not in message
    assert "links[0].ends[1]: no NIC of host (bridge br0) is cabled to tg:xe1" in message
    assert "'peer: tg:xe1'" in message
    assert "host has: xe0 -> tg:xe0, xe1 (no peer), eth5 (no peer)" in message


XE0_PEER = r"nodes\[1\].interfaces.xe0.peer: "


@pytest.mark.parametrize("old, new, message", [
    ('driver: vfio-pci}\n    eth5', 'driver: vfio-pci, peer: "tg:xe0"}\n    eth5',
     r"nodes\[1\].interfaces.xe1.peer: tg:xe0 is cabled to host:xe0 already \(line 13, "
     r"nodes\[1\].interfaces.xe0.peer\); an interface has one cable"),
    ('local_mac: "3c:fd:fe:a0:00:00"}', 'local_mac: "3c:fd:fe:a0:00:00", peer: "host:xe1"}',
     r"nodes\[1\].interfaces.xe0.peer: tg:xe0 is cabled to host:xe1 already"),
    ('peer: "tg:xe0"', 'peer: "tgx:xe0"', XE0_PEER + r"no node 'tgx' in the pod; nodes: tg, host"),
    ('peer: "tg:xe0"', 'peer: "tg:xe9"',
     XE0_PEER + r"node tg has no interface 'xe9'; it has: xe0, xe1"),
    ('peer: "tg:xe0"', 'peer: "tg"', XE0_PEER + r"'tg' is not node:interface"),
    ('peer: "tg:xe0"', 'peer: "host:xe0"', XE0_PEER + r"host:xe0 is cabled to itself"),
    ("bridges: [br0]", "bridges: [br-0]", r"nodes\[1\].bridges\[0\]"),
])
def test_pod_cabling_mistakes_are_one_line_in_the_pod(tmp_path, old, new, message):
    with pytest.raises(TaskError, match=rf"pod.yaml:\d+: {message}") as caught:
        load_pod(_pod(tmp_path, POD.replace(old, new)))
    assert "\n" not in str(caught.value)


def test_an_unknown_bridge_names_the_pod_s_bridges(tmp_path):
    with pytest.raises(TaskError, match=r"links\[0\].via: bridge 'br9' is provided by 0 nodes"
                                        r".*known: host:br0"):
        _links(tmp_path, [{"ends": ["tg:xe0", "tg:xe1"], "via": "br9"}])


def test_a_switch_nic_in_two_links_is_an_error(tmp_path):
    pod = POD.replace("eth5: {}", 'eth5: {peer: "tg:xe1"}')
    with pytest.raises(TaskError, match=r"links\[1\].ends\[0\]: tg:xe0 is cabled to host:xe0, "
                                        r"which link 0 uses already"):
        _links(tmp_path, [["host:xe0", "tg:xe1"], {"ends": ["tg:xe0", "host:eth5"],
                                                   "via": "br0"}], pod)


def test_a_vhost_user_end_keeps_a_made_vhost_user_port(tmp_path):
    vm = {"vnf0": {"interfaces": {"xe0": {"type": "vhostuser"}}}}
    nodes, (link,) = _links(tmp_path, [{"ends": ["tg:xe0", "vnf0:xe0"], "via": "br0"}],
                            extra_nodes=vm)
    assert link.switch_a == Endpoint("host", "xe0")
    assert link.switch_b == Endpoint("host", "br0-0b")
    assert nodes["host"].interfaces["br0-0b"].is_vhostuser


def test_the_vswitch_page_pod_fragment_is_a_pod_with_its_cables(tmp_path):
    (shown,) = [e for e in examples("checked-by") if "test_ovs_pod.py" in e.note]
    assert shown.file.name == "vswitch.md"
    nodes = load_pod(_pod(tmp_path, shown.text))
    assert {i.name: str(i.cabled_to) for i in nodes["host"].interfaces.values()} == {
        "xe0": "tg:xe0", "xe1": "tg:xe1"}


# --- the ovs VNF on a pod ------------------------------------------------------------

def _plan(nsb_main, task: Path, *args: str) -> dict:
    code, out, err = nsb_main("task", "start", "--dry-run", str(task), *args)
    assert code == 0, err
    return yaml.safe_load(out)


def _cabled_pod(tmp_path: Path) -> None:
    _pod(tmp_path, POD.replace('driver: vfio-pci}\n    eth5', 'driver: vfio-pci, '
                               'peer: "tg:xe1"}\n    eth5'))


def test_pci_nics_are_dpdk_ports_taken_by_pci_and_bound_for_the_run(tmp_path):
    from nsb import engine
    from nsb.runinfo import RunInfo
    from nsb.task import loader

    _cabled_pod(tmp_path)
    task = loader.load(_task(tmp_path, "[{ends: [tg:xe0, tg:xe1], via: br0}]",
                             "dpdk_init: true, n_rxq: 2"), {})
    plan = engine.plan(task, RunInfo("261126-000000-abcdef", task, tmp_path, dry_run=True))
    ovs = plan.scenarios[0].vnfs[0]
    assert [(i.name, i.pci) for i in ovs.dpdk_nics()] == [("xe0", "0000:3b:00.0"),
                                                          ("xe1", "0000:3b:00.1")]
    assert ovs.vsctl_commands()[1] == [
        ["add-port", "br0", "xe0"],
        ["set", "Interface", "xe0", "type=dpdk", "options:dpdk-devargs=0000:3b:00.0",
         "options:n_rxq=2"]]
    # DPDK probes the bridge's NICs and no other of the node's
    assert ovs.describe()["other_config"]["dpdk-extra"] == \
        "--file-prefix=nsb-261126-000000-abcdef-ovs0 -a 0000:3b:00.0 -a 0000:3b:00.1"


@pytest.mark.parametrize("options, message", [
    ("flows: port", r"options.dpdk_init: ports xe0 \(0000:3b:00.0\), xe1 \(0000:3b:00.1\) are "
                    r"NICs by PCI address: they need OVS-DPDK \(dpdk_init: true\)"),
    ("dpdk_init: true, datapath: system", r"datapath: .*need the userspace datapath"),
    ("dpdk_init: true, dpdk_extra: '--no-pci -l 0'",
     r"dpdk_extra: --no-pci would hide the NICs of ports xe0 \(0000:3b:00.0\)"),
])
def test_pci_nics_need_ovs_dpdk_that_sees_them(nsb_main, tmp_path, options, message):
    _cabled_pod(tmp_path)
    code, _, err = nsb_main("task", "validate",
                            str(_task(tmp_path, "[{ends: [tg:xe0, tg:xe1], via: br0}]", options)))
    assert code == 2 and re.search(message, err), err


def test_a_kernel_nic_without_pci_is_added_by_name(nsb_main, tmp_path):
    _pod(tmp_path, POD.replace('eth5: {}', 'eth5: {peer: "tg:xe1"}'))
    ovs = _plan(nsb_main, _task(tmp_path, "[{ends: [tg:xe0, tg:xe1], via: br0}]"))[
        "scenarios"][0]["vnfs"]["ovs0"]
    assert ovs["ovs_vsctl"][2] == "-- add-port br0 eth5"
    assert ovs["dpdk_ports"] == {"xe0": "0000:3b:00.0"}
    assert "--no-pci" not in ovs["other_config"]["dpdk-extra"]


@pytest.mark.parametrize("sample", ["tc_ovs_phy2phy.yaml", "tc_ovs_pvp.yaml",
                                    "tc_ovs_pvvp.yaml"])
def test_the_vswitch_samples_on_the_sample_pod_take_every_nic_by_pci(nsb_main, sample):
    """Every DPDK program of the plan names the PCI devices of its node's NICs in the
    links, and none is told --no-pci."""
    code, out, err = nsb_main("task", "start", "--dry-run", str(SAMPLES / sample),
                              "--task-args", '{"pod": "pod.yaml"}')
    assert code == 0, err
    assert "--no-pci" not in out
    plan = yaml.safe_load(out)
    nodes = plan["context"]["nodes"]
    assert plan["context"]["type"] == "Node"
    scenario = plan["scenarios"][0]
    ovs = scenario["vnfs"]["ovs0"]
    switch_ports = [p for pair in ovs["ports"].values() for p in pair]
    host = nodes["host"]["interfaces"]
    assert ovs["dpdk_ports"] == {p: host[p]["pci"] for p in switch_ports}
    for port in switch_ports:  # each cabled to the end of a link, as the pod says
        line = next(x for x in ovs["ovs_vsctl"] if f"add-port br0 {port} " in x)
        assert line.endswith(f"type=dpdk options:dpdk-devargs={host[port]['pci']} "
                             "options:n_rxq=1")
    assert ovs["other_config"]["dpdk-socket-mem"] == "1024,1024"
    # OVS's heap kept to its pages: its mempool would take the pages others were given
    assert ovs["other_config"]["dpdk-socket-limit"] == "1024,1024"
    tg = scenario["traffic_generator"]["tg0"]
    assert yaml.safe_load(tg["trex_cfg.yaml"])[0]["interfaces"] == [
        nodes["tg"]["interfaces"][p]["pci"] for p in ("xe0", "xe1")]
    for name, vnf in scenario["vnfs"].items():
        if vnf["type"] == "testpmd":
            argv = vnf["command"].split()
            allowed = [argv[i + 1] for i, a in enumerate(argv) if a == "-a"]
            assert allowed == [nodes[vnf["node"]]["interfaces"][p]["pci"]
                               for p in ("eth0", "eth1")], name
