"""Yardstick/NSB task files run unchanged: the reference set validates and plans right."""

import shutil
from pathlib import Path

import pytest
import yaml

from tests.unit.test_task_errors import check_one_line_error

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
ROOT = Path(__file__).resolve().parent.parent.parent
SAMPLE = ROOT / "samples" / "prox" / "tc_prox_l3fwd.yaml"
TASK = "samples/vnf_samples/nsut/prox/tc_prox_baremetal_l3fwd-2.yaml"


@pytest.fixture
def reference(tmp_path):
    """The reference set, plus the Lua table its task names (not part of the set)."""
    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    task = copy / TASK
    (task.parent / "configs" / "ipv4-2port.lua").write_text("return {}\n")
    return task


def dry_run(nsb_main, task, *args) -> dict:
    code, out, err = nsb_main("task", "start", "--dry-run", str(task), *args)
    assert code == 0, err
    return yaml.safe_load(out)


def test_reference_task_validates_unchanged(nsb_main, reference):
    code, out, err = nsb_main("task", "validate", str(reference))
    assert code == 0, err
    assert "valid (1 scenario(s))" in out


def test_reference_task_without_its_lua_table_names_the_missing_file(nsb_main, reference):
    (reference.parent / "configs" / "ipv4-2port.lua").unlink()
    check_one_line_error(nsb_main("task", "validate", str(reference)),
                         "tc_prox_baremetal_l3fwd-2.yaml:", "options.vnf__0.prox_files",
                         "file not found", "ipv4-2port.lua")


def test_reference_plan_wires_the_topology(nsb_main, reference):
    plan = dry_run(nsb_main, reference)
    context = plan["context"]
    assert context["type"] == "Node"
    # NSB takes a vld end's VNF from its member-vnf-index-ref: downlink_0's first end
    # is member '1' (tg__0), whatever its vnfd-id-ref says
    assert sorted(context["links"]) == ["trafficgen_0:xe0 <-> vnf_0:xe0",
                                        "trafficgen_0:xe1 <-> vnf_0:xe1"]
    tg_xe0 = context["nodes"]["trafficgen_0"]["interfaces"]["xe0"]
    assert tg_xe0["peer"] == "vnf_0:xe0"
    assert tg_xe0["peer_mac"] == "68:05:ca:30:3c:68"
    assert tg_xe0["pci"] == "0000:05:00.0" and tg_xe0["dpdk_port"] == 0
    assert context["nodes"]["vnf_0"]["ssh"]["host"] == "1.1.1.2"
    scenario = plan["scenarios"][0]
    assert scenario["traffic_generator"]["tg__0"]["type"] == "prox_tg"
    assert scenario["traffic_generator"]["tg__0"]["node"] == "trafficgen_0"
    assert scenario["vnfs"]["vnf__0"]["type"] == "prox"
    assert scenario["traffic_profile"]["type"] == "ProxBinSearchProfile"
    assert scenario["traffic_profile"]["packet_sizes"] == [64, 128, 256, 512, 1024, 1280, 1518]
    assert scenario["runner"] == {"type": "Duration", "duration": 1800, "repeat": False,
                                  "interval": 0}


def test_reference_plan_shows_prox_configs_with_macs_filled(nsb_main, reference):
    scenario = dry_run(nsb_main, reference)["scenarios"][0]
    gen = scenario["traffic_generator"]["tg__0"]
    assert "$sut_mac0=68 05 ca 30 3c 68" in gen["prox_config"]  # vnf_0 xe0, the peer of port 0
    assert "$tester_mac1=68 05 ca 30 3d 51" in gen["prox_config"]
    assert "@@" not in gen["prox_config"]
    assert gen["command"][-2:] == ["-f", gen["command"][-1]]
    assert gen["command"][:3] == ["/opt/nsb_bin/prox", "-o", "cli"]
    assert {"-e", "-t"} <= set(gen["command"])
    sut = scenario["vnfs"]["vnf__0"]
    assert 'dofile("/tmp/nsb-' in sut["prox_config"]
    assert "no-huge" not in sut["prox_config"]  # a lab node with PCI NICs: no af_packet


def test_passwords_never_reach_the_plan(nsb_main, reference):
    code, out, err = nsb_main("task", "start", "--dry-run", str(reference))
    assert code == 0
    assert "r00t" not in out and "r00t" not in err
    assert "auth: password" in out


def test_project_sample_validates_and_runs_as_netns_plan(nsb_main):
    code, out, err = nsb_main("task", "validate", str(SAMPLE))
    assert code == 0, err
    plan = dry_run(nsb_main, SAMPLE, "--task-args", '{"context": "netns"}')
    assert plan["context"]["type"] == "netns"
    tg = plan["scenarios"][0]["traffic_generator"]["tg__0"]
    assert "net_af_packet0,iface=xe0" in tg["prox_config"]  # veths, not NICs
    assert "$ip1=c6 12 02 0a" in tg["prox_config"]  # 198.18.2.10 from the pod
    assert plan["scenarios"][0]["traffic_profile"]["interface_speed_gbps"] == 25
    assert plan["scenarios"][0]["traffic_profile"]["tolerated_loss_pct"] == 0.0  # NSB's name


def edit(task: Path, old: str, new: str) -> Path:
    text = task.read_text()
    assert old in text
    task.write_text(text.replace(old, new))
    return task


def test_unsupported_scenario_type(nsb_main, reference):
    edit(reference, "type: NSPerf", "type: Ping")
    check_one_line_error(nsb_main("task", "validate", str(reference)), "scenarios[0].type",
                         "not supported yet: scenario type 'Ping'")


def test_unsupported_scenario_key(nsb_main, reference):
    edit(reference, "  runner:\n", "  sla:\n    action: monitor\n  runner:\n")
    check_one_line_error(nsb_main("task", "validate", str(reference)), "scenarios[0].sla",
                         "not supported yet: scenario key 'sla'")


def test_unsupported_global_option(nsb_main, reference):
    edit(reference, "  options:\n", "  options:\n    simulated_users: {uplink: [1]}\n")
    check_one_line_error(nsb_main("task", "validate", str(reference)),
                         "scenarios[0].options.simulated_users",
                         "not supported yet: scenario option 'simulated_users'")


def test_unsupported_context_type(nsb_main, reference):
    edit(reference, "type: Node", "type: Heat")
    check_one_line_error(nsb_main("task", "validate", str(reference)), "context.type",
                         "not supported yet: context type Heat (OpenStack Heat)")


def test_node_of_another_context(nsb_main, reference):
    edit(reference, "vnf__0: vnf_0.yardstick", "vnf__0: vnf_0.other")
    check_one_line_error(nsb_main("task", "validate", str(reference)), "scenarios[0].nodes.vnf__0",
                         "names context 'other' but the task's contexts are named yardstick")


def test_unknown_vnf_class_in_descriptor(nsb_main, reference):
    descriptor = reference.parents[2] / "vnf_descriptors" / "prox_vnf.yaml"
    edit(descriptor, "id: ProxApproxVnf", "id: VpeApproxVnf")
    check_one_line_error(nsb_main("task", "validate", str(reference)), "prox_vnf.yaml:",
                         "not supported yet: VNF class 'VpeApproxVnf'", "ProxApproxVnf")


def test_link_to_an_interface_the_pod_lacks(nsb_main, reference):
    topology = reference.parent / "prox-tg-topology-2.yaml"
    edit(topology, "vnfd-connection-point-ref: xe1\n                vnfd-id-ref: tg__0",
         "vnfd-connection-point-ref: xe7\n                vnfd-id-ref: tg__0")
    # that end's member-vnf-index-ref is '2' (vnf__0), which NSB follows
    check_one_line_error(nsb_main("task", "validate", str(reference)),
                         "prox-tg-topology-2.yaml:", "node 'vnf_0' has no interface 'xe7'")


def test_bad_pod_entry_points_into_the_pod(nsb_main, reference):
    pod = reference.parent / "prox-baremetal-2.yaml"
    edit(pod, 'local_mac: "68:05:ca:30:3d:50"', 'local_mac: "68:05:ca:30:3d"')
    check_one_line_error(nsb_main("task", "validate", str(reference)), "prox-baremetal-2.yaml:",
                         "nodes[0].interfaces.xe0.local_mac", "is not a MAC address (six hex pairs")


def test_unknown_placeholder_in_a_prox_config(nsb_main, reference):
    config = reference.parent / "configs" / "gen_l3fwd-2.cfg"
    edit(config, "$sut_mac1=@@dst_mac1", "$sut_mac1=@@dst_mac5")
    check_one_line_error(nsb_main("task", "validate", str(reference)), "gen_l3fwd-2.cfg:",
                         "[variables] $sut_mac1", "@@dst_mac5", "DPDK ports 0, 1")


def test_standalone_context_fields_of_the_wrong_shape_are_one_line(nsb_main, reference):
    task = reference.parent / "tc_prox_ovs-dpdk_l2fwd-2.yaml"
    edit(task, "           xe0:\n             - uplink_0", "           xe0: []")
    check_one_line_error(nsb_main("task", "validate", str(task)),
                         "contexts[1].servers.vnf_0", "not a server NSB's StandaloneOvsDpdk")
    edit(task, "   - name: yardstick\n     type: StandaloneOvsDpdk",
         "   - name: [yardstick]\n     type: StandaloneOvsDpdk")
    check_one_line_error(nsb_main("task", "validate", str(task)), "contexts[1].name",
                         "a context name is text, got list")


def test_the_pod_is_read_once_from_load_to_plan(nsb_main, reference, monkeypatch):
    """The task's pod is read when the task loads (its nodes bind the VNFs) and the
    context builds its nodes from that same reading: one read, one content."""
    from nsb.task import documents

    reads = []
    real = documents.input_file.read_text

    def counting(path, *args, **kwargs):
        reads.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(documents.input_file, "read_text", counting)
    plan = dry_run(nsb_main, reference)
    assert plan["context"]["nodes"]["vnf_0"]["ssh"]["host"] == "1.1.1.2"
    pods = [name for name in reads if name.startswith("prox-baremetal")]
    assert len(pods) == 1, reads


def test_two_generators_in_one_scenario_is_one_line_at_its_nodes(nsb_main, reference):
    """Which VNF is the generator is known once plugins are: at plan, which
    ``task validate`` runs too."""
    vnfd = reference.parents[2] / "vnf_descriptors" / "prox_vnf.yaml"
    vnfd.write_text(vnfd.read_text().replace("id: ProxApproxVnf", "id: ProxTrafficGen"))
    line = check_one_line_error(nsb_main("task", "validate", str(reference)),
                                "scenarios[0].nodes", "2 traffic generators in one scenario")
    assert "tc_prox_baremetal_l3fwd-2.yaml" in line


@pytest.mark.parametrize("task, line, sample, args", [
    ("vfw/tc_baremetal_http_ixload_1b_Requests-65000_Concurrency.yaml", 42,
     "tc_astf_sessions_nftables.yaml", '{"upper_sessions": 65000}'),
    ("cgnapt/tc_baremetal_http_ixload_1b_Requests-65000_Concurrency.yaml", 34,
     "tc_astf_sessions_nftables.yaml", '{"upper_sessions": 65000}'),
    ("acl/tc_baremetal_http_ixload_1b_Requests-65000_Concurrency.yaml", 40,
     "tc_astf_sessions_nftables.yaml", '{"upper_sessions": 65000}'),
    ("agnostic/tc_baremetal_http_connections_ixload.yaml", 32,
     "tc_astf_cps_nftables_nat.yaml", '{"program": "http", "response_bytes": 1}'),
    ("agnostic/tc_baremetal_http_throughput_ixload.yaml", 35,
     "tc_astf_throughput_nftables.yaml", '{"frame_size": 1518}'),
])
def test_an_ixload_task_names_the_sample_that_measures_the_same(nsb_main, task, line, sample,
                                                                args):
    """NSB's IxLoad HTTP tasks, as NSB ships them (their pod files need not exist): one
    located line at the IxLoad profile, naming the TRex ASTF sample and its arguments
    (IxLoad's users as sessions, its page object as the response's size)."""
    path = DATA / "samples/vnf_samples/nsut" / task
    check_one_line_error(nsb_main("task", "validate", str(path)), f"{path.name}:{line}:",
                         "scenarios[0].ixia_profile", "not supported yet: IxLoad",
                         f"nsb task start samples/stateful/{sample} --task-args '{args}'")


def test_an_rfc3511_scenario_without_its_ixload_profile_is_ixload_s_too(nsb_main, tmp_path):
    task = tmp_path / "tc_baremetal_http_connections_ixload.yaml"
    shutil.copy(DATA / "samples/vnf_samples/nsut/agnostic" / task.name, task)
    edit(task, "  ixia_profile: ../../traffic_profiles/ixload/HTTP-Connections_2Ports.rxf\n", "")
    check_one_line_error(nsb_main("task", "validate", str(task)), f"{task.name}:19:",
                         "scenarios[0].type", "not supported yet: IxLoad (NSPerf-RFC3511)",
                         "samples/stateful/tc_astf_cps_nftables_nat.yaml")
