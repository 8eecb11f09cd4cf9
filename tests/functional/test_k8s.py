"""CNFs on a real single-node Kubernetes (tools/k8s, make k8s): the kubernetes context
makes a namespace per run, builds and imports the CNF image, starts pods and runs
testpmd in them through the API's exec; TRex on the node sends over memif. The counts
nsb reports are checked against the CNF's own DPDK telemetry; a missing image, hugepages
the node lacks and a memif without its peer are one line; a killed run's namespace is
deleted by the next run; make k8s-down leaves the host as it was."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import NSB, ROOT, requires_root
from tests.functional import k8s_cluster
from tests.functional.answers import check_consistent
from tests.functional.lab import results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex
from tests.task_edits import edited

pytestmark = pytest.mark.k8s
SAMPLE = ROOT / "samples" / "k8s" / "tc_trex_memif_testpmd_cnf.yaml"


@pytest.fixture(scope="module")
def cluster():
    requires_root()
    started = not k8s_cluster.is_up()
    before = k8s_cluster.host_state() if started else None
    path = k8s_cluster.up()
    yield path
    if started:
        done = k8s_cluster.down()
        assert done.returncode == 0, done.stderr
        assert k8s_cluster.host_state() == before


def test_make_k8s_prints_its_kubeconfig_and_the_node_is_ready(cluster):
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=cluster)
    (node,) = client.CoreV1Api(api).list_node().items
    assert node.status.node_info.kubelet_version == "v1.34.4"
    ready = {c.type: c.status for c in node.status.conditions}
    assert ready["Ready"] == "True"
    assert client.VersionApi(api).get_code().git_version == "v1.34.4"


def test_plugin_show_lists_the_context_options():
    for name in ("kubernetes", "Kubernetes"):
        out = subprocess.run([*NSB, "plugin", "show", name], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        for option in ("servers", "networks", "kubeconfig", "images", "links"):
            assert f"  {option}:" in out.stdout


def _counts_match_telemetry(doc) -> None:
    """Over the run, testpmd's own counters (DPDK telemetry, read after each trial)
    received what TRex sent and sent what TRex received, port by port."""
    testpmd = [k["kpis"] for k in doc["kpis"] if k["source"] == "testpmd0"]
    last = testpmd[-1]
    sent = [sum(t["ports"][p]["tx_packets"] for t in doc["trials"]) for p in ("xe0", "xe1")]
    received = [sum(t["ports"][p]["rx_packets"] for t in doc["trials"]) for p in ("xe0", "xe1")]
    # TRex port 0 -> testpmd port 0 (xe0) -> port 1 -> TRex port 1, and back
    assert last["port0_ipackets"] == sent[0]
    assert last["port1_ipackets"] == sent[1]
    assert last["port1_opackets"] == received[1]
    assert last["port0_opackets"] == received[0]


def test_trex_to_a_testpmd_cnf_over_memif_answers_by_what_its_trials_show(cluster, results_conf,
                                                                           tmp_path):
    """The CNF throttled by its CPU limit either loses frames (limited by the DUT) or
    holds TRex back over memif without loss (limited by the generator, saying the two
    cannot be told apart there): which one, this machine's load decides; that the
    answer agrees with its trials and every count with testpmd's, it does not."""
    requires_trex()
    proc = start(results_conf, {"duration_s": 2, "packet_sizes": [64]}, task=SAMPLE,
                 env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    _, doc = results_of(tmp_path / "results")
    check_consistent(doc, speed_gbps=10)
    (result,) = doc["results"]
    assert result["limited_by"] in ("dut", "generator"), result
    _counts_match_telemetry(doc)
    facts = doc["platform"]["cnf"]["kubernetes"]
    assert facts["pod"] == "cnf-k8s" and facts["kubernetes_version"] == "v1.34.4"
    assert facts["images"] == ["local/nsb-dpdk-cnf:22.11"]
    assert not k8s_cluster.nsb_namespaces()


def test_a_chain_of_two_cnfs_over_memif_counts_every_frame_at_every_hop(cluster, results_conf,
                                                                        tmp_path):
    """testpmd, then l3fwd, in two pods sharing a memif socket: in every trial the
    CNFs' own counters (testpmd's and l3fwd's DPDK telemetry) match TRex's at the ends
    and each other across the memif between the pods, and the losses by hop add up to
    what TRex sent less what it received; the platform names both pods."""
    requires_trex()
    from tests.functional.test_dpdk_apps import DPDK_APPS

    task = ROOT / "samples" / "k8s" / "tc_trex_memif_cnf_chain.yaml"
    proc = start(results_conf, {"duration_s": 2, "packet_sizes": [64],
                                "l3fwd_path": str(DPDK_APPS / "l3fwd")}, task=task,
                 env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    _, doc = results_of(tmp_path / "results")
    assert doc["results"]
    for trial in doc["trials"]:  # each CNF's own counts (DPDK telemetry) along the chain
        (direction,) = trial["path"]["directions"]
        assert direction["complete"] and direction["unaccounted"] == 0, direction
        # a point is named "<node>:<port> <what>", with "(<kind of loss>)" where it lost
        places = {p["place"].split(" (")[0]: p["frames"] for p in direction["points"]}
        assert places["cnf1:xe0 rx"] == trial["tx_packets"]
        assert places["cnf1:xe1 tx"] == places["cnf2:xe0 rx"]  # the memif between the pods
        assert places["cnf2:xe1 tx"] == trial["rx_packets"]
        lost = sum(loss["frames"] for loss in direction["losses"])
        assert lost == trial["tx_packets"] - trial["rx_packets"]
    assert {doc["platform"][n]["kubernetes"]["pod"] for n in ("cnf1", "cnf2")} == \
        {"cnf1-k8s", "cnf2-k8s"}
    assert not k8s_cluster.nsb_namespaces()


def test_a_cnf_behind_ovs_dpdk_on_vhost_user_counts_every_frame_at_every_hop(
        cluster, results_conf, tmp_path):
    """PVC: TRex into OVS-DPDK on the node, testpmd in a pod on vhost-user (its memory
    from the pod's hugepages). The switch and the CNF are the limit; in every trial the
    CNF's own counters (testpmd's telemetry, in the pod) and OVS's port counters match
    TRex's at the ends and each other on each vhost-user port, the losses by hop adding
    up to tx - rx; testpmd's counters after the run are what the trials added up to."""
    requires_trex()
    task = ROOT / "samples" / "k8s" / "tc_trex_ovs_dpdk_pvc_cnf.yaml"
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64]}, task=task,
                 env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    _, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    # the switch and the CNF are the limit: frames lost above the answer; a vhost-user
    # ring the switch drains late also slows TRex (backpressure), so the search may end
    # on TRex's lag, a few kpps under that loss, and say so
    assert result["limited_by"] in ("dut", "generator"), result
    assert any(t["verdict"] == "fail" and t["tx_rate_pps"] > result["throughput_pps"]
               for t in doc["trials"])
    into_cnf, out_of_cnf = [], []
    for trial in doc["trials"]:
        (direction,) = trial["path"]["directions"]
        assert direction["complete"] and direction["unaccounted"] == 0, direction
        # a point is named "<node>:<port> <what>", with "(<kind of loss>)" where it lost
        places = {p["place"].split(" (")[0]: p["frames"] for p in direction["points"]}
        assert places["tg:xe0 tx"] == trial["tx_packets"] == places["host:br0-0a rx"]
        assert places["cnf:eth0 rx"] == places["host:br0-0b tx"]  # the pod's vhost-user
        assert places["cnf:eth1 tx"] == places["host:br0-1a rx"]
        assert places["tg:xe1 rx"] == trial["rx_packets"] == places["host:br0-1b tx"]
        lost = sum(loss["frames"] for loss in direction["losses"])
        assert lost == trial["tx_packets"] - trial["rx_packets"]
        into_cnf.append(places["cnf:eth0 rx"])
        out_of_cnf.append(places["cnf:eth1 tx"])
    # testpmd's counters read once after the run: what the trials' differences add up to
    testpmd = [k["kpis"] for k in doc["kpis"] if k["source"] == "cnf0"][-1]
    assert testpmd["port0_ipackets"] == sum(into_cnf)
    assert testpmd["port1_opackets"] == sum(out_of_cnf)
    assert doc["platform"]["cnf"]["kubernetes"]["pod"] == "cnf-k8s"
    report = tmp_path / "report.html"  # the report names the pod, its image, the version
    done = subprocess.run([*NSB, "--config-file", str(results_conf), "report", "html",
                           doc["task"]["id"], "-o", str(report)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    shown = report.read_text()
    assert all(x in shown for x in ("cnf-k8s", "local/nsb-dpdk-cnf:22.11", "v1.34.4"))
    assert not k8s_cluster.nsb_namespaces()
    assert not list(Path("/tmp").glob(f"nsb-{doc['task']['id']}"))


def _task(tmp_path, replace: dict, sample=SAMPLE) -> str:
    return edited(sample, tmp_path, replace)


@pytest.mark.parametrize("replace, code, expected", [
    ({"image: local/nsb-dpdk-cnf:22.11": "image: local/no-such-image:1"}, 3,
     "pod cnf-k8s cannot start: container main: ErrImageNeverPull"),
    ({"limits: {cpu": "limits: {hugepages-2Mi: 64Gi, cpu",
      "requests: {cpu": "requests: {hugepages-2Mi: 64Gi, cpu"}, 3,
     "Insufficient hugepages-2Mi"),
    ({"      - [cnf:xe1, tg:xe1]\n": ""}, 2, "cnf:xe1 is a memif interface without a link"),
    ({", hugepages-2Mi: \"{{ hugepages | default('512Mi') }}\"": ""}, 2,
     "pod cnf-k8s: ports eth0, eth1 are vhost-user, whose memory the vSwitch shares"),
    ({"memory_mb: 256": "memory_mb: 600"}, 3,
     "needs 600 MB of hugepages (memory_mb/socket_mem); its pod was given 512 MB"),
], ids=["missing-image", "hugepages", "memif-peer", "vhost-no-hugepages",
        "vhost-too-few-hugepages"])
def test_what_a_cnf_cannot_have_is_one_line(cluster, results_conf, tmp_path, replace, code,
                                            expected):
    """A missing image and hugepages the node lacks are found when the pod is made (a
    missing prerequisite: exit 3); a memif without its peer before anything starts (bad
    input: exit 2)."""
    requires_trex()
    pvc = any("hugepages |" in k or "memory_mb" in k for k in replace)
    task = _task(tmp_path, replace,
                 ROOT / "samples" / "k8s" / "tc_trex_ovs_dpdk_pvc_cnf.yaml" if pvc else SAMPLE)
    done = subprocess.run([*NSB, "--config-file", str(results_conf), "task", "start", task,
                           "--task-args", json.dumps({"duration_s": 1, "packet_sizes": [64]})],
                          capture_output=True, text=True, env=env_with_trex(), timeout=600)
    assert done.returncode == code, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("nsb: error")]
    assert len(lines) == 1, done.stderr  # pre-flight lists its failures under the line
    assert expected in done.stderr[done.stderr.index(lines[0]):], done.stderr
    assert "Traceback" not in done.stderr
    assert not k8s_cluster.nsb_namespaces()


def test_a_killed_run_leaves_no_namespace_after_the_next(cluster, results_conf, tmp_path):
    requires_trex()
    proc = start(results_conf, {"duration_s": 5, "packet_sizes": [64]}, task=SAMPLE,
                 env=env_with_trex())
    deadline = time.monotonic() + 300
    while not any(k8s_cluster.client().list_namespaced_pod(ns).items
                  for ns in k8s_cluster.nsb_namespaces()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.5)
    time.sleep(15)  # mid-trial: the pod is up and TRex sends
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert k8s_cluster.nsb_namespaces(), "the killed run's namespace should still be there"
    # the next run (a dry run does not deploy: a run that fails at once does)
    again = start(results_conf, {"duration_s": 1, "packet_sizes": [64]},
                  task=_task(tmp_path, {"image: local/nsb-dpdk-cnf:22.11":
                                        "image: local/no-such-image:1"}), env=env_with_trex())
    _, err = again.communicate(timeout=600)
    assert again.returncode == 3, err
    deadline = time.monotonic() + 120
    while k8s_cluster.nsb_namespaces() and time.monotonic() < deadline:
        time.sleep(1)
    assert not k8s_cluster.nsb_namespaces()
    assert not [p for p in k8s_cluster.client().list_pod_for_all_namespaces().items
                if p.metadata.namespace.startswith("nsb-")]


def test_a_kernel_link_between_two_pods_is_a_multus_bridge(cluster, tmp_path):
    """Two pods linked by a kernel interface each: Multus attaches a bridge network of the
    link's own, the interfaces named and addressed (MAC) as the task says, and frames
    cross it (a ping answered, counted by the other pod's interface)."""
    from types import SimpleNamespace

    from nsb.contexts.kubernetes import KubernetesContext
    from nsb.runinfo import RunInfo

    options = {"name": "k8s", "servers": {
        name: {"containers": [{"image": "local/nsb-dpdk-cnf:22.11", "imagePullPolicy": "Never",
                               "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}],
               "interfaces": {"xe0": {"type": "veth"}}} for name in ("a", "b")},
        "images": {"local/nsb-dpdk-cnf:22.11": {"programs": ["dpdk-testpmd"]}},
        "links": [["a:xe0", "b:xe0"]]}
    spec = SimpleNamespace(type="kubernetes", where=None)
    context = KubernetesContext(spec, options, RunInfo("261128-000000-multus", None, tmp_path))
    try:
        context.deploy()
        macs = {}
        for name in ("a", "b"):
            shown = context.nodes[name].executor.run(["ip", "-o", "link", "show", "xe0"]).stdout
            assert "xe0" in shown and "UP" in shown, shown
            macs[name] = shown.split("link/ether ")[1].split()[0]
        assert macs == {n: context.nodes[n].interfaces["xe0"].mac for n in ("a", "b")}
        a, b = (context.nodes[n].executor for n in ("a", "b"))

        def counted(executor, what):
            return int(executor.read_file(f"/sys/class/net/xe0/statistics/{what}").strip())

        b.run(["ip", "addr", "add", "192.0.2.2/24", "dev", "xe0"])
        a.run(["ip", "addr", "add", "192.0.2.1/24", "dev", "xe0"])
        before = counted(b, "rx_packets")
        pinged = a.run(["ping", "-c", "3", "-W", "2", "192.0.2.2"], timeout=30, check=False)
        assert pinged.returncode == 0, pinged.stdout + pinged.stderr
        assert counted(b, "rx_packets") - before >= 3  # b's own counter saw them
    finally:
        context.undeploy()
    assert not k8s_cluster.nsb_namespaces()


def test_the_pod_executor_runs_starts_pipes_and_forwards_ports(cluster, tmp_path):
    """What VNF plugins ask of a node, through the API: a command with its input, files,
    a background program stopped with its exit code, a program on pipes, and a TCP port
    of the pod reached through a port-forward."""
    import time as clock
    from types import SimpleNamespace

    from nsb.contexts.kubernetes import KubernetesContext
    from nsb.runinfo import RunInfo

    options = {"name": "k8s", "servers": {"p": {"image": "local/nsb-dpdk-cnf:22.11",
                                                "imagePullPolicy": "Never"}},
               "images": {"local/nsb-dpdk-cnf:22.11": {"programs": ["dpdk-testpmd"]}}}
    spec = SimpleNamespace(type="kubernetes", where=None)
    context = KubernetesContext(spec, options, RunInfo("261128-000000-podexe", None, tmp_path))
    try:
        context.deploy()
        pod = context.nodes["p"].executor
        assert pod.run(["tr", "a-z", "A-Z"], input="hello\n").stdout == "HELLO\n"
        assert pod.run(["sh", "-c", "exit 3"], check=False).returncode == 3
        pod.write_file("/tmp/x/config.txt", "line one\nline two\n")
        assert pod.read_file("/tmp/x/config.txt") == "line one\nline two\n"
        log = str(tmp_path / "sleeper.log")
        sleeper = pod.start(["sh", "-c", "echo started; sleep 60"], log_path=log)
        assert sleeper.poll() is None
        sleeper.stop(grace_s=2)
        assert sleeper.poll() is not None and "started" in pod.read_file(log)
        echo = pod.start(["cat"], pipes=True)
        echo.write_line("through the pipe")
        assert echo.read_line(timeout=10) == "through the pipe"
        echo.stop(grace_s=2)
        server = pod.start(["nc", "-l", "-p", "7777", "-e", "cat"])
        deadline = clock.monotonic() + 20
        while True:
            try:
                sock = pod.connect_tcp(7777, timeout=5)
                sock.sendall(b"over the forward\n")
                got = sock.recv(64)
                sock.close()
                if got:
                    break
            except OSError:
                pass
            assert clock.monotonic() < deadline, "no answer through the port-forward"
            clock.sleep(0.5)
        assert got == b"over the forward\n"
        server.stop(grace_s=2)
    finally:
        context.undeploy()
    assert not k8s_cluster.nsb_namespaces()


NEIGHBOUR = ROOT / "samples" / "neighbour" / "tc_testpmd_noisy_neighbour.yaml"


def _neighbours_seen(proc, seen: dict) -> None:
    """Until ``proc`` ends: every stress-ng process of an nsb neighbour on this machine
    (not the shell that started it), its cgroup and the CPUs the kernel lets it run on,
    as the host's /proc shows them."""
    while proc.poll() is None:
        for entry in Path("/proc").iterdir():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                program = Path(cmdline.split(" ", 1)[0]).name
                if program == "stress-ng" and "-neighbour.log" in cmdline:
                    status = (entry / "status").read_text()
                    allowed = next(line.split()[1] for line in status.splitlines()
                                   if line.startswith("Cpus_allowed_list"))
                    seen[entry.name] = ((entry / "cgroup").read_text(), allowed)
            except (OSError, StopIteration, ValueError):
                continue
        time.sleep(0.1)


def test_a_neighbour_in_a_pod_is_pinned_where_the_task_says(cluster, results_conf, tmp_path):
    """The noisy neighbour a CNF: stress-ng started in a pod of the cluster (its image
    built from this machine's stress-ng), pinned to testpmd's core. The host's own /proc
    sees its processes in the pod's cgroup on that CPU only; the answer is the trials';
    the pod and its processes are gone afterwards."""
    import threading

    requires_trex()
    proc = start(results_conf, {"neighbour_in": "cnf", "trials": 2, "cpus": "1"},
                 task=NEIGHBOUR, env=env_with_trex())
    seen: dict = {}
    watcher = threading.Thread(target=_neighbours_seen, args=(proc, seen), daemon=True)
    watcher.start()
    out, err = proc.communicate(timeout=900)
    watcher.join(5)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    ran = result["neighbour"]["ran"]
    assert ran["node"] == "noisy" and ran["runs_in"].startswith("pod "), ran
    assert ran["workers"] == 1 and ran["cpus_allowed"] == ["1"], ran
    assert seen, "no neighbour process was seen on the host"
    for cgroup, allowed in seen.values():
        assert "kubepods" in cgroup and allowed == "1", (cgroup, allowed)
    trials = doc["trials"]
    assert [("with the" in t["reason"]) for t in trials] == [False, True, False, True]
    n = result["neighbour"]
    assert n["with"]["receive_rates_pps"] == pytest.approx(
        [t["rx_rate_pps"] for t in trials[1::2]])
    assert "cpu x1 on CPU 1 of noisy" in out
    assert subprocess.run(["pgrep", "-f", f"nsb-{task_id}-neighbour"]).returncode == 1
    assert not k8s_cluster.nsb_namespaces()
