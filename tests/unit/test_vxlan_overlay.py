"""The VXLAN overlay's configuration: what the ovs VNF asks of OVS (bridges, ports,
flows, route and neighbour), the frames TRex builds, and bad values as one line."""

from __future__ import annotations

import re
from pathlib import Path
from unittest import mock

import pytest
import yaml

from nsb.packets import VXLAN_DUT_MAC, Vxlan
from nsb.vnfs.trex import streams
from nsb.vnfs.trex import vxlan as trex_vxlan
from tests.conftest import SAMPLE

VXLAN_SAMPLE = SAMPLE.parent / "vswitch" / "tc_ovs_dpdk_vxlan_trex.yaml"


def _ovs(tmp_path: Path, **task_args):
    from nsb import engine
    from nsb.runinfo import RunInfo
    from nsb.task import loader

    task = loader.load(VXLAN_SAMPLE, task_args)
    plan = engine.plan(task, RunInfo("261126-000000-abcdef", task, tmp_path, dry_run=True))
    scenario = plan.scenarios[0]
    return next(v for v in scenario.vnfs if v.name == "ovs0"), scenario.generator


def test_generator_ports_go_on_br_phy_and_the_vm_s_on_the_bridge_with_the_tunnel(tmp_path):
    ovs, _ = _ovs(tmp_path, vni=77)
    groups = ovs.vsctl_commands()
    assert groups[1] == [["add-br", "br-phy"],
                         ["set", "bridge", "br-phy", "datapath_type=netdev", "fail_mode=secure",
                          f"other_config:hwaddr={VXLAN_DUT_MAC}"]]
    added = {g[0][2]: g[0][1] for g in groups[2:]}
    assert added == {"br_int-0a": "br-phy", "br_int-1b": "br-phy", "br_int-0b": "br_int",
                     "br_int-1a": "br_int", "vxlan0": "br_int"}
    assert groups[-1][1] == ["set", "Interface", "vxlan0", "type=vxlan",
                             "options:remote_ip=172.31.255.2", "options:local_ip=172.31.255.1",
                             "options:key=77", "options:dst_port=4789"]


def test_flows_route_and_neighbour_decapsulate_to_the_vm_and_encapsulate_back(tmp_path):
    ovs, gen = _ovs(tmp_path)
    assert ovs.flow_rules() == ["priority=100,in_port=vxlan0,actions=output:br_int-0b",
                                "priority=100,in_port=br_int-1a,actions=output:vxlan0"]
    described = ovs.describe()["vxlan"]
    assert described["phy_bridge_flows"] == [
        "priority=100,in_port=br_int-0a,udp,tp_dst=4789,actions=LOCAL",
        "priority=100,in_port=LOCAL,udp,tp_dst=4789,actions=output:br_int-1b"]
    xe1_mac = gen.ports[1].mac  # the re-encapsulated frames go to TRex's receiving port
    assert described["ovs_appctl"] == ["ovs/route/add 172.31.255.0/24 br-phy",
                                       f"tnl/arp/set br-phy 172.31.255.2 {xe1_mac}"]
    assert described["ip"] == ["ip addr add 172.31.255.1/24 dev br-phy",
                               "ip link set br-phy up"]
    assert ovs.describe()["kpi_ports"]["port4"] == "vxlan0"


def test_results_state_inner_and_outer_frame_sizes(tmp_path):
    ovs, gen = _ovs(tmp_path)
    assert ovs.result_kpis(64, 1e6)["outer_frame_size"] == 114
    assert ovs.result_kpis(1468, 1e6)["inner_frame_size"] == 1468
    assert gen.vxlan == Vxlan(vni=4096)
    assert "114 B outer" in gen.describe()["vxlan"]["frame_sizes"]


class _Layer:
    """A scapy layer as far as streams.py looks at one: fields, length, stacking."""

    SIZES = {"Ether": 14, "IP": 20, "UDP": 8, "VXLAN": 8}

    def __init__(self, name, *payload, **fields):
        self.stack = [(name, fields)]
        self.length = self.SIZES.get(name, len(payload[0]) if payload else 0)

    def __truediv__(self, other):
        joined = _Layer("")
        joined.stack = self.stack + other.stack
        joined.length = self.length + other.length
        return joined

    def __len__(self):
        return self.length


def _fake_api():
    api = mock.MagicMock()
    for name in ("Ether", "IP", "UDP", "VXLAN", "Raw"):
        setattr(api, name, lambda *a, _n=name, **kw: _Layer(_n, *a, **kw))
    return api


def test_trex_sends_the_inner_frame_inside_vxlan_50_bytes_longer():
    api = _fake_api()
    iface = mock.MagicMock(address="10.0.0.1", mac="02:00:00:00:00:01")
    path = streams.Path(0, 1, iface, iface, 0, streams.Direction.UPLINK)
    spec = trex_vxlan.tunnelled(streams.default_spec(path, 16), Vxlan(vni=99))
    streams.data_streams(api, path, spec, 64, 1e4)
    built = api.STLPktBuilder.call_args.kwargs["pkt"]
    names = [name for name, _ in built.stack]
    assert names == ["Ether", "IP", "UDP", "VXLAN", "Ether", "IP", "UDP", "Raw"]
    assert len(built) == 114 - 4  # the FCS is the NIC's
    outer_ether, outer_ip, outer_udp, vxlan = (fields for _, fields in built.stack[:4])
    assert outer_ether == {"src": "02:00:00:00:00:01", "dst": VXLAN_DUT_MAC}
    assert (outer_ip["src"], outer_ip["dst"]) == ("172.31.255.2", "172.31.255.1")
    assert outer_udp["dport"] == 4789 and vxlan == {"vni": 99}
    vm = api.STLVM.return_value  # the flows count in the inner source address
    vm.write.assert_called_once_with(fv_name="ip_src", pkt_offset="IP:1.src", offset_fixup=0,
                                     add_val=mock.ANY)
    vm.fix_chksum.assert_called_once_with(offset="IP:1")


def test_a_frame_mix_inside_vxlan_is_one_line():
    from nsb import frames
    from nsb.errors import RunError

    iface = mock.MagicMock(address="10.0.0.1", mac="02:00:00:00:00:01")
    path = streams.Path(0, 1, iface, iface, 0, streams.Direction.UPLINK)
    spec = trex_vxlan.tunnelled(streams.default_spec(path, 1), Vxlan(vni=1))
    mix = frames.from_weights({64: 7, 576: 4, 1518: 1})
    with pytest.raises(RunError, match="inside VXLAN are sent at one size per trial"):
        streams.data_streams(_fake_api(), path, spec, mix, 1e4)


def _write(tmp_path: Path, old: str, new: str) -> Path:
    text = VXLAN_SAMPLE.read_text()
    assert old in text
    task = tmp_path / "task.yaml"
    task.write_text(text.replace(old, new))
    return task


@pytest.mark.parametrize("old, new, message", [
    ("vxlan: {vni: {{ vni | default(4096) }}, local_ip: 172.31.255.1/24",
     "vxlan: {vni: 16777216, local_ip: 172.31.255.1/24",
     r"task.yaml:4\d: .*vxlan.vni: 16777216 is above the maximum 16777215"),
    ("local_ip: 172.31.255.1/24", "local_ip: 172.31.255.1",
     r"task.yaml:4\d: .*vxlan.local_ip: '172.31.255.1' does not match"),
    ("remote_ip: 172.31.255.2, phy", "remote_ip: 10.9.9.9, phy",
     r"task.yaml:\d+: .*vxlan: remote_ip 10.9.9.9 is not in local_ip 172.31.255.1/24's network"),
    ("latency_pps: 0", "latency_pps: 100",
     r"task.yaml:\d+: .*latency_pps: 100: latency frames are not matched .* latency_pps: 0"),
    ("    - {ends: [vnf:eth1, tg:xe1], via: br_int}",
     "    - {ends: [vnf:eth1, tg:xe1], via: br_int}\n    - {ends: [tg:xe2, tg:xe3], via: br_int}",
     r"task.yaml:\d+: .*vxlan: 3 links go via the bridge .* exactly one from the generator"),
])
def test_bad_overlay_values_are_one_located_line(nsb_main, tmp_path, old, new, message):
    task = _write(tmp_path, old, new)
    if "xe2" in new:
        task.write_text(task.read_text().replace(
            "interfaces: {xe0: {type: vhostuser}, xe1: {type: vhostuser}}",
            "interfaces: {xe0: {type: vhostuser}, xe1: {type: vhostuser}, "
            "xe2: {type: vhostuser}, xe3: {type: vhostuser}}"))
    code, _, err = nsb_main("task", "validate", str(task))
    assert code == 2 and re.search(message, err), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_plan_shows_the_tunnel(nsb_main):
    code, out, err = nsb_main("task", "start", "--dry-run", str(VXLAN_SAMPLE))
    assert code == 0, err
    plan = yaml.safe_load(out)["scenarios"][0]
    assert plan["vnfs"]["ovs0"]["vxlan"]["vni"] == 4096
    assert plan["traffic_generator"]["tg0"]["vxlan"]["remote_ip"] == "172.31.255.1"


def test_the_report_table_states_inner_and_outer_frame_sizes():
    from nsb.report import html_tables, summary

    tunnelled = summary.row("t", {"frame_size": 64, "outer_frame_size": 114,
                                  "throughput_pps": 1e6})
    html = html_tables.summary_table([tunnelled], "vxlan")
    assert "<th>Inner frame (B)</th><th>Outer frame (B)</th>" in html
    assert "<td>64</td><td>114</td>" in html
    plain = html_tables.summary_table([summary.row("t", {"frame_size": 64})], "plain")
    assert "Outer frame" not in plain and "<th>Frame (B)</th>" in plain


def test_the_vswitch_page_shows_the_sample_s_vxlan_options(tmp_path):
    from tests.doc_examples import examples

    (shown,) = [e for e in examples("checked-by") if "test_vxlan_overlay.py" in e.note]
    assert shown.file.name == "vswitch.md"
    ovs, gen = _ovs(tmp_path)
    readme = yaml.safe_load(shown.text)
    assert readme["ovs0"]["vxlan"].items() <= ovs.options["vxlan"].items()
    assert readme["tg0"]["vxlan"].items() <= gen.options["vxlan"].items()
    assert gen.vxlan.dst_ip == ovs.overlay.local_ip.split("/")[0]
    assert ovs.overlay.remote_ip == gen.vxlan.src_ip and ovs.overlay.vni == gen.vxlan.vni
