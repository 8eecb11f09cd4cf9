"""The router, command and agnostic VNFs forwarding real frames in the lab.

The router is the kernel of a netns node, then of an SSH node whose ports the
test set up otherwise first (and finds so again afterwards); the command VNF runs
Debian's dpdk-testpmd from its argument list; the agnostic VNF is a Linux
bridge the test builds itself. trafgen generates; every count is compared with
the DUT's own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from nsb.executors.local import NetnsExecutor
from nsb.nodes import node_ledger, node_leftovers
from nsb.nodes.node import Interface
from nsb.vnfs.generic.router_addresses import port_plan
from nsb.vnfs.generic.router_state import LinuxRouter
from tests.conftest import NSB, requires_root
from tests.doc_examples import examples
from tests.functional.lab import leftovers, results_of
from tests.functional.test_baremetal_sample import MACS, lab_pod, started_by_nsb


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def _run(results_conf, task: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(NSB + ["--config-file", str(results_conf), "task", "start",
                                 str(task)], capture_output=True, text=True, timeout=timeout)


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _readme_task(kind: str) -> dict:
    """The README's example task whose VNF is of type ``kind`` (run here for real)."""
    [text] = [e.text for e in examples("task") if "test_generic_vnfs.py" in e.note
              and f"type: {kind}" in e.text]
    return yaml.safe_load(text)


def _task(context: dict, vnf: dict) -> dict:
    return {"schema": "nsb:task:0.1", "context": context, "scenarios": [{
        "name": "generic", "vnfs": [vnf],
        "traffic_generator": {"name": "tg0", "type": "trafgen", "node": "tg",
                              "options": {"latency_probe_pps": 0}},
        "traffic_profile": {"type": "fixed", "packet_sizes": [64, 1518], "duration": 2,
                            "rate_pps": 4000, "tolerated_loss": 0.0},
        "runner": {"type": "Iteration", "iterations": 1}}],
        "outputs": [{"type": "file"}]}


def _lab() -> dict:
    return {"type": "netns", "nodes": {
        "tg": {"role": "TrafficGen", "interfaces": {"xe0": {}, "xe1": {}}},
        "sut": {"role": "Sut", "interfaces": {"xe0": {}, "xe1": {}}}},
        "links": [["tg:xe0", "sut:xe0"], ["sut:xe1", "tg:xe1"]]}


def _counts(doc: dict, source: str) -> tuple[int, int, dict]:
    """Frames the generator sent and got over all trials, and ``source``'s last KPIs."""
    sent = sum(t["tx_packets"] for t in doc["trials"])
    got = sum(t["rx_packets"] for t in doc["trials"])
    kpis = [k["kpis"] for k in doc["kpis"] if k["source"] == source]
    return sent, got, kpis[-1] if kpis else {}


# the router

def test_router_forwards_between_two_subnets_in_the_lab(results_conf, tmp_path):
    """The README's router: 16 sources each way, both directions; the kernel forwards
    every frame and its counters say so; addresses beyond a port get a route."""
    done = _run(results_conf, _write(tmp_path, _readme_task("router")))
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    sent, got, kpis = _counts(doc, "router0")
    print(f"trafgen sent {sent}, got {got}; router: {kpis}")
    assert sent >= 2 * 2 * 8000 * 0.9 and got == sent  # 2 sizes x 2 s x 8 kpps, lossless
    assert kpis["packets_in"] == sent and kpis["packets_fwd"] == got
    assert kpis["packets_dropped"] == 0
    assert kpis["xe0.rx_packets"] == kpis["xe1.tx_packets"] == sent / 2  # one direction
    plan = doc["plan"]["scenarios"][0]["vnfs"]["router0"]["ports"]
    assert plan["xe1"]["routes"] == ["10.99.0.0/16 via 10.61.2.1"]
    assert plan["xe1"]["neighbours"] == ["10.61.2.1", "10.61.2.100", "10.61.2.101",
                                         "10.61.2.102", "10.61.2.103"]
    assert plan["xe0"] == {"address": "10.61.1.254/24", "peer_mac": plan["xe0"]["peer_mac"],
                           "peer_ip": "10.61.1.1", "neighbours": ["10.61.1.1"], "routes": []}
    assert leftovers(task_id) == []


def _state(ns: str, ports: tuple[str, ...]) -> dict:
    """What a router may change in namespace ``ns``, as the kernel shows it."""
    def show(*argv):
        return json.loads(subprocess.run(["ip", "-n", ns, "-j", *argv], capture_output=True,
                                         text=True, check=True).stdout or "[]")

    def sysctl(key):
        return subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-n", key],
                              capture_output=True, text=True, check=True).stdout.strip()

    state = {"ip_forward": sysctl("net.ipv4.ip_forward")}
    for port in ports:
        [link] = show("addr", "show", "dev", port)
        state[port] = {
            "up": "UP" in link["flags"],
            "ipv4": sorted((a["local"], a["prefixlen"]) for a in link["addr_info"]
                           if a["family"] == "inet"),
            "ipv6_off": sysctl(f"net.ipv6.conf.{port}.disable_ipv6"),
            "permanent": sorted((n["dst"], n.get("lladdr")) for n in
                                show("neigh", "show", "dev", port, "nud", "permanent")),
            "routes": sorted(json.dumps(r, sort_keys=True) for r in
                             show("route", "show", "dev", port)),
        }
    return state


def test_router_over_ssh_gives_the_node_back(results_conf, tmp_path):
    """On an SSH node whose ports carry other addresses, a permanent neighbour, a route
    and IPv6: the router replaces them for the run, forwards, and puts them back."""
    with lab_pod(tmp_path) as (pod, nodes):
        sut = nodes["sut"]
        for argv in (["addr", "flush", "dev", "xe0"], ["addr", "add", "192.0.2.7/24", "dev", "xe0"],
                     ["neigh", "replace", "10.77.2.1", "lladdr", "02:de:ad:be:ef:01", "dev", "xe1",
                      "nud", "permanent"],
                     ["route", "add", "198.51.100.0/24", "via", "10.77.2.1", "dev", "xe1"]):
            subprocess.run(["ip", "-n", sut.netns, *argv], check=True)
        sut.ns("sysctl", "-qw", "net.ipv6.conf.xe1.disable_ipv6=0", "net.ipv4.ip_forward=0")
        before = _state(sut.netns, ("xe0", "xe1"))
        task = _write(tmp_path, _task(
            {"type": "baremetal", "file": str(pod),
             "links": [["tg:xe0", "sut:xe0"], ["sut:xe1", "tg:xe1"]]},
            {"name": "router0", "type": "RouterVNF", "node": "sut"}))
        done = _run(results_conf, task)
        assert done.returncode == 0, done.stderr
        assert _state(sut.netns, ("xe0", "xe1")) == before
        assert started_by_nsb(sut) == []
    task_id, doc = results_of(tmp_path / "results")
    sent, got, kpis = _counts(doc, "router0")
    print(f"trafgen sent {sent}, got {got}; router: {kpis}")
    assert sent > 0 and got == sent
    assert kpis["packets_fwd"] == got and kpis["xe1.tx_packets"] == got
    assert leftovers(task_id) == []


def test_router_state_while_it_runs_and_after(tmp_path):
    """What the router puts on a node's ports (read from the kernel), and the node as
    it was once given back."""
    ns = "nsb-routertest"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for argv in (["link", "add", "xe0", "type", "veth", "peer", "name", "gen0"],
                     ["link", "set", "gen0", "address", "02:00:00:00:aa:01"],
                     ["link", "set", "gen0", "up"], ["addr", "add", "10.8.0.9/16", "dev", "xe0"]):
            subprocess.run(["ip", "-n", ns, *argv], check=True)
        before = _state(ns, ("xe0",))
        port = Interface("xe0", ip="172.20.0.254/24", peer_mac="02:00:00:00:aa:01",
                         peer_ip="172.20.0.1/24")
        router = LinuxRouter(NetnsExecutor(ns), [port_plan(port, ["172.20.0.5", "10.40.0.0/24"])],
                             {"xe0": "xe0"})
        router.save()
        router.apply()
        during = _state(ns, ("xe0",))
        router.restore()
        router.restore()  # twice is harmless
        after = _state(ns, ("xe0",))
    finally:
        subprocess.run(["ip", "netns", "delete", ns], check=True)
    assert during["ip_forward"] == "1" and during["xe0"]["up"]
    assert during["xe0"]["ipv4"] == [("172.20.0.254", 24)] and during["xe0"]["ipv6_off"] == "1"
    assert during["xe0"]["permanent"] == [("172.20.0.1", "02:00:00:00:aa:01"),
                                          ("172.20.0.5", "02:00:00:00:aa:01")]
    assert any('"dst": "10.40.0.0/24"' in r and '"gateway": "172.20.0.1"' in r and "onlink" in r
               for r in during["xe0"]["routes"])
    assert after == before and before["ip_forward"] == "0" and not before["xe0"]["up"]


def test_router_changes_are_given_back_after_a_killed_run(tmp_path):
    """The way back that a router on a pod's server writes in the node's ledger before
    it changes anything: run by the next run's give-back when the router's run was
    killed (it never restored anything itself)."""
    ns, task_id = "nsb-routerkill", "261126-000000-dead01"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for argv in (["link", "add", "xe0", "type", "veth", "peer", "name", "gen0"],
                     ["link", "set", "gen0", "address", "02:00:00:00:aa:01"],
                     ["link", "set", "xe0", "up"], ["addr", "add", "10.8.0.9/16", "dev", "xe0"],
                     ["neigh", "replace", "10.8.0.1", "lladdr", "02:de:ad:be:ef:01", "dev", "xe0",
                      "nud", "permanent"],
                     ["route", "add", "198.51.100.0/24", "via", "10.8.0.1", "dev", "xe0"]):
            subprocess.run(["ip", "-n", ns, *argv], check=True)
        executor = NetnsExecutor(ns)
        before = _state(ns, ("xe0",))
        port = Interface("xe0", ip="172.20.0.254/24", peer_mac="02:00:00:00:aa:01",
                         peer_ip="172.20.0.1/24")
        router = LinuxRouter(executor, [port_plan(port, ["172.20.0.5", "10.40.0.0/24"])],
                             {"xe0": "xe0"})
        router.save()
        node_ledger.write(executor, node_leftovers.undo_record(task_id, "router0",
                                                               router.restore_script()))
        router.apply()
        assert _state(ns, ("xe0",)) != before
        done = node_leftovers.give_back(executor, alive=lambda task: task != task_id)
        after = _state(ns, ("xe0",))
        left = [r for r in node_ledger.read_all(executor) if r.task_id == task_id]
    finally:
        subprocess.run(["ip", "netns", "delete", ns], check=True)
    assert done == ["what router0 changed"] and left == []
    assert after == before and before["xe0"]["up"] and before["ip_forward"] == "0"


# the command VNF

def _testpmd(dpdk: bool) -> dict:
    """The README's dpdk-testpmd from its argument list; with ``dpdk`` on hugepages
    nsb adds for it (--in-memory instead of --no-huge)."""
    task = _readme_task("command")
    if dpdk:
        options = task["scenarios"][0]["vnfs"][0]["options"]
        command = options["command"]
        assert command[1:4] == ["--no-huge", "-m", "256"]
        command[1:4] = ["--in-memory", "-m", "64"]
        options.update(dpdk=True, hugepages_mb=64)
    return task


@pytest.mark.parametrize("dpdk", [False, True], ids=["no-huge", "dpdk-hugepages"])
def test_command_vnf_runs_testpmd(results_conf, tmp_path, dpdk):
    pages = Path("/proc/sys/vm/nr_hugepages").read_text()
    task = _write(tmp_path, _testpmd(dpdk))
    done = _run(results_conf, task)
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    sent, got, kpis = _counts(doc, "fwd0")
    print(f"trafgen sent {sent}, got {got}; testpmd: {kpis}")
    assert sent >= 2 * 2 * 4000 * 0.9 and got >= 0.99 * sent
    assert kpis["port0.ipackets"] >= got  # what testpmd read on xe0...
    assert kpis["port1.opackets"] >= got  # ...and sent on through xe1
    assert kpis["port1.opackets"] <= kpis["port0.ipackets"] <= sent
    log = (tmp_path / "results" / task_id / "logs" / "fwd0-dpdk-testpmd.log").read_text()
    assert "io packet forwarding" in log
    plan = doc["plan"]["scenarios"][0]["vnfs"]["fwd0"]
    assert f"--file-prefix nsb-{task_id}-fwd0" in plan["command"]
    assert "iface=xe0" in plan["command"] and "-l 0-1" in plan["command"]
    assert Path("/proc/sys/vm/nr_hugepages").read_text() == pages
    assert not Path(f"/var/run/dpdk/nsb-{task_id}-fwd0").exists()
    assert leftovers(task_id) == []


@pytest.mark.parametrize("options, fragments", [
    ({"command": ["python3", "-c", "import time; time.sleep(600)", "{task_id}"],
      "ready_port": 9, "ready_timeout_s": 2},
     ["fwd0: python3 not ready after 2 s (waited for TCP 127.0.0.1:9 to answer"]),
    ({"command": ["sh", "-c", "echo 'eth9: no such device' >&2; exit 7", "{task_id}"],
      "ready_command": ["false"]},
     ["fwd0: sh exited with code 7 while starting", "eth9: no such device"]),
    ({"command": ["python3", "-c", "import time; time.sleep(600)", "{task_id}"],
      "ready_command": ["sh", "-c", "echo not yet >&2; exit 1"], "ready_timeout_s": 1},
     ["waited for 'sh -c echo not yet >&2; exit 1' to succeed; last exit 1: not yet"]),
])
def test_command_vnf_not_ready_says_why_and_leaves_nothing(results_conf, tmp_path, options,
                                                           fragments):
    task = _write(tmp_path, _task(_lab(), {"name": "fwd0", "type": "command", "node": "sut",
                                           "options": options}))
    done = _run(results_conf, task, timeout=120)
    assert done.returncode == 3, done.stderr
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    [results] = list((tmp_path / "results").iterdir())
    assert leftovers(results.name) == []  # the program, named by its task id, is gone


# the agnostic VNF

def test_agnostic_vnf_sends_through_a_bridge_the_test_built(results_conf, tmp_path):
    """A Linux bridge between the SUT node's ports, set up by the test: nsb starts and
    stops nothing there, and what crosses it is what the generator counts."""
    with lab_pod(tmp_path) as (pod, nodes):
        sut = nodes["sut"]
        for port, mac in (("xe0", "02:cc:00:00:00:01"), ("xe1", "02:cc:00:00:00:02")):
            # frames to the pod's MAC for the port are unknown to the bridge: it floods
            subprocess.run(["ip", "-n", sut.netns, "addr", "flush", "dev", port], check=True)
            subprocess.run(["ip", "-n", sut.netns, "link", "set", port, "address", mac],
                           check=True)
        assert MACS["sut", "xe0"] != "02:cc:00:00:00:01"
        for argv in (["link", "add", "br0", "type", "bridge"],
                     ["link", "set", "xe0", "master", "br0"],
                     ["link", "set", "xe1", "master", "br0"], ["link", "set", "br0", "up"]):
            subprocess.run(["ip", "-n", sut.netns, *argv], check=True)
        readme = _readme_task("agnostic")
        readme["context"]["file"] = str(pod)
        task = _write(tmp_path, readme)
        done = _run(results_conf, task)
        assert done.returncode == 0, done.stderr
        bridge = json.loads(sut.ns("ip", "-j", "link", "show", "master", "br0").stdout)
        assert sorted(link["ifname"] for link in bridge) == ["xe0", "xe1"]  # untouched
        assert started_by_nsb(sut) == []
    task_id, doc = results_of(tmp_path / "results")
    sent, got, kpis = _counts(doc, "dut0")
    print(f"trafgen sent {sent} through the bridge, got {got}")
    assert sent >= 2 * 2 * 4000 * 0.9 and got == sent
    assert kpis == {} and "nfvi:dut0" not in {k["source"] for k in doc["kpis"]}
    assert doc["plan"]["scenarios"][0]["vnfs"]["dut0"]["managed"].startswith("no")
    assert leftovers(task_id) == []
