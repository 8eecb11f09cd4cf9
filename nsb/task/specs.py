"""Plugin specs as a task names them: ``{type: ..., options}`` inline, or NSB's
traffic profile files (``traffic_profile: {traffic_type: ...}``)."""

from __future__ import annotations

from pathlib import Path

from nsb.task import input_file, nsd, packet_profile, traffic_options
from nsb.task.documents import Where, read_document
from nsb.task.model import PluginSpec
from nsb.task.yaml_lines import LocatedDocument

DEFAULT_RUNNER = {"type": "Iteration", "iterations": 1}
DEFAULT_OUTPUTS = [{"type": "file"}]
# what an NSB traffic profile file holds besides its packet definitions
PROFILE_FILE_KEYS = ("schema", "name", "description", "traffic_profile")


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
    """Inline ``{type: ...}`` or a path to an NSB-style traffic profile file, rendered
    with ``task_args`` over what Yardstick renders one with when the scenario has no
    traffic options (``imix``, ``flow``, ``duration``, ``extra_args``, ``get``)."""
    if isinstance(raw, dict):
        return plugin_spec(raw, where)
    input_file.check_path_text(raw, where.error)
    values = {**traffic_options.template_values(), "extra_args": {}, "get": nsd.flat_get,
              **task_args}
    doc = read_document(input_file.resolve(task_path.parent / raw), values, where=where,
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
    if kind in packet_profile.PACKET_PROFILE_TYPES:
        options.update(_packet_definitions(doc))
    return PluginSpec(type=kind, options=options, where=Where(doc, ("traffic_profile",)),
                      name=data.get("name", ""),
                      type_key="traffic_type" if "traffic_type" in body else "type")


def _packet_definitions(doc: LocatedDocument) -> dict:
    """NSB's ``uplink_N``/``downlink_N`` of a TRex profile, read here so that a bad
    value is a line in the file; the profile gets them among its options."""
    for key in doc.data:
        if key not in PROFILE_FILE_KEYS and not packet_profile.DEFINITION.match(str(key)):
            raise doc.error((key,), f"unknown key '{key}'; a traffic profile file has "
                            f"{', '.join(PROFILE_FILE_KEYS)} and packet definitions "
                            "uplink_0, downlink_0, ...")
    packet_profile.read(doc.data, Where(doc, ()))
    return packet_profile.definitions(doc.data)
