"""Plugin specs as a task names them: ``{type: ..., options}`` inline, or NSB's
traffic profile files (``traffic_profile: {traffic_type: ...}``)."""

from __future__ import annotations

from pathlib import Path

from nsb.task import input_file
from nsb.task.documents import Where, read_document
from nsb.task.model import PluginSpec

DEFAULT_RUNNER = {"type": "Iteration", "iterations": 1}
DEFAULT_OUTPUTS = [{"type": "file"}]


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
