"""What `nsb plugin show` tells: which installed plugin a name (nsb's or NSB's)
is, and its options as its OPTIONS_SCHEMA states them, so that a user needs
neither the source nor a failed run to learn them."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from importlib.metadata import entry_points

from nsb.errors import NsbError


@dataclass(frozen=True)
class Resolved:
    """A name resolved to a plugin: ``name`` is nsb's own name for it."""

    namespace: str
    asked: str
    name: str
    entry: str  # the entry point that was found
    target: str
    aliases: tuple[str, ...]  # every other name of the same class (NSB's names)
    nsb_name: str = ""  # the NSB name that was asked for ("" when it was nsb's own)


@dataclass(frozen=True)
class OptionDoc:
    name: str
    type: str
    default: str  # "" when the plugin has none
    allowed: str  # "" when any value of the type goes
    required: bool
    description: str


def _entry_points(namespaces) -> list:
    return [ep for ns in namespaces for ep in entry_points(group=ns)]


def _descriptor_ids() -> dict[str, str]:
    """NSB's VNF descriptor ids that pick a plugin without an entry point of their name."""
    from nsb.task import nsd

    return dict(nsd.VNF_CLASSES)


def resolve(asked: str) -> list[Resolved]:
    """Every plugin ``asked`` names (one per namespace); unknown: an error with a hint."""
    from nsb.plugins import NAMESPACES

    if not asked.strip():
        raise NsbError("a plugin name is needed, e.g. testpmd; `nsb plugin list` lists them")
    eps = _entry_points(NAMESPACES)
    name = _descriptor_ids().get(asked, asked)
    found = [ep for ep in eps if ep.name == name]
    if not found:
        found = [ep for ep in eps if ep.name.lower() == asked.lower()]
    if not found:
        names = sorted({ep.name for ep in eps} | set(_descriptor_ids()))
        close = difflib.get_close_matches(asked, names, n=1, cutoff=0.5)
        if not close:
            close = [n for n in names if n.lower().startswith(asked.lower()[:3])][:1]
        hint = f"did you mean '{close[0]}'? " if close else ""
        shown = asked if len(asked) <= 60 else asked[:57] + "..."
        raise NsbError(f"unknown plugin {shown!r}; {hint}`nsb plugin list` lists them all")
    return [_resolved(ep, asked, eps) for ep in found]


def _resolved(ep, asked: str, eps: list) -> Resolved:
    same = [e.name for e in eps if e.group == ep.group and e.value == ep.value]
    same += [nsb_id for nsb_id, plugin in _descriptor_ids().items()
             if ep.group == "nsb.vnfs" and plugin in same]
    own = sorted((n for n in same if n[:1].islower()), key=lambda n: (len(n), n))
    name = own[0] if own else ep.name
    nsb_name = asked if asked in _descriptor_ids() else ep.name if ep.name != name else ""
    return Resolved(namespace=ep.group, asked=asked, name=name, entry=ep.name, target=ep.value,
                    aliases=tuple(sorted(n for n in set(same) if n != name)), nsb_name=nsb_name)


def load(resolved: Resolved) -> type:
    from stevedore import driver

    try:
        return driver.DriverManager(resolved.namespace, resolved.entry,
                                    invoke_on_load=False).driver
    except Exception as exc:  # a broken third-party plugin: say so, in one line
        raise NsbError(f"plugin '{resolved.name}' ({resolved.target}) fails to load: "
                       f"{type(exc).__name__}: {exc}") from None


def options(plugin_class: type) -> list[OptionDoc]:
    """The plugin's options in schema order."""
    schema = getattr(plugin_class, "OPTIONS_SCHEMA", None) or {}
    required = set(schema.get("required", ()))
    return [OptionDoc(name=key, type=type_of(prop), default=_default(prop),
                      allowed=allowed(prop), required=key in required,
                      description=str(prop.get("description", "")))
            for key, prop in schema.get("properties", {}).items()]


def type_of(prop: dict) -> str:
    """JSON schema's type(s) of one option, as a user writes them in YAML."""
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        inner = type_of(prop["items"])
        return f"list of {inner}" if inner != "any" else "list"
    if kind:
        return kind
    if "enum" in prop:
        kinds = sorted({_json_type(v) for v in prop["enum"]})
        return " or ".join(kinds)
    choices = prop.get("anyOf") or prop.get("oneOf")
    if choices:
        kinds = [type_of(c) for c in choices]
        return " or ".join(dict.fromkeys(k for k in kinds if k != "any")) or "any"
    return "any"


def _json_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "null" if value is None else "string"


def _default(prop: dict) -> str:
    return json.dumps(prop["default"]) if "default" in prop else ""


_RANGES = (("minimum", "maximum", ""), ("minLength", "maxLength", "length "),
           ("minItems", "maxItems", "items: "))


def _ranges(prop: dict) -> list[str]:
    """``1..64``, ``>= 1``, ``length >= 1``, ``items: 2..2`` from a schema's bounds."""
    parts = []
    for low, high, word in _RANGES:
        if low in prop and high in prop:
            parts.append(f"{word}{prop[low]}..{prop[high]}")
        elif low in prop:
            parts.append(f"{word}>= {prop[low]}")
        elif high in prop:
            parts.append(f"{word}<= {prop[high]}")
    parts += [f"{word} {prop[key]}" for key, word in (("exclusiveMinimum", ">"),
                                                      ("exclusiveMaximum", "<"))
              if key in prop]
    if "pattern" in prop:
        parts.append(f"matching {prop['pattern']}")
    return parts


def allowed(prop: dict) -> str:
    """Enum values, bounds and patterns of one option (and of a list's items)."""
    parts = []
    if "enum" in prop:
        parts.append("one of " + ", ".join(json.dumps(v) for v in prop["enum"]))
    parts += _ranges(prop)
    items = prop.get("items")
    if prop.get("type") == "array" and isinstance(items, dict) and allowed(items):
        parts.append(f"each ({allowed(items)})")
    for choice in prop.get("anyOf") or prop.get("oneOf") or ():
        if isinstance(choice, dict) and allowed(choice):
            parts.append(f"{type_of(choice)}: {allowed(choice)}")
    return "; ".join(parts)
