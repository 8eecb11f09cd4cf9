"""Task file -> Task: render Jinja2, parse YAML, validate, build the model.

Nothing here touches a machine; ``nsb task validate`` and ``--dry-run`` stop here.
"""

from __future__ import annotations

from pathlib import Path

from nsb.errors import TaskError
from nsb.task import render, schema, yaml_lines
from nsb.task.model import PluginSpec, ScenarioSpec, Task, VnfSpec, Where

DEFAULT_RUNNER = {"type": "Iteration", "iterations": 1}
DEFAULT_OUTPUTS = [{"type": "file"}]


def read_document(path: Path, task_args: dict | None = None,
                  strict: bool = True) -> yaml_lines.LocatedDocument:
    """Read, render and parse one YAML file (task, profile, pod, topology, descriptor)."""
    shown = _shown(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise TaskError("file not found", shown) from None
    except OSError as exc:
        raise TaskError(f"cannot read file: {exc.strerror}", shown) from None
    rendered = render.render(text, shown, task_args, strict)
    return yaml_lines.parse(rendered, shown)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load(path: str | Path, task_args: dict | None = None) -> Task:
    """Load a task file in nsb's own format or in Yardstick/NSB's."""
    path = Path(path).resolve()
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
    context = plugin_spec(data["context"], Where(doc, ("context",)))
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
    names = [s.name for s in scenarios]
    for index, name in enumerate(names):
        if names.index(name) != index:
            raise doc.error(("scenarios", index, "name"), f"duplicate scenario name {name!r}")
    outputs = tuple(plugin_spec(o, Where(doc, ("outputs", i)))
                    for i, o in enumerate(data.get("outputs", DEFAULT_OUTPUTS)))
    return Task(file=path, context=context, scenarios=tuple(scenarios), outputs=outputs,
                description=data.get("description", ""), args=dict(task_args))


def plugin_spec(raw: dict, where: Where) -> PluginSpec:
    options = {k: v for k, v in raw.items() if k != "type"}
    return PluginSpec(type=raw["type"], options=options, where=where)


def _vnf(raw: dict, where: Where) -> VnfSpec:
    return VnfSpec(type=raw["type"], name=raw["name"], node=raw["node"],
                   options=raw.get("options", {}), where=where)


def profile_spec(task_path: Path, raw, where: Where, task_args: dict) -> PluginSpec:
    """Inline ``{type: ...}`` or a path to an NSB-style traffic profile file."""
    if isinstance(raw, dict):
        return plugin_spec(raw, where)
    profile_path = (task_path.parent / raw).resolve()
    if not profile_path.exists():
        raise where.error(f"traffic profile file not found: {profile_path}")
    doc = read_document(profile_path, task_args)
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("traffic_profile"), dict):
        raise doc.error((), "a traffic profile file needs a 'traffic_profile' mapping")
    body = data["traffic_profile"]
    kind = body.get("traffic_type") or body.get("type")
    if not kind:
        raise doc.error(("traffic_profile",), "missing required key 'traffic_type'")
    options = {k: v for k, v in body.items() if k not in ("traffic_type", "type")}
    return PluginSpec(type=kind, options=options, where=Where(doc, ("traffic_profile",)),
                      name=data.get("name", ""),
                      type_key="traffic_type" if "traffic_type" in body else "type")
