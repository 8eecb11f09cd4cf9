"""The kubernetes context (also NSB's ``Kubernetes``): nodes that are pods of a cluster.

A run gets a namespace of its own, labelled with its task id; in it nsb creates what
the task declares (Multus networks, pods, NodePort services) through the API, waits
until the pods are Ready (one line naming the first that cannot start and why), and
gives each pod a node whose executor runs commands through the API's exec. Data paths:
memif sockets on a host directory the pod mounts at the same path (shared with a
generator on the node, or with another pod), vhost-user sockets there too, to a
vSwitch on the node (OVS-DPDK: a PVC; the pod's hugepages from its resources), and
kernel interfaces of Multus networks (a bridge per link by default) that DPDK programs
take with af_packet. Teardown
deletes the namespace; a run killed before it is found by the next one (the namespace's
run is gone) and its namespace deleted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time

from nsb.contexts import topology
from nsb.contexts.base import Context, Endpoint, Link, vhost_dir
from nsb.contexts.combined import CrossLinking
from nsb.errors import PrerequisiteError, RunError
from nsb.executors.kube import PodExecutor
from nsb.k8s import api, cnf_image, pods, readiness, schema
from nsb.leftovers import run_alive
from nsb.runinfo import short_tag

LOG = logging.getLogger(__name__)


class KubernetesContext(Context, CrossLinking):
    """Pods of a Kubernetes cluster, joined by memif sockets and Multus networks."""

    OPTIONS_SCHEMA = schema.OPTIONS

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.name = options.get("name") or "k8s"
        self.servers: dict[str, dict] = options["servers"]
        self.namespace = f"nsb-{short_tag(run.task_id)}"
        self.labels = {api.MANAGED_BY: "nsb", api.TASK_LABEL: run.task_id}
        self.nodes = topology.build_nodes(
            {name: {"role": raw.get("role", "Sut"), "interfaces": raw.get("interfaces")}
             for name, raw in self.servers.items()}, default_kind="memif")
        topology.check_macs(self.nodes, spec.where, "servers")
        self.links: list[Link] = []
        self.cluster: api.Cluster | None = None
        self.plans: dict[str, pods.PodPlan] = {}
        self.kubernetes_version = ""
        self._created = False

    # --- links -----------------------------------------------------------------------

    def link_across(self, others: dict) -> None:
        nodes = {**others, **self.nodes}
        self.links = topology.build_links(self.options.get("links", []), nodes,
                                          self.spec.where)
        for index, link in enumerate(self.links):
            if link.via:
                self._check_switched(link, nodes, index)
                continue
            ends = [nodes[e.node].interfaces[e.interface] for e in (link.a, link.b)]
            foreign = [e for e in (link.a, link.b) if e.node not in self.nodes]
            if foreign and not all(i.is_memif for i in ends):
                raise self.spec.where.error(
                    f"link {link}: a pod reaches a node outside the cluster ({foreign[0]}) "
                    "over memif (a socket on the node both share; give both ends type: "
                    "memif) or over vhost-user through the node's vSwitch (via: BRIDGE)",
                    "links", index)
        self._check_socket_ends()
        topology.assign_addresses(nodes, self.links, first=100)
        topology.assign_memif_sockets(self.links, nodes, self.memif_dir, self.spec.where)
        self.connect_peers(nodes)
        self._plan(others)
        self._check_hugepages()

    def _check_switched(self, link: Link, nodes: dict, index: int) -> None:
        """A link via a bridge: the bridge is a vSwitch on the node (a node outside the
        cluster: OVS-DPDK), each pod's end a vhost-user port of it (a PVC)."""
        if link.switch_a.node in self.nodes:
            raise self.spec.where.error(
                f"link {link}: bridge {link.via} is on pod {link.switch_a.node}; pods reach "
                "a vSwitch of the node (a node outside the cluster with it in 'bridges'), "
                "or each other directly (memif, or a Multus network per link)",
                "links", index, "via")
        for side, end in enumerate((link.a, link.b)):
            if end.node in self.nodes and not nodes[end.node].interfaces[end.interface] \
                    .is_vhostuser:
                raise self.spec.where.error(
                    f"link {link}: pod interface {end} reaches the node's vSwitch over "
                    "vhost-user only (a socket on the node both share): give it type: "
                    "vhostuser", "links", index, "ends", side)

    def _check_socket_ends(self) -> None:
        """Every memif interface has its peer, every vhost-user one its vSwitch."""
        linked = {end: link for link in self.links for end in (link.a, link.b)}
        for node in self.nodes.values():
            for iface in node.interfaces.values():
                end = Endpoint(node.name, iface.name)
                where = ("servers", node.name, "interfaces", iface.name)
                if iface.is_memif and end not in linked:
                    raise self.spec.where.error(
                        f"{end} is a memif interface without a link: the peer that shares "
                        "its socket is missing (add it to 'links')", *where)
                if iface.is_vhostuser and not (end in linked and linked[end].via):
                    raise self.spec.where.error(
                        f"{end} is a vhost-user interface: link it through the node's "
                        "vSwitch ({ends: [...], via: BRIDGE}), which connects to its socket",
                        *where)

    def _check_hugepages(self) -> None:
        """A pod with vhost-user ports shares its memory with the vSwitch: hugepages,
        which only the pod's resources give it (its node's pool is the kubelet's)."""
        for server, plan in self.plans.items():
            vhost = [i.name for i in self.nodes[server].interfaces.values() if i.is_vhostuser]
            if not vhost:
                continue
            try:
                given = plan.hugepages_mb
            except ValueError as exc:
                raise self.spec.where.error(f"pod {plan.name}: {exc}", "servers",
                                            server) from None
            if not given:
                raise self.spec.where.error(
                    f"pod {plan.name}: ports {', '.join(vhost)} are vhost-user, whose memory "
                    "the vSwitch shares: give its container resources.limits hugepages-2Mi "
                    "(or hugepages-1Gi), e.g. 512Mi, and the node that many hugepages",
                    "servers", server)

    @property
    def _has_memif(self) -> bool:
        return any(i.is_memif for n in self.nodes.values() for i in n.interfaces.values())

    @property
    def _has_vhostuser(self) -> bool:
        return any(i.is_vhostuser for n in self.nodes.values() for i in n.interfaces.values())

    @property
    def memif_dir(self) -> str:
        """The run's memif sockets (the netns context's directory: a generator there and
        the pods share them)."""
        return f"/tmp/nsb-{self.run.task_id}/memif"

    def _kernel_networks(self, server: str) -> dict[str, tuple[str, str]]:
        """Multus network -> this pod's interface (name, MAC), for its kernel interfaces."""
        named = {}
        node = self.nodes[server]
        for index, link in enumerate(self.links):
            for end in (link.a, link.b):
                iface = node.interfaces.get(end.interface) if end.node == server else None
                if iface is not None and not (iface.is_memif or iface.is_vhostuser):
                    named[self._link_network(index, end)] = (iface.name, iface.mac)
        for if_name, if_raw in (self.servers[server].get("interfaces") or {}).items():
            if (if_raw or {}).get("network"):
                named[if_raw["network"]] = (if_name, node.interfaces[if_name].mac)
        return named

    def _link_network(self, index: int, end) -> str:
        raw = (self.servers[end.node].get("interfaces") or {}).get(end.interface) or {}
        return raw.get("network") or f"nsb-link{index}"

    def _plan(self, others: dict) -> None:
        shared = []
        if self._has_memif:
            shared.append(pods.SharedDir("nsb-memif", self.memif_dir))
        if self._has_vhostuser:
            shared.append(pods.SharedDir("nsb-vhost", vhost_dir(self.run.task_id)))
        for server, raw in self.servers.items():
            kernel = self._kernel_networks(server)
            raw = dict(raw)
            raw["networks"] = [*raw.get("networks", []),
                               *[n for n in kernel if n not in raw.get("networks", [])]]
            self.plans[server] = pods.plan_pod(server, raw, self.name, self.namespace,
                                               self.labels, shared, kernel)

    def _network_objects(self) -> list[dict]:
        """The context's networks, and a bridge for each kernel link between two pods."""
        made = [pods.network_attachment(name, self.namespace, self.labels, raw)
                for name, raw in (self.options.get("networks") or {}).items()]
        for index, link in enumerate(self.links):
            if link.a.node not in self.nodes or link.b.node not in self.nodes:
                continue  # to a node outside the cluster: memif
            iface = self.nodes[link.a.node].interfaces[link.a.interface]
            if iface.is_memif or link.via or \
                    self._link_network(index, link.a) != f"nsb-link{index}":
                continue
            bridge = f"nsb{short_tag(self.run.task_id)}l{index}"[:15]
            made.append(pods.network_attachment(
                f"nsb-link{index}", self.namespace, self.labels,
                {"config": {"plugins": [{"type": "bridge", "bridge": bridge, "mtu": iface.mtu},
                                        {"type": "tuning", "capabilities": {"mac": True}}]}}))
        return made

    # --- deploy ----------------------------------------------------------------------

    def deploy(self) -> None:
        if not self.plans:
            self.link_across({})
        self.cluster = api.connect(self.options.get("kubeconfig"),
                                   self.options.get("k8s_context"))
        self.kubernetes_version = self.cluster.version()
        self.remove_leftovers()
        self._import_images()
        if self._has_memif:
            os.makedirs(self.memif_dir, exist_ok=True)
        if self._has_vhostuser:
            os.makedirs(vhost_dir(self.run.task_id), exist_ok=True)
        api.create_namespace(self.cluster, self.namespace, self.run.task_id)
        self._created = True
        for network in self._network_objects():
            self._create(lambda body: self.cluster.custom.create_namespaced_custom_object(
                "k8s.cni.cncf.io", "v1", self.namespace, "network-attachment-definitions",
                body), network, "network")
        for plan in self.plans.values():
            self._create(lambda body: self.cluster.core.create_namespaced_pod(
                self.namespace, body), plan.manifest, "pod")
            if plan.service:
                self._create(lambda body: self.cluster.core.create_namespaced_service(
                    self.namespace, body), plan.service, "service")
        ready = readiness.wait_ready(self.cluster.core, self.namespace,
                                     [p.name for p in self.plans.values()],
                                     self.options.get("ready_timeout_s", 180))
        for server, plan in self.plans.items():
            pod = ready[plan.name]
            executor = PodExecutor(self.cluster.core, self.namespace, plan.name, plan.container)
            executor.hugepages_given_mb = plan.hugepages_mb
            executor.facts = {"kubernetes": {
                "pod": plan.name, "namespace": self.namespace, "node": pod.spec.node_name,
                "images": plan.images, "kubernetes_version": self.kubernetes_version,
                "pod_ip": pod.status.pod_ip or ""}}
            self.nodes[server].executor = executor
        LOG.info("kubernetes: pods %s Ready in namespace %s",
                 ", ".join(p.name for p in self.plans.values()), self.namespace)

    def _create(self, call, body: dict, what: str) -> None:
        try:
            call(body)
        except Exception as exc:  # the API's own reason, in one line
            name = body["metadata"]["name"]
            hint = (" (is Multus installed? its NetworkAttachmentDefinition type is missing)"
                    if what == "network" and getattr(exc, "status", None) == 404 else "")
            raise PrerequisiteError(f"creating {what} {name} failed: {api.short(exc)}{hint}") \
                from None

    def _import_images(self) -> None:
        """Build the images the task asks nsb to build and import them into the node."""
        wanted = self.options.get("images") or {}
        if not wanted:
            return
        socket = self.options.get("containerd_socket") or _local_containerd()
        if not socket:
            raise PrerequisiteError("building images needs the node's containerd socket: give "
                                    "'containerd_socket' (make k8s's cluster is found itself), "
                                    "or push the images to a registry the cluster pulls from")
        for ref, raw in wanted.items():
            cnf_image.import_into(cnf_image.build(ref, raw["programs"]), socket)

    def remove_leftovers(self) -> None:
        """Namespaces of this machine's runs that were killed before their teardown."""
        for name in api.namespaces_of_dead_runs(self.cluster, run_alive):
            LOG.warning("kubernetes: deleting namespace %s of a run that is gone", name)
            api.delete_namespace(self.cluster, name)

    def undeploy(self) -> None:
        for node in self.nodes.values():
            if node.executor is not None:
                with contextlib.suppress(Exception):  # the namespace goes with what runs
                    node.executor.stop_all()
                node.executor = None
        if self.cluster is not None and self._created:
            api.delete_namespace(self.cluster, self.namespace)
            self._wait_gone(60)
            self._created = False
        for directory in (self.memif_dir, vhost_dir(self.run.task_id)):  # the sockets
            shutil.rmtree(directory, ignore_errors=True)
        with contextlib.suppress(OSError):  # the task's directory, if nothing else is in it
            os.rmdir(os.path.dirname(self.memif_dir))

    def _wait_gone(self, timeout_s: float) -> None:
        """Until the namespace (and so every pod) is gone: the next run may reuse what
        they held (memif sockets, cores)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                self.cluster.core.read_namespace(self.namespace)
            except Exception as exc:
                if getattr(exc, "status", None) == 404:
                    return
                raise RunError(f"namespace {self.namespace}: {api.short(exc)}") from None
            time.sleep(0.5)
        LOG.warning("namespace %s still terminating after %g s", self.namespace, timeout_s)

    def describe(self) -> dict:
        described = super().describe()
        described["namespace"] = self.namespace
        described["pods"] = {p.name: {"server": s, "images": p.images,
                                      "networks": p.manifest["metadata"].get(
                                          "annotations", {}).get(pods.MULTUS_ANNOTATION, "")}
                             for s, p in self.plans.items()}
        if self.kubernetes_version:
            described["kubernetes_version"] = self.kubernetes_version
        if self.options.get("images"):
            described["images_built"] = {k: v["programs"] for k, v in
                                         self.options["images"].items()}
        return described


def _local_containerd() -> str:
    """make k8s's cluster writes where its containerd listens beside its kubeconfig."""
    path = api.LOCAL_CLUSTER_STATE / "containerd.address"
    with contextlib.suppress(OSError):
        return path.read_text().strip()
    return ""
