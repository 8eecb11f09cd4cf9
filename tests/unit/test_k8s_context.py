"""The kubernetes context without a cluster: pods from Yardstick's and nsb's server keys,
Multus networks, why a pod cannot start, the image archive, NSB's Kubernetes tasks."""

import io
import json
import shutil
import tarfile
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from nsb.k8s import image_archive, pods, readiness
from tests.task_edits import edited

DATA = Path(__file__).resolve().parent.parent / "data" / "yardstick_k8s"


def test_single_container_server_as_yardstick_reads_it():
    raw = {"image": "busybox", "command": "/bin/sh", "args": ["-c", "sleep 1"],
           "nodeSelector": {"kubernetes.io/hostname": "n1"}, "lifecycle": {"x": 1},
           "resources": {"limits": {"cpu": 1, "hugepages-2Mi": "512Mi"}, "other": {}},
           "env": [{"name": "A", "value": 3}], "networks": ["data0"]}
    plan = pods.plan_pod("host", raw, "k8s", "ns1", {"l": "v"}, [],
                         {"data0": ("xe0", "02:00:00:00:00:01")})
    spec = plan.manifest["spec"]
    assert plan.name == "host-k8s"
    (container,) = spec["containers"]
    assert container["command"] == ["/bin/sh"] and container["args"] == ["-c", "sleep 1"]
    assert container["resources"] == {"limits": {"cpu": "1", "hugepages-2Mi": "512Mi"}}
    assert container["env"] == [{"name": "A", "value": "3"}]
    assert "lifecycle" not in container  # ignored, as Yardstick ignores it
    assert spec["nodeSelector"] == {"kubernetes.io/hostname": "n1"}
    assert spec["tolerations"] == [{"operator": "Exists"}]
    annotation = json.loads(plan.manifest["metadata"]["annotations"][pods.MULTUS_ANNOTATION])
    assert annotation == [{"name": "data0", "interface": "xe0", "mac": "02:00:00:00:00:01"}]
    assert plan.manifest["metadata"]["labels"] == {"l": "v", "app": "host-k8s"}


def test_containers_list_shared_socket_dir_and_idle_command():
    raw = {"containers": [{"image": "a:1"}, {"image": "b:2", "command": ["run"]}],
           "node_ports": [{"name": "lua", "port": 22022}]}
    shared = [pods.SharedDir("nsb-memif", "/tmp/nsb-x/memif")]
    plan = pods.plan_pod("vnf_0", raw, "k8syardstick", "ns", {}, shared, {})
    first, second = plan.manifest["spec"]["containers"]
    assert plan.name == "vnf-0-k8syardstick"  # a DNS label
    assert first["command"] == pods.IDLE_COMMAND  # nsb starts the programs itself
    assert second["command"] == ["run"]
    for container in (first, second):
        assert {"name": "nsb-memif", "mountPath": "/tmp/nsb-x/memif"} in container["volumeMounts"]
    assert plan.manifest["spec"]["volumes"] == [
        {"name": "nsb-memif", "hostPath": {"path": "/tmp/nsb-x/memif",
                                           "type": "DirectoryOrCreate"}}]
    assert plan.images == ["a:1", "b:2"]
    assert plan.service["spec"]["ports"] == [{"name": "lua", "port": 22022, "protocol": "TCP"}]


def test_network_attachments_from_nsb_config_and_yardstick_plugin():
    nad = pods.network_attachment("n1", "ns", {}, {"config": {"type": "bridge",
                                                              "bridge": "br9"}})
    assert json.loads(nad["spec"]["config"]) == {"cniVersion": "0.4.0", "name": "n1",
                                                 "type": "bridge", "bridge": "br9"}
    old = pods.network_attachment("flannel", "ns", {}, {
        "plugin": "flannel", "args": '[{ "delegate": { "isDefaultGateway": true }}]'})
    assert json.loads(old["spec"]["config"])["delegate"] == {"isDefaultGateway": True}
    assert json.loads(old["spec"]["config"])["type"] == "flannel"


def _pod(phase="Pending", waiting=None, conditions=(), restart="Always"):
    state = NS(waiting=NS(reason=waiting[0], message=waiting[1]) if waiting else None,
               terminated=None)
    statuses = [NS(name="main", state=state, ready=False)] if waiting else []
    return NS(status=NS(phase=phase, reason=None, message=None, container_statuses=statuses,
                        conditions=list(conditions)), spec=NS(restart_policy=restart))


def test_why_a_pod_cannot_start():
    never = _pod(waiting=("ErrImageNeverPull", 'Container image "nope:1" is not present'))
    assert "ErrImageNeverPull" in readiness.pod_problem(never, [])
    assert "is not on the node" in readiness.pod_problem(never, [])
    unschedulable = _pod(conditions=[NS(type="PodScheduled", status="False",
                                        reason="Unschedulable",
                                        message="0/1 nodes are available: 1 Insufficient "
                                                "hugepages-2Mi.")])
    assert "Insufficient hugepages-2Mi" in readiness.pod_problem(unschedulable, [])
    sandbox = NS(type="Warning", reason="FailedCreatePodSandBox",
                 message="plugin type=\"multus\" failed (add): cannot find a network-attachment"
                         "-definition (nope)")
    assert "network-attachment" in readiness.pod_problem(_pod(), [sandbox])
    creating = _pod(waiting=("ContainerCreating", ""))
    assert readiness.pod_problem(creating, []) == ""  # it may still come up


def test_image_archive_is_a_docker_archive(tmp_path):
    script = tmp_path / "hello.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    image = image_archive.ImageFiles()
    image.add_file(str(script), "/usr/bin/hello")
    image.links["bin/sh"] = "/bin/busybox"
    out = tmp_path / "img.tar"
    digest = image_archive.write_archive(str(out), "local/x:1", image, cmd=["/usr/bin/hello"])
    with tarfile.open(out) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        assert manifest[0]["RepoTags"] == ["docker.io/local/x:1"]
        config = json.load(tar.extractfile(manifest[0]["Config"]))
        assert f"sha256:{manifest[0]['Config'].split('.')[0]}" == digest
        layer = tarfile.open(fileobj=io.BytesIO(tar.extractfile(manifest[0]["Layers"][0]).read()))
        names = set(layer.getnames())
    assert {"usr/bin/hello", "bin/sh", "etc/passwd", "tmp"} <= names
    assert config["config"]["Cmd"] == ["/usr/bin/hello"]
    # the same files give the same image
    again = image_archive.write_archive(str(tmp_path / "again.tar"), "local/x:1", image,
                                        cmd=["/usr/bin/hello"])
    assert again == digest


@pytest.mark.parametrize("ref, full", [("busybox", "docker.io/library/busybox:latest"),
                                       ("local/a:2", "docker.io/local/a:2"),
                                       ("registry.k8s.io/pause:3.10",
                                        "registry.k8s.io/pause:3.10")])
def test_image_references_as_containerd_stores_them(ref, full):
    assert image_archive.full_reference(ref) == full


def test_cnf_image_has_the_program_its_libraries_a_shell_and_python():
    from nsb.k8s import cnf_image

    if not shutil.which("dpdk-testpmd"):
        pytest.fail("dpdk-testpmd is missing (make test installs Debian's dpdk)")
    image = cnf_image.cnf_files(["dpdk-testpmd"])
    files = set(image.files) | set(image.links)
    testpmd = shutil.which("dpdk-testpmd").lstrip("/")
    assert testpmd in files
    assert any(f.endswith("librte_net_memif.so") for f in files)
    assert any("librte_ethdev.so" in f for f in files)  # its libraries (ldd)
    assert "usr/bin/sh" in files and "usr/bin/python3" in files
    assert any(f.endswith("libgcc_s.so.1") for f in files)
    assert any(f.endswith("/json/__init__.py") for f in files)
    with pytest.raises(Exception, match="not on this machine"):
        cnf_image.cnf_files(["no-such-program-here"])


def test_nsb_kubernetes_tasks_say_what_they_lack(nsb_main):
    code, _, err = nsb_main("task", "start", str(DATA / "nsut/cmts/tc_vcmts_k8s_pktgen.yaml"),
                            "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "tg_vcmts_tpl.yaml:17" in line and "vCMTS container images" in line
    # upstream's own mistake: its scenario names node 'vnf', its server is vnf_0
    code, _, err = nsb_main("task", "start", str(DATA / "nsut/cmts/tc_k8s_pktgen_01.yaml"),
                            "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "tc_k8s_pktgen_01.yaml:22" in line and "node 'vnf'" in line and "vnf_0" in line


def test_nsb_kubernetes_context_read_as_yardstick_reads_it(tmp_path):
    """tc080 (Ping between two pods): its servers become pods <server>-<context>, each
    container as Yardstick gives it (its ssh set-up args kept, not needed)."""
    from nsb.contexts.kubernetes import KubernetesContext
    from nsb.runinfo import RunInfo
    from nsb.task import yardstick
    from nsb.task.documents import read_document

    doc = read_document(DATA / "opnfv_yardstick_tc080.yaml", {})
    nodes = yardstick.kubernetes_nodes(doc.data["context"], doc, ("context",))
    assert set(nodes) == {"host", "target"}
    assert nodes["host"].pod["name"] == "host-k8s" and nodes["host"].pod["user"] == "root"
    spec = NS(type="Kubernetes", where=None)
    options = {k: v for k, v in doc.data["context"].items() if k != "type"}
    context = KubernetesContext(spec, options, RunInfo("261128-000000-abcdef", None, tmp_path))
    context.link_across({})
    plans = context.plans
    assert {p.name for p in plans.values()} == {"host-k8s", "target-k8s"}
    container = plans["host"].manifest["spec"]["containers"][0]
    assert container["image"] == "openretriever/yardstick"
    assert container["command"] == ["/bin/bash"] and "service ssh restart" in container["args"][1]
    assert context.namespace == "nsb-abcdef"


PVC = Path(__file__).resolve().parents[2] / "samples" / "k8s" / "tc_trex_ovs_dpdk_pvc_cnf.yaml"


def _pvc(tmp_path, replace: dict) -> str:
    return edited(PVC, tmp_path, replace, "pvc.yaml")


def test_a_pvc_pod_mounts_the_vhost_user_sockets_and_has_no_multus_network(nsb_main):
    """The pod serves its vhost-user sockets where OVS-DPDK on the node connects
    (the task's vhost directory, mounted at the same path); no Multus network is
    made for a switched link; the bridge's ports are dpdkvhostuserclient ports."""
    import yaml

    code, out, err = nsb_main("task", "start", str(PVC), "--dry-run")
    assert code == 0, err
    shown = yaml.safe_load(out)
    (kubernetes,) = [c for c in shown["context"]["contexts"] if c["type"] == "kubernetes"]
    assert kubernetes["pods"]["cnf-k8s"]["networks"] == ""
    ovs = shown["scenarios"][0]["vnfs"]["ovs0"]
    sockets = ovs["vhost_user_ports"]
    assert sockets["br0-0b"].endswith("/vhost/cnf-eth0.sock")
    assert sockets["br0-1a"].endswith("/vhost/cnf-eth1.sock")
    command = shown["scenarios"][0]["vnfs"]["cnf0"]["command"]
    assert f"net_virtio_user0,path={sockets['br0-0b']},server=1" in command
    assert "--in-memory" in command  # hugepages through memfd, no hugetlbfs mount


def test_the_pod_of_a_pvc_mounts_the_socket_directory(tmp_path):
    from nsb.contexts.kubernetes import KubernetesContext
    from nsb.contexts.topology import build_nodes
    from nsb.runinfo import RunInfo

    others = build_nodes({"tg": {"role": "TrafficGen", "interfaces": {"xe0": {
        "type": "vhostuser"}}}, "host": {"role": "Switch", "bridges": ["br0"]}})
    options = {"servers": {"cnf": {"image": "x", "resources": {
        "limits": {"hugepages-2Mi": "1Gi", "memory": "1Gi"}},
        "interfaces": {"eth0": {"type": "vhostuser"}}}},
        "links": [{"ends": ["tg:xe0", "cnf:eth0"], "via": "br0"}]}
    context = KubernetesContext(NS(type="kubernetes", where=None), options,
                                RunInfo("261128-000000-abcdef", None, tmp_path))
    context.link_across(others)
    plan = context.plans["cnf"]
    (volume,) = plan.manifest["spec"]["volumes"]
    assert volume["hostPath"]["path"] == "/tmp/nsb-261128-000000-abcdef/vhost"
    assert plan.hugepages_mb == 1024


@pytest.mark.parametrize("replace, expected", [
    ({", hugepages-2Mi: \"{{ hugepages | default('512Mi') }}\"": ""},
     "contexts[1].servers.cnf: pod cnf-k8s: ports eth0, eth1 are vhost-user, whose memory "
     "the vSwitch shares: give its container resources.limits hugepages-2Mi"),
    ({"hugepages | default('512Mi')": "hugepages | default('lots')"},
     "contexts[1].servers.cnf: pod cnf-k8s: hugepages-2Mi: 'lots' is not a quantity"),
    ({"      - {ends: [cnf:eth1, tg:xe1], via: br0}\n": ""},
     "contexts[1].servers.cnf.interfaces.eth1: cnf:eth1 is a vhost-user interface: link it "
     "through the node's vSwitch"),
    ({"interfaces: {eth0: {type: vhostuser}, eth1: {type: vhostuser}}":
      "interfaces: {eth0: {type: vhostuser}, eth1: {type: memif}}"},
     "contexts[1].links[1].ends[0]: link cnf:eth1 <-> tg:xe1 via host:br0: pod interface "
     "cnf:eth1 reaches the node's vSwitch over vhost-user only"),
    ({"      - {ends: [cnf:eth1, tg:xe1], via: br0}\n": "      - [cnf:eth1, tg:xe1]\n"},
     "contexts[1].links[1]: link cnf:eth1 <-> tg:xe1: a pod reaches a node outside the "
     "cluster (tg:xe1) over memif"),
], ids=["no-hugepages", "bad-quantity", "no-switch", "memif-via-switch", "vhost-direct"])
def test_what_a_pvc_pod_lacks_is_one_line_before_anything_starts(nsb_main, tmp_path, replace,
                                                                  expected):
    code, _, err = nsb_main("task", "start", _pvc(tmp_path, replace), "--dry-run")
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert expected in line and "pvc.yaml:" in line, line


def test_a_pods_hugepages_are_given_not_added_to_the_pool():
    """In a pod, a DPDK program's hugepages are the pod's (its resources): pre-flight
    compares against them, not the node's pool it must not grow."""
    from nsb.vnfs.dpdk import eal

    facts = {"online_cpus": "0-1", "hugepages_free": 0, "mem_available_kb": 0}
    assert eal.preflight(facts, "0-1", 256, given_mb=512) == []
    (line,) = eal.preflight(facts, "0-1", 600, given_mb=512)
    assert "its pod was given 512 MB" in line
    (line,) = eal.preflight(facts, "0-1", 256)  # the node's pool: memory to add them
    assert "needs 144 hugepages" in line


def test_yardsticks_own_kubernetes_test_case_is_one_line_at_its_scenario(nsb_main):
    """TC080 pings between two pods: a generic Yardstick test, not a network service
    benchmark; one line at its scenario's type (not its lack of a traffic profile)."""
    code, _, err = nsb_main("task", "start", str(DATA / "opnfv_yardstick_tc080.yaml"),
                            "--dry-run")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "opnfv_yardstick_tc080.yaml:19: scenarios[0].type" in line
    assert "scenario type 'Ping'" in line and "NSPerf" in line
