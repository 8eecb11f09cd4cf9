"""The router, agnostic and command VNFs at plan time: the command VNF's placeholders
and their errors, its stats output, the router's neighbours and routes, and NSB's
router and agnostic tasks loading and planning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nsb import engine
from nsb.nodes.node import Interface
from nsb.runinfo import RunInfo
from nsb.task import loader
from nsb.vnfs.generic import command_stats, placeholders, router_addresses
from nsb.vnfs.generic.router_state import route_argv
from tests.unit.test_task_errors import check_one_line_error

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
NSUT = "samples/vnf_samples/nsut"
TASK_ID = "261126-000000-abcdef"

PORTS = [Interface("xe0", mac="02:00:00:00:00:01", ip="10.0.0.2/24", pci="0000:05:00.0",
                   peer_mac="02:00:00:00:00:0a", peer_ip="10.0.0.1/24"),
         Interface("xe1", mac="02:00:00:00:00:02", ip="10.0.1.2/24",
                   peer_mac="02:00:00:00:00:0b", peer_ip="10.0.1.1/24")]
VALUES = placeholders.Values(PORTS, {"port_count": "2", "lcores": "0-1",
                                     "file_prefix": "nsb-t-fwd0", "work_dir": "/tmp/nsb-t/fwd0",
                                     "node": "sut", "task_id": "t"})


# placeholders

@pytest.mark.parametrize("text, filled", [
    ("-a {ports[0].pci}", "-a 0000:05:00.0"),
    ("net_af_packet1,iface={ports[1].name}", "net_af_packet1,iface=xe1"),
    ("--eth-peer=0,{ports[0].peer_mac}", "--eth-peer=0,02:00:00:00:00:0a"),
    ("{ports[1].mac} {ports[1].ip} {ports[1].address} {ports[1].peer_ip}",
     "02:00:00:00:00:02 10.0.1.2/24 10.0.1.2 10.0.1.1"),
    ("-l {lcores} --file-prefix {file_prefix}", "-l 0-1 --file-prefix nsb-t-fwd0"),
    ("{work_dir}/startup.conf on { node } ({port_count} ports)",
     "/tmp/nsb-t/fwd0/startup.conf on sut (2 ports)"),
    ('{{"ports": {port_count}}}', '{"ports": 2}'),
    ("no placeholder", "no placeholder"),
])
def test_placeholders_are_filled(text, filled):
    assert placeholders.fill(text, VALUES) == filled


@pytest.mark.parametrize("text, fragments", [
    ("{port}", ["unknown placeholder {port}; known: {ports[N].name}", "{lcores}",
                "'{{' and '}}' for literal braces"]),
    ("{ports[0].driver}", ["unknown port field {ports[0].driver}; ports have name, mac, pci"]),
    ("{ports[2].name}", ["{ports[2].name}: the VNF has 2 ports (ports[0] = xe0, ports[1] = xe1)"]),
    ("{ports[1].pci}", ["{ports[1].pci}: port xe1 has no pci (it comes from the pod's vpci)"]),
    ('{"a": 1}', ['unknown placeholder {"a": 1}']),
    ("x}", ["a lone '}' in 'x}' (write '}}' for a literal brace)"]),
    ("{x", ["a lone '{'"]),
])
def test_placeholder_errors_say_what_exists(text, fragments):
    with pytest.raises(ValueError) as failed:
        placeholders.fill(text, VALUES)
    for fragment in fragments:
        assert fragment in str(failed.value), str(failed.value)


def test_a_placeholder_without_its_option_names_the_option():
    values = placeholders.Values(PORTS, {**VALUES.named, "lcores": ""})
    with pytest.raises(ValueError, match=r"\{lcores\} has no value \(set options.lcores\)"):
        placeholders.fill("-l {lcores}", values)
    assert placeholders.used(["-l {lcores}", "{{x}} {ports[0].pci}"]) == {"lcores",
                                                                          "ports[0].pci"}


# stats output

@pytest.mark.parametrize("output, kpis", [
    ('{"rx": 10, "port": {"tx": 9, "name": "xe0", "up": true, "q": [1, 2]}}',
     {"rx": 10.0, "port.tx": 9.0}),
    ('{"/ethdev/stats,0": {"ipackets": 5}}\n{"/ethdev/stats,1": {"opackets": 4}}\n',
     {"/ethdev/stats,0.ipackets": 5.0, "/ethdev/stats,1.opackets": 4.0}),
    ("rx_packets 100\ntx_packets: 99\ndrops=1\nstate running\nnot a key value line\n",
     {"rx_packets": 100.0, "tx_packets": 99.0, "drops": 1.0}),
    ("{not json} 3\nrate 1e3\nnan nan\n", {"rate": 1000.0}),
    ("", {}),
])
def test_stats_output_becomes_kpis(output, kpis):
    assert command_stats.parse(output) == kpis


# router ports

def test_router_port_neighbours_and_routes():
    plan = router_addresses.port_plan(PORTS[1], ["10.0.1.20-10.0.1.22", "10.0.1.2",
                                                 "10.0.0.0-10.0.3.255", "172.16.0.7"])
    # the peer and the generator's addresses in the subnet, never the router's own
    # address, the subnet's network or broadcast address
    assert plan.neighbours[:4] == ("10.0.1.1", "10.0.1.3", "10.0.1.4", "10.0.1.5")
    assert "10.0.1.2" not in plan.neighbours and "10.0.1.0" not in plan.neighbours
    assert "10.0.1.255" not in plan.neighbours and len(plan.neighbours) == 253
    # outside it, the fewest networks, via the peer
    assert plan.routes == ("10.0.0.0/24", "10.0.2.0/23", "172.16.0.7/32")
    assert plan.described()["routes"][0] == "10.0.0.0/24 via 10.0.1.1"


@pytest.mark.parametrize("wanted, fragment", [
    (["10.0.0.0/8"], "more than 4096 addresses in xe0's subnet"),
    (["2001:db8::1"], "2001:db8::1: IPv6, but xe0 has the IPv4 address 10.0.0.2/24"),
    (["10.0.0.9-10.0.0.3"], "'10.0.0.9-10.0.0.3' runs backwards"),
    (["ten"], "'ten' is not an address, a range 'first-last' or a network"),
])
def test_router_port_errors(wanted, fragment):
    iface = Interface("xe0", ip="10.0.0.2/16", peer_mac="02:00:00:00:00:0a",
                      peer_ip="10.0.0.1/16") if "4096" in fragment else PORTS[0]
    with pytest.raises(ValueError, match=".") as failed:
        router_addresses.port_plan(iface, wanted)
    assert fragment in str(failed.value)


def test_router_port_needs_an_address_and_a_peer_address_for_routes():
    with pytest.raises(ValueError, match="xe2 has no IP address in the topology"):
        router_addresses.port_plan(Interface("xe2", peer_mac="02:00:00:00:00:0c"), [])
    lonely = Interface("xe3", ip="10.5.0.1/24", peer_mac="02:00:00:00:00:0c")
    with pytest.raises(ValueError, match="the peer of xe3 has none"):
        router_addresses.port_plan(lonely, ["10.6.0.0/24"])
    assert router_addresses.port_plan(lonely, ["10.5.0.9"]).neighbours == ("10.5.0.9",)


def test_nsb_flow_pairs_sources_and_destinations_with_ports():
    flow = {"src_ip_0": "152.16.100.26", "dst_ip_0": "152.16.40.26",
            "src_ip_1": "10.1.0.1-10.1.0.3", "dst_ip_1": "10.2.0.1", "count": 1}
    assert router_addresses.flow_addresses(flow, ["xe0", "xe1"]) == {
        "xe0": ["152.16.100.26"], "xe1": ["152.16.40.26"]}  # pair 1 has no ports here
    assert router_addresses.flow_addresses(flow, ["a", "b", "c", "d"])["c"] == [
        "10.1.0.1-10.1.0.3"]


def test_saved_routes_are_given_back_as_they_were():
    route = {"dst": "198.51.100.0/24", "gateway": "192.0.2.1", "protocol": "static",
             "metric": 20, "flags": ["onlink"]}
    assert route_argv(route, "ens1") == ["ip", "route", "replace", "198.51.100.0/24", "via",
                                         "192.0.2.1", "dev", "ens1", "proto", "static",
                                         "metric", "20", "onlink"]


# tasks

COMMAND_TASK = """\
schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {interfaces: {xe0: {}, xe1: {}}}
    sut: {interfaces: {xe0: {}, xe1: {}}}
  links: [[tg:xe0, sut:xe0], [sut:xe1, tg:xe1]]
scenarios:
  - name: cmd
    vnfs:
      - name: fwd0
        type: command
        node: sut
        options:
          command: [fwd, "--in={ports[0].name}", "--out={ports[1].name}", "-l", "{lcores}"]
          lcores: "0-1"
          ready_command: [fwd-ctl, "{file_prefix}", status]
    traffic_generator: {name: tg0, type: trafgen, node: tg}
    traffic_profile: {type: fixed, packet_sizes: [64], duration: 1, rate_pps: 1000}
"""


def _task(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(text)
    return path


def _plan(path: Path, args: dict | None = None):
    task = loader.load(path, args or {})
    return engine.plan(task, RunInfo(task_id=TASK_ID, task=task, results_dir=path.parent,
                                     dry_run=True))


def test_command_is_filled_at_plan_time(tmp_path):
    [vnf] = _plan(_task(tmp_path, COMMAND_TASK)).scenarios[0].vnfs
    shown = vnf.describe()
    assert shown["command"] == "fwd --in=xe0 --out=xe1 -l 0-1"
    assert shown["ready_command"] == f"fwd-ctl nsb-{TASK_ID}-fwd0 status"
    assert vnf.required_binaries() == ["fwd"] and vnf.dpdk_nics() == []


@pytest.mark.parametrize("old, new, fragments", [
    ('"-l", "{lcores}"]', '"-l", "{cores}"]',
     ["task.yaml:15: scenarios[0].vnfs[0].options.command[4]: unknown placeholder {cores}"]),
    ('"--out={ports[1].name}"', '"--out={ports[2].name}"',
     ["options.command[2]: {ports[2].name}: the VNF has 2 ports"]),
    ('"{file_prefix}", status]', '"{file_prefix", status]',
     ["options.ready_command[1]: a lone '{'"]),
    ('          lcores: "0-1"\n', "", ["options.command[4]: {lcores} has no value"]),
    ("          ready_command: [fwd-ctl, \"{file_prefix}\", status]\n", "",
     ["options: say when the program is ready: ready_port", "or ready_command"]),
    ('command: [fwd,', 'interfaces: [xe0, xe7]\n          command: [fwd,',
     ["options.interfaces[1]: node sut has no interface 'xe7'; it has: xe0, xe1"]),
    ('lcores: "0-1"', 'lcores: "0-1"\n          ready_port: 70000',
     ["options.ready_port", "70000"]),
])
def test_command_errors_are_one_located_line(nsb_main, tmp_path, old, new, fragments):
    assert old in COMMAND_TASK
    path = _task(tmp_path, COMMAND_TASK.replace(old, new))
    check_one_line_error(nsb_main("task", "start", "--dry-run", str(path)), *fragments)


DPDK_TASK = """\
schema: "nsb:task:0.1"
context:
  type: baremetal
  file: {pod}
  links: [[trafficgen_1:xe0, vnf:xe0], [vnf:xe1, trafficgen_1:xe1]]
scenarios:
  - name: cmd
    vnfs:
      - name: fwd0
        type: command
        node: vnf
        options:
          command: [fwd, -a, "{{ports[0].pci}}", -a, "{{ports[1].pci}}"]
          dpdk: true
          ready_port: 8080
    traffic_generator: {{name: tg0, type: trafgen, node: trafficgen_1}}
    traffic_profile: {{type: fixed, packet_sizes: [64], duration: 1, rate_pps: 1000}}
"""


def test_dpdk_command_takes_its_pci_ports(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text((DATA / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text()
                   .replace("<nic kernel driver>", "i40e"))
    [vnf] = _plan(_task(tmp_path, DPDK_TASK.format(pod=pod))).scenarios[0].vnfs
    assert vnf.describe()["command"] == "fwd -a 0000:05:00.0 -a 0000:05:00.1"
    assert [i.name for i in vnf.dpdk_nics()] == ["xe0", "xe1"]  # nsb binds them
    assert vnf.ADDS_HUGEPAGES and vnf._pages == 128 + 16  # hugepages_mb 256, as testpmd


def test_command_preflight_checks_lcores_and_hugepage_memory(tmp_path):
    [vnf] = _plan(_task(tmp_path, COMMAND_TASK)).scenarios[0].vnfs
    assert vnf.preflight({"online_cpus": "0-3"}) == []
    assert vnf.preflight({"online_cpus": "0"}) == [
        "lcores 0-1: the node has no CPU 1 (online CPUs: 0)"]
    pod = tmp_path / "pod.yaml"
    pod.write_text((DATA / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text()
                   .replace("<nic kernel driver>", "i40e"))
    [dpdk] = _plan(_task(tmp_path, DPDK_TASK.format(pod=pod))).scenarios[0].vnfs
    assert dpdk.preflight({"hugepages_free": 100, "mem_available_kb": 2048 * 44}) == []
    assert dpdk.preflight({"hugepages_free": 100, "mem_available_kb": 2048 * 43}) == [
        "needs 144 hugepages of 2 MB (hugepages_mb); the node has 100 free and memory for "
        "43 more"]


def _reference(tmp_path: Path, sut: str, tg: str) -> Path:
    """NSB's samples with the pod their tasks name (its nodes renamed as those do)."""
    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    pod = (copy / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text()
    (tmp_path / "pod.yaml").write_text(pod.replace("name: trafficgen_1", f"name: {tg}").replace(
        "name: vnf\n", f"name: {sut}\n").replace("<nic kernel driver>", "i40e"))
    return copy


def test_nsb_router_task_plans_neighbours_for_its_flow(tmp_path):
    task = _reference(tmp_path, "vnf_0", "trafficgen_0") / \
        f"{NSUT}/router/tc_baremetal_rfc2544_ipv4_1flow_trex.yaml"
    task.write_text(task.read_text().replace("/etc/yardstick/nodes/pod.yaml",
                                             str(tmp_path / "pod.yaml")))
    [router] = _plan(task).scenarios[0].vnfs
    assert router.spec.type == "RouterVNF"
    ports = router.describe()["ports"]
    # NSB's flow: src_ip 152.16.100.26 behind xe0, dst_ip 152.16.40.26 behind xe1, each
    # with the MAC of the generator's port cabled to it (pod local_mac)
    assert ports["xe0"]["neighbours"] == ["152.16.100.20", "152.16.100.26"]
    assert ports["xe1"]["neighbours"] == ["152.16.40.19", "152.16.40.26"]
    assert ports["xe1"]["peer_mac"] == "00:00:00:00:00:02" and ports["xe1"]["routes"] == []
    assert ports["xe0"]["address"] == "152.16.100.21/24"
    assert router.options["nfvi_enable"] is True  # NSB's option, accepted


def test_nsb_agnostic_task_plans_with_its_pod_argument(nsb_main, tmp_path):
    _reference(tmp_path, "vnf_0", "tg_0")
    task = DATA / f"{NSUT}/agnostic/tc_baremetal_rfc2544_ipv4_trex.yaml"
    code, out, err = nsb_main("task", "start", "--dry-run", "--task-args",
                              f'{{"file": "{tmp_path / "pod.yaml"}"}}', str(task))
    assert code == 0, err
    assert "type: AgnosticVnf" in out and "nothing is started or stopped" in out
    [agnostic] = _plan(task, {"file": str(tmp_path / "pod.yaml")}).scenarios[0].vnfs
    assert agnostic.collect_kpi() == {} and agnostic.dpdk_nics() == []


def test_nsb_router_flow_too_large_is_located(nsb_main, tmp_path):
    task = _reference(tmp_path, "vnf_0", "trafficgen_0") / \
        f"{NSUT}/router/tc_baremetal_rfc2544_ipv4_1flow_trex.yaml"
    pod = tmp_path / "pod.yaml"
    pod.write_text(pod.read_text().replace('netmask:   "255.255.255.0"', 'netmask: "255.255.0.0"'))
    task.write_text(task.read_text().replace("/etc/yardstick/nodes/pod.yaml", str(pod)).replace(
        "- '152.16.40.26'", "- '152.16.0.1-152.16.255.254'"))
    check_one_line_error(nsb_main("task", "validate", str(task)),
                         "options.vnf__0", "port xe1: 152.16.0.1-152.16.255.254: more than 4096")


LISTENER = """\
import socket, sys, time
print("starting", flush=True)
time.sleep(0.5)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
print("listening on", sys.argv[1], "for", sys.argv[2], flush=True)
while True:
    server.accept()[0].close()
"""


def test_command_ready_on_its_tcp_port_reports_stats_and_stops(tmp_path):
    """A real program on this machine: ready once its port answers (not before), its
    stats command's output as KPIs, and nothing of it left after terminate."""
    import socket
    import subprocess
    import sys

    from nsb.executors.local import LocalExecutor

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "listener.py"
    script.write_text(LISTENER)
    task = COMMAND_TASK.replace(
        'command: [fwd, "--in={ports[0].name}", "--out={ports[1].name}", "-l", "{lcores}"]',
        f'command: [{sys.executable}, {script}, "{port}", "{{task_id}}"]').replace(
        'ready_command: [fwd-ctl, "{file_prefix}", status]',
        f'ready_port: {port}\n          stats_command: [sh, -c, "echo served 3; echo ports '
        f'{{port_count}}"]')
    [vnf] = _plan(_task(tmp_path, task)).scenarios[0].vnfs
    vnf.node.executor = LocalExecutor("sut")
    try:
        vnf.instantiate()
        vnf.wait_until_ready(10)
        assert "listening on" in vnf.log_text()  # it had bound its port
        assert vnf.collect_kpi() == {"served": 3.0, "ports": 2.0}
        assert Path(vnf.work_dir).is_dir()
    finally:
        vnf.terminate()
    assert vnf.process is None and not Path(vnf.work_dir).exists()
    left = subprocess.run(["pgrep", "-f", TASK_ID], capture_output=True, text=True).stdout
    assert left == ""
    assert Path(tmp_path / "logs" / f"fwd0-{Path(sys.executable).name}.log").exists()
