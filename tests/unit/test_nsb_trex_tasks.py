"""NSB's TRex task files: their scenario options (framesize, flow, rfc2544,
traffic_config, duration) fill the traffic profile template as Yardstick's
vnf_generic.py does, and its packet definitions become PacketSpecs at load."""

import shutil
from pathlib import Path

import pytest
import yaml

from nsb import plugins
from nsb.frames import FrameMix
from nsb.packets import Direction, IpRange, PortRange
from nsb.task import loader, packet_profile
from tests.unit.test_task_errors import check_one_line_error

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
NSUT = "samples/vnf_samples/nsut"
TREX_TASKS = sorted(p.relative_to(DATA) for p in DATA.glob(f"{NSUT}/*/tc_*trex*.yaml"))
VFW = f"{NSUT}/vfw/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml"
CGNAPT = f"{NSUT}/cgnapt/tc_baremetal_rfc2544_ipv4_1flow_trex.yaml"


@pytest.fixture
def lab(tmp_path):
    """The reference set with the pod its tasks name (its nodes renamed as the tasks
    name them, as users edit it)."""
    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    pod = (copy / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text()
    pod = pod.replace("name: trafficgen_1", "name: trafficgen_0").replace(
        "name: vnf\n", "name: vnf_0\n").replace("<nic kernel driver>", "i40e")
    (tmp_path / "pod.yaml").write_text(pod)
    for task in copy.glob(f"{NSUT}/*/tc_*trex*.yaml"):
        task.write_text(task.read_text().replace("/etc/yardstick/nodes/pod.yaml",
                                                 str(tmp_path / "pod.yaml")))
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def profile_of(task: Path, args: dict | None = None):
    spec = loader.load(task, args or {}).scenarios[0].profile
    return spec, packet_profile.read(spec.options, spec.options_where)


def test_reference_task_reads_into_packet_specs(lab):
    spec, read = profile_of(lab / VFW)
    assert spec.type == "RFC2544Profile"
    assert spec.options["frame_rate"] is None  # the profile's get(...) bug: 100 % at run
    assert spec.options["allowed_drop_rate"] == "0.0001 - 0.0001"  # from options.rfc2544
    assert spec.options["duration"] == 30
    up, down, up1, _ = read.packets
    # {tg__0: xe0}: trafficgen_0's xe0 is 152.16.100.20/24 in the pod
    assert up.src_ip == IpRange("152.16.100.2", "152.16.100.254")
    assert up.dst_ip == IpRange("152.16.40.2", "152.16.40.254")
    assert (up.src_port, up.dst_port) == (PortRange(1234, 4321), PortRange(2001, 4001))
    assert up.flows == 1 and up.ttl == 32 and up.proto == "udp"
    assert (down.direction, down.src_ip, down.dst_ip) == (Direction.DOWNLINK, up.dst_ip,
                                                          up.src_ip)
    assert up1.src_ip == IpRange("10.0.2.1", "10.0.2.255")  # no src_ip_1: the default
    assert read.frame == 64


def test_flow_options_render_into_the_profile(lab):
    edit(lab / VFW, "      src_ip: [{'tg__0': 'xe0'}]\n      dst_ip: [{'tg__0': 'xe1'}]\n"
         "      count: 1\n",
         "      src_ip: ['10.1.0.1-10.1.0.100']\n      dst_ip: ['20.1.0.1']\n"
         "      src_port: ['1000-2000']\n      dst_port: [53]\n      count: 50\n")
    _, read = profile_of(lab / VFW)
    up, down = read.packets[:2]
    assert (up.src_ip, up.dst_ip) == (IpRange("10.1.0.1", "10.1.0.100"),
                                      IpRange("20.1.0.1", "20.1.0.1"))
    assert (up.src_port, up.dst_port) == (PortRange(1000, 2000), PortRange(53, 53))
    assert (down.src_port, down.dst_port) == (PortRange(53, 53), PortRange(1000, 2000))
    assert up.flows == 50


def test_cgnapt_public_ip_and_its_downlink(lab):
    _, read = profile_of(lab / CGNAPT)
    down = next(p for p in read.packets if p.name == "downlink_0")
    assert down.dst_ip == IpRange("152.16.40.10", "152.16.40.10")
    assert down.src_port == PortRange(1, 65535)


def test_framesize_option_is_the_byte_weighted_mix(lab):
    edit(lab / VFW, "{{ framesize }}\n    flow", "{64B: 70, 1518B: 30}\n    flow")
    edit(lab / VFW, "uplink: {{ framesize }}", "uplink: {64B: 70, 1518B: 30}")
    _, read = profile_of(lab / VFW)
    assert isinstance(read.frame, FrameMix) and read.frame.weights == {64: 85, 1518: 2}
    assert read.weights == {64: 70.0, 1518: 30.0}


def test_task_args_framesize_default_and_extra_args_frame_rate(lab):
    task = lab / f"{NSUT}/agnostic/tc_baremetal_rfc2544_ipv4_trex.yaml"
    pod = (lab.parent / "pod.yaml").read_text().replace("trafficgen_0", "tg_0")
    (lab.parent / "pod_agnostic.yaml").write_text(pod)
    args = {"file": str(lab.parent / "pod_agnostic.yaml"), "frame_rate": 40,
            "framesize": {"128B": 100}, "allowed_drop_rate": "0.001 - 0.01"}
    spec, read = profile_of(task, args)
    assert spec.options["frame_rate"] == 40  # extra_args.frame_rate
    assert spec.options["allowed_drop_rate"] == "0.001 - 0.01"
    assert read.frame == 128


def test_traffic_config_and_duration_options(lab):
    edit(lab / VFW, "    traffic_type: 4\n",
         "    traffic_type: 4\n    duration: 12\n    traffic_config: {frame_rate: 60}\n")
    spec, _ = profile_of(lab / VFW)
    assert spec.options["duration"] == 12 and spec.options["frame_rate"] == 60


def test_correlated_traffic_reaches_the_profile(lab):
    task = lab / f"{NSUT}/vfw/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex_correlated_traffic.yaml"
    pod = yaml.safe_load((lab.parent / "pod.yaml").read_text())
    tg1 = {**pod["nodes"][0], "name": "trafficgen_1", "ip": "1.1.1.3"}
    (lab.parent / "pod_3node.yaml").write_text(yaml.safe_dump({**pod, "nodes": [
        *pod["nodes"], tg1]}))
    edit(task, "/etc/yardstick/nodes/pod_3node.yaml", str(lab.parent / "pod_3node.yaml"))
    spec, read = profile_of(task)
    assert spec.options["correlated_traffic"] is True
    assert read.packets[0].dst_ip == IpRange("152.16.100.2", "152.16.100.254")  # tg__1 xe0


def test_fixed_profile_runs_for_the_duration_runner(lab):
    spec = loader.load(lab / f"{NSUT}/2trex/tc_trex_baremetal_context.yaml").scenarios[0].profile
    assert spec.type == "FixedProfile"
    assert dict(spec.options) == {"frame_rate": 100, "flow_number": 10, "frame_size": 64,
                                  "duration": 10}
    cls = plugins.load_class("nsb.traffic_profiles", spec)
    profile = cls(spec, plugins.check_options(cls, spec), run=None)
    assert profile.rate_unit == "fps" and profile.frame == 64


def test_null_frame_rate_is_100_percent(lab):
    spec, _ = profile_of(lab / VFW)
    cls = plugins.load_class("nsb.traffic_profiles", spec)
    assert cls(spec, plugins.check_options(cls, spec), run=None).start_pct == 100.0


@pytest.mark.parametrize("old, new, fragments", [
    ("src_ip: [{'tg__0': 'xe0'}]", "src_ip: ['10.0.0.9-10.0.0.1']",
     ["options.flow.src_ip[0]", "runs backwards"]),
    ("src_ip: [{'tg__0': 'xe0'}]", "src_ip: [{'tg__0': 'xe9'}]",
     ["options.flow.src_ip[0].tg__0", "has no interface 'xe9'; it has: xe0, xe1"]),
    ("src_ip: [{'tg__0': 'xe0'}]", "src_ip: [{'tg__7': 'xe0'}]",
     ["options.flow.src_ip[0].tg__7", "not one of the scenario's nodes"]),
    ("count: 1\n", "count: many\n", ["options.flow.count", "a flow count"]),
    ("count: 1\n", "count: 1\n      dst_mac: [x]\n", ["options.flow.dst_mac", "unknown key"]),
    ("allowed_drop_rate: 0.0001 - 0.0001", "allowed_drop_rate: low - high",
     ["options.rfc2544.allowed_drop_rate", "is not 'low - high'"]),
    ("allowed_drop_rate: 0.0001 - 0.0001", "allowed_drop_rate: 1\n      precision: 2",
     ["options.rfc2544.precision", "unknown key 'precision'"]),
    ("uplink: {{ framesize }}", "uplink: {1024B: 100}",
     ["options.framesize.uplink.1024B", "ipv4_throughput_cgnapt.yaml gives uplink frames of "
      "64B, 128B, 256B, 373B, 512B, 570B, 1400B, 1500B, 1518B"]),
    ("uplink: {{ framesize }}", "uplink: {64B: lots}",
     ["options.framesize.uplink.64B", "whole number of percent"]),
])
def test_bad_options_are_one_located_line(nsb_main, lab, old, new, fragments):
    edit(lab / CGNAPT, old, new)
    line = check_one_line_error(nsb_main("task", "validate", str(lab / CGNAPT)), *fragments)
    assert "tc_baremetal_rfc2544_ipv4_1flow_trex.yaml:" in line


def test_a_bad_profile_value_is_a_line_in_the_profile_file(nsb_main, lab):
    edit(lab / "samples/vnf_samples/traffic_profiles/ipv4_throughput.yaml",
         "ttl: 32\n            dscp: 0\n        outer_l4:\n            srcport: \"{{get(flow, "
         "'flow.src_port_0'", "ttl: 320\n            dscp: 0\n        outer_l4:\n"
         "            srcport: \"{{get(flow, 'flow.src_port_0'")
    check_one_line_error(nsb_main("task", "validate", str(lab / VFW)),
                         "ipv4_throughput.yaml:71: uplink_0.ipv4.outer_l3v4.ttl:",
                         "expected a TTL (0-255), got 320")


@pytest.mark.parametrize("task", TREX_TASKS, ids=[t.parent.name + "/" + t.name
                                                  for t in TREX_TASKS])
def test_trex_tasks_as_they_are_are_one_line_never_about_trex(nsb_main, task, monkeypatch):
    """As they are, they name /etc/yardstick/nodes/ pods this machine does not have, a
    host file whose values the user fills in, networks of a task-args file, or a
    context nsb cannot provide."""
    monkeypatch.chdir(DATA)
    line = check_one_line_error(nsb_main("task", "validate", str(task)))
    assert ("pod file not found: " in line and "etc/yardstick/nodes/" in line
            or "standalone/pod_" in line and "'host' is undefined" in line
            or "'networks' is undefined (pass it with --task-args" in line
            or "not supported yet: context type Heat" in line
            or "2 traffic generators in one scenario" in line), line
    assert "TRex" not in line and "Trex" not in line, line


# with their pods they dry-run: tests/unit/test_nsb_trex_suts.py


def test_an_nsb_profile_file_renders_without_traffic_options(tmp_path):
    """An nsb task may name NSB's profile file too: the template values Yardstick
    gives a scenario without traffic options (NSB's defaults in the file apply)."""
    from nsb.task import specs, yaml_lines
    from nsb.task.documents import Where

    profiles = DATA / "samples/vnf_samples/traffic_profiles"
    doc = yaml_lines.parse("traffic_profile: x\n", str(tmp_path / "task.yaml"))
    spec = specs.profile_spec(profiles / "task.yaml", "ipv4_throughput.yaml",
                              Where(doc, ("traffic_profile",)), {})
    read = packet_profile.read(spec.options, spec.options_where)
    assert spec.options["frame_rate"] is None and spec.options["duration"] == 30
    assert read.frame == 64  # every weight 0: NSB's 64 B
    assert read.packets[0].src_ip == IpRange("10.0.2.1", "10.0.2.255")


def test_vnf_options_of_older_tasks_are_ignored_as_nsb_does(lab, caplog):
    caplog.set_level("INFO", logger="nsb.task.yardstick")
    task = loader.load(lab / f"{NSUT}/2trex/tc_trex_baremetal_context.yaml")
    assert task.scenarios[0].profile.type == "FixedProfile"
    assert "scenario key 'vnf_options' is ignored" in caplog.text
