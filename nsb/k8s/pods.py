"""A task's server as a Kubernetes pod: Yardstick's server keys (a single container's
keys on the server, or a ``containers`` list), nsb's ``interfaces`` and the volumes its
data paths need, turned into the pod manifest the API takes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from nsb.errors import PrerequisiteError

# Yardstick's defaults (yardstick/orchestrator/kubernetes.py)
DEFAULT_IMAGE = "openretriever/yardstick"
DEFAULT_TOLERATIONS = [{"operator": "Exists"}]
# a container that waits and reaps what nsb starts in it, in any image with a shell
IDLE_COMMAND = ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"]

POD_KEYS = {"containers", "nodeSelector", "volumes", "securityContext", "networks",
            "tolerations", "restartPolicy", "node_ports", "role", "interfaces",
            "ssh_key", "user", "password", "key_filename"}
CONTAINER_KEYS = {"image", "command", "args", "env", "resources", "volumeMounts",
                  "securityContext", "ports", "imagePullPolicy", "tty", "stdin", "name",
                  "workingDir"}
_KEPT_VOLUME_MOUNT = ("name", "mountPath", "readOnly", "subPath")
_DNS_LABEL = re.compile(r"[^a-z0-9-]+")

MULTUS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"


def pod_name(server: str, context: str) -> str:
    """``<server>-<context>`` as Yardstick names a server's node, spelled as a DNS label."""
    name = _DNS_LABEL.sub("-", f"{server}-{context}".lower()).strip("-")
    return name[:63].rstrip("-")


@dataclass
class SharedDir:
    """A host directory a pod mounts at the same path (memif and vhost-user sockets)."""

    name: str
    path: str


@dataclass
class PodPlan:
    """What nsb creates for one server."""

    server: str
    name: str  # the pod's
    manifest: dict
    images: list[str] = field(default_factory=list)
    service: dict | None = None

    @property
    def container(self) -> str:
        return self.manifest["spec"]["containers"][0]["name"]

    @property
    def hugepages_mb(self) -> int:
        """The hugepages the first container (where nsb runs programs) is given."""
        return hugepages_mb(self.manifest["spec"]["containers"][0])


def hugepages_mb(made: dict) -> int:
    """MB of hugepages a container's limits (else requests) give it, of any size; a
    quantity Kubernetes would not take is a ValueError naming it."""
    try:
        from kubernetes.utils.quantity import parse_quantity
    except ImportError:
        raise PrerequisiteError("the kubernetes context needs the kubernetes Python client: "
                                "pip install 'nsb[kubernetes]'") from None
    resources = made.get("resources") or {}
    given = resources.get("limits") or resources.get("requests") or {}
    total = 0
    for resource, quantity in given.items():
        if resource.startswith("hugepages-"):
            try:
                total += parse_quantity(quantity)
            except ValueError:
                raise ValueError(f"{resource}: '{quantity}' is not a quantity (e.g. 512Mi, "
                                 "1Gi)") from None
    return int(total // (1 << 20))


def _as_list(value) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def container(raw: dict, name: str, idle: bool) -> dict:
    """One container from Yardstick's container keys (unknown keys left out, as there)."""
    made: dict = {"name": str(raw.get("name") or name),
                  "image": str(raw.get("image", DEFAULT_IMAGE))}
    if "command" in raw or not idle:
        made["command"] = _as_list(raw.get("command", ["/bin/bash", "-c"]))
        made["args"] = _as_list(raw.get("args"))
    else:  # nsb starts the programs itself: the container only has to stay up
        made["command"] = list(IDLE_COMMAND)
    if raw.get("args") is not None and "command" not in raw and idle:
        made["args"] = _as_list(raw["args"])
    for key in ("securityContext", "imagePullPolicy", "tty", "stdin", "workingDir"):
        if key in raw:
            made[key] = raw[key]
    if raw.get("env"):
        made["env"] = [{"name": str(e["name"]), "value": str(e.get("value", ""))}
                       for e in raw["env"]]
    resources = {k: v for k, v in (raw.get("resources") or {}).items()
                 if k in ("requests", "limits")}
    if resources:
        made["resources"] = {k: {r: str(q) for r, q in v.items()} for k, v in resources.items()}
    if raw.get("ports"):
        made["ports"] = [{k: p[k] for k in ("containerPort", "hostIP", "hostPort", "name",
                                              "protocol") if k in p} for p in raw["ports"]]
    mounts = [{k: m[k] for k in _KEPT_VOLUME_MOUNT if k in m}
              for m in raw.get("volumeMounts") or []]
    if mounts:
        made["volumeMounts"] = mounts
    return made


def network_annotation(networks: list, interfaces: dict[str, tuple[str, str]]) -> str:
    """Multus' annotation: each network by name, with the interface name and MAC the task
    gave it (``interfaces``: network -> (name, mac))."""
    entries = []
    for net in networks:
        entry = {"name": str(net)}
        if net in interfaces:
            entry["interface"], mac = interfaces[net]
            if mac:
                entry["mac"] = mac
        entries.append(entry)
    return json.dumps(entries)


def plan_pod(server: str, raw: dict, context: str, namespace: str, labels: dict,
             shared_dirs: list[SharedDir],
             kernel_networks: dict[str, tuple[str, str]]) -> PodPlan:
    """The pod of ``server``: its containers (the first runs what nsb starts), the
    shared socket directories mounted at their host paths, its Multus networks."""
    name = pod_name(server, context)
    raw_containers = raw.get("containers") or [
        {k: v for k, v in raw.items() if k not in POD_KEYS}]
    containers = [container(c, "main" if i == 0 else f"c{i}", idle=True)
                  for i, c in enumerate(raw_containers)]
    volumes = [dict(v) for v in raw.get("volumes") or []]
    for shared in shared_dirs:
        volumes.append({"name": shared.name,
                        "hostPath": {"path": shared.path, "type": "DirectoryOrCreate"}})
        for made in containers:
            made.setdefault("volumeMounts", []).append(
                {"name": shared.name, "mountPath": shared.path})
    spec: dict = {"containers": containers,
                  "restartPolicy": raw.get("restartPolicy", "Always"),
                  "tolerations": raw.get("tolerations", DEFAULT_TOLERATIONS),
                  "terminationGracePeriodSeconds": 2,
                  "enableServiceLinks": False,
                  "automountServiceAccountToken": False}
    for key in ("nodeSelector", "securityContext"):
        if raw.get(key):
            spec[key] = raw[key]
    if volumes:
        spec["volumes"] = volumes
    metadata: dict = {"name": name, "namespace": namespace, "labels": {**labels, "app": name}}
    networks = [str(n) for n in _as_list(raw.get("networks"))]
    if networks:
        metadata["annotations"] = {MULTUS_ANNOTATION: network_annotation(networks,
                                                                         kernel_networks)}
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    plan = PodPlan(server, name, manifest, images=[c["image"] for c in containers])
    if raw.get("node_ports"):
        plan.service = node_port_service(name, namespace, labels, raw["node_ports"])
    return plan


def node_port_service(name: str, namespace: str, labels: dict, node_ports: list) -> dict:
    """Yardstick's NodePort service of a server's ``node_ports``."""
    ports = []
    for port in node_ports:
        entry = {"name": str(port["name"]), "port": int(port["port"]),
                 "protocol": port.get("protocol", "TCP")}
        for src, dst in (("targetPort", "targetPort"), ("nodePort", "nodePort")):
            if src in port:
                entry[dst] = port[src]
        ports.append(entry)
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": f"{name}-service", "namespace": namespace, "labels": labels},
            "spec": {"type": "NodePort", "selector": {"app": name}, "ports": ports}}


def network_attachment(name: str, namespace: str, labels: dict, raw: dict) -> dict:
    """A Multus NetworkAttachmentDefinition: nsb's ``config`` (a CNI configuration) or
    Yardstick's ``plugin`` and ``args`` (its JSON arguments merged into the config)."""
    if "config" in raw:
        config = raw["config"] if isinstance(raw["config"], dict) else json.loads(raw["config"])
    else:
        config = {"type": str(raw["plugin"])}
        args = raw.get("args")
        parsed = json.loads(args) if isinstance(args, str) and args.strip() else args
        if isinstance(parsed, list):
            parsed = parsed[0] if len(parsed) == 1 and isinstance(parsed[0], dict) else {}
        if isinstance(parsed, dict):
            config.update(parsed)
    config = {"cniVersion": "0.4.0", "name": name, **config}
    return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"config": json.dumps(config)}}
