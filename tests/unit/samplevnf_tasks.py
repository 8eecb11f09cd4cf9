"""NSB's reference task files with their pod, for the SampleVNF tests: planned, their
VNFs as nsb builds them."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from nsb import engine
from nsb.runinfo import RunInfo
from nsb.task import loader

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
NSUT = "samples/vnf_samples/nsut"
TASK_ID = "261126-000000-abcdef"
VFW = f"{NSUT}/vfw/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml"
ACL = f"{NSUT}/acl/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex.yaml"
CGNAPT = f"{NSUT}/cgnapt/tc_baremetal_rfc2544_ipv4_1flow_trex.yaml"
UDP_REPLAY = f"{NSUT}/udp_replay/tc_baremetal_rfc2544_ipv4_1flow_64B_trex.yaml"
CORRELATED = f"{NSUT}/vfw/tc_baremetal_rfc2544_ipv4_1rule_1flow_trex_correlated_traffic.yaml"
WORK = f"/tmp/nsb-{TASK_ID}/vnf__0"


def reference_copy(tmp_path: Path) -> Path:
    """NSB's reference set with the pod its tasks name (nodes named as the tasks
    name them, as users edit it), and a third node for the correlated task."""
    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    pod = yaml.safe_load((copy / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text()
                         .replace("name: trafficgen_1", "name: trafficgen_0")
                         .replace("name: vnf\n", "name: vnf_0\n")
                         .replace("<nic kernel driver>", "i40e"))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod))
    tg1 = {**pod["nodes"][0], "name": "trafficgen_1", "ip": "1.1.1.3"}
    (tmp_path / "pod_3node.yaml").write_text(yaml.safe_dump({"nodes": [*pod["nodes"], tg1]}))
    for task in copy.glob(f"{NSUT}/*/tc_*trex*.yaml"):
        task.write_text(task.read_text()
                        .replace("/etc/yardstick/nodes/pod.yaml", str(tmp_path / "pod.yaml"))
                        .replace("/etc/yardstick/nodes/pod_3node.yaml",
                                 str(tmp_path / "pod_3node.yaml")))
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def plan(task_file: Path) -> engine.Plan:
    task = loader.load(task_file, {})
    return engine.plan(task, RunInfo(task_id=TASK_ID, task=task, results_dir=Path("/nowhere")))


def plan_vnfs(task_file: Path) -> dict:
    return {vnf.name: vnf for vnf in plan(task_file).scenarios[0].vnfs}
