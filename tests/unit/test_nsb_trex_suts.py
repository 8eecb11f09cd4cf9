"""NSB's TRex task files for its SUTs (vFW, vACL, vCGNAPT, UDP_Replay, RouterVNF,
AgnosticVnf) as they are, on a pod: they dry-run with what each VNF gets (a
SampleVNF's pipeline config, CLI script and command), or, where their context is one
nsb cannot provide here (OpenStack Heat), end in one located line naming it."""

from __future__ import annotations

import pytest
import yaml

from tests.unit.nsb_pods import TASKS, is_heat, lab

CLASSES = {"vfw": "FWApproxVnf", "acl": "AclApproxVnf", "cgnapt": "CgnaptApproxVnf",
           "udp_replay": "UdpReplayApproxVnf", "router": "RouterVNF",
           "agnostic": "AgnosticVnf"}
PIPELINES = {"vfw": ("vFW", "vfw"), "acl": ("vACL", "acl"), "cgnapt": ("vCGNAPT", "cgnapt")}


def args_of(task) -> tuple:
    """NSB's standalone scale-up tasks read their networks from the task-args file
    beside them (``--task-args-file standalone-args.yaml``, as NSB runs them)."""
    args = task.parent / "standalone-args.yaml"
    return ("--task-args-file", str(args)) if "networks." in task.read_text() \
        and args.is_file() else ()


@pytest.fixture(scope="module")
def ys(tmp_path_factory):
    return lab(tmp_path_factory.mktemp("nsb"))


def test_the_set_is_more_than_the_reference_one():
    by_sut = {sut: [t for t in TASKS if t.parent.name == sut] for sut in CLASSES}
    assert all(by_sut.values()), by_sut
    assert len(TASKS) >= 25 and any(is_heat(t) for t in TASKS)
    assert any("tc_sriov" in t.name for t in TASKS) and any("tc_ovs" in t.name for t in TASKS)


@pytest.mark.parametrize("task", [t for t in TASKS if not is_heat(t)],
                         ids=lambda t: f"{t.parent.name}/{t.name}")
def test_dry_run_shows_what_each_sut_gets(nsb_main, ys, task, monkeypatch):
    monkeypatch.chdir(ys)
    code, out, err = nsb_main("task", "start", "--dry-run", *args_of(ys / task), str(task))
    assert code == 0 and "Traceback" not in err, err
    plan = yaml.safe_load(out)
    sut = task.parent.name
    assert plan["scenarios"], out
    for scenario in plan["scenarios"]:
        vnf = scenario["vnfs"]["vnf__0"]
        assert vnf["type"] == CLASSES[sut]
        assert [g["type"] for g in scenario["traffic_generator"].values()] == \
            ["TrexTrafficGenRFC"]
        if sut in PIPELINES:
            binary, kind = PIPELINES[sut]
            config, script = vnf[f"{kind}_config"], vnf[f"{kind}_script"]
            assert config.startswith("[EAL]\n") and "[PIPELINE0]\ntype = MASTER" in config
            assert f"\ntype = {kind.upper()}\n" in config
            assert "link 0 config " in script and "link 1 up" in script
            assert vnf["command"].startswith(f"/opt/nsb_bin/{binary} -p 0x")
            assert "{{" not in config + script
        elif sut == "udp_replay":
            assert vnf["command"].startswith("/opt/nsb_bin/UDP_Replay --log-level=5 ")
            assert "--config=(0,0," in vnf["command"]


@pytest.mark.parametrize("task", [t for t in TASKS if is_heat(t)],
                         ids=lambda t: f"{t.parent.name}/{t.name}")
def test_heat_tasks_are_one_line_naming_the_context(nsb_main, ys, task, monkeypatch):
    monkeypatch.chdir(ys)
    code, out, err = nsb_main("task", "start", "--dry-run", str(task))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert f"{task.name}:" in lines[0] and "context type Heat" in lines[0]
    said = lines[0].split(f"{task.name}:", 1)[1].lower()  # after the file's name
    assert not any(word in said for word in ("trex", "vnf", "pipeline", "acl", "nat"))


def test_the_vnf_config_of_a_scale_up_task_follows_its_worker_threads(nsb_main, ys,
                                                                      monkeypatch):
    """NSB's scale-up task: one scenario per worker thread count, HW load balancing
    (run to completion), each worker a VFW pipeline."""
    monkeypatch.chdir(ys)
    task = "samples/vnf_samples/nsut/vfw/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex_scale_up.yaml"
    code, out, err = nsb_main("task", "start", "--dry-run", task)
    assert code == 0, err
    configs = [s["vnfs"]["vnf__0"]["vfw_config"] for s in yaml.safe_load(out)["scenarios"]]
    assert [c.count("\ntype = VFW\n") for c in configs] == [1, 2, 3, 4, 5, 6]
    assert all("type = LOADB" not in c for c in configs)


def test_an_ovs_scale_up_task_takes_its_vports_from_the_task_args(nsb_main, ys, monkeypatch):
    """vports 4: the VM gets four ports from standalone-args.yaml's networks, the
    topology and profile two pairs, vFW a port mask of four."""
    monkeypatch.chdir(ys)
    task = ys / "samples/vnf_samples/nsut/vfw/tc_ovs_rfc2544_ipv4_1rule_1flow_trex-scale-up.yaml"
    code, out, err = nsb_main("task", "start", "--dry-run", *args_of(task), "--task-args",
                              '{"vports": 4}', str(task))
    assert code == 0, err
    vfw = yaml.safe_load(out)["scenarios"][0]["vnfs"]["vnf__0"]
    assert vfw["command"].startswith("/opt/nsb_bin/vFW -p 0xf ")
    assert len(vfw["ports"]) == 4 and "link 3 config 152.16.30.10 24" in vfw["vfw_script"]


def test_a_4_port_topology_pairs_its_links_by_member_index(nsb_main, ys, monkeypatch):
    """NSB's 4-port vFW topology names 'tg__1' and 'vnf__1' in its vld ends; NSB
    resolves an end by its member-vnf-index-ref, so the VNF has two port pairs."""
    monkeypatch.chdir(ys)
    task = "samples/vnf_samples/nsut/vfw/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex_4port.yaml"
    code, out, err = nsb_main("task", "start", "--dry-run", task)
    assert code == 0, err
    plan = yaml.safe_load(out)
    vfw = plan["scenarios"][0]["vnfs"]["vnf__0"]
    assert vfw["command"].startswith("/opt/nsb_bin/vFW -p 0xf ")
    ends = [sorted(link.split(" <-> ")) for link in plan["context"]["links"]]
    assert sorted(ends) == [[f"trafficgen_1:xe{n}", f"vnf:xe{n}"] for n in range(4)]


def test_a_vld_end_naming_no_member_is_one_located_line(nsb_main, tmp_path, monkeypatch):
    copy = lab(tmp_path)
    topology = copy / "samples/vnf_samples/nsut/vfw/vfw-tg-topology.yaml"
    text = topology.read_text()
    assert "-   member-vnf-index-ref: '2'\n" in text
    topology.write_text(text.replace("-   member-vnf-index-ref: '2'\n",
                                     "-   member-vnf-index-ref: '7'\n", 1))
    monkeypatch.chdir(copy)
    code, _, err = nsb_main("task", "validate", "samples/vnf_samples/nsut/vfw/"
                            "tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "vfw-tg-topology.yaml:" in lines[0] and "member-vnf-index-ref" in lines[0]
    assert "no constituent-vnfd has member-vnf-index '7'; they have: 1, 2" in lines[0]
