"""NSB's task files with the pods they name, made as users make them: a copy of the
Yardstick sample tree in which each task's Node pod (``/etc/yardstick/nodes/...``,
absent here) is NSB's pod sample with the task's node names and as many ports as
its topologies use, and the standalone host files' ``{{host.*}}`` filled in."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick-samples"
NSUT = "samples/vnf_samples/nsut"
SUTS = ("acl", "cgnapt", "router", "udp_replay", "vfw", "agnostic")
TASKS = sorted(p.relative_to(DATA) for sut in SUTS
               for p in DATA.glob(f"{NSUT}/{sut}/tc_*trex*.yaml"))
# NSB's pod sample has xe0/xe1; its 4-port topologies go on with 152.16.101/41.0/24
_SUBNETS = ("152.16.100", "152.16.40", "152.16.101", "152.16.41")
_POD_PATH = re.compile(r"/?etc/yardstick/nodes/((?:standalone/)?[\w.-]+\.yaml)")
_BOUND = re.compile(r"(?m)^\s+(tg__\d+|vnf__\d+):\s+([\w-]+)\.yardstick\b")
HOST = {"ip": "10.10.10.10", "user": "root", "password": "r00t",
        "key_filename": "/root/.ssh/id_rsa"}


def _port(n: int, tg: bool, index: int) -> dict:
    last = (20 if n != 1 else 19) if tg else 21  # the sample's addresses for xe0/xe1
    return {"vpci": f"0000:05:00.{n}" if n < 2 else f"0000:06:00.{n - 2}", "driver": "i40e",
            "dpdk_port_num": n, "local_ip": f"{_SUBNETS[n]}.{last}",
            "netmask": "255.255.255.0", "local_mac": f"00:00:00:00:{index:02x}:{n + 1:02x}"}


def pod_for(task_text: str, with_vnfs: bool) -> dict:
    """NSB's pod sample, one node per name the task binds (the first sample node for
    generators, the second for VNFs), each with four ports."""
    sample = yaml.safe_load((DATA / "etc/yardstick/nodes/pod.yaml.nsb.sample").read_text())
    names: dict[str, bool] = {}
    for role, name in _BOUND.findall(task_text):
        if with_vnfs or role.startswith("tg"):
            names.setdefault(name, role.startswith("tg"))
    nodes = []
    for index, (name, tg) in enumerate(names.items(), start=1):
        node = {**sample["nodes"][0 if tg else 1], "name": name, "ip": f"1.1.1.{index}"}
        node["interfaces"] = {f"xe{n}": _port(n, tg, index) for n in range(4)}
        nodes.append(node)
    return {"nodes": nodes}


def lab(tmp_path: Path) -> Path:
    """The copy of the sample tree, its tasks naming the pods made for them."""
    copy = tmp_path / "ys"
    shutil.copytree(DATA, copy)
    for name in ("pod_ovs.yaml", "pod_sriov.yaml"):
        host = copy / "etc/yardstick/nodes/standalone" / name
        text = host.read_text()
        for key, value in HOST.items():
            text = text.replace(f"{{{{host.{key}}}}}", value)
        host.write_text(text)
    for task in TASKS:
        path = copy / task
        text = path.read_text()
        standalone = "type: Standalone" in text

        def made(match: re.Match, text=text, task=task, standalone=standalone) -> str:
            if (copy / "etc/yardstick/nodes" / match.group(1)).is_file():
                return match.group(0)  # a file of the tree (a standalone host file)
            pod = tmp_path / "pods" / task.parent.name / task.stem / match.group(1)
            pod.parent.mkdir(parents=True, exist_ok=True)
            pod.write_text(yaml.safe_dump(pod_for(text, with_vnfs=not standalone)))
            return str(pod)

        path.write_text(_POD_PATH.sub(made, text))
    return copy


def is_heat(task: Path) -> bool:
    """A task whose context is OpenStack Heat (NSB's tc_heat_* files)."""
    return task.name.startswith("tc_heat_")
