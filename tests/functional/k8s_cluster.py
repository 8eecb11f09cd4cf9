"""The single-node Kubernetes cluster the k8s tests run on: tools/k8s (make k8s) in
private namespaces of this machine, started for the test session when it is not up and
stopped after it. Its build (make k8s-build) must be there: make test does it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOOLS = ROOT / "tools" / "k8s"
K8S_HOME = Path(os.environ.get("NSB_K8S_HOME", "/var/cache/nsb/k8s"))
STATE = Path(os.environ.get("NSB_K8S_STATE", "/var/lib/nsb/k8s"))
KUBECONFIG = STATE / "kubeconfig"


def _env() -> dict:
    import sys

    return {**os.environ, "NSB_PYTHON": os.environ.get("NSB_PYTHON", sys.executable)}


def up() -> str:
    """Start the cluster (or find it up); its kubeconfig's path."""
    if not (K8S_HOME / "bin" / "kubelet").exists():
        pytest.fail(f"no cluster build in {K8S_HOME}/bin: run make k8s-build (make test does)")
    done = subprocess.run([str(TOOLS / "up.sh")], capture_output=True, text=True,
                          env=_env(), timeout=600)
    assert done.returncode == 0, f"make k8s failed: {done.stderr[-2000:]}"
    path = done.stdout.strip().splitlines()[-1]
    assert Path(path).is_file(), done.stdout
    return path


def down() -> subprocess.CompletedProcess:
    return subprocess.run([str(TOOLS / "down.sh")], capture_output=True, text=True,
                          env=_env(), timeout=300)


def is_up() -> bool:
    pid = STATE / "ns.pid"
    return pid.is_file() and Path(f"/proc/{pid.read_text().strip()}").exists()


def client():
    from kubernetes import client as k8s_client
    from kubernetes import config

    return k8s_client.CoreV1Api(config.new_client_from_config(config_file=str(KUBECONFIG)))


def nsb_namespaces() -> list[str]:
    """The namespaces nsb made that are still there (Terminating ones included)."""
    return [ns.metadata.name for ns in client().list_namespace(
        label_selector="app.kubernetes.io/managed-by=nsb").items]


def host_state() -> dict:
    """What the cluster must not change on the host: links, routes, firewall rules,
    mounts, sysctls kubelet writes, the hugepages make k8s adds, cgroups, processes."""
    def out(*argv: str) -> str:
        return subprocess.run(argv, capture_output=True, text=True).stdout

    sysctls = {k: Path(f"/proc/sys/{k}").read_text().strip() for k in (
        "kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory", "vm/panic_on_oom",
        "net/ipv4/ip_forward", "vm/nr_hugepages")}
    mounts = {" ".join(line.split()[3:5]) for line in
              Path("/proc/self/mountinfo").read_text().splitlines()}
    processes = {line.split(None, 1)[1] for line in out("ps", "-eo", "pid=,comm=").splitlines()
                 if line.split(None, 1)[1] in ("kubelet", "kube-apiserver", "etcd",
                                               "containerd", "kube-scheduler", "socat",
                                               "kube-controller", "containerd-shim")}
    return {"links": sorted(line.split(":")[1].strip().split("@")[0]
                            for line in out("ip", "-o", "link").splitlines()),
            "routes": out("ip", "route"), "nft": out("nft", "list", "ruleset"),
            "mounts": sorted(mounts), "sysctls": sysctls,
            "kubepods": sorted(str(p) for p in Path("/sys/fs/cgroup").glob("*/kubepods")),
            "processes": sorted(processes), "var_lib_cni": Path("/var/lib/cni").exists()}
