"""The nftables VNF in a real lab: the node's kernel forwards, NATs and tracks real TCP
connections between a client and a server namespace (Python sockets), and what its
rules drop is what its counters, conntrack and the trial's path say.

Its own TCP tests plan a task and start only the nftables VNF (the task's trafgen is
there for the plan: the traffic is the test's sockets); the trafgen test runs nsb.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import yaml

from nsb import engine
from nsb.executors.ssh import SshExecutor
from nsb.nodes import node_ledger, node_leftovers
from nsb.runinfo import RunInfo
from nsb.task import loader
from nsb.vnfs.readiness import wait_all_ready
from tests.conftest import NSB, requires_root
from tests.doc_examples import examples
from tests.functional.lab import leftovers, results_of
from tests.functional.test_baremetal_sample import lab_pod, started_by_nsb


@pytest.fixture(autouse=True)
def _root():
    requires_root()


SERVER = "10.63.2.1"

# client -- sut -- server; the client's second port to the server only completes
# trafgen's pair for the plan (the test's connections go through the sut)
TASK = {
    "schema": "nsb:task:0.1",
    "context": {"type": "netns", "nodes": {
        "client": {"interfaces": {"xe0": {"ip": "10.63.1.1/24"}, "xe1": {"ip": "10.63.3.1/24"}}},
        "sut": {"interfaces": {"xe0": {"ip": "10.63.1.254/24"}, "xe1": {"ip": "10.63.2.254/24"}}},
        "server": {"interfaces": {"xe0": {"ip": f"{SERVER}/24"}, "xe1": {"ip": "10.63.3.2/24"}}}},
        "links": [["client:xe0", "sut:xe0"], ["sut:xe1", "server:xe0"],
                  ["server:xe1", "client:xe1"]]},
    "scenarios": [{"name": "tcp", "vnfs": [{"name": "dut0", "type": "nftables", "node": "sut",
                                            "options": {}}],
                   "traffic_generator": {"name": "tg0", "type": "trafgen", "node": "client"},
                   "traffic_profile": {"type": "fixed", "packet_sizes": [64], "duration": 1,
                                       "rate_pps": 1000}}],
    "outputs": [{"type": "file"}]}

LISTEN = """\
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((sys.argv[1], 5001))
server.listen(128)
print("listening", flush=True)
held = []
while True:
    conn, peer = server.accept()
    held.append(conn)
    print("accepted", peer[0], flush=True)
"""

CONNECT = """\
import json, socket, sys, time
host, count, wait_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
start = time.monotonic()
socks = []
for _ in range(count):
    sock = socket.socket()
    sock.setblocking(False)
    sock.connect_ex((host, 5001))
    socks.append(sock)
def connected(sock):
    try:
        sock.getpeername()
        return sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
    except OSError:
        return False
while time.monotonic() - start < wait_s and not all(connected(s) for s in socks):
    time.sleep(0.01)
held = [s for s in socks if connected(s)]
for sock in socks:
    if sock not in held:
        sock.close()  # no SYN of it is sent again
print(json.dumps({"connected": len(held), "elapsed_s": time.monotonic() - start}), flush=True)
sys.stdin.read()  # the connections are held until the test closes stdin
"""


@contextlib.contextmanager
def nftables_lab(tmp_path: Path, options: dict):
    """The task's context deployed and its nftables VNF started (pre-flight first),
    the client routed to the server through it; yields (vnf, {node: netns})."""
    doc = json.loads(json.dumps(TASK))
    doc["scenarios"][0]["vnfs"][0]["options"] = options
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    task = loader.load(path, {})
    run = RunInfo(task_id=f"261206-000000-{uuid.uuid4().hex[:6]}", task=task,
                  results_dir=tmp_path / "results", nfvi_interval_s=0.0)
    plan = engine.plan(task, run)
    [vnf] = plan.scenarios[0].vnfs
    with contextlib.ExitStack() as teardown:
        teardown.callback(plan.context.undeploy)
        plan.context.deploy()
        namespaces = {name: plan.context.netns_name(name) for name in plan.context.nodes}
        ns("client", namespaces, "ip", "route", "add", "10.63.2.0/24", "via", "10.63.1.254")
        ns("server", namespaces, "ip", "route", "add", "10.63.1.0/24", "via", "10.63.2.254")
        assert vnf.preflight({}) == []
        teardown.callback(vnf.terminate)
        vnf.instantiate()
        wait_all_ready([vnf], 30)
        yield vnf, namespaces


def ns(node: str, namespaces: dict, *argv: str) -> str:
    return subprocess.run(["ip", "netns", "exec", namespaces[node], *argv], check=True,
                          capture_output=True, text=True).stdout


@contextlib.contextmanager
def tcp_server(namespaces: dict):
    """A TCP server on SERVER:5001 in the server namespace; yields a function that
    returns the peer addresses it accepted so far (read once it is stopped)."""
    server = subprocess.Popen(["ip", "netns", "exec", namespaces["server"], "python3", "-c",
                               LISTEN, SERVER], stdout=subprocess.PIPE, text=True)
    accepted: list[str] = []
    try:
        assert server.stdout.readline().strip() == "listening"
        yield accepted
    finally:
        server.kill()
        out, _ = server.communicate(timeout=30)
        accepted += [line.split()[1] for line in out.splitlines() if line.startswith("accepted")]


@contextlib.contextmanager
def clients(namespaces: dict, count: int, wait_s: float):
    """``count`` connections opened at once from the client namespace, held until the
    block ends; yields how many connected within ``wait_s`` and how long that took."""
    client = subprocess.Popen(["ip", "netns", "exec", namespaces["client"], "python3", "-c",
                               CONNECT, SERVER, str(count), str(wait_s)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        yield json.loads(client.stdout.readline())
    finally:
        client.stdin.close()
        client.wait(timeout=30)


def syn_retransmits(namespaces: dict) -> int:
    """The client's own count of SYNs it sent again (TcpExt TCPSynRetrans)."""
    header, values = [line.split() for line in ns("client", namespaces, "cat",
                                                  "/proc/net/netstat").splitlines()
                      if line.startswith("TcpExt:")]
    return int(values[header.index("TCPSynRetrans")])


def _counters(vnf) -> dict:
    return {k: v for k, v in vnf.collect_kpi().items() if "." not in k}


def test_nat_gives_the_server_the_routers_address_and_conntrack_counts_it(tmp_path):
    options = {"mode": "nat", "tcp_timeout_established": 77}
    with nftables_lab(tmp_path, options) as (vnf, namespaces):
        with tcp_server(namespaces) as accepted, clients(namespaces, 3, 10) as opened:
            held = vnf.session_count()
            listed = ns("sut", namespaces, "conntrack", "-L")
        kpis = _counters(vnf)
        vnf.reset_state()
        after_reset = vnf.session_count()
        ruleset = ns("sut", namespaces, "nft", "list", "ruleset")
    print(f"connected {opened}, accepted from {accepted}; kpis {kpis}")
    assert opened["connected"] == 3 and accepted == ["10.63.2.254"] * 3  # SNAT to xe1's
    assert held == 3 and listed.count("dport=5001") == 3 and "dst=10.63.2.254" in listed
    # conntrack's entries age by the timeout set for the run: 77 s, not 5 days
    timeouts = [int(line.split()[2]) for line in listed.splitlines() if "ESTABLISHED" in line]
    assert len(timeouts) == 3 and all(0 < left <= 77 for left in timeouts)
    assert kpis["new_packets"] == 3 and kpis["sessions"] >= 3  # closed ones linger
    assert after_reset == 0
    assert f"table inet {vnf.table}" in ruleset and "snat ip to 10.63.2.254" in ruleset


def test_max_sessions_lets_five_through_and_drops_the_sixth(tmp_path):
    with nftables_lab(tmp_path, {"mode": "nat", "max_sessions": 5}) as (vnf, namespaces):
        with tcp_server(namespaces) as accepted:
            with clients(namespaces, 5, 10) as five:
                before = syn_retransmits(namespaces)
                with clients(namespaces, 1, 2.5) as sixth:
                    held = vnf.session_count()
                retried = syn_retransmits(namespaces) - before
                kpis = _counters(vnf)
    print(f"five: {five}, sixth: {sixth}, SYNs retried {retried}; kpis {kpis}")
    assert five["connected"] == 5 and sixth["connected"] == 0 and len(accepted) == 5
    assert held == 5
    # every SYN of the sixth (the first and each one sent again) was the limit's drop
    assert kpis["session_limit_dropped"] == 1 + retried >= 2
    assert kpis["new_packets"] == 5 + kpis["session_limit_dropped"]


def test_max_new_per_s_drops_new_connections_above_the_rate(tmp_path):
    """40 connections at once against 5 a second (nft's burst of 5): most are dropped;
    then one every half second, under the rate: none is."""
    with nftables_lab(tmp_path, {"mode": "nat", "max_new_per_s": 5}) as (vnf, namespaces):
        with tcp_server(namespaces) as accepted:
            with clients(namespaces, 40, 0.5) as burst:  # closed before a SYN is sent again
                pass
            first = _counters(vnf)
            slow = 0
            for _ in range(6):
                time.sleep(0.5)
                with clients(namespaces, 1, 5) as one:
                    slow += one["connected"]
            second = _counters(vnf)
    print(f"burst {burst}, then {slow} of 6 one by one; accepted {len(accepted)}; "
          f"{first} then {second}")
    admitted = first["new_packets"] - first["rate_limit_dropped"]
    # the limit's bucket: 5 at once, then 5 a second while the SYNs were being sent
    assert 1 <= burst["connected"] <= admitted <= 5 + 5 * (burst["elapsed_s"] + 0.2)
    assert first["rate_limit_dropped"] >= 40 - admitted
    assert slow == 6 and second["rate_limit_dropped"] == first["rate_limit_dropped"]
    assert burst["connected"] + 6 <= len(accepted) <= admitted + 6


def test_firewall_lets_only_the_client_side_open_connections(tmp_path):
    options = {"mode": "firewall", "client_ports": ["xe0"]}
    with nftables_lab(tmp_path, options) as (vnf, namespaces):
        with tcp_server(namespaces) as accepted, clients(namespaces, 2, 10) as opened:
            pass
        refused = subprocess.run(  # the server side opening one towards the client
            ["ip", "netns", "exec", namespaces["server"], "python3", "-c",
             "import socket; s = socket.socket(); s.settimeout(1.5)\n"
             "try: s.connect(('10.63.1.1', 22)); print('connected')\n"
             "except OSError as e: print(type(e).__name__)"],
            capture_output=True, text=True, timeout=30).stdout.strip()
        kpis = _counters(vnf)
    print(f"client side: {opened}, accepted from {accepted}; server side: {refused}; {kpis}")
    assert opened["connected"] == 2 and accepted == ["10.63.1.1"] * 2  # no NAT
    assert refused == "TimeoutError"  # dropped, not refused by the client's kernel
    assert kpis["firewall_dropped"] >= 1
    assert kpis["new_packets"] == 2 + kpis["firewall_dropped"]


# through nsb: the documented task, and a ruleset nft refuses

def _run(results_conf, task: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(NSB + ["--config-file", str(results_conf), "task", "start",
                                 str(task)], capture_output=True, text=True, timeout=timeout)


def _documented_task() -> dict:
    [text] = [e.text for e in examples("task") if "test_nftables.py" in e.note]
    return yaml.safe_load(text)


def test_what_its_rules_drop_is_the_duts_forwarding_loss_on_the_path(results_conf, tmp_path):
    """The documented firewall with trafgen's unanswered UDP both ways: each direction's
    loss is laid on the DUT as forwarding loss, frame for frame its counter's drops."""
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump(_documented_task(), sort_keys=False))
    done = _run(results_conf, task)
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    [trial] = doc["trials"]
    [kpis] = [k["kpis"] for k in doc["kpis"] if k["source"] == "fw0"]
    paths = {d["path"]: d for d in trial["path"]["directions"]}
    print(json.dumps({"kpis": kpis, "paths": paths}, indent=1))
    forward, backward = paths["tg:xe0 -> tg:xe1"], paths["tg:xe1 -> tg:xe0"]
    assert backward["received"] == 0 and backward["losses"] == [
        {"hop": "sut (fw0) xe1 -> xe0", "kind": "forwarding", "frames": backward["sent"]}]
    assert kpis["firewall_dropped"] == backward["sent"] > 0
    assert kpis["rate_limit_dropped"] > 0 and forward["losses"] == [
        {"hop": "sut (fw0) xe0 -> xe1", "kind": "forwarding",
         "frames": kpis["rate_limit_dropped"]}]
    assert forward["received"] == forward["sent"] - kpis["rate_limit_dropped"]
    # never answered: every packet is new to conntrack, one entry per flow that passed
    assert kpis["new_packets"] == kpis["packets_in"] == trial["tx_packets"]
    assert kpis["sessions"] == 4 and kpis["no_telnet.telnet"] == 0
    ruleset = doc["plan"]["scenarios"][0]["vnfs"]["fw0"]["ruleset"]
    assert 'ct state new iifname != "xe0" counter name "firewall_dropped" drop' in ruleset
    assert "table inet no_telnet {" in ruleset
    assert leftovers(task_id) == []


BAD_RULESET = """\
table inet mine {
  chain forward {
    type filter hook forward priority 10; policy accept;
    tcp dport 22 fwd
  }
}
"""


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "file"])
def test_a_ruleset_nft_refuses_is_one_located_line_and_nothing_starts(results_conf, tmp_path,
                                                                      inline):
    doc = _documented_task()
    options = doc["scenarios"][0]["vnfs"][0]["options"]
    if inline:
        options["ruleset"] = BAD_RULESET
    else:
        (tmp_path / "rules").mkdir()
        (tmp_path / "rules" / "fw.nft").write_text(BAD_RULESET)
        options["ruleset"] = "rules/fw.nft"
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump(doc, sort_keys=False))
    done = _run(results_conf, task, timeout=120)
    print(done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("nsb: error: ")]
    assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(errors[0])  # the run's header, then this line
    said = "nft: syntax error, unexpected newline, expecting to or ip or ip6"
    if inline:
        assert f"/task.yaml:{_line_of_ruleset(task)}: scenarios[0].vnfs[0].options.ruleset: " \
               f"line 4 of the ruleset: {said}" in errors[0]
    else:
        assert f"rules/fw.nft:4: {said} (the ruleset of fw0, options.ruleset)" in errors[0]
    task_id, results = results_of(tmp_path / "results")
    assert results["trials"] == [] and results["kpis"] == []
    assert leftovers(task_id) == []


def _line_of_ruleset(task: Path) -> int:
    return next(number for number, line in enumerate(task.read_text().splitlines(), 1)
                if line.strip().startswith("ruleset:"))


# on a pod's server over SSH: given back at the end, after an error, after SIGKILL

TIMEOUTS = {"tcp_timeout_established": 77, "udp_timeout": 11}


def _pod_task(tmp_path: Path, pod: Path, options: dict, duration_s: float = 1) -> Path:
    doc = {"schema": "nsb:task:0.1",
           "context": {"type": "baremetal", "file": str(pod),
                       "links": [["tg:xe0", "sut:xe0"], ["sut:xe1", "tg:xe1"]]},
           "scenarios": [{"name": "pod", "vnfs": [{"name": "dut0", "type": "nftables",
                                                   "node": "sut", "options": options}],
                          "traffic_generator": {"name": "tg0", "type": "trafgen", "node": "tg",
                                                "options": {"latency_probe_pps": 0}},
                          "traffic_profile": {"type": "fixed", "packet_sizes": [64],
                                              "duration": duration_s, "rate_pps": 2000}}],
           "outputs": [{"type": "file"}]}
    path = tmp_path / "pod-task.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _pod_state(node) -> dict:
    """What the VNF may change on the node: its tables, the settings it takes."""
    state = {"tables": node.ns("nft", "list", "tables").stdout}
    for name in TIMEOUTS:
        state[name] = node.ns("sysctl", "-n", f"net.netfilter.nf_conntrack_{name}").stdout.strip()
    return state


def _ledger(task_id: str) -> list[str]:
    folder = Path(node_ledger.LEDGER_DIR)
    return sorted(p.name for p in folder.glob(f"{task_id}.*")) if folder.is_dir() else []


def test_over_ssh_it_runs_and_gives_the_node_back(results_conf, tmp_path):
    with lab_pod(tmp_path) as (pod, nodes):
        before = _pod_state(nodes["sut"])
        done = _run(results_conf, _pod_task(tmp_path, pod, {"mode": "nat", **TIMEOUTS}))
        after = _pod_state(nodes["sut"])
        assert started_by_nsb(nodes["sut"]) == [] and started_by_nsb(nodes["tg"]) == []
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    [kpis] = [k["kpis"] for k in doc["kpis"] if k["source"] == "dut0"]
    print(f"before {before}, after {after}; {kpis}")
    assert after == before and "nsb_" not in after["tables"]
    assert before["tcp_timeout_established"] != "77" and before["udp_timeout"] != "11"
    assert kpis["packets_fwd"] == doc["trials"][0]["rx_packets"] > 0
    assert kpis["sessions"] >= 1 and "conntrack_insert_failed" in kpis
    assert _ledger(task_id) == [] and leftovers(task_id) == []


@pytest.mark.parametrize("option, fragment", [
    ({"conntrack_max": 1000}, "options.conntrack_max: node sut is in a network namespace of "
                              "its own, and the kernel takes nf_conntrack_max only in the "
                              "initial one: bound the connections with max_sessions instead"),
    ({"ruleset": "table inet userfw { chain c { type filter hook forward priority 0; } }"},
     "options.ruleset: table inet userfw of the ruleset is on node sut already; nsb deletes "
     "the tables its ruleset makes at teardown, so it loads none that was there"),
], ids=["conntrack_max", "table-there"])
def test_over_ssh_what_the_node_cannot_take_is_one_line_before_anything_starts(
        results_conf, tmp_path, option, fragment):
    with lab_pod(tmp_path) as (pod, nodes):
        sut = nodes["sut"]
        sut.ns("nft", "add", "table", "inet", "userfw", check=True)
        before = _pod_state(sut)
        done = _run(results_conf, _pod_task(tmp_path, pod, {"mode": "nat", **option}),
                    timeout=120)
        after = _pod_state(sut)
        sut.ns("nft", "delete", "table", "inet", "userfw", check=True)
    print(done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("nsb: error: ")]
    assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr
    assert fragment in errors[0]
    assert after == before  # userfw is still the node's
    task_id, doc = results_of(tmp_path / "results")
    assert doc["trials"] == [] and _ledger(task_id) == [] and leftovers(task_id) == []


def test_over_ssh_a_killed_run_is_given_back_by_its_ledger(results_conf, tmp_path):
    """SIGKILL while the trial runs: the node keeps nsb's table and settings, and the
    ledger the way back, which the next run's give-back (over SSH, for the node) runs."""
    with lab_pod(tmp_path) as (pod, nodes):
        sut = nodes["sut"]
        before = _pod_state(sut)
        task = _pod_task(tmp_path, pod, {"mode": "firewall", **TIMEOUTS}, duration_s=60)
        killed = subprocess.Popen(NSB + ["--config-file", str(results_conf), "task", "start",
                                         str(task)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (
                "nsb_" not in (state := _pod_state(sut))["tables"]
                or state["udp_timeout"] != "11" or not list(tmp_path.glob("results/*"))):
            time.sleep(0.2)
        [results] = list((tmp_path / "results").iterdir())
        task_id = results.name
        ledger = _ledger(task_id)  # written again before the settings changed
        killed.kill()
        killed.communicate(timeout=30)
        during = _pod_state(sut)
        executor = SshExecutor("sut", sut.host, key_filename=sut.key_filename)
        try:
            done = node_leftovers.give_back(executor, alive=lambda task: task != task_id)
        finally:
            executor.close()
        after = _pod_state(sut)
        processes = started_by_nsb(sut) + started_by_nsb(nodes["tg"])
    print(f"ledger {ledger}; gave back {done}")
    assert {f"{task_id}.undo.dut0", f"{task_id}.undo.dut0.nftables"} <= set(ledger)
    assert "nsb_" in during["tables"] and during["tcp_timeout_established"] == "77"
    assert {"what dut0 changed", "what dut0.nftables changed"} <= set(done)
    assert after == before and _ledger(task_id) == [] and processes == []
