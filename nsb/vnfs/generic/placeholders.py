"""The placeholders of a ``command`` VNF's argument lists.

``{ports[N].FIELD}`` is a field of the VNF's port N (``name``, ``mac``, ``pci``,
``ip`` with its prefix, ``address`` without, ``peer_mac``, ``peer_ip``);
``{port_count}``, ``{lcores}``, ``{file_prefix}``, ``{work_dir}``, ``{node}`` and
``{task_id}`` are the VNF's. ``{{`` and ``}}`` are literal braces. A leaf module:
an unknown placeholder, a port the VNF does not have or a field without a value
is a ValueError saying which and what exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PORT_FIELDS = ("name", "mac", "pci", "ip", "address", "peer_mac", "peer_ip")
VALUES = ("port_count", "lcores", "file_prefix", "work_dir", "node", "task_id")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_PORT = re.compile(r"^ports\[(\d+)\]\.(\w+)$")
# where a field without a value comes from, for the error
_SOURCES = {"pci": "the pod's vpci", "ip": "the topology's ip/local_ip",
            "address": "the topology's ip/local_ip", "peer_mac": "a link to the port",
            "peer_ip": "a link to a port with an address", "mac": "the topology",
            "lcores": "options.lcores"}


@dataclass(frozen=True)
class Values:
    """What the placeholders stand for: the ports (topology Interfaces) and the rest."""

    ports: list = field(default_factory=list)
    named: dict = field(default_factory=dict)  # VALUES -> text ('' = not set)


def known() -> str:
    return ", ".join([f"{{ports[N].{f}}}" for f in PORT_FIELDS] + [f"{{{v}}}" for v in VALUES])


def fill(text: str, values: Values) -> str:
    """``text`` with every placeholder replaced."""
    out, last = [], 0
    for match in _TOKEN.finditer(text):
        out.append(text[last:match.start()])
        last = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            out.append(token[0])
        elif match.group(1) is None:
            raise ValueError(f"a lone '{token}' in {text!r} (write '{token * 2}' for a "
                             "literal brace)")
        else:
            out.append(_value(match.group(1).strip(), values))
    return "".join(out) + text[last:]


def used(texts: list[str]) -> set[str]:
    """The placeholder names ``texts`` use (``lcores``, ``ports[0].pci``...)."""
    return {m.group(1).strip() for t in texts for m in _TOKEN.finditer(t) if m.group(1)}


def _value(name: str, values: Values) -> str:
    port = _PORT.match(name)
    if port:
        index, attr = int(port.group(1)), port.group(2)
        if attr not in PORT_FIELDS:
            raise ValueError(f"unknown port field {{{name}}}; ports have "
                             f"{', '.join(PORT_FIELDS)}")
        if index >= len(values.ports):
            have = ", ".join(f"ports[{i}] = {p.name}" for i, p in enumerate(values.ports))
            raise ValueError(f"{{{name}}}: the VNF has {len(values.ports)} ports "
                             f"({have or 'none'})")
        iface = values.ports[index]
        value = str(getattr(iface, attr, "") or "")
        if attr == "peer_ip":
            value = value.split("/")[0]
        if not value:
            raise ValueError(f"{{{name}}}: port {iface.name} has no {attr} (it comes from "
                             f"{_SOURCES.get(attr, 'the topology')})")
        return str(value)
    if name not in VALUES:
        raise ValueError(f"unknown placeholder {{{name}}}; known: {known()} (write '{{{{' "
                         "and '}}' for literal braces)")
    value = values.named.get(name, "")
    if value == "":
        raise ValueError(f"{{{name}}} has no value (set {_SOURCES.get(name, name)})")
    return str(value)
