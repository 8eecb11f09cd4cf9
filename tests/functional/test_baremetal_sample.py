"""The embedded-lab sample through the baremetal context: real sshd nodes, pod file, SSH.

Two sshd nodes (each a namespace reached over a management veth) are cabled
together with two more veth pairs; a pod file describes them as a lab would.
The same testpmd/trafgen scenario then runs with every command over SSH.
"""

import contextlib
import json
import subprocess

import pytest
import yaml

from tests.conftest import NSB, SAMPLE, requires_root
from tests.functional.lab import leftovers, results_of
from tests.functional.sshd_node import sshd_node

MACS = {("tg", "xe0"): "02:aa:00:00:00:01", ("tg", "xe1"): "02:aa:00:00:00:02",
        ("sut", "xe0"): "02:bb:00:00:00:01", ("sut", "xe1"): "02:bb:00:00:00:02"}


@pytest.fixture(autouse=True)
def _root():
    requires_root()


@contextlib.contextmanager
def lab_pod(tmp_path, names=("tg", "sut"), ports=("xe0", "xe1"), switch: str = "",
            sut_host: int = 2):
    """Two sshd nodes, xe0<->xe0 and xe1<->xe1 (each of ``ports``) between them, and the
    pod describing them.

    ``names`` are the pod's node names for the generator and the SUT, ``sut_host`` the
    host part of the SUT's addresses (10.77.<port + 1>.<sut_host>). With ``switch``
    (a bridge's name) the SUT is a switch server offering that bridge: its interfaces
    say which generator port each is cabled to (``peer``), and have no addresses.
    """
    with sshd_node() as tg, sshd_node() as sut:
        nodes = {"tg": tg, "sut": sut}
        for index, port in enumerate(ports):
            a, b = f"nsbbm{tg.netns[-8:-4]}{index}a", f"nsbbm{tg.netns[-8:-4]}{index}b"
            subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                           check=True)
            for name, node in (("tg", tg), ("sut", sut)):
                veth = a if name == "tg" else b
                subprocess.run(["ip", "link", "set", veth, "netns", node.netns], check=True)
                for argv in (["link", "set", veth, "name", port],
                             ["link", "set", port, "address", _mac(name, port)],
                             ["addr", "add", f"{_ip(name, port, sut_host)}/24", "dev", port],
                             ["link", "set", port, "up"]):
                    if not (switch and name == "sut" and argv[0] == "addr"):
                        subprocess.run(["ip", "-n", node.netns, *argv], check=True)

        def interface(name: str, pod_name: str, number: int, port: str) -> dict:
            if switch and name == "sut":
                return {"local_mac": _mac(name, port), "driver": "veth",
                        "peer": f"{names[0]}:{port}"}
            return {"local_mac": _mac(name, port), "local_ip": _ip(name, port, sut_host),
                    "netmask": "255.255.255.0", "driver": "veth", "dpdk_port_num": number}

        pod = {"nodes": [{
            "name": pod_name,
            "role": "TrafficGen" if name == "tg" else "Switch" if switch else "VNF",
            "ip": node.host, "user": "root", "ssh_port": 22, "key_filename": node.key_filename,
            **({"bridges": [switch]} if switch and name == "sut" else {}),
            "interfaces": {port: interface(name, pod_name, number, port)
                           for number, port in enumerate(ports)},
        } for pod_name, (name, node) in zip(names, nodes.items(), strict=True)]}
        path = tmp_path / "pod.yaml"
        path.write_text(yaml.safe_dump(pod))
        yield path, nodes


def _mac(name: str, port: str) -> str:
    return MACS.get((name, port)) or \
        f"02:{'aa' if name == 'tg' else 'bb'}:00:00:00:{int(port[2:]) + 1:02x}"


def _ip(name: str, port: str, sut_host: int = 2) -> str:
    host = 1 if name == "tg" else sut_host
    return f"10.77.{int(port[2:]) + 1}.{host}"


def started_by_nsb(node, names=("testpmd", "trafgen", "latency_probe")) -> list[str]:
    """Command lines of processes nsb starts that are still in the node's namespace."""
    pids = subprocess.run(["ip", "netns", "pids", node.netns], capture_output=True,
                          text=True).stdout.split()
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(name in cmdline for name in names):
            found.append(cmdline)
    return found


def baremetal_task(tmp_path, pod) -> str:
    """The sample with its netns context replaced by the pod over SSH."""
    text = SAMPLE.read_text()
    start, end = text.index("context:\n"), text.index("scenarios:\n")
    context = (f"context:\n  type: baremetal\n  file: {pod}\n  links:\n"
               "    - [tg:xe0, sut:xe0]\n    - [sut:xe1, tg:xe1]\n\n")
    path = tmp_path / "tc_testpmd_baremetal.yaml"
    path.write_text(text[:start] + context + text[end:])
    return str(path)


def run(results_conf, task, args: dict):
    argv = NSB + ["--config-file", str(results_conf), "task", "start", task,
                  "--task-args", json.dumps(args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=900)


@pytest.mark.slow  # over two minutes; test_prox_sample_over_ssh runs a pod over SSH in make test
def test_sample_over_ssh_gives_the_same_results_shape(results_conf, tmp_path):
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0.5\n")
    with lab_pod(tmp_path) as (pod, nodes):
        task = baremetal_task(tmp_path, pod)
        done = run(results_conf, task, {"duration_s": 1, "packet_sizes": [64]})
        assert done.returncode == 0, done.stderr
        task_id, doc = results_of(tmp_path / "results")
        # nothing nsb started is left on the nodes
        for node in nodes.values():
            assert started_by_nsb(node) == []
            assert node.ns("sh", "-c", f"ls -d /tmp/nsb-{task_id}* 2>/dev/null").stdout == ""
    assert doc["task"]["status"] == "ok"
    assert doc["plan"]["context"]["type"] == "baremetal"
    assert doc["plan"]["context"]["nodes"]["sut"]["ssh"]["auth"].startswith("key ")
    (result,) = doc["results"]
    assert result["frame_size"] == 64 and result["throughput_pps"] > 0
    assert result["latency"]["samples"] > 0
    assert set(doc["platform"]) == {"tg", "sut"}
    assert doc["platform"]["sut"]["nics"]["xe0"]["mac"] == MACS["sut", "xe0"]
    assert doc["platform"]["sut"]["nics"]["xe0"]["driver"] == "veth"
    sources = {k["source"] for k in doc["kpis"]}
    assert {"testpmd0", "nfvi:testpmd0", "node:sut"} <= sources
    log = tmp_path / "results" / task_id / "logs" / "testpmd0-testpmd.log"
    assert "io packet forwarding" in log.read_text()
    assert leftovers(task_id) == []


def test_wrong_key_names_the_node(results_conf, tmp_path):
    with lab_pod(tmp_path) as (pod, nodes):
        other = tmp_path / "other_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)],
                       check=True)
        text = pod.read_text().replace(nodes["sut"].key_filename, str(other))
        pod.write_text(text)
        done = run(results_conf, baremetal_task(tmp_path, pod), {"packet_sizes": [64]})
    assert done.returncode == 3  # an infrastructure failure, not bad input
    errors = [line for line in done.stderr.splitlines() if line.startswith("nsb: error")]
    assert len(errors) == 1 and "Traceback" not in done.stderr
    assert "node sut (root@" in errors[0] and "authentication failed" in errors[0]
    assert "PRIVATE KEY" not in done.stderr


def test_node_check_reports_every_node_over_ssh(tmp_path):
    with lab_pod(tmp_path) as (pod, _):
        done = subprocess.run(NSB + ["node", "check", str(pod), "--binary", "dpdk-testpmd",
                                     "--binary", "no-such-binary"],
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    for node in ("tg", "sut"):
        assert f"{node}: reachable: ok: {node}" in lines
        assert any(line.startswith(f"{node}: binary dpdk-testpmd: ok: /") for line in lines)
        assert (f"{node}: binary no-such-binary: FAILED: not found (install it or set the "
                "VNF's path option)") in lines
        assert any(line.startswith(f"{node}: hugepages: ok:") for line in lines)
    assert sum("FAILED" in line for line in lines) == 2


@pytest.mark.slow  # over two minutes; make test-slow
def test_dropped_connection_mid_run_reconnects_and_the_run_completes(results_conf, tmp_path):
    """Kill every node's SSH session while a trial runs: nsb reconnects once and says so."""
    import os
    import signal
    import time

    with lab_pod(tmp_path) as (pod, nodes):
        argv = NSB + ["--config-file", str(results_conf), "task", "start",
                      baremetal_task(tmp_path, pod), "--task-args",
                      json.dumps({"duration_s": 2, "packet_sizes": [64]})]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            events = list((tmp_path / "results").glob("*/events.jsonl"))
            if events and "TrialStarted" in events[0].read_text():
                break
            time.sleep(0.1)
        time.sleep(0.5)  # inside the first trial
        killed = [pid for node in nodes.values() for pid in node.session_pids()]
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=600)
        task_id, doc = results_of(tmp_path / "results")
        for node in nodes.values():
            assert started_by_nsb(node) == []
    assert killed
    assert proc.returncode == 0, err
    assert doc["task"]["status"] == "ok" and doc["results"][0]["throughput_pps"] > 0
    dropped = [line for line in err.splitlines() if "dropped while" in line]
    assert dropped and all("reconnected" in line for line in dropped)
    assert any("node tg (root@" in line or "node sut (root@" in line for line in dropped)
    assert leftovers(task_id) == []


def test_prox_sample_over_ssh(results_conf, tmp_path):
    """samples/prox/tc_prox_l3fwd.yaml as a lab runs it: Node context, PROX (the double) over SSH.

    The control socket is reached through an SSH channel; the nodes have no NICs,
    so the lab configs run (one sending port); the double runs with its default DUT
    (1 Mpps, 10 Gbit/s): at 1518 B that is 40 % of one 25 Gbit/s port.
    """
    sample = SAMPLE.parent / "prox" / "tc_prox_l3fwd.yaml"
    double = SAMPLE.parent.parent / "tests" / "doubles" / "prox_double.py"
    with lab_pod(tmp_path, names=("tg_0", "vnf_0")) as (pod, nodes):
        done = run(results_conf, str(sample), {
            "context": "Node", "lab": True, "pod": str(pod), "prox_path": str(double),
            "duration_s": 0.3, "precision": 1, "packet_sizes": [1518]})
        assert done.returncode == 0, done.stderr
        task_id, doc = results_of(tmp_path / "results")
        for node in nodes.values():
            assert started_by_nsb(node, ("prox",)) == []
    (result,) = doc["results"]
    trials = [(t["requested_rate_pct"], t["verdict"], t["tx_packets"], t["rx_packets"],
               t.get("reason")) for t in doc["trials"]]
    assert 40.0 - 1.2 <= result["line_rate_pct"] <= 40.0 * 1.005, (result, trials)
    assert doc["plan"]["context"]["type"] == "Node"
    assert {k["source"] for k in doc["kpis"]} >= {"vnf__0"}
    assert all("Throughput" in t["extra"] for t in doc["trials"])
    log = tmp_path / "results" / task_id / "logs" / "tg__0-prox-log.log"  # PROX's -l, fetched
    assert "PROX double" in log.read_text()
    assert leftovers(task_id) == []
