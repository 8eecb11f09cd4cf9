"""Task file -> Task: render Jinja2, parse YAML, validate, build the model.

Nothing here touches a machine; ``nsb task validate`` and ``--dry-run`` stop here.
"""

from __future__ import annotations

from pathlib import Path

from nsb.errors import TaskError
from nsb.task import input_file, render, schema, yaml_lines
from nsb.task.model import PluginSpec, ScenarioSpec, Task, VnfSpec, Where

DEFAULT_RUNNER = {"type": "Iteration", "iterations": 1}
DEFAULT_OUTPUTS = [{"type": "file"}]


def read_document(path: Path, task_args: dict | None = None, strict: bool = True,
                  where: Where | None = None, what: str = "file") -> yaml_lines.LocatedDocument:
    """Read, render and parse one YAML file (task, profile, pod, topology, descriptor).

    A file that cannot be read is reported at ``where``, the key that names it
    (``what`` says which kind of file it should be).
    """
    shown = _shown(path)
    try:
        text = input_file.read_text(path, shown)
    except TaskError as exc:
        if where is None:
            raise
        if exc.message == "file not found":
            raise where.error(f"{what} not found: {path}") from None
        raise where.error(f"{what} {shown}: {exc.message}") from None
    rendered = render.render(text, shown, task_args, strict)
    return yaml_lines.parse(rendered, shown)


def _shown(path: Path) -> str:
    try:
        return str(input_file.resolve(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load(path: str | Path, task_args: dict | None = None) -> Task:
    """Load a task file in nsb's own format or in Yardstick/NSB's."""
    path = input_file.resolve(path)
    doc = read_document(path, task_args)
    if not isinstance(doc.data, dict):
        raise doc.error((), "a task file must be a YAML mapping")
    schema_name = doc.data.get("schema")
    if schema_name == "yardstick:task:0.1":
        from nsb.task import yardstick

        return yardstick.load(path, doc, task_args or {})
    if schema_name != "nsb:task:0.1":
        raise doc.error(("schema",), f"unknown task schema {schema_name!r}; "
                        "allowed: 'nsb:task:0.1', 'yardstick:task:0.1'")
    schema.validate(doc.data, schema.TASK_SCHEMA, doc)
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
                more_contexts=tuple(contexts[1:]))


def _check_vnf_names(doc: yaml_lines.LocatedDocument, at: tuple, scenario: ScenarioSpec):
    """A VNF's name names its DPDK file prefix, its work dir and its logs: one each."""
    seen = {scenario.generator.name: ("traffic_generator",)}
    for index, vnf in enumerate(scenario.vnfs):
        if vnf.name in seen:
            first = yaml_lines.format_path(at + seen[vnf.name])
            raise doc.error(at + ("vnfs", index, "name"), f"duplicate VNF name {vnf.name!r} "
                            f"(also {first}); each VNF needs its own name")
        seen[vnf.name] = ("vnfs", index)


def plugin_spec(raw: dict, where: Where) -> PluginSpec:
    if not isinstance(raw, dict):
        raise where.error(f"expected an object with a 'type', got {type(raw).__name__}")
    _plugin_name(raw.get("type"), where, "type")
    options = {k: v for k, v in raw.items() if k != "type"}
    return PluginSpec(type=raw["type"], options=options, where=where)


def _plugin_name(value, where: Where, key: str) -> str:
    if not isinstance(value, str) or not value:
        shown = "nothing" if value is None else type(value).__name__
        raise where.error(f"expected a plugin name (text), got {shown}", key)
    return value


def _vnf(raw: dict, where: Where) -> VnfSpec:
    return VnfSpec(type=raw["type"], name=raw["name"], node=raw["node"],
                   options=raw.get("options", {}), where=where)


def profile_spec(task_path: Path, raw, where: Where, task_args: dict) -> PluginSpec:
    """Inline ``{type: ...}`` or a path to an NSB-style traffic profile file."""
    if isinstance(raw, dict):
        return plugin_spec(raw, where)
    input_file.check_path_text(raw, where.error)
    doc = read_document(input_file.resolve(task_path.parent / raw), task_args, where=where,
                        what="traffic profile file")
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("traffic_profile"), dict):
        raise doc.error((), "a traffic profile file needs a 'traffic_profile' mapping")
    body = data["traffic_profile"]
    kind = body.get("traffic_type") or body.get("type")
    if not kind:
        raise doc.error(("traffic_profile",), "missing required key 'traffic_type'")
    _plugin_name(kind, Where(doc, ("traffic_profile",)),
                 "traffic_type" if "traffic_type" in body else "type")
    options = {k: v for k, v in body.items() if k not in ("traffic_type", "type")}
    return PluginSpec(type=kind, options=options, where=Where(doc, ("traffic_profile",)),
                      name=data.get("name", ""),
                      type_key="traffic_type" if "traffic_type" in body else "type")
