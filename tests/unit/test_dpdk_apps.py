"""l3fwd and l2fwd at plan time: their command lines on PCI NICs, af_packet and memif
ports, l3fwd's --config map, --eth-dest and route files, their option errors, and what
they leave on a node (nothing). tests/functional/test_dpdk_apps.py runs them for real."""

from __future__ import annotations

import json
import shutil
import types
from pathlib import Path

import pytest

from nsb import engine
from nsb.nodes.node import Interface
from nsb.runinfo import RunInfo
from nsb.task import loader
from nsb.vnfs.dpdk import l3fwd_routes, telemetry
from nsb.vnfs.dpdk.l3fwd import config_map, config_text, lcore_list
from tests.conftest import ROOT
from tests.unit.test_task_errors import check_one_line_error

SAMPLE = ROOT / "samples" / "dpdk" / "tc_l3fwd_phy2phy.yaml"
DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
ROUTER_TASK = "samples/vnf_samples/nsut/router/tc_baremetal_rfc2544_ipv4_1flow_trex.yaml"
TASK_ID = "261126-000000-abcdef"


def plan(task_file: Path, args: dict | None = None):
    task = loader.load(task_file, args or {})
    return engine.plan(task, RunInfo(task_id=TASK_ID, task=task, results_dir=Path("/nowhere")))


def vnf_of(task_file: Path, args: dict | None = None, scenario: int = 0):
    return plan(task_file, args).scenarios[scenario].vnfs[0]


def app_args(vnf) -> list[str]:
    argv = vnf.command()
    return argv[argv.index("--") + 1:]


def lab_task(tmp_path: Path, app: str = "l3fwd", link: str = "veth", options: dict | None = None,
             ips: tuple[str, str] = ("", ""), generator_options: dict | None = None) -> Path:
    """Two namespaces, the app on sut between xe0 and xe1 (sut's addresses ``ips``, the
    generator's the same with .1 last)."""
    def iface(ip: str, mine: bool = True) -> str:
        if ip and not mine:
            address, prefix = ip.split("/")
            ip = f"{address.rsplit('.', 1)[0]}.1/{prefix}"
        return json.dumps({"type": link, **({"ip": ip} if ip else {})})
    path = tmp_path / "task.yaml"
    path.write_text(f"""schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {{role: TrafficGen, interfaces: {{xe0: {iface(ips[0], False)},
                                        xe1: {iface(ips[1], False)}}}}}
    sut: {{role: Sut, interfaces: {{xe0: {iface(ips[0])}, xe1: {iface(ips[1])}}}}}
  links: [[tg:xe0, sut:xe0], [sut:xe1, tg:xe1]]
scenarios:
  - name: s
    vnfs: [{{name: fwd0, type: {app}, node: sut, options: {json.dumps(options or {})}}}]
    traffic_generator: {{name: tg0, type: {"trex" if link == "memif" else "trafgen"}, node: tg,
                        options: {json.dumps(generator_options or {})}}}
    traffic_profile: {{type: fixed, rate_pct: 1}}
""")
    return path


@pytest.fixture
def nsb_router_task(tmp_path) -> Path:
    """NSB's router test (TRex, a pod of two servers with PCI NICs) with its VNF
    descriptor naming nsb's l3fwd."""
    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    pod = (copy / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text()
    (tmp_path / "pod.yaml").write_text(pod.replace("name: trafficgen_1", "name: trafficgen_0")
                                       .replace("name: vnf\n", "name: vnf_0\n")
                                       .replace("<nic kernel driver>", "i40e"))
    task = copy / ROUTER_TASK
    task.write_text(task.read_text().replace("/etc/yardstick/nodes/pod.yaml",
                                             str(tmp_path / "pod.yaml")))
    descriptor = copy / "samples/vnf_samples/vnf_descriptors/router_vnf.yaml"
    descriptor.write_text(descriptor.read_text().replace("id: RouterVNF", "id: l3fwd"))
    return task


# the --config map

def test_the_config_map_deals_queues_to_lcores_as_the_intel_report_does():
    # Intel ONP 2.1, table 7-2: 4 ports, 1 queue each, 2 cores
    assert config_text(config_map([1, 1, 1, 1], [2, 3])) == "(0,0,2),(1,0,3),(2,0,2),(3,0,3)"
    assert config_map([2, 2], [1, 0]) == [(0, 0, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0)]
    assert config_map([1, 1], [5]) == [(0, 0, 5), (1, 0, 5)]


def test_lcores_keep_the_order_written():
    assert lcore_list("1,0") == [1, 0]
    assert lcore_list("0-2,6") == [0, 1, 2, 6]
    assert lcore_list("3,1-3") == [3, 1, 2]


# command lines

def test_l3fwd_on_a_pods_nics_from_an_nsb_descriptor(nsb_router_task):
    """NSB descriptors may name nsb's plugin (id: l3fwd): it takes the pod's NICs by PCI
    address on hugepages, sends to the TG's MACs and routes the pod's subnets."""
    vnf = vnf_of(nsb_router_task)
    argv = vnf.command()
    assert vnf.spec.type == "l3fwd"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-a"] == ["0000:05:00.0",
                                                                      "0000:05:00.1"]
    assert "--in-memory" in argv and "--no-pci" not in argv and "--no-huge" not in argv
    assert not any(a.startswith("net_af_packet") for a in argv)
    args = app_args(vnf)
    assert args[:2] == ["-p", "0x3"] and "-P" in args and "--parse-ptype" in args
    assert "--config=(0,0,1),(1,0,1)" in args
    # the pod's trafficgen_0: xe0 00:00:00:00:00:01, xe1 00:00:00:00:00:02
    assert [a for a in args if a.startswith("--eth-dest")] == [
        "--eth-dest=0,00:00:00:00:00:01", "--eth-dest=1,00:00:00:00:00:02"]
    assert vnf.describe()["rule_ipv4"].splitlines()[1:] == ["R152.16.100.0/24 0",
                                                            "R152.16.40.0/24 1"]
    assert f"--rule_ipv4=/tmp/nsb-{TASK_ID}/vnf__0/rule_ipv4.cfg" in args
    assert [n.pci for n in vnf.dpdk_nics()] == ["0000:05:00.0", "0000:05:00.1"]


def test_l3fwd_in_the_lab_on_af_packet_with_one_and_two_cores():
    one, two = (vnf_of(SAMPLE, {"generator": "trafgen"}, s) for s in (0, 1))
    argv = one.command()
    assert argv[:3] == ["dpdk-l3fwd", "--no-huge", "--no-pci"]
    assert argv[argv.index("-l") + 1] == "1" and argv[argv.index("-m") + 1] == "512"
    vdevs = [argv[i + 1] for i, a in enumerate(argv) if a == "--vdev"]
    assert [v.split(",")[:2] for v in vdevs] == [["net_af_packet0", "iface=xe0"],
                                                 ["net_af_packet1", "iface=xe1"]]
    assert "qpairs" not in argv[argv.index("--vdev") + 1]
    assert "--config=(0,0,1),(1,0,1)" in app_args(one)
    # two lcores: each sends on a queue of its own and every receive queue is read
    argv = two.command()
    assert argv[argv.index("-l") + 1] == "1,0"
    assert all(v.endswith(",qpairs=2") for v in argv if v.startswith("net_af_packet"))
    assert "--config=(0,0,1),(0,1,0),(1,0,1),(1,1,0)" in app_args(two)
    # the lab's addresses are not l3fwd's own: nsb's routes, each port's subnet
    routes = one.describe()["rule_ipv4"].splitlines()[1:]
    ports = one.interfaces
    assert routes == [f"R{ports[0].ip.rsplit('.', 1)[0]}.0/24 0",
                      f"R{ports[1].ip.rsplit('.', 1)[0]}.0/24 1"]
    assert [a.split(",")[1] for a in app_args(one) if a.startswith("--eth-dest")] == \
        [i.peer_mac for i in ports]


def test_l3fwd_over_memif_serves_the_sockets(tmp_path):
    vnf = vnf_of(lab_task(tmp_path, link="memif"))
    argv = vnf.command()
    vdevs = [argv[i + 1] for i, a in enumerate(argv) if a == "--vdev"]
    assert [v.split(",")[:2] for v in vdevs] == [["net_memif0", "role=server"],
                                                 ["net_memif1", "role=server"]]
    assert all(f"socket={i.socket}" in v for v, i in zip(vdevs, vnf.interfaces, strict=True))
    assert "--no-huge" in argv and "--config=(0,0,1),(1,0,1)" in app_args(vnf)


def test_l3fwd_options_reach_its_command(tmp_path):
    vnf = vnf_of(lab_task(tmp_path, options={
        "l3fwd_path": "/opt/l3fwd", "lookup": "em", "promiscuous": False,
        "parse_ptype": False, "rxd": 2048, "txd": 512, "queues": 2, "lcores": "2-3",
        "extra_args": ["--per-port-pool"], "memory_channels": 4}))
    argv, args = vnf.command(), app_args(vnf)
    assert argv[0] == "/opt/l3fwd" and argv[argv.index("-n") + 1] == "4"
    assert argv[argv.index("-m") + 1] == "1024"  # exact match's hash of 4M entries
    assert "-P" not in args and "--parse-ptype" not in args and "--lookup=em" in args
    assert "--rx-queue-size=2048" in args and "--tx-queue-size=512" in args
    assert "--config=(0,0,2),(0,1,3),(1,0,2),(1,1,3)" in args
    assert args[-1] == "--per-port-pool"
    assert not any(a.startswith("--rule_ipv4") for a in args)  # em: l3fwd's own table


def test_l2fwd_pairs_ports_on_its_cores(tmp_path):
    vnf = vnf_of(lab_task(tmp_path, app="l2fwd"))
    argv = vnf.command()
    assert argv[0] == "dpdk-l2fwd" and argv[argv.index("-l") + 1] == "1"
    assert app_args(vnf) == ["-p", "0x3", "-P", "-q", "2", "-T", "0", "--no-mac-updating"]
    two = vnf_of(lab_task(tmp_path, app="l2fwd", options={"lcores": "0-1",
                                                           "mac_updating": True}))
    assert app_args(two) == ["-p", "0x3", "-P", "-q", "1", "-T", "0"]
    assert two.command()[two.command().index("-l") + 1] == "0-1"


def test_testpmd_noisy_forwarding_does_the_work_asked_per_frame(tmp_path):
    """noisy_lookups become testpmd's --noisy-lkup-* (memory 64 MB unless given);
    other forward modes get none of them."""
    noisy = vnf_of(lab_task(tmp_path, app="testpmd", options={
        "forward_mode": "noisy", "noisy_lookups": {"reads": 60, "reads_writes": 2}}))
    args = app_args(noisy)
    assert "--forward-mode=noisy" in args
    assert [a for a in args if a.startswith("--noisy-lkup")] == [
        "--noisy-lkup-memory=64", "--noisy-lkup-num-reads=60", "--noisy-lkup-num-writes=0",
        "--noisy-lkup-num-reads-writes=2"]
    plain = vnf_of(lab_task(tmp_path, app="testpmd", options={"forward_mode": "io"}))
    assert not any(a.startswith("--noisy") for a in app_args(plain))


# route files

def test_no_route_file_when_l3fwds_own_table_routes_the_lab(tmp_path):
    task = lab_task(tmp_path, ips=("198.18.0.2/24", "198.18.1.2/24"))
    vnf = vnf_of(task)
    assert vnf.route_files is None and "rule_ipv4" not in vnf.describe()
    assert not any(a.startswith("--rule_ipv") for a in app_args(vnf))
    forced = vnf_of(lab_task(tmp_path, options={"routes": "topology"},
                             ips=("198.18.0.2/24", "198.18.1.2/24")))
    assert forced.route_files[0].splitlines()[1:] == ["R198.18.0.0/24 0", "R198.18.1.0/24 1"]
    swapped = vnf_of(lab_task(tmp_path, ips=("198.18.1.2/24", "198.18.0.2/24")))
    assert swapped.route_files[0].splitlines()[1:] == ["R198.18.1.0/24 0", "R198.18.0.0/24 1"]


def test_route_files_hold_ipv6_and_peers_outside_the_subnet():
    ports = [Interface("a", ip="10.1.0.2/24", peer_ip="10.9.9.9"),
             Interface("b", ip="2001:db8:1::2/64", peer_ip="2001:db8:1::1")]
    v4, v6 = l3fwd_routes.rule_files(ports)
    assert v4.splitlines()[1:] == ["R10.1.0.0/24 0", "R10.9.9.9/32 0"]
    # l3fwd reads both files or neither: port 0 keeps l3fwd's own IPv6 route
    assert v6.splitlines()[1:] == ["R2001:200::/64 0", "R2001:db8:1::/64 1"]
    assert not l3fwd_routes.defaults_fit(ports)
    assert l3fwd_routes.defaults_fit([Interface("a"), Interface("b", ip="198.18.1.7/24")])


@pytest.mark.parametrize("options, ips, fragments", [
    ({"rule_ipv4": "/etc/r4"}, ("", ""),
     ["vnfs[0].options.rule_ipv4", "give both rule_ipv4 and rule_ipv6"]),
    ({"lookup": "em", "routes": "topology"}, ("", ""),
     ["options.routes", "with lookup em give rule_ipv4 and rule_ipv6"]),
    ({}, ("10.5.0.2/16", "10.5.1.2/24"),
     ["options.routes", "ports 0 (xe0) and 1 (xe1) both lead to 10.5.0.0/16"]),
    ({"lcores": ","}, ("", ""), ["options.lcores", "names no CPU"]),
    ({"queues": 0}, ("", ""), ["queues"]),
])
def test_bad_l3fwd_options_are_one_located_line(nsb_main, tmp_path, options, ips, fragments):
    task = lab_task(tmp_path, options=options, ips=ips)
    check_one_line_error(nsb_main("task", "start", "--dry-run", str(task)), str(task),
                         *fragments)


def test_l3fwd_over_memif_runs_one_lcore(nsb_main, tmp_path):
    """A memif port has the queues its peer opens; l3fwd sends from each lcore on a
    queue of its own (one the peer lacks would be its first ring again)."""
    task = lab_task(tmp_path, link="memif", options={"cores": 2})
    check_one_line_error(nsb_main("task", "start", "--dry-run", str(task)), str(task),
                         "vnfs[0].options.cores", "l3fwd over memif (xe0, xe1) forwards on one "
                         "lcore", "give one lcore, or veth or NIC ports for 2 lcores")


def test_the_sample_sweeps_cores_over_veth_and_one_core_over_memif(nsb_main, tmp_path,
                                                                   monkeypatch):
    """Where TRex is installed: TRex over memif for one core; for a sweep up to two,
    TRex over veth (memif carries one lcore), with a notice that says so."""
    for name in ("t-rex-64", "_t-rex-64", "trex-cfg"):
        (tmp_path / name).write_text("")
    monkeypatch.setenv("NSB_TREX_PATH", str(tmp_path))
    code, out, err = nsb_main("task", "start", "--dry-run", str(SAMPLE))
    assert code == 0, err
    assert "with 2 cores trex sends over veth pairs" in err
    sweep = plan(SAMPLE).scenarios
    assert [s.spec.name for s in sweep] == ["l3fwd_1core", "l3fwd_2cores"]
    assert {s.generator.spec.type for s in sweep} == {"trex"}
    assert [s.vnfs[0].lcores() for s in sweep] == ["1", "1,0"]
    assert not any(i.is_memif for s in sweep for i in s.vnfs[0].interfaces)
    (one,) = plan(SAMPLE, {"cores": 1}).scenarios
    assert one.generator.spec.type == "trex" and all(i.is_memif for i in one.vnfs[0].interfaces)
    code, out, err = nsb_main("task", "start", "--dry-run", str(SAMPLE), "--task-args",
                              '{"generator": "trafgen"}')
    assert code == 0 and "with 2 cores trafgen sends over veth pairs" in err


def test_l2fwd_needs_port_pairs(nsb_main, tmp_path):
    task = lab_task(tmp_path, app="l2fwd", options={"interfaces": ["xe0"]})
    check_one_line_error(nsb_main("task", "start", "--dry-run", str(task)), str(task),
                         "options.interfaces", "1 ports (xe0) leave one without a pair")


def test_user_route_files_are_passed_as_given(tmp_path):
    vnf = vnf_of(lab_task(tmp_path, options={"rule_ipv4": "/etc/r4", "rule_ipv6": "/etc/r6"}))
    assert app_args(vnf)[-2:] == ["--rule_ipv4=/etc/r4", "--rule_ipv6=/etc/r6"]
    assert vnf.route_files is None


# KPIs

def test_kpis_from_telemetry_with_nsbs_names():
    reply = {"/ethdev/stats,0": {"ipackets": 100, "opackets": 90, "imissed": 3},
             "/ethdev/stats,1": {"ipackets": 80, "opackets": 88, "imissed": 0},
             "/ethdev/xstats,0": {"rx_q0_packets": 100, "name": "x"}}
    kpis = telemetry.port_stats_kpis(reply, [0, 1])
    assert telemetry.vnf_kpis(kpis, [0, 1]) == {"packets_in": 180.0, "packets_fwd": 178.0,
                                                "packets_dropped": 5.0}
    assert telemetry.port_xstats_kpis(reply, [0, 1], ["rx_q0_packets", "name", "nope"]) == \
        {"port0_rx_q0_packets": 100.0}


# what a run leaves

class _Process:
    pid = 4242

    def poll(self):
        return None

    def stop(self, grace_s: float = 5.0):
        return 0


class _Executor:
    """Records what the VNF does on its node; every command succeeds."""

    name = "sut"

    def __init__(self):
        self.ran, self.files, self.started = [], {}, []

    def which(self, binary):
        return f"/usr/bin/{binary}"

    def run(self, argv, **kwargs):
        self.ran.append(argv)
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")

    def write_file(self, path, content):
        self.files[path] = content

    def start(self, argv, log_path=None):
        self.started.append(argv)
        return _Process()


def test_l3fwd_writes_its_routes_before_it_starts_and_removes_all_it_made(tmp_path):
    vnf = vnf_of(SAMPLE, {"generator": "trafgen"})
    vnf.run = RunInfo(task_id=TASK_ID, task=vnf.run.task, results_dir=tmp_path)
    vnf.node.executor = executor = _Executor()
    vnf.instantiate()
    work = f"/tmp/nsb-{TASK_ID}/l3fwd0"
    assert set(executor.files) == {f"{work}/rule_ipv4.cfg", f"{work}/rule_ipv6.cfg"}
    assert executor.files[f"{work}/rule_ipv4.cfg"] == vnf.route_files[0]
    (argv,) = executor.started
    assert argv[argv.index("dpdk-l3fwd"):] == vnf.command()
    vnf.terminate()
    removed = [a for a in executor.ran if a[:2] == ["rm", "-rf"]]
    assert ["rm", "-rf", f"/var/run/dpdk/nsb-{TASK_ID}-l3fwd0"] in removed
    assert ["rm", "-rf", work] in removed
    assert vnf.process is None


def test_the_memif_sockets_it_served_go_with_it(tmp_path):
    """Left over, a served socket stops the next scenario's server from creating it."""
    vnf = vnf_of(lab_task(tmp_path, link="memif"))
    vnf.run = RunInfo(task_id=TASK_ID, task=vnf.run.task, results_dir=tmp_path)
    vnf.node.executor = executor = _Executor()
    vnf.instantiate()
    vnf.terminate()
    sockets = [i.socket for i in vnf.interfaces]
    assert all(i.serves_socket for i in vnf.interfaces) and len(set(sockets)) == 2
    assert ["rm", "-f", *sockets] in executor.ran
