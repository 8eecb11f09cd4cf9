"""Yardstick/NSB task files (``schema: "yardstick:task:0.1"``) read unchanged.

An NSB ``NSPerf`` scenario names its VNFs in a topology (``nsd:nsd-catalog``:
``constituent-vnfd`` with a ``VNF model`` descriptor each, ``vld`` links
between connection points), binds them to pod nodes (``tg__0:
trafficgen_0.yardstick``) and gives options per VNF. This module turns that
into nsb's own model: the descriptor's ``id`` picks the plugin, the ``vld``
links become the context's links. What nsb cannot do yet is a clear
"not supported yet" error at the key that asks for it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from nsb import plugins
from nsb.nodes.node import Interface, Node
from nsb.task import (
    ixload,
    nsd,
    packet_profile,
    pod_file,
    schema,
    specs,
    standalone_file,
    traffic_options,
)
from nsb.task.documents import Where
from nsb.task.model import PluginSpec, ScenarioSpec, Task
from nsb.task.nsd import not_supported
from nsb.task.yaml_lines import LocatedDocument

LOG = logging.getLogger(__name__)

CONTEXT_TYPES = {"Node": "Node"}  # NSB context type -> nsb context plugin
POD_CONTEXTS = ("Node", "baremetal", "netns")  # their 'file' is a pod
STANDALONE_CONTEXTS = ("StandaloneOvsDpdk", "StandaloneSriov")
# VNF plugins that take the scenario's flow addresses, as NSB's RouterVNF reads them
FLOW_READERS = ("RouterVNF", "router")

_TASK_KEYS = {"schema", "scenarios", "context", "contexts", "description", "run_in_parallel"}
# NSPerf-RFC2544 deploys the same way and lets the generator's traffic profile run
# its trials until it is done, which is what nsb does with an NSPerf scenario
SCENARIO_TYPES = ("NSPerf", "NSPerf-RFC2544")
_SCENARIO_KEYS = {"type", "traffic_profile", "topology", "nodes", "options", "runner",
                  "extra_args", "vnf_options"}
# older NSB's per-VNF options, which NSB's vnf_generic.py no longer reads (TRex samples
# still carry them): accepted and ignored, as NSB does
IGNORED_SCENARIO_KEYS = ("vnf_options",)
# scenario-wide options (not keyed by a VNF) that nsb honours, and what each does here
GLOBAL_OPTIONS = {
    "interface_speed_gbps": "the line rate of the PROX profiles, unless the profile says",
    "traffic_type": "IP version of NSB's sample VNFs; PROX ignores it, as in NSB",
    "collectd": "NSB's NFVi collector; nsb samples NFVi KPIs itself",
    "hugepages_gb": "NSB's hugepage set-up; nsb checks hugepages in pre-flight (prepare "
                    "nodes with ansible/nsb_setup.yml)",
    **traffic_options.OPTIONS,
}
# NSB's vCMTS scenario options: read by its vCMTS VNFs, whose descriptors then say
# what nsb lacks to run them (nsd.UNAVAILABLE)
VCMTS_OPTIONS = ("vcmts_influxdb_ip", "vcmts_influxdb_port", "vcmtsd_values",
                 "pktgen_values", "pktgen_rate")

_SCHEMA = {
    "type": "object",
    "required": ["schema", "scenarios"],
    "properties": {
        "scenarios": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["type", "traffic_profile", "topology", "nodes"],
            "properties": {
                "type": {"type": "string"},
                "traffic_profile": {"type": "string", "minLength": 1},
                "topology": {"type": "string", "minLength": 1},
                "nodes": {"type": "object", "minProperties": 1,
                          "additionalProperties": {  # node.context, or server-context
                              "type": "string", "pattern": r"^[^.]+\..+$|^[^.-]+-[^.]+$"}},
                "options": {"type": "object"},
                "extra_args": {"type": "object"},
                "runner": {"type": "object", "required": ["type"]},
            },
        }},
        "context": {"type": "object", "required": ["type"]},
        "contexts": {"type": "array", "minItems": 1, "items": {"type": "object"}},
    },
}

def load(path: Path, doc: LocatedDocument, task_args: dict) -> Task:
    data = doc.data
    for key in data:
        if key not in _TASK_KEYS:
            raise not_supported(doc, (key,), f"task key '{key}'")
    if data.get("run_in_parallel"):
        raise not_supported(doc, ("run_in_parallel",), "run_in_parallel: true")
    ixload.check(doc)  # before its pod file (an IxLoad chassis) is looked for
    _check_context_types(doc)  # before the schema, which would ask a Heat context for a type
    _check_scenario_types(doc)  # and a Ping scenario for a traffic profile
    schema.validate(data, _SCHEMA, doc)
    contexts = _contexts(doc)
    context_names = {raw.get("name", "") for raw, _ in contexts}
    nodes_of = [_context_nodes(path, doc, raw, at) for raw, at in contexts]
    pod_nodes: dict = {}
    for (_, at), nodes in zip(contexts, nodes_of, strict=True):
        for name in nodes:
            if name in pod_nodes:
                raise doc.error(at, f"node '{name}' is also in an earlier context")
        pod_nodes.update(nodes)

    scenarios, links = [], []
    for index, raw in enumerate(data["scenarios"]):
        scenario, scenario_links = _scenario(path, doc, index, raw, context_names, pod_nodes,
                                             task_args)
        scenarios.append(scenario)
        links += [pair for pair in scenario_links if not nsd.same_cable(links, pair)]

    context_specs = []
    for index, ((raw, at), nodes) in enumerate(zip(contexts, nodes_of, strict=True)):
        options = {k: v for k, v in raw.items() if k != "type"}
        if "file" in options and raw["type"] in POD_CONTEXTS:
            options["file"] = str(standalone_file.host_file(str(raw["file"]), path))
        # a link belongs to the last context with one of its ends: a VM context cables
        # its VMs to the nodes of the contexts before it
        later = {n for _, later_nodes in zip(contexts[index + 1:], nodes_of[index + 1:],
                                             strict=True) for n in later_nodes}
        options["links"] = [pair for pair in links
                            if any(end.split(":")[0] in nodes for end in pair)
                            and not any(end.split(":")[0] in later for end in pair)]
        kind = CONTEXT_TYPES.get(raw["type"], raw["type"])
        context_specs.append(PluginSpec(type=kind, options=options, where=Where(doc, at)))
    return Task(file=path, context=context_specs[0], scenarios=tuple(scenarios),
                outputs=tuple(specs.plugin_spec(o, Where(doc, ("outputs", i)))
                              for i, o in enumerate(specs.DEFAULT_OUTPUTS)),
                description=data.get("description", f"Yardstick/NSB task {path.name}"),
                args=dict(task_args), more_contexts=tuple(context_specs[1:]))


def _check_scenario_types(doc: LocatedDocument) -> None:
    """Yardstick's generic scenarios (Ping, Fio, Lmbench, ...) measure something else
    than a network service: one line at the first, naming the kinds nsb runs."""
    scenarios = doc.data.get("scenarios")
    for index, raw in enumerate(scenarios if isinstance(scenarios, list) else []):
        kind = raw.get("type") if isinstance(raw, dict) else None
        if isinstance(kind, str) and kind not in SCENARIO_TYPES:
            raise not_supported(doc, ("scenarios", index, "type"), (
                f"scenario type '{kind}' (Yardstick's generic test; nsb runs network "
                f"service benchmarks: {' and '.join(SCENARIO_TYPES)} scenarios)"))


def _check_context_types(doc: LocatedDocument) -> None:
    """One clear line for a context nsb does not have (Yardstick reads one without a
    ``type`` as Heat), then for more than one context."""
    data = doc.data
    if "context" in data:
        items = [(data["context"], ("context",))]
    elif isinstance(data.get("contexts"), list):
        items = [(raw, ("contexts", i)) for i, raw in enumerate(data["contexts"])]
    else:
        return
    supported = sorted(set(CONTEXT_TYPES) | set(plugins.available("nsb.contexts")))
    for raw, at in items:
        if not isinstance(raw, dict):
            continue  # the schema says what is wrong
        kind = raw.get("type", "Heat")
        if not isinstance(kind, str):
            raise doc.error(at + ("type",), f"expected a context type (text), got "
                            f"{type(kind).__name__}; supported: {', '.join(supported)}")
        if kind in supported:
            continue
        what = plugins.NSB_CONTEXTS.get(kind, "")
        raise not_supported(doc, at + (("type",) if "type" in raw else ()),
                            f"context type {kind}" + (f" ({what})" if what else "")
                            + f"; supported: {', '.join(supported)}")


def _contexts(doc: LocatedDocument) -> list[tuple[dict, tuple]]:
    data = doc.data
    if "context" in data:
        contexts = [(data["context"], ("context",))]
    else:
        contexts = _context_list(doc)
    for raw, at in contexts:
        if not isinstance(raw.get("name", ""), str):
            raise doc.error(at + ("name",), "a context name is text, got "
                            f"{type(raw['name']).__name__}")
    return contexts


def _context_list(doc: LocatedDocument) -> list[tuple[dict, tuple]]:
    contexts = doc.data.get("contexts")
    if not contexts:
        raise doc.error((), "missing required key 'context'")
    for index, raw in enumerate(contexts):
        if not isinstance(raw, dict) or "type" not in raw:
            raise doc.error(("contexts", index), "missing required key 'type'")
    return [(raw, ("contexts", index)) for index, raw in enumerate(contexts)]


def _context_nodes(task_path: Path, doc: LocatedDocument, raw: dict, at: tuple) -> dict:
    """The nodes a context gives, by name: a pod's, or a standalone context's VMs (or,
    with ``vm_deploy: false``, the VMs its host file lists)."""
    where = Where(doc, at)
    if raw["type"] in STANDALONE_CONTEXTS:
        if not isinstance(raw.get("file"), str):
            raise doc.error(at, "missing required key 'file' (the host file)")
        host = standalone_file.host_file(raw["file"], task_path)
        if raw.get("vm_deploy", True) is False:
            return pod_file.load_pod(host, where)
        servers, networks = raw.get("servers"), raw.get("networks")
        if not isinstance(servers, dict) or not isinstance(networks, dict):
            raise doc.error(at, "a standalone context needs 'servers' and 'networks' mappings")
        return {name: _vm_node(raw["type"], index, name, server, networks, doc, at)
                for index, (name, server) in enumerate(servers.items())}
    if raw["type"] == "Kubernetes":
        return kubernetes_nodes(raw, doc, at)
    if "file" in raw:
        return pod_file.load_pod(standalone_file.host_file(str(raw["file"]), task_path), where)
    return {}


def _vm_node(kind: str, index: int, name: str, server, networks: dict, doc, at: tuple):
    """A standalone VM as a pod node (for bindings, links and VNF descriptors)."""
    try:
        raw = standalone_file.server_pod(kind, index, name, server, networks)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise doc.error(at + ("servers", name), f"not a server NSB's {kind} can deploy "
                        f"({type(exc).__name__}: {exc})") from None
    return Node(name=name, role=name, pod=raw,
                interfaces={port: Interface(name=port) for port in raw["interfaces"]})


def _scenario(task_path: Path, doc: LocatedDocument, index: int, raw: dict,
              context_names: set[str], pod_nodes: dict,
              task_args: dict) -> tuple[ScenarioSpec, list[list[str]]]:
    at = ("scenarios", index)
    for key in raw:
        if key not in _SCENARIO_KEYS:
            raise not_supported(doc, at + (key,), f"scenario key '{key}'")
        if key in IGNORED_SCENARIO_KEYS:
            LOG.info("%s: scenario key '%s' is ignored, as NSB ignores it", doc.file, key)
    if raw["type"] not in SCENARIO_TYPES:
        raise not_supported(doc, at + ("type",), f"scenario type '{raw['type']}' (nsb runs "
                            f"{' and '.join(SCENARIO_TYPES)} scenarios)")
    bindings = _bindings(doc, at, raw["nodes"], context_names, pod_nodes)
    options, global_options = _options(doc, at, raw.get("options") or {}, bindings)
    # what Yardstick renders topologies, profiles and descriptors with
    values = {**task_args, "extra_args": raw.get("extra_args") or {}, "get": nsd.flat_get}

    vnfs, links = nsd.read_nsd(task_path, raw["topology"], values,
                               nsd.Bindings(doc, at, bindings, options, pod_nodes,
                                            dict(global_options)))
    runner = specs.plugin_spec(raw.get("runner", specs.DEFAULT_RUNNER),
                               Where(doc, at + ("runner",)))
    traffic = traffic_options.read(doc, at, global_options, bindings, pod_nodes)
    profile_values = {**values, **traffic.values}
    if "duration" in task_args and "duration" not in global_options:
        profile_values["duration"] = task_args["duration"]  # as nsb rendered it before
    profile = _with_inherited_options(
        _profile(task_path, doc, at, raw["traffic_profile"], profile_values, traffic),
        runner, global_options)
    name = task_path.stem if index == 0 else f"{task_path.stem}_{index}"
    vnfs = _with_flow(vnfs, traffic.values["flow"]["flow"])
    scenario = ScenarioSpec(name=name, vnfs=tuple(vnfs), generator=None, profile=profile,
                            runner=runner, members_where=Where(doc, at + ("nodes",)))
    return scenario, links


def _with_flow(vnfs: list, flow: dict) -> list:
    """NSB's RouterVNF reads the scenario's flow addresses (its static neighbours for
    the generator): nsb's router gets them as its ``flow`` option."""
    addresses = {k: str(v) for k, v in flow.items() if k.startswith(("src_ip_", "dst_ip_"))}
    if not addresses:
        return vnfs
    return [replace(vnf, options={"flow": addresses, **vnf.options})
            if vnf.type in FLOW_READERS else vnf for vnf in vnfs]


def _bindings(doc: LocatedDocument, at: tuple, raw_nodes: dict, context_names: set[str],
              pod_nodes: dict) -> dict[str, str]:
    """VNF name -> node name, from ``tg__0: trafficgen_0.yardstick``."""
    bindings = {}
    for vnf, target in raw_nodes.items():
        node, _, ctx = target.rpartition(".")
        if not node and "-" in target:  # Kubernetes names its servers <server>-<context>
            node, _, ctx = target.partition("-")
        named = sorted(n for n in context_names if n)
        if named and ctx not in context_names:
            raise doc.error(at + ("nodes", vnf), f"'{target}' names context '{ctx}' but the "
                            f"task's contexts are named {', '.join(named)}")
        if pod_nodes and node not in pod_nodes:
            raise doc.error(at + ("nodes", vnf), f"node '{node}' is not in the pod; it has: "
                            f"{', '.join(pod_nodes)}")
        bindings[vnf] = node
    return bindings


def _profile(task_path: Path, doc: LocatedDocument, at: tuple, raw, values: dict,
             traffic: traffic_options.TrafficOptions) -> PluginSpec:
    """The scenario's traffic profile rendered with the values of its traffic options,
    with ``traffic_config`` over its own keys and, for NSB's TRex profiles, the
    ``rfc2544`` option among them (its generator reads it in NSB)."""
    profile = specs.profile_spec(task_path, raw, Where(doc, at + ("traffic_profile",)), values)
    options = {**profile.options, **traffic.traffic_config}
    if profile.type in packet_profile.PACKET_PROFILE_TYPES:
        options = {**traffic.inherited, **options}
        if traffic.framesize:
            read = packet_profile.read(options, profile.options_where)
            traffic_options.check_framesize(traffic, read.sizes, profile.where.doc.file,
                                            Where(doc, at + ("options", "framesize")))
    return replace(profile, options=options)


def _with_inherited_options(profile: PluginSpec, runner: PluginSpec,
                            global_options: dict) -> PluginSpec:
    """The options NSB's profiles take from elsewhere in the scenario, where the
    profile does not set them itself."""
    inherited = {}
    if "interface_speed_gbps" in global_options:
        inherited["interface_speed_gbps"] = global_options["interface_speed_gbps"]
    if profile.type in ("ProxBinSearchProfile", "binsearch") and \
            runner.options.get("confirmation") is not None:
        # NSB's binary search reads its confirmation count from the runner
        inherited["confirmation"] = runner.options["confirmation"]
    if runner.type == "ProxDuration" and profile.type in ("ProxIrqProfile", "irq") and \
            "interval" in runner.options:
        # NSB's IRQ test is sampled at the runner's interval
        inherited["interval"] = runner.options["interval"]
    if runner.type == "Duration" and profile.type == "FixedProfile" and \
            "duration" in runner.options:
        # NSB's fixed traffic runs until the Duration runner ends
        inherited["duration"] = runner.options["duration"]
    missing = {k: v for k, v in inherited.items() if k not in profile.options}
    return replace(profile, options={**profile.options, **missing}) if missing else profile


def _options(doc: LocatedDocument, at: tuple, options: dict,
             bindings: dict) -> tuple[dict, dict]:
    """Per-VNF options (``vnf__0: {...}``; ``[]`` means none) and scenario-wide ones."""
    per_vnf, global_options = {}, {}
    for key, value in options.items():
        if key in bindings:
            if value in ([], None):
                value = {}
            if not isinstance(value, dict):
                raise doc.error(at + ("options", key), f"options of {key} must be a mapping, "
                                f"got {type(value).__name__}")
            per_vnf[key] = value
        elif key in GLOBAL_OPTIONS:
            global_options[key] = value
        elif key in VCMTS_OPTIONS:
            continue
        else:
            raise not_supported(doc, at + ("options", key), f"scenario option '{key}' (nsb "
                                f"takes per-VNF options for {', '.join(bindings)} and "
                                f"{', '.join(GLOBAL_OPTIONS)})")
    speed = global_options.get("interface_speed_gbps")
    if speed is not None and (isinstance(speed, bool) or not isinstance(speed, (int, float))
                              or not 0 < speed < 1e4):
        raise doc.error(at + ("options", "interface_speed_gbps"),
                        f"expected a positive number of Gbit/s, got {speed!r}")
    return per_vnf, global_options




def kubernetes_nodes(raw: dict, doc: LocatedDocument, at: tuple) -> dict:
    """A Kubernetes context's servers as nodes: their interfaces are nsb's
    ``interfaces``, else (as Yardstick gives them to NSB) the networks they attach to."""
    servers = raw.get("servers")
    if not isinstance(servers, dict) or not servers:
        raise doc.error(at, "a Kubernetes context needs 'servers' (a mapping of pods)")
    nodes = {}
    for name, server in servers.items():
        if not isinstance(server, dict):
            raise doc.error(at + ("servers", name), "a server is a mapping of its keys")
        names = list(server.get("interfaces") or {}) or [
            str(n) for n in server.get("networks") or []]
        # what NSB renders a pod's VNF descriptor with (Yardstick's _get_server)
        described = {**server, "name": f"{name}-{raw.get('name', '')}", "user": "root",
                     "interfaces": {n: {"network_name": n, "local_mac": None,
                                        "local_ip": None} for n in names},
                     "service_ports": [{"name": p.get("name"), "port": p.get("port"),
                                        "target_port": p.get("port"), "protocol": "TCP"}
                                       for p in server.get("node_ports") or []
                                       if isinstance(p, dict)]}
        nodes[name] = Node(name=name, role=str(server.get("role", name)), pod=described,
                           interfaces={n: Interface(name=n) for n in names})
    return nodes
