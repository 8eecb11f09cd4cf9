"""Reaching a cluster: the kubeconfig nsb uses, the client, a run's namespace and
what killed runs left in the cluster."""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from nsb.errors import PrerequisiteError, RunError

LOG = logging.getLogger(__name__)

# the kubeconfig `make k8s` writes (tools/k8s/up.sh), tried after KUBECONFIG and ~/.kube
LOCAL_CLUSTER_STATE = Path(os.environ.get("NSB_K8S_STATE", "/var/lib/nsb/k8s"))
MANAGED_BY = "app.kubernetes.io/managed-by"
TASK_LABEL = "nsb.io/task-id"
CONTROLLER_LABEL = "nsb.io/controller"


def kubeconfig_path(option: str | None) -> str:
    """The option, else $KUBECONFIG, else ~/.kube/config, else the local cluster's."""
    candidates = [option, os.environ.get("KUBECONFIG"),
                  str(Path.home() / ".kube" / "config"), str(LOCAL_CLUSTER_STATE / "kubeconfig")]
    for candidate in candidates:
        if candidate and Path(candidate.split(":")[0]).is_file():
            return candidate
    if option:
        raise PrerequisiteError(f"kubeconfig {option} does not exist")
    raise PrerequisiteError("no kubeconfig: give the context 'kubeconfig', set KUBECONFIG, or "
                            "start the local single-node cluster with 'make k8s'")


def controller_name() -> str:
    """This machine, as a label value: a cluster shared by several controllers only sees
    its own runs' leftovers removed."""
    return socket.gethostname().lower()[:63].strip("-.") or "nsb"


@dataclass
class Cluster:
    """The API clients of one cluster."""

    api_client: object
    core: object  # CoreV1Api
    custom: object  # CustomObjectsApi
    kubeconfig: str

    def version(self) -> str:
        from kubernetes import client

        return client.VersionApi(self.api_client).get_code().git_version


def connect(kubeconfig: str | None, context: str | None) -> Cluster:
    try:
        from kubernetes import client, config
    except ImportError:
        raise PrerequisiteError("the kubernetes context needs the kubernetes Python client: "
                                "pip install 'nsb[kubernetes]'") from None
    path = kubeconfig_path(kubeconfig)
    try:
        api_client = config.new_client_from_config(config_file=path, context=context)
    except Exception as exc:  # the client's own ConfigException, or a bad file
        raise PrerequisiteError(f"kubeconfig {path}: {exc}") from None
    cluster = Cluster(api_client, client.CoreV1Api(api_client),
                      client.CustomObjectsApi(api_client), path)
    try:
        cluster.core.list_node(_request_timeout=10)
    except Exception as exc:
        raise PrerequisiteError(f"the cluster of {path} does not answer: {short(exc)}") from None
    return cluster


def short(exc: Exception) -> str:
    """An API error in one line: its reason and message, not the response's headers."""
    body = getattr(exc, "body", None)
    if body:
        import json

        try:
            return json.loads(body).get("message", str(body))
        except (ValueError, AttributeError):
            return str(body)[:200]
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def create_namespace(cluster: Cluster, name: str, task_id: str) -> None:
    body = {"metadata": {"name": name, "labels": {
        MANAGED_BY: "nsb", TASK_LABEL: task_id, CONTROLLER_LABEL: controller_name()}}}
    try:
        cluster.core.create_namespace(body)
    except Exception as exc:
        raise RunError(f"creating namespace {name} failed: {short(exc)}") from None


def delete_namespace(cluster: Cluster, name: str) -> None:
    """Delete it and everything in it; pods are told to go at once."""
    try:
        cluster.core.delete_namespace(name, grace_period_seconds=0,
                                      propagation_policy="Foreground")
    except Exception as exc:
        if getattr(exc, "status", None) != 404:
            raise RunError(f"deleting namespace {name} failed: {short(exc)}") from None


def namespaces_of_dead_runs(cluster: Cluster, alive) -> list[str]:
    """The namespaces this controller's runs made whose run is gone (``alive(task_id)``
    false)."""
    selector = f"{MANAGED_BY}=nsb,{CONTROLLER_LABEL}={controller_name()}"
    found = cluster.core.list_namespace(label_selector=selector).items
    return [ns.metadata.name for ns in found
            if ns.status.phase != "Terminating"
            and not alive(ns.metadata.labels.get(TASK_LABEL, ""))]
