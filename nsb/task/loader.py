"""Task file -> Task: render Jinja2, parse YAML, validate, build the model.

Nothing here touches a machine; ``nsb task validate`` and ``--dry-run`` stop here.
"""

from __future__ import annotations

from pathlib import Path

from nsb.task import chain_template, input_file, schema, yaml_lines, yardstick
from nsb.task.documents import Where, read_document
from nsb.task.model import ScenarioSpec, Task, VnfSpec
from nsb.task.specs import DEFAULT_OUTPUTS, DEFAULT_RUNNER, plugin_spec, profile_spec


def load(path: str | Path, task_args: dict | None = None) -> Task:
    """Load a task file in nsb's own format or in Yardstick/NSB's."""
    path = input_file.resolve(path)
    doc = read_document(path, task_args)
    if not isinstance(doc.data, dict):
        raise doc.error((), "a task file must be a YAML mapping")
    schema_name = doc.data.get("schema")
    if schema_name == "yardstick:task:0.1":
        return yardstick.load(path, doc, task_args or {})
    if schema_name != "nsb:task:0.1":
        raise doc.error(("schema",), f"unknown task schema {schema_name!r}; "
                        "allowed: 'nsb:task:0.1', 'yardstick:task:0.1'")
    schema.validate(doc.data, schema.TASK_SCHEMA, doc)
    chain_template.expand(doc)
    schema.validate(doc.data, schema.TASK_SCHEMA, doc)  # what the templates laid out
    return _build(path, doc, task_args or {})


def _build(path: Path, doc: yaml_lines.LocatedDocument, task_args: dict) -> Task:
    data = doc.data
    if "contexts" in data:
        contexts = [plugin_spec(c, Where(doc, ("contexts", i)))
                    for i, c in enumerate(data["contexts"])]
    else:
        contexts = [plugin_spec(data["context"], Where(doc, ("context",)))]
    scenarios = []
    for index, raw in enumerate(data["scenarios"]):
        where = ("scenarios", index)
        scenarios.append(ScenarioSpec(
            name=raw.get("name", f"scenario{index}"),
            vnfs=tuple(_vnf(v, Where(doc, where + ("vnfs", i)))
                       for i, v in enumerate(raw.get("vnfs", []))),
            generator=_vnf(raw["traffic_generator"], Where(doc, where + ("traffic_generator",))),
            profile=profile_spec(path, raw["traffic_profile"],
                                 Where(doc, where + ("traffic_profile",)), task_args),
            runner=plugin_spec(raw.get("runner", DEFAULT_RUNNER), Where(doc, where + ("runner",))),
            **_chains(doc, where, raw),
        ))
    for index, scenario in enumerate(scenarios):
        _check_vnf_names(doc, ("scenarios", index), scenario)
    names = [s.name for s in scenarios]
    for index, name in enumerate(names):
        if names.index(name) != index:
            raise doc.error(("scenarios", index, "name"), f"duplicate scenario name {name!r}")
    outputs = tuple(plugin_spec(o, Where(doc, ("outputs", i)))
                    for i, o in enumerate(data.get("outputs", DEFAULT_OUTPUTS)))
    return Task(file=path, context=contexts[0], scenarios=tuple(scenarios), outputs=outputs,
                description=data.get("description", ""), args=dict(task_args),
                more_contexts=tuple(contexts[1:]), notice=data.get("notice", ""))


def _chains(doc: yaml_lines.LocatedDocument, at: tuple, raw: dict) -> dict:
    """``chains`` (or NFVbench's ``service_chain_count``): how many service chains."""
    given = [key for key in ("chains", "service_chain_count") if key in raw]
    if len(given) > 1:
        raise doc.error(at + (given[1],), "give chains or service_chain_count, not both "
                        "(they are the same count)")
    if raw.get("service_chain_shared_net"):  # a chain template takes it (chain_template)
        raise doc.error(at + ("service_chain_shared_net",), "chains on one shared network "
                        "are laid out by a chain template: give the scenario a 'chain:' "
                        "(its NFs, link: vhostuser, via: <bridge>) beside chains: N")
    if not given:
        return {}
    return {"chains": raw[given[0]], "chains_where": Where(doc, at + (given[0],))}


def _check_vnf_names(doc: yaml_lines.LocatedDocument, at: tuple, scenario: ScenarioSpec):
    """A VNF's name names its DPDK file prefix, its work dir and its logs: one each."""
    seen = {scenario.generator.name: ("traffic_generator",)}
    for index, vnf in enumerate(scenario.vnfs):
        if vnf.name in seen:
            first = yaml_lines.format_path(at + seen[vnf.name])
            raise doc.error(at + ("vnfs", index, "name"), f"duplicate VNF name {vnf.name!r} "
                            f"(also {first}); each VNF needs its own name")
        seen[vnf.name] = ("vnfs", index)


def _vnf(raw: dict, where: Where) -> VnfSpec:
    return VnfSpec(type=raw["type"], name=raw["name"], node=raw["node"],
                   options=raw.get("options", {}), where=where,
                   pool_cores=raw.get("pool_cores", {}))
