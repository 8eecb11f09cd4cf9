"""A scenario's ``chain:`` template: the NFs of one service chain, written once and laid
out N times by nsb (nodes, links, VNFs, the generator's ports and port pairs, and each
NF's cores from a declared pool), so a density test is the same file at any count.

Expanded on the parsed task before it is built, so ``nsb task validate``, the dry-run
and the run all see the N chains as if they had been written out; what nsb wrote
points back at the template's lines. Any context whose nodes are declared by name
with their interfaces and joined by ``links`` hosts them (netns ``nodes``, libvirt
``vms``, kubernetes ``servers``).
"""

from __future__ import annotations

import copy

from nsb.task import chain_standalone, values
from nsb.task.documents import Where
from nsb.task.yaml_lines import LocatedDocument

# where each context type declares its nodes
NODE_KEYS = {"netns": "nodes", "libvirt": "vms", "kubernetes": "servers"}
LINKS = ("memif", "veth", "vhostuser")
# TRex's names among the generators (setup.cfg's nsb.vnfs): it counts chains on one
# network apart (options.chain_destinations)
TREX_TYPES = ("trex", "TrexTrafficGen", "TrexTrafficGenRFC")
# generators whose ports and tasks are their own config's and that take no port pairs:
# nsb cannot give them a pair per chain (prox_tg takes them: its config's gen and lat
# tasks per pair, e.g. a .j2 config rendered with the pairs)
CONFIG_PORTED_TYPES = ("prox_irq_gen",)

SCHEMA = {
    "type": "object",
    "required": ["nfs"],
    "additionalProperties": False,
    "properties": {
        # the NFs of one chain, in the order frames cross them
        "nfs": {"type": "array", "minItems": 1, "maxItems": 8, "items": {
            "type": "object",
            "required": ["name", "type"],
            "additionalProperties": False,
            "properties": {
                # chain k's NF is named (and its node) <name><k>
                "name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,11}$"},
                "type": {"type": "string", "minLength": 1},
                "options": {"type": "object"},
                # more keys of its node (a pod's image and resources, a VM's vcpus...)
                "node": {"type": "object"},
            },
        }},
        "link": {"enum": list(LINKS)},  # every hop's ports (default memif)
        "generator_link": {"enum": list(LINKS)},  # the generator's ports (default link)
        "via": {"type": "string", "minLength": 1},  # every hop through this bridge
        # the chains on one network (via's bridge): one port pair, each chain's frames to
        # its first NF's MAC (NFVbench's service_chain_shared_net)
        "shared_net": {"type": "boolean"},
        "context": {"type": "string", "minLength": 1},  # which context hosts the NFs
        "deployed": {"type": "integer", "minimum": 1, "maximum": 64},  # chains laid out
        # StandaloneOvsDpdk: the host NICs cabled to the generator, two per chain in order
        "phy_ports": {"type": "array", "minItems": 2, "maxItems": 128,
                      "items": {"type": "string", "minLength": 1}},
        "cores": {
            "type": "object",
            "required": ["pool"],
            "additionalProperties": False,
            "properties": {
                "pool": {"type": "string", "format": "nsb-cpu-list"},
                "per_nf": {"type": "integer", "minimum": 1, "maximum": 64},
                "main": {"type": "integer", "minimum": 0},  # testpmd's main lcore
                "shared": {"type": "boolean"},  # chains may share the pool's CPUs
            },
        },
    },
}


def expand(doc: LocatedDocument) -> None:
    """Lay out every scenario's ``chain`` template in ``doc`` (validated already)."""
    for index, scenario in enumerate(doc.data.get("scenarios", [])):
        if isinstance(scenario, dict) and "chain" in scenario:
            _expand_scenario(doc, ("scenarios", index), scenario)


def _expand_scenario(doc: LocatedDocument, at: tuple, scenario: dict) -> None:
    template = scenario.pop("chain")
    where = Where(doc, at + ("chain",))
    count = scenario.get("chains", scenario.get("service_chain_count"))
    if count is None:
        raise where.error("a chain template needs chains: N (or service_chain_count) "
                          "beside it: how many chains to measure")
    deployed = template.get("deployed", count)
    if deployed < count:
        raise where.error(f"deployed {deployed} is fewer than the {count} chains measured "
                          "(deployed: the chains laid out, at least chains)", "deployed")
    names = [nf["name"] for nf in template["nfs"]]
    for j, name in enumerate(names):
        if names.index(name) != j:
            raise where.error(f"NF name {name!r} twice: each NF of the chain needs its own "
                              "(its nodes and VNFs are named <name><chain>)", "nfs", j, "name")
    gen = scenario["traffic_generator"]
    if gen.get("type") in CONFIG_PORTED_TYPES:
        raise where.error(f"generator type {gen['type']!r} sends from the ports its own "
                          "config names, so nsb cannot give it a port pair per chain: give "
                          "the chain's generator type trex, trafgen or prox_tg")
    shared = _shared_net(doc, at, scenario, template)
    host = _hosting_context(doc, template, where)
    if host[1].get("type") in chain_standalone.TYPES:
        chain_standalone.check(template, deployed, where)
        _lay_out_standalone(doc, at, template, host, gen["node"], deployed)
    else:
        if "phy_ports" in template:
            raise where.error("phy_ports are the host NICs of a StandaloneOvsDpdk context's "
                              f"chains; a {host[1].get('type')} context cables its own",
                              "phy_ports")
        gen_ifaces = _generator_node(doc, gen["node"], where)
        for k in range(deployed):
            _lay_out_chain(doc, at, template, host, (gen["node"], gen_ifaces), k, shared)
    cores = _cores(template, template["nfs"], count, where)
    vnfs = scenario.setdefault("vnfs", [])
    for k in range(count):
        for j, nf in enumerate(template["nfs"]):
            vnfs.append({"name": f"{nf['name']}{k}", "type": nf["type"],
                         "node": f"{nf['name']}{k}",
                         "options": copy.deepcopy(nf.get("options", {})),
                         **({"pool_cores": cores[(k, j)]} if cores else {})})
            _located(doc, (*at, "vnfs", len(vnfs) - 1), at + ("chain", "nfs", j))
    options = gen.setdefault("options", {})
    if "port_pairs" in options:
        raise where.error("the chain template sets the generator's port_pairs (one per "
                          "chain); leave port_pairs out of its options")
    options["port_pairs"] = [[f"xe{2 * k}", f"xe{2 * k + 1}"]
                             for k in range(1 if shared else count)]
    _located(doc, (*at, "traffic_generator", "options", "port_pairs"), at + ("chain",))
    if shared:  # each chain's frames go to its first NF's MAC
        options["chain_destinations"] = [f"{template['nfs'][0]['name']}{k}:xe0"
                                         for k in range(count)]
        _located(doc, (*at, "traffic_generator", "options", "chain_destinations"),
                 at + ("chain",))


def _shared_net(doc: LocatedDocument, at: tuple, scenario: dict, template: dict) -> bool:
    """Whether the chains are on one network (the template's shared_net, or NFVbench's
    service_chain_shared_net beside it), checked."""
    where, key = (Where(doc, at), "service_chain_shared_net") \
        if scenario.get("service_chain_shared_net") else \
        (Where(doc, at + ("chain",)), "shared_net")
    if scenario.pop("service_chain_shared_net", False):
        template["shared_net"] = True
    if not template.get("shared_net", False):
        return False
    _check_shared(template, where, key)
    generator = scenario["traffic_generator"].get("type")
    if generator not in TREX_TYPES:
        raise where.error("chains on one network are told apart by TRex's flow statistics "
                          f"(a pg_id per chain); generator type {generator!r} cannot: give "
                          "type trex", key)
    return True


def _check_shared(template: dict, where: Where, key: str) -> None:
    """Chains on one network meet on a switch's bridge, over vhost-user ports."""
    if "via" not in template or template.get("link", "memif") != "vhostuser" or \
            template.get("generator_link", "vhostuser") != "vhostuser":
        raise where.error("chains on one network meet on a switch: give the chain "
                          "template link: vhostuser and via: <bridge> (memif and veth join "
                          "two ports only)", key)
    if "phy_ports" in template:
        raise where.error("chains on one network are laid out in the lab's contexts; a "
                          "StandaloneOvsDpdk context's chains each take their own NICs", key)


def _lay_out_chain(doc: LocatedDocument, at: tuple, template: dict, host: tuple,
                   generator: tuple, k: int, shared: bool = False) -> None:
    """Chain ``k``'s nodes in the ``host`` context (its key path, its mapping), the
    ``generator``'s (node name, interfaces) two ports for it and the links between;
    ``shared``: every chain on the generator's xe0 and xe1 (one network each way)."""
    where = Where(doc, at + ("chain",))
    context_at, context = host
    gen_node_name, gen_ifaces = generator
    node_key = NODE_KEYS[context["type"]]
    nodes = context.setdefault(node_key, {})
    links = context.setdefault("links", [])
    link = template.get("link", "memif")
    port = {"type": template.get("generator_link", link)}
    ends = ["xe0", "xe1"] if shared and k > 0 else \
        _give_generator_ports(gen_ifaces, gen_node_name, 0 if shared else k, port, where)
    hops = [f"{gen_node_name}:{ends[0]}"]
    for j, nf in enumerate(template["nfs"]):
        name = f"{nf['name']}{k}"
        if name in nodes:
            raise where.error(f"node {name!r} (chain {k}'s {nf['name']}) is declared "
                              "already: the template names chain k's NFs <name><k>",
                              "nfs", j, "name")
        nodes[name] = {"role": "VNF", **copy.deepcopy(nf.get("node", {})),
                       "interfaces": {"xe0": {"type": link}, "xe1": {"type": link}}}
        _located(doc, (*context_at, node_key, name), at + ("chain", "nfs", j))
        hops += [f"{name}:xe0", f"{name}:xe1"]
    hops.append(f"{gen_node_name}:{ends[1]}")
    for a, b in zip(hops[0::2], hops[1::2], strict=True):
        on_generator = gen_node_name in (a.split(":")[0], b.split(":")[0])
        links.append({"ends": [a, b], "via": template["via"],
                      **({"shared": True} if shared and on_generator else {})}
                     if "via" in template else [a, b])
        _located(doc, (*context_at, "links", len(links) - 1), at + ("chain",))


def _lay_out_standalone(doc: LocatedDocument, at: tuple, template: dict, host: tuple,
                        gen_node: str, deployed: int) -> None:
    """The chains' VMs and networks in a StandaloneOvsDpdk context; the generator's ports
    are added to its node where the task declares it (a lab namespace), else they are
    its pod file's xe0, xe1, xe2... (a real generator's NICs, named as NSB names them)."""
    where = Where(doc, at + ("chain",))
    context_at, context = host
    gen_ifaces = _declared_node(doc, gen_node)
    for k in range(deployed):
        if gen_ifaces is not None:
            _give_generator_ports(gen_ifaces, gen_node, k, {}, where)
        server, up, down = chain_standalone.lay_out(context, template, gen_node, k, where)
        _located(doc, (*context_at, "servers", server), at + ("chain", "nfs", 0))
        for network in (up, down):
            _located(doc, (*context_at, "networks", network), at + ("chain", "phy_ports"))
        for index in range(len(context["links"]) - 2, len(context["links"])):
            _located(doc, (*context_at, "links", index), at + ("chain",))


def _give_generator_ports(gen_ifaces: dict, gen_node: str, k: int, port: dict,
                          where: Where) -> list[str]:
    """Chain ``k``'s two ports (xe2k, xe2k+1) added to the generator's declared
    interfaces, each as ``port``; a port the node declares already is an error."""
    ends = [f"xe{2 * k}", f"xe{2 * k + 1}"]
    for end in ends:
        if end in gen_ifaces:
            raise where.error(f"the generator's node {gen_node!r} already declares "
                              f"{end}: the template gives chain {k} its ports {ends[0]} "
                              f"and {ends[1]}; leave them out of the node")
        gen_ifaces[end] = copy.deepcopy(port)
    return ends


def _declared_node(doc: LocatedDocument, name: str) -> dict | None:
    """The interfaces of node ``name`` where a context declares it, else None."""
    contexts = [doc.data["context"]] if "context" in doc.data else doc.data["contexts"]
    for context in contexts:
        key = NODE_KEYS.get(context.get("type"))
        node = (context.get(key) or {}).get(name) if key else None
        if isinstance(node, dict):
            return node.setdefault("interfaces", {})
    return None


def _hosting_context(doc: LocatedDocument, template: dict, where: Where
                     ) -> tuple[tuple, dict]:
    """The context the chains' nodes go to: ``context`` (a type or name), else the
    task's only context that can host them (the last of several)."""
    if "context" in doc.data:
        candidates = [(("context",), doc.data["context"])]
    else:
        candidates = [(("contexts", i), c) for i, c in enumerate(doc.data["contexts"])]
    able = [(at, c) for at, c in candidates
            if c.get("type") in NODE_KEYS or c.get("type") in chain_standalone.TYPES]
    wanted = template.get("context")
    if wanted is not None:
        able = [(at, c) for at, c in able if wanted in (c.get("type"), c.get("name"))]
    if not able:
        allowed = ", ".join((*NODE_KEYS, *chain_standalone.TYPES))
        raise where.error(f"no context of the task can host the chains"
                          f"{f' named {wanted!r}' if wanted else ''}: they need one of type "
                          f"{allowed}", *(("context",) if wanted else ()))
    return able[-1]


def _generator_node(doc: LocatedDocument, name: str, where: Where) -> dict:
    """The generator node's declared interfaces, which the chains' ports are added to."""
    interfaces = _declared_node(doc, name)
    if interfaces is None:
        raise where.error(f"the traffic generator's node {name!r} is not declared in a "
                          "context's nodes: the chains' ports are added to it")
    return interfaces


def _cores(template: dict, nfs: list, count: int, where: Where) -> dict:
    """Each NF's ``pool_cores`` (by (chain, nf)): its CPUs of the declared pool and the
    main lcore, which the plan turns into the NF type's lcores; {} without a pool. A
    pool too small for the chains is an error unless they may share it."""
    cores = template.get("cores")
    if cores is None:
        return {}
    pool = sorted(values.cpu_list(cores["pool"]))
    per_nf = cores.get("per_nf", 1)
    needed = count * len(nfs) * per_nf
    if needed > len(pool) and not cores.get("shared", False):
        raise where.error(
            f"{count} chain(s) of {len(nfs)} NF(s) with {per_nf} core(s) each need {needed} "
            f"CPUs; the pool {cores['pool']} has {len(pool)} (give a larger pool, fewer "
            "chains, or shared: true to let the chains share its CPUs)", "cores", "pool")
    for j, nf in enumerate(nfs):
        if "lcores" in nf.get("options", {}) or "cores" in nf.get("options", {}):
            raise where.error("an NF's cores come from chain.cores: leave cores and "
                              "lcores out of its options", "nfs", j, "options")
    assigned, cursor = {}, 0
    for k in range(count):
        for j in range(len(nfs)):
            cpus = [pool[(cursor + n) % len(pool)] for n in range(per_nf)]
            cursor += per_nf
            assigned[(k, j)] = {"cpus": ",".join(str(c) for c in dict.fromkeys(cpus)),
                                "main": cores.get("main", 0)}
    return assigned


def _located(doc: LocatedDocument, path: tuple, template_at: tuple) -> None:
    """What nsb wrote at ``path`` is reported at the template's line."""
    line = doc.line_of(template_at)
    if line is not None:
        doc.lines[tuple(path)] = line
