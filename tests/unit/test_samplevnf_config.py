"""The SampleVNFs' pipeline configs, start scripts and command lines for NSB's own
task files, against what NSB (Yardstick's samplevnf_helper and the VNF classes)
writes for them: the layouts, queues, cores, rules and static translations."""

from __future__ import annotations

import pytest
import yaml

from nsb.vnfs.samplevnf import pipeline_config
from tests.unit.samplevnf_tasks import (
    ACL,
    CGNAPT,
    CORRELATED,
    NSUT,
    TASK_ID,
    UDP_REPLAY,
    VFW,
    WORK,
    edit,
    plan_vnfs,
    reference_copy,
)


@pytest.fixture
def ys(tmp_path):
    return reference_copy(tmp_path)


def pipelines(text: str) -> str:
    """The config without its [EAL] section (what NSB's template gives)."""
    return text[text.index("[PIPELINE0]"):]


# NSB's layout for one port pair, lb_config SW, one load balancer and one worker:
# ARPICMP on the master core, RXRX and TXTX sharing core 1, LOADB core 2, worker core 3
VFW_PIPELINES = """\
[PIPELINE0]
type = MASTER
core = 0

[PIPELINE1]
type = ARPICMP
core = 0
pktq_in = SWQ0
pktq_out = SWQ1
arp_route_tbl = (c0102814,fffff000,1,c0102814) (c0106414,fffff000,0,c0106414)
nd_route_tbl = (0064:ff9b:0:0:0:0:9810:6414,120,0,0064:ff9b:0:0:0:0:9810:6414)
pktq_in_prv = RXQ0.0
prv_to_pub_map = (0,1)

[PIPELINE2]
type = TXRX
core = 1
pipeline_txrx_type = RXRX
dest_if_offset = 176
pktq_in = RXQ0.0 RXQ1.0
pktq_out = SWQ2 SWQ3 SWQ0

[PIPELINE3]
type = LOADB
core = 2
pktq_in = SWQ2 SWQ3
pktq_out = SWQ4 SWQ5
outport_offset = 136
n_vnf_threads = 1
n_lb_tuples = 5
loadb_debug = 0
lib_arp_debug = 0
prv_que_handler = (0,)

[PIPELINE4]
type = VFW
core = 3
pktq_in = SWQ4 SWQ5
pktq_out = SWQ6 SWQ7
n_rules = 10
prv_que_handler = (0)
n_flows = 2000000
traffic_type = 4
pkt_type = ipv4
tcp_be_liberal = 0

[PIPELINE5]
type = TXRX
core = 1
pipeline_txrx_type = TXTX
dest_if_offset = 176
pktq_in = SWQ6 SWQ7 SWQ1
pktq_out = TXQ0.0 TXQ1.0

"""

# the pod's vnf: xe0 152.16.100.21/24 (tg xe0 152.16.100.20, 00:..:01), xe1
# 152.16.40.21/24 (tg xe1 152.16.40.19, 00:..:02); acl_1rule.yaml's two drop rules
# take action ids 1 and 2, NSB's defaults 3 and 4
VFW_SCRIPT = """
link 0 down
link 0 config 152.16.100.21 24
link 0 up
link 1 down
link 1 config 152.16.40.21 24
link 1 up

p 1 arpadd 0 152.16.100.20 00:00:00:00:00:01
p 1 arpadd 1 152.16.40.19 00:00:00:00:00:02

routeadd net 0 152.16.100.20 0xffffff00
routeadd net 1 152.16.40.19 0xffffff00

p action add 1 drop
p action add 1 count
p action add 2 drop
p action add 2 count
p action add 3 accept
p action add 3 count
p action add 3 conntrack
p action add 3 fwd 1
p action add 4 accept
p action add 4 count
p action add 4 conntrack
p action add 4 fwd 0
p vfw add 1 0.0.0.0 0 152.16.0.0 24 0 65535 0 65535 0 0 1
p vfw add 1 152.16.0.0 24 0.0.0.0 0 0 65535 0 65535 0 0 2
p vfw add 1 152.16.100.0 24 152.16.40.0 24 0 65535 0 65535 0 0 3
p vfw add 1 152.16.40.0 24 152.16.100.0 24 0 65535 0 65535 0 0 4
p vfw applyruleset

"""


def test_vfw_reference_task_gets_nsb_config_script_and_command(ys):
    vfw = plan_vnfs(ys / VFW)["vnf__0"]
    files = vfw.files()
    assert pipelines(files["vfw_config"]) == VFW_PIPELINES
    assert files["vfw_config"].startswith(
        "[EAL]\nw = 0000:05:00.0\nw = 0000:05:00.1\n"
        f"huge_dir = {WORK}/hugepages\nsocket_mem = 1000\n"
        f"file_prefix = nsb-{TASK_ID}-vnf__0\n\n")
    assert files["vfw_script"] == VFW_SCRIPT
    assert vfw.command() == ["/opt/nsb_bin/vFW", "-p", "0x3", "-f", f"{WORK}/vfw_config",
                             "-s", f"{WORK}/vfw_script"]
    assert vfw.cores() == [0, 1, 2, 3]
    # the NICs it takes by PCI address are the ones nsb binds to a DPDK driver for it
    assert [i.pci for i in vfw.dpdk_nics()] == ["0000:05:00.0", "0000:05:00.1"]


def test_vacl_reference_task(ys):
    acl = plan_vnfs(ys / ACL)["vnf__0"]
    config, script = acl.files()["acl_config"], acl.files()["acl_script"]
    assert "[PIPELINE3]\ntype = LOADB\ncore = 2\npktq_in = SWQ2 SWQ3\npktq_out = SWQ4 SWQ5\n" \
           "outport_offset = 136; 8\nn_vnf_threads = 1\nprv_que_handler = (0,)\n" in config
    assert "[PIPELINE4]\ntype = ACL\ncore = 3\npktq_in = SWQ4 SWQ5\npktq_out = SWQ6 SWQ7\n" \
           "traffic_type = 4\npkt_type = ipv4\nn_flows = 2000000\n" in config
    # vACL's default actions have no conntrack; its rules file names other networks
    assert "p action add 3 accept\np action add 3 count\np action add 3 fwd 1\n" in script
    assert "p acl add 1 0.0.0.0 0 152.16.40.0 24 0 65535 0 65535 0 0 1\n" \
           "p acl add 1 152.16.100.0 24 0.0.0.0 0 0 65535 0 65535 0 0 2\n" in script
    assert script.rstrip().endswith("p acl applyruleset")
    assert acl.command()[0] == "/opt/nsb_bin/vACL"


def test_vcgnapt_reference_task_timer_public_range_and_static_translation(ys):
    cgnapt = plan_vnfs(ys / CGNAPT)["vnf__0"]
    config = cgnapt.files()["cgnapt_config"]
    assert "[PIPELINE2]\ntype = TIMER\ncore = 0\ntimer_dyn_timeout = 1000000\n" in config
    assert "[PIPELINE3]\ntype = TXRX\ncore = 1\npipeline_txrx_type = RXRX\n" in config
    worker = config[config.index("[PIPELINE5]"):config.index("[PIPELINE6]")]
    assert "type = CGNAPT\ncore = 3\npktq_in = SWQ4 SWQ5\npktq_out = SWQ6 SWQ7\n" in worker
    # the first balancer's public range is the public address (flow.public_ip:
    # 152.16.40.10), its dynamic ports above the static translation's: vCGNAPT refuses
    # NSB's own (ports 1-65535, and the template's 4.4.0.0)
    assert "public_ip_port_range = 9810280a:(4096, 65535)\nvnf_set = (3,4,5)\n" in worker
    assert "prv_que_handler = (0,)" in worker
    assert "p action" not in cgnapt.files()["cgnapt_script"]  # no flows for vCGNAPT
    # NSB's pipeline (SW_DEFAULT_CORE - 1) and addresses (xe0's gateway in routing_table,
    # 152.16.40.10); ports 1-4095 of the gateway, port for port
    assert cgnapt.translations() == [
        "p 5 entry addm 152.16.100.20 1 152.16.40.10 1 0 32 4095 4095 4095"]


def test_vcgnapt_dynamic_napt_translates_to_the_scenario_public_ip(ys):
    edit(ys / CGNAPT, "      vnf_config:", "      napt: dynamic\n      vnf_config:")
    cgnapt = plan_vnfs(ys / CGNAPT)["vnf__0"]
    assert cgnapt.translations() == []
    # flow.public_ip: ["152.16.40.10"] of the task
    assert "public_ip_port_range = 9810280a:(1, 65535)" in cgnapt.files()["cgnapt_config"]
    # without one, NSB's template's range, written as NSB writes it (no leading zero)
    edit(ys / CGNAPT, '      public_ip: ["152.16.40.10"]\n', "")
    cgnapt = plan_vnfs(ys / CGNAPT)["vnf__0"]
    assert "public_ip_port_range = 4040000:(1, 65535)" in cgnapt.files()["cgnapt_config"]


def test_vcgnapt_public_ip_option_moves_range_and_translations(ys):
    edit(ys / CGNAPT, "      vnf_config:", "      public_ip: 10.9.8.7\n      vnf_config:")
    cgnapt = plan_vnfs(ys / CGNAPT)["vnf__0"]
    assert "public_ip_port_range = a090807:(4096, 65535)" in cgnapt.files()["cgnapt_config"]
    assert cgnapt.translations() == [
        "p 5 entry addm 152.16.100.20 1 10.9.8.7 1 0 32 4095 4095 4095"]


def test_udp_replay_reference_task_command(ys):
    replay = plan_vnfs(ys / UDP_REPLAY)["vnf__0"]
    assert replay.files() == {}
    assert replay.command() == [
        "/opt/nsb_bin/UDP_Replay", "--log-level=5", "-l", "0,1,2", "-n", "4",
        "-w", "0000:05:00.0", "-w", "0000:05:00.1", "--huge-dir", f"{WORK}/hugepages",
        "--socket-mem", "1000", "--file-prefix", f"nsb-{TASK_ID}-vnf__0", "--",
        "--no-hw-csum", "-p", "0x3", "--config=(0,0,1),(1,0,2)"]


def test_correlated_task_udp_replay_reflects_on_tg1s_one_port(ys):
    vnfs = plan_vnfs(ys / CORRELATED)
    assert sorted(vnfs) == ["tg__1", "vnf__0"]
    replay = vnfs["tg__1"]
    assert [p.name for p in replay.layout.ports] == ["xe0"]  # only downlink_0 is its
    assert replay.command()[-3:] == ["-p", "0x1", "--config=(0,0,1)"]
    # vFW's pair is its uplink_0 and downlink_0 ports; its downlink peer is tg__1
    vfw = vnfs["vnf__0"]
    assert [(u.name, d.name) for u, d in vfw.layout.pairs] == [("xe0", "xe1")]
    assert "p 1 arpadd 1 152.16.100.20 00:00:00:00:00:01" in vfw.files()["vfw_script"]


def test_hw_load_balancing_is_nsb_run_to_completion_layout(ys):
    """lb_config HW: ARPICMP sends on queue 0 of each port, each worker receives on its
    own queue and sends on the next: the layout of the example that ran in the lab
    (examples/vfw.cfg beside the binaries), two queue pairs per af_packet port."""
    edit(ys / VFW, "lb_config: 'SW'", "lb_config: 'HW'")
    vfw = plan_vnfs(ys / VFW)["vnf__0"]
    sections = dict(vfw.sections)
    assert dict(sections["PIPELINE1"])["pktq_in"] == "SWQ0"
    assert dict(sections["PIPELINE1"])["pktq_out"] == "TXQ0.0 TXQ1.0"
    worker = dict(sections["PIPELINE2"])
    assert (worker["type"], worker["pktq_in"], worker["pktq_out"]) == (
        "VFW", "RXQ0.0 RXQ1.0", "TXQ0.1 TXQ1.1 SWQ0")
    assert "PIPELINE3" not in sections
    assert pipeline_config.queues_per_port(vfw.sections) == {0: 2, 1: 2}
    assert vfw.command()[-2:] == ["--hwlb", "1"]
    assert "set fwd rxonly" in vfw.files()["vfw_script"]


def test_two_workers_with_hyperthreads_and_two_balancers(ys, tmp_path):
    """Four ports (two pairs), two load balancers, 1C/2T with two workers each: NSB
    puts a balancer's second worker on the first one's hyperthread."""
    pod_path = tmp_path / "pod.yaml"
    pod = yaml.safe_load(pod_path.read_text())
    for node, base in ((pod["nodes"][0], 20), (pod["nodes"][1], 30)):
        for n in (2, 3):
            node["interfaces"][f"xe{n}"] = {**node["interfaces"][f"xe{n - 2}"],
                                            "vpci": f"0000:06:00.{n - 2}",
                                            "local_ip": f"10.{n}.0.{base}",
                                            "local_mac": f"00:00:00:00:{base:02x}:{n:02x}"}
    pod_path.write_text(yaml.safe_dump(pod))
    topology = ys / f"{NSUT}/vfw/vfw-tg-topology.yaml"
    text = topology.read_text()
    more = text[text.index("        -   id: uplink_0"):].replace("link_0", "link_1") \
        .replace("xe0", "xe2").replace("xe1", "xe3")
    topology.write_text(text + more)
    edit(ys / VFW, "lb_count: 1, worker_config: '1C/1T', worker_threads: 1",
         "lb_count: 2, worker_config: '1C/2T', worker_threads: 2")
    vfw = plan_vnfs(ys / VFW)["vnf__0"]
    assert [(u.name, d.name) for u, d in vfw.layout.pairs] == [("xe0", "xe1"), ("xe2", "xe3")]
    kinds = [(name, dict(v)["type"], dict(v)["core"]) for name, v in vfw.sections]
    assert kinds == [
        ("PIPELINE0", "MASTER", "0"), ("PIPELINE1", "ARPICMP", "0"),
        ("PIPELINE2", "TXRX", "1"), ("PIPELINE3", "LOADB", "2"), ("PIPELINE4", "VFW", "3"),
        ("PIPELINE5", "VFW", "3h"), ("PIPELINE6", "TXRX", "1"),
        ("PIPELINE7", "TXRX", "4"), ("PIPELINE8", "LOADB", "5"), ("PIPELINE9", "VFW", "6"),
        ("PIPELINE10", "VFW", "6h"), ("PIPELINE11", "TXRX", "4")]
    arp = dict(dict(vfw.sections)["PIPELINE1"])
    assert (arp["pktq_in"], arp["pktq_out"]) == ("SWQ0 SWQ1", "SWQ2 SWQ3")
    assert arp["prv_to_pub_map"] == "(0,1)(2,3)"
    first_rx = dict(dict(vfw.sections)["PIPELINE2"])
    assert first_rx["pktq_in"] == "RXQ0.0 RXQ1.0 RXQ0.1 RXQ1.1"
    # each TXTX takes its workers' queues and its ARPICMP output queue
    assert dict(dict(vfw.sections)["PIPELINE6"])["pktq_in"] == "SWQ10 SWQ11 SWQ12 SWQ13 SWQ2"
    assert dict(dict(vfw.sections)["PIPELINE11"])["pktq_in"] == \
        "SWQ20 SWQ21 SWQ22 SWQ23 SWQ3"
    assert dict(dict(vfw.sections)["PIPELINE10"])["pktq_in"] == "SWQ18 SWQ19"
    assert vfw.layout.mask == "0xf"


def test_cores_place_nsb_numbers_and_traffic_type_6(ys):
    edit(ys / VFW, "      nfvi_enable: True", "      nfvi_enable: True\n      cores: [0, 1]")
    edit(ys / VFW, "    traffic_type: 4", "    traffic_type: 6")
    vfw = plan_vnfs(ys / VFW)["vnf__0"]
    assert [dict(v)["core"] for _, v in vfw.sections] == ["0", "0", "1", "1", "1", "1"]
    assert vfw.cores() == [0, 1]
    worker = dict(dict(vfw.sections)["PIPELINE4"])
    assert (worker["traffic_type"], worker["pkt_type"]) == ("6", "ipv6")
