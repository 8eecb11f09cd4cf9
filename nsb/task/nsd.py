"""NSB's network service descriptors: a topology file (``nsd:nsd-catalog``) names
the scenario's VNFs, each with a VNF descriptor whose ``id`` is NSB's class, and
the ``vld`` links between their connection points."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nsb import plugins
from nsb.task import input_file, schema
from nsb.task.documents import Where, read_document
from nsb.task.model import VnfSpec
from nsb.task.yaml_lines import LocatedDocument

# descriptor id (NSB's class mapping) -> nsb VNF plugin
VNF_CLASSES = {
    "ProxApproxVnf": "prox",
    "ProxTrafficGen": "prox_tg",
    "ProxIrqVNF": "prox_irq",
    "ProxIrqGen": "prox_irq_gen",
}

_INDEX = {"type": ["string", "integer"]}
_TOPOLOGY_SCHEMA = {
    "type": "object",
    "required": ["nsd:nsd-catalog"],
    "properties": {"nsd:nsd-catalog": {
        "type": "object", "required": ["nsd"],
        "properties": {"nsd": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["constituent-vnfd", "vld"],
            "properties": {
                "constituent-vnfd": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "required": ["member-vnf-index", "vnfd-id-ref", "VNF model"],
                    "properties": {"member-vnf-index": _INDEX,
                                   "vnfd-id-ref": {"type": "string"},
                                   "VNF model": {"type": "string", "minLength": 1}},
                }},
                "vld": {"type": "array", "items": {
                    "type": "object",
                    "required": ["vnfd-connection-point-ref"],
                    "properties": {"vnfd-connection-point-ref": {"type": "array", "items": {
                        "type": "object",
                        "required": ["vnfd-connection-point-ref", "vnfd-id-ref"],
                        "properties": {"vnfd-connection-point-ref": {"type": "string"},
                                       "member-vnf-index-ref": _INDEX,
                                       "vnfd-id-ref": {"type": "string"}},
                    }}},
                }},
            },
        }}},
    }},
}


def not_supported(doc: LocatedDocument, path: tuple, what: str):
    return doc.error(path, f"not supported yet: {what}")


@dataclass(frozen=True)
class Bindings:
    """A scenario's VNFs bound to pod nodes (``tg__0: tg_0.yardstick``), their options
    and where the scenario is, for errors."""

    doc: LocatedDocument
    at: tuple
    nodes: dict  # VNF name -> node name
    options: dict  # VNF name -> its options
    pod_nodes: dict  # node name -> Node (empty: nodes nsb makes itself)
    scenario_options: dict = field(default_factory=dict)  # options not keyed by a VNF


def read_nsd(task_path: Path, topology: str, values: dict,
             bound: Bindings) -> tuple[list[VnfSpec], list[list[str]]]:
    """The scenario's VNFs as its topology names them, and their links."""
    topology_where = Where(bound.doc, bound.at + ("topology",))
    topology_path = input_file.resolve(
        task_path.parent / input_file.check_path_text(topology, topology_where.error))
    topo = read_document(topology_path, values, where=topology_where, what="topology file")
    schema.validate(topo.data, _TOPOLOGY_SCHEMA, topo)
    nsd = topo.data["nsd:nsd-catalog"]["nsd"][0]
    nsd_at = ("nsd:nsd-catalog", "nsd", 0)
    vnfs = []
    networks = _networks(nsd, _members(topo, nsd, nsd_at))
    for i, member in enumerate(nsd["constituent-vnfd"]):
        member_at = nsd_at + ("constituent-vnfd", i)
        name = member["vnfd-id-ref"]
        if name not in bound.nodes:
            raise topo.error(member_at + ("vnfd-id-ref",), f"'{name}' is not bound to a node in "
                             f"the task's scenario 'nodes' ({', '.join(bound.nodes)})")
        node = bound.nodes[name]
        model = input_file.check_path_text(member["VNF model"],
                                           Where(topo, member_at + ("VNF model",)).error)
        plugin = _plugin_of(input_file.resolve(topology_path.parent / model), topo, member_at,
                            bound.pod_nodes.get(node), values, f"{name} (node {node})")
        vnfs.append(VnfSpec(type=plugin, name=name, node=node,
                            options=bound.options.get(name, {}),
                            where=Where(bound.doc, bound.at + ("nodes", name)),
                            options_at=Where(bound.doc, bound.at + ("options", name)),
                            networks=networks.get(name, {}),
                            scenario_options=bound.scenario_options))
    return vnfs, _links(topo, nsd, nsd_at, bound.nodes, bound.pod_nodes)


def _members(topo: LocatedDocument, nsd: dict, nsd_at: tuple) -> list[list[str]]:
    """The VNF each vld end is on: its ``member-vnf-index-ref``'s constituent, as NSB
    resolves a link (the end's own ``vnfd-id-ref`` is only read without an index;
    NSB's 4-port vFW topology names a ``tg__1`` there that its scenario does not have)."""
    by_index = {str(m["member-vnf-index"]): m["vnfd-id-ref"] for m in nsd["constituent-vnfd"]}
    members = []
    for i, vld in enumerate(nsd["vld"]):
        ends = []
        for j, ref in enumerate(vld["vnfd-connection-point-ref"]):
            index = ref.get("member-vnf-index-ref")
            if index is not None and str(index) not in by_index:
                raise topo.error(nsd_at + ("vld", i, "vnfd-connection-point-ref", j,
                                           "member-vnf-index-ref"),
                                 f"no constituent-vnfd has member-vnf-index {index!r}; they "
                                 f"have: {', '.join(by_index)}")
            ends.append(ref["vnfd-id-ref"] if index is None else by_index[str(index)])
        members.append(ends)
    return members


def _networks(nsd: dict, members: list[list[str]]) -> dict[str, dict[str, str]]:
    """VNF -> interface -> the id of the first link (vld) it is on, as NSB's VNFs
    pair their ports (uplink_N with downlink_N)."""
    networks: dict[str, dict[str, str]] = {}
    for index, vld in enumerate(nsd["vld"]):
        for ref, vnf in zip(vld["vnfd-connection-point-ref"], members[index], strict=True):
            ports = networks.setdefault(vnf, {})
            ports.setdefault(ref["vnfd-connection-point-ref"], str(vld.get("id", f"vld{index}")))
    return networks


def same_cable(links: list[list[str]], ends: list[str]) -> bool:
    """``ends`` is already one of ``links``, in either direction."""
    return sorted(ends) in [sorted(link) for link in links]


def flat_get(obj, key: str, *default):
    """Yardstick's template ``get(obj, 'a.b', default)``: a key of the flattened mapping
    (nested keys joined by '.', list items by their index appended)."""
    flat: dict = {}

    def walk(value, prefix: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{prefix}{i}")
        else:
            flat[prefix] = value

    walk(obj if isinstance(obj, (dict, list)) else {}, "")
    return flat.get(key, *default) if default else flat.get(key)


# NSB's VNF classes that need what nsb cannot have, and what that is
_VCMTS = ("Intel's vCMTS: it needs the vCMTS container images (vcmts-d, and vcmts-pktgen for "
          "its generator) built from Intel's vCMTS reference kit, which is not published in "
          "any registry; nsb has no vCMTS plugin")
UNAVAILABLE = {"VcmtsVNF": _VCMTS, "VcmtsPktgen": _VCMTS, "TrexTrafficGenVcmts": _VCMTS,
               "PktgenTrafficGen": "DPDK's pktgen (its Lua control port): nsb has no pktgen "
                                   "plugin; TRex, PROX and trafgen generate instead"}


def _plugin_of(descriptor: Path, topo: LocatedDocument, member_at: tuple, node,
               values: dict, who: str) -> str:
    """The nsb plugin for a VNF descriptor: its ``id`` is NSB's class name.

    The descriptor is rendered with the pod entry of its node, as NSB's vnfdgen
    renders it (a task argument such as a standalone host's ``host`` must not fill
    the descriptor's ``host``); without a pod entry, with the task's arguments.
    """
    values = dict(node.pod) if node is not None else values
    doc = read_document(descriptor, values, strict=False,
                               where=Where(topo, member_at + ("VNF model",)),
                               what="VNF descriptor")
    try:
        vnfd = doc.data["vnfd:vnfd-catalog"]["vnfd"][0]
        class_name = vnfd["id"]
    except (KeyError, IndexError, TypeError):
        raise doc.error((), f"a VNF descriptor needs vnfd:vnfd-catalog.vnfd[0].id (for "
                        f"{who})") from None
    if not isinstance(class_name, str):
        raise doc.error(("vnfd:vnfd-catalog", "vnfd", 0, "id"), f"the id of {who}'s "
                        f"descriptor must be a class name, got {type(class_name).__name__}")
    if class_name in VNF_CLASSES:
        return VNF_CLASSES[class_name]
    if class_name in plugins.available("nsb.vnfs"):
        return class_name
    if class_name in UNAVAILABLE:
        raise not_supported(doc, ("vnfd:vnfd-catalog", "vnfd", 0, "id"),
                            f"VNF class '{class_name}' for {who}: {UNAVAILABLE[class_name]}")
    raise not_supported(doc, ("vnfd:vnfd-catalog", "vnfd", 0, "id"),
                        f"VNF class '{class_name}' for {who} (nsb has: "
                        f"{', '.join(VNF_CLASSES)} and its plugins "
                        f"{', '.join(plugins.available('nsb.vnfs'))})")


def _links(topo: LocatedDocument, nsd: dict, nsd_at: tuple, bindings: dict,
           pod_nodes: dict) -> list[list[str]]:
    links = []
    members = _members(topo, nsd, nsd_at)
    for i, vld in enumerate(nsd["vld"]):
        refs = vld["vnfd-connection-point-ref"]
        at = nsd_at + ("vld", i, "vnfd-connection-point-ref")
        if len(refs) != 2:
            raise not_supported(topo, at, f"a vld with {len(refs)} connection points (nsb links "
                                "join two)")
        ends = []
        for j, ref in enumerate(refs):
            vnf, iface = members[i][j], ref["vnfd-connection-point-ref"]
            if vnf not in bindings:
                key = "member-vnf-index-ref" if "member-vnf-index-ref" in ref else "vnfd-id-ref"
                raise topo.error(at + (j, key), f"'{vnf}' is not bound to a node in "
                                 f"the task's scenario 'nodes' ({', '.join(bindings)})")
            node = bindings[vnf]
            if pod_nodes and iface not in pod_nodes[node].interfaces:
                raise topo.error(at + (j, "vnfd-connection-point-ref"), f"node '{node}' has no "
                                 f"interface '{iface}'; it has: "
                                 f"{', '.join(pod_nodes[node].interfaces)}")
            ends.append(f"{node}:{iface}")
        if same_cable(links, ends):
            continue  # one cable named twice, e.g. a vld per direction on one port pair
        if ends[0] == ends[1]:
            continue  # a port on a link to itself: NSB's 3-node topology names the
            # generator's second port so; it has a vld (the VNF's networks), no cable
        for j, end in enumerate(ends):
            taken = next((k for k, link in enumerate(links) if end in link), None)
            if taken is not None:
                raise topo.error(at + (j,), f"interface '{end}' is already linked in "
                                 f"vld[{taken}] ({' <-> '.join(links[taken])}); a port is "
                                 "cabled to one peer")
        links.append(ends)
    return links
