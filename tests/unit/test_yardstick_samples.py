"""Every task file of the Yardstick/NSB reference set dry-runs unchanged, or gets one
'not supported yet' line at the key that asks for what nsb lacks, never a traceback."""

from pathlib import Path

import pytest
import yaml

from nsb.task.nsd import flat_get
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
TASKS = sorted(DATA.glob("samples/vnf_samples/nsut/prox/tc_*.yaml"))
EXPECTED = {  # what nsb says today, besides a plan
    "tc_prox_heat_context_l3fwd-2.yaml": "context: not supported yet: context type Heat",
}


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_reference_task(nsb_main, task, monkeypatch):
    monkeypatch.chdir(DATA)
    code, out, err = nsb_main("task", "start", "--dry-run", str(task.relative_to(DATA)))
    assert "Traceback" not in err
    if task.name in EXPECTED:
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert EXPECTED[task.name] in err, err
        return
    assert code == 0, err
    plan = yaml.safe_load(out)
    ports = {i["peer"] for n in plan["context"]["nodes"].values()
             for i in n["interfaces"].values() if i.get("peer")}
    assert ports, "no links"
    for part in [*plan["scenarios"][0]["vnfs"].values(),
                 *plan["scenarios"][0]["traffic_generator"].values()]:
        assert "@@" not in part["prox_config"], part["prox_config"]


def test_one_port_topology_links_the_port_once(nsb_main, monkeypatch):
    monkeypatch.chdir(DATA)
    code, out, err = nsb_main("task", "start", "--dry-run",
                              "samples/vnf_samples/nsut/prox/tc_prox_baremetal_buffering-1.yaml")
    assert code == 0, err
    assert yaml.safe_load(out)["context"]["links"] == ["trafficgen_0:xe0 <-> vnf_0:xe0"]


def test_wrong_typed_task_args_are_one_located_line(nsb_main, monkeypatch):
    monkeypatch.chdir(DATA)
    code, out, err = nsb_main("task", "validate", "--task-args", '{"vports": "two"}',
                              "samples/vnf_samples/nsut/prox/tc_prox_baremetal_l3fwd-scale-up"
                              ".yaml")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_yardstick_get_reads_flattened_keys():
    args = {"vports": 4, "a": {"b": [10, 20]}}
    assert flat_get(args, "vports", 2) == 4 and flat_get({}, "vports", 2) == 2
    assert flat_get(args, "a.b1") == 20 and flat_get(args, "missing") is None


def test_ramp_steps_up_until_a_trial_loses_frames():
    from nsb import units
    from nsb.events import ResultReady, TrialDone
    from nsb.traffic_profiles.measurer import Measurer
    from nsb.traffic_profiles.ramp import RampProfile

    line = units.line_rate_pps(64, 10, ports=2)
    profile = make_profile(RampProfile, packet_sizes=[64], lower_bound=30.0, upper_bound=100.0,
                           step_value=10.0, duration=1, tolerated_loss=0.0,
                           interface_speed_gbps=10)
    assert profile.steps() == [30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    events = []
    profile.execute(Measurer(SimulatedDutGenerator(0.55 * line), "t", "s", events.append))
    trials = [e for e in events if isinstance(e, TrialDone)]
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    assert [t.rate_pct for t in trials] == [30.0, 40.0, 50.0, 60.0]  # stops at the failure
    assert [t.verdict for t in trials] == ["pass", "pass", "pass", "fail"]
    assert result.line_rate_pct == pytest.approx(50.0) and result.limited_by == "dut"


@pytest.mark.parametrize("template, expected", [
    ("{% set x = x or 3 %}x: {{ x }}\n", "x: 3\n"),
    ("{% if y %}y{% endif %}z\n", "z\n"),
])
def test_yardstick_jinja_defaults_render(template, expected):
    from nsb.task.render import render

    assert render(template, "t.yaml") == expected


@pytest.mark.parametrize("template, message", [
    ("a: 1\nb: {{ vports }}\n", "t.yaml:2: template error: 'vports' is undefined"),
    ("a: 1\n\nb: {{ 1 / 0 }}\n", "t.yaml:3: template error: ZeroDivisionError"),
    ("a: {{ range(0, 'x') }}\n", "t.yaml:1: template error: TypeError"),
])
def test_template_mistakes_stay_errors_with_their_line(template, message):
    from nsb.errors import TaskError
    from nsb.task.render import render

    with pytest.raises(TaskError) as failed:
        render(template, "t.yaml")
    assert message in str(failed.value)


def test_core_ranges_are_a_task_on_each_core():
    from nsb.vnfs.prox.config import ProxConfig

    config = ProxConfig.parse("[port 0]\nname=p0\n[core 0]\nmode=master\n[core 1-3]\n"
                              "name=lat\nmode=lat\nrx port=p0\n", "x.cfg")
    assert [(t.core, t.mode) for t in config.tasks() if t.mode == "lat"] == [
        (1, "lat"), (2, "lat"), (3, "lat")]


def test_acl_repeats_the_load_until_the_runner_stops():
    from nsb import units
    from nsb.events import ResultReady, TrialDone
    from nsb.traffic_profiles.acl import AclProfile
    from nsb.traffic_profiles.measurer import Measurer

    line = units.line_rate_pps(64, 10, ports=2)
    profile = make_profile(AclProfile, packet_sizes=[64, 128], upper_bound=100.0, duration=1,
                           tolerated_loss=100.0, interface_speed_gbps=10)
    events = []
    stop_after = 4  # the runner's budget, in trials

    def should_stop() -> bool:
        return sum(isinstance(e, TrialDone) for e in events) >= stop_after

    profile.execute(Measurer(SimulatedDutGenerator(0.3 * line), "t", "s", events.append,
                             should_stop=should_stop))
    trials = [e for e in events if isinstance(e, TrialDone)]
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    assert len(trials) == 4 and {t.trial_index for t in trials} == {0, 1, 2, 3}
    assert all(t.rate_pct == 100.0 and t.result.trial.frame_size == 64 for t in trials)
    assert result.frame_size == 64 and result.extra["samples"] == 4
    assert result.extra["forwarding_rate_pps"] == pytest.approx(0.3 * line, rel=0.01)
    bounded = make_profile(AclProfile, packet_sizes=[64, 128], max_trials=2, duration=1,
                           tolerated_loss=100.0, interface_speed_gbps=10)
    events.clear()
    bounded.execute(Measurer(SimulatedDutGenerator(0.3 * line), "t", "s", events.append))
    assert [e.frame_size for e in events if isinstance(e, ResultReady)] == [64, 128]


def test_nsperf_rfc2544_scenarios_load_and_a_missing_class_names_the_vnf(nsb_main, tmp_path):
    import shutil

    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    task = copy / "samples/vnf_samples/nsut/prox/tc_prox_baremetal_l3fwd-2.yaml"
    task.write_text(task.read_text().replace("type: NSPerf", "type: NSPerf-RFC2544"))
    code, out, err = nsb_main("task", "validate", str(task))
    assert code == 0, err
    descriptor = copy / "samples/vnf_samples/vnf_descriptors/prox_vnf.yaml"
    descriptor.write_text(descriptor.read_text().replace("ProxApproxVnf", "VpeApproxVnf"))
    code, out, err = nsb_main("task", "validate", str(task))
    assert code == 2 and "not supported yet: VNF class 'VpeApproxVnf' for vnf__0 (node vnf_0)" \
        in err, err


def test_nsb_runners_keep_their_meaning():
    from types import SimpleNamespace

    from nsb.runners.prox_duration import ProxDurationRunner
    from nsb.runners.search import SearchRunner

    calls = []

    def body(iteration, should_stop):
        calls.append((iteration, should_stop()))

    spec = SimpleNamespace(type="Search")
    SearchRunner(spec, {"timeout": 30, "interval": 1, "run_step": "setup,run,teardown"},
                 None).execute(body)
    assert calls == [(0, False)]  # the profile runs until done, once, within the timeout
    calls.clear()
    ProxDurationRunner(spec, {"duration": 0.2, "repeat": True, "interval": 0.05,
                              "sampled": True, "confirmation": 1}, None).execute(body)
    assert len(calls) >= 2 and calls[0] == (0, False)


def test_a_dofile_beside_the_config_is_copied_even_if_prox_files_omit_it(nsb_main, monkeypatch):
    # l3fwd-scale-up names ipv4.lua in prox_files, its config loads ipv4-2port.lua
    monkeypatch.chdir(DATA)
    code, out, err = nsb_main("task", "start", "--dry-run",
                              "samples/vnf_samples/nsut/prox/tc_prox_baremetal_l3fwd-scale-up"
                              ".yaml")
    assert code == 0, err
    sut = yaml.safe_load(out)["scenarios"][0]["vnfs"]["vnf__0"]["prox_config"]
    assert 'dofile("/tmp/nsb-' in sut and 'vnf__0/ipv4-2port.lua")' in sut


def _plan(nsb_main, monkeypatch, name):
    monkeypatch.chdir(DATA)
    code, out, err = nsb_main("task", "start", "--dry-run",
                              f"samples/vnf_samples/nsut/prox/{name}")
    assert code == 0, err
    return yaml.safe_load(out)["context"]


def test_ovs_dpdk_sample_shows_the_vm_its_nics_and_ovs_as_nsb_sets_them_up(nsb_main,
                                                                          monkeypatch):
    context = _plan(nsb_main, monkeypatch, "tc_prox_ovs-dpdk_l2fwd-2.yaml")
    assert context["type"] == "Node+StandaloneOvsDpdk"
    standalone = context["contexts"][1]
    assert standalone["host"]["node"] == "ovs_dpdk"  # from /etc/yardstick/nodes/standalone/
    vm = standalone["vms"]["vm_0"]
    assert vm["node"] == "vnf_0" and vm["vcpus"] == 20 and vm["ram_mb"] == 16384
    assert vm["cpu"] == {"mode": "host-passthrough", "sockets": 1, "cores": 10, "threads": 2}
    assert "host NUMA node 0" in vm["cpu_pinning"] and vm["mgmt"]["ip"] == "172.20.2.7"
    assert vm["domain_type"] == "kvm" and "yardstick-nsb-image.img" in vm["image"]
    xe0 = vm["nics"]["xe0"]
    assert xe0["ovs_port"] == "dpdkvhostuser0" and xe0["phy_port"] == "0000:af:00.0"
    assert xe0["guest_pci"] == "0000:00:0a.0"  # NSB: slot = vm index + port_num + 10
    xe1_socket = vm["nics"]["xe1"]["socket"]
    assert xe1_socket.startswith("/tmp/nsb-") and xe1_socket.endswith("/vnf_0-xe1.sock")
    ovs = standalone["ovs"]
    config = ovs["other_config"]
    assert config.pop("dpdk-extra").startswith("--file-prefix=nsb-")  # PCI: no --no-pci
    assert config == {"dpdk-init": "true", "dpdk-socket-mem": "2048,2048",
                      "dpdk-socket-limit": "2048,2048", "pmd-cpu-mask": "0x6"}
    assert ovs["vswitchd"] == "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
    assert ovs["ports"]["dpdk1"] == {"type": "dpdk", "dpdk-devargs": "0000:af:00.1",
                                     "n_rxq": 4, "network": "downlink_0"}
    assert ovs["ports"]["dpdkvhostuser1"]["type"] == "dpdkvhostuserclient"
    assert ovs["ports"]["dpdkvhostuser1"]["socket"] == xe1_socket
    assert ovs["flows"][:2] == ["in_port=dpdk0,actions=output:dpdkvhostuser0",
                                "in_port=dpdkvhostuser0,actions=output:dpdk0"]
    # downlink_0's first end is member '1' (tg__0), as NSB reads a vld
    assert standalone["links"] == ["trafficgen_0:xe0 <-> vnf_0:xe0",
                                   "trafficgen_0:xe1 <-> vnf_0:xe1"]
    assert context["nodes"]["trafficgen_0"]["interfaces"]["xe0"]["peer"] == "vnf_0:xe0"


def test_sriov_sample_shows_vfs_and_the_hostdev_interfaces(nsb_main, monkeypatch):
    standalone = _plan(nsb_main, monkeypatch, "tc_prox_sriov_l3fwd-2.yaml")["contexts"][1]
    assert standalone["vfs"][0] == {"pf": "0000:05:00.0", "network": "uplink_0",
                                    "numvfs": 1, "vf": 0}
    nic = standalone["vms"]["vm_0"]["nics"]["xe1"]
    assert nic["type"] == "hostdev (managed)" and nic["guest_pci"] == "0000:00:0c.0"
    assert "<interface type='hostdev' managed='yes'>" in nic["domain_xml"]
    assert "slot='0x0c'" in nic["domain_xml"]
