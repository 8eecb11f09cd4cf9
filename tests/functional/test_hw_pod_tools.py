"""The hardware-like pod (tests/functional/hw_pod.py) prepared as a lab is prepared:
nsb's ansible roles install TRex on its generator and the SampleVNFs on its SUT from
release archives (tests/tool_archives.py), a second run changes nothing, ``nsb node
check`` says what each node can run, and NSB's vFW task with TRex
(samples/samplevnf/tc_vfw_rfc2544.yaml, Yardstick's format) runs on what they
installed: TRex on the TG's PCI NICs, vFW on the SUT's, both bound by nsb.

The guests are initramfs images of this host's files with no apt: the roles install
no packages there and their library check finds the libraries the pod carries
(``tools=True``). TRex's Python client is loaded on this machine (the task's
``trex_client_lib``). Under TCG each guest unpacks TRex for minutes: the test is slow
(about 12 minutes), run by make test-slow. What is checked is what was counted where:
TRex's counts against vFW's own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import NSB, ROOT, TREX_PATH, requires_root
from tests.functional.hw_pod import hw_pod, pod_nodes, ssh
from tests.functional.test_ansible import ansible_env
from tests.functional.vm_lab import libvirtd
from tests.tool_archives import pack

pytestmark = pytest.mark.slow
SAMPLE = ROOT / "samples" / "samplevnf" / "tc_vfw_rfc2544.yaml"
NSB_NAMES = {"tg": "tg_0", "sut": "vnf_0"}  # the sample's nodes: tg_0.lab, vnf_0.lab
CLIENT = TREX_PATH / "automation" / "trex_control_plane" / "interactive"
# under TCG vFW's four pipelines on two emulated CPUs keep up with about 150 frames per
# second each way (at 1,500 its NICs' queues overflowed and vFW forwarded almost none)
RATE_PCT = 0.001  # of 10 Gb/s at 64 B
LINE_PPS = 10e9 / 8 / 84 / 100  # frames per second per % of line rate


def _archives(where: Path) -> Path:
    doc = {}
    for tool in ("trex", "samplevnf"):
        archive = pack(tool, where)
        doc[tool] = {"archive": str(archive.path), "version": archive.version,
                     "sha256": archive.sha256}
    path = where / "archives.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _install(tmp_path: Path, pod_file: Path, archives: Path) -> dict[str, str]:
    done = subprocess.run(NSB + ["ansible", "install", str(pod_file), "--archives",
                                 str(archives)], capture_output=True, text=True,
                          env=ansible_env(tmp_path), cwd=tmp_path, timeout=1500)
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines())


def _nsb_pod(pod_file: Path, into: Path) -> Path:
    """The pod with the sample's node names."""
    doc = yaml.safe_load(pod_file.read_text())
    for node in doc["nodes"]:
        node["name"] = NSB_NAMES[node["name"]]
        for iface in node["interfaces"].values():
            peer, port = iface["peer"].split(":")
            iface["peer"] = f"{NSB_NAMES[peer]}:{port}"
    into.write_text(yaml.safe_dump(doc, sort_keys=False))
    return into


def _left_on(node: dict) -> str:
    """What a run left on a node: NICs off virtio-pci, taken hugepages, TRex's or vFW's
    processes, page files or DPDK runtime dirs."""
    return ssh(node, "for d in /sys/bus/pci/devices/0000:00:1[01].0; do "
                     "basename $(readlink $d/driver); done | grep -v '^virtio-pci$'; "
                     "awk '/HugePages_(Total|Free)/ {print $2}' /proc/meminfo | uniq -u; "
                     "pgrep -l '_t-rex-64|vFW'; ls /dev/hugepages /var/run/dpdk 2>/dev/null "
                     "| grep nsb-; true").stdout.strip()


def test_the_roles_install_trex_and_vfw_on_the_pod_and_nsbs_vfw_task_runs_there(
        results_conf, tmp_path):
    requires_root()
    archives = _archives(tmp_path / "archives")
    with libvirtd(), hw_pod("uio_pci_generic", tmp_path / "pod", ram_mb=3072,
                            guest_hugepages=256, tools=True) as pod_file:
        first = _install(tmp_path, pod_file, archives)
        assert first["tg"].startswith("ok, ") and "trex v3.08" in first["tg"], first
        assert "/opt/nsb_bin/trex/scripts" in first["tg"]
        assert "samplevnf c97164903fc7" in first["sut"] and "/opt/nsb_bin/vFW" in first["sut"]
        second = _install(tmp_path, pod_file, archives)
        assert [v.split(":")[0] for v in second.values()] == ["ok, 0 change(s)"] * 2, second
        check = subprocess.run(NSB + ["node", "check", str(pod_file)], capture_output=True,
                               text=True, timeout=300)
        can = {line.split(": can run: ")[0]: line.split(": can run: ")[1]
               for line in check.stdout.splitlines() if ": can run: " in line}
        assert "trex (v3.08)" in can["tg"] and "vfw (c97164903fc7)" in can["sut"], check.stdout

        task_args = {"pod": str(_nsb_pod(pod_file, tmp_path / "pod_nsb.yaml")),
                     "frame_rate": RATE_PCT, "duration_s": 2, "flows": 1, "cores": [0, 1],
                     "trex_client_lib": str(CLIENT)}
        env = {k: v for k, v in os.environ.items() if k != "NSB_TREX_PATH"}  # the pod's TRex
        run = subprocess.run(NSB + ["--config-file", str(results_conf), "task", "start",
                                    str(SAMPLE), "--task-args", json.dumps(task_args)],
                             capture_output=True, text=True, env=env, timeout=1200)
        assert run.returncode == 0, run.stdout + run.stderr
        [path] = (tmp_path / "results").glob("*/results.json")
        doc = json.loads(path.read_text())
        assert doc["task"]["status"] == "ok"
        [trial] = doc["trials"]  # the search starts at its top, frame_rate
        ports = trial["ports"]
        vfw = [k["kpis"] for k in doc["kpis"] if k["source"] == "vnf__0"][-1]
        print(f"TRex: {ports}; vFW: {vfw}")
        # vFW's own counts: each direction's rule (nsb's default flows: action 3 for
        # xe0's subnet to xe1's, 4 back) let through what TRex sent that way, and TRex
        # received what it let through, less what TCG's taps may lose
        assert ports["xe0"]["tx_packets"] >= RATE_PCT * LINE_PPS * 2 * 0.9
        assert ports["xe1"]["rx_packets"] <= vfw["action3_packets"] <= ports["xe0"]["tx_packets"]
        assert ports["xe0"]["rx_packets"] <= vfw["action4_packets"] <= ports["xe1"]["tx_packets"]
        assert trial["rx_packets"] >= 0.95 * trial["tx_packets"]
        for name, node in pod_nodes(pod_file).items():
            assert _left_on(node) == "", name
