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

import pytest

from tests.conftest import NSB, ROOT, requires_root
from tests.functional import k8s_cluster
from tests.functional.lab import results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

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


def test_trex_to_a_testpmd_cnf_over_memif_is_dut_limited(cluster, results_conf, tmp_path):
    requires_trex()
    proc = start(results_conf, {"duration_s": 2, "packet_sizes": [64]}, task=SAMPLE,
                 env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    _, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    assert result["limited_by"] == "dut", result
    assert result["throughput_pps"] > 0 and result["loss_pct"] <= 0.01
    _counts_match_telemetry(doc)
    facts = doc["platform"]["cnf"]["kubernetes"]
    assert facts["pod"] == "cnf-k8s" and facts["kubernetes_version"] == "v1.34.4"
    assert facts["images"] == ["local/nsb-dpdk-cnf:22.11"]
    assert not k8s_cluster.nsb_namespaces()


def _task(tmp_path, replace: dict) -> str:
    text = SAMPLE.read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "task.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("replace, code, expected", [
    ({"image: local/nsb-dpdk-cnf:22.11": "image: local/no-such-image:1"}, 3,
     "pod cnf-k8s cannot start: container main: ErrImageNeverPull"),
    ({"limits: {cpu": "limits: {hugepages-2Mi: 64Gi, cpu",
      "requests: {cpu": "requests: {hugepages-2Mi: 64Gi, cpu"}, 3,
     "Insufficient hugepages-2Mi"),
    ({"      - [cnf:xe1, tg:xe1]\n": ""}, 2, "cnf:xe1 is a memif interface without a link"),
], ids=["missing-image", "hugepages", "memif-peer"])
def test_what_a_cnf_cannot_have_is_one_line(cluster, results_conf, tmp_path, replace, code,
                                            expected):
    """A missing image and hugepages the node lacks are found when the pod is made (a
    missing prerequisite: exit 3); a memif without its peer before anything starts (bad
    input: exit 2)."""
    requires_trex()
    task = _task(tmp_path, replace)
    done = subprocess.run([*NSB, "--config-file", str(results_conf), "task", "start", task,
                           "--task-args", json.dumps({"duration_s": 1, "packet_sizes": [64]})],
                          capture_output=True, text=True, env=env_with_trex(), timeout=600)
    assert done.returncode == code, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("nsb: error")]
    assert len(lines) == 1 and expected in lines[0], done.stderr
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
