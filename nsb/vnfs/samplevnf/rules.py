"""NSB's ACL rules file (a task's per-VNF ``rules``) for vFW and vACL.

``access-list-entries``: each entry has ``actions`` (``accept``, ``drop``,
``count``, ``conntrack``, ``connexist``, or ``{fwd: {port: N}}`` /
``{nat: {port: N}}``) and ``matches`` (``source-ipv4-network``,
``destination-ipv4-network``, ``source-port-range`` and
``destination-port-range`` with ``lower-port``/``upper-port``; optional
``priority``, ``protocol``, ``protocol_mask``), as NSB's AclApproxVnf reads them.
Anything NSB would fail on is one line at its place in the file.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from nsb.task.documents import Where, read_document
from nsb.task.yaml_lines import LocatedDocument

PLAIN_ACTIONS = ("accept", "drop", "count", "conntrack", "connexist")
PORT_ACTIONS = ("fwd", "nat")  # with {port: N}
DEFAULT_PRIORITY, DEFAULT_PROTOCOL, DEFAULT_PROTOCOL_MASK = 1, 0, 0
_NETWORKS = ("source-ipv4-network", "destination-ipv4-network")
_RANGES = ("source-port-range", "destination-port-range")


@dataclass(frozen=True)
class Rule:
    """One ``p <vfw|acl> add`` line: what it matches and its action id."""

    src: ipaddress.IPv4Network
    dst: ipaddress.IPv4Network
    src_ports: tuple[int, int]
    dst_ports: tuple[int, int]
    action_id: int
    priority: int = DEFAULT_PRIORITY
    protocol: int = DEFAULT_PROTOCOL
    protocol_mask: int = DEFAULT_PROTOCOL_MASK

    def command(self, word: str) -> str:
        return (f"p {word} add {self.priority} {self.src.network_address} "
                f"{self.src.prefixlen} {self.dst.network_address} {self.dst.prefixlen} "
                f"{self.src_ports[0]} {self.src_ports[1]} {self.dst_ports[0]} "
                f"{self.dst_ports[1]} {self.protocol} {self.protocol_mask} {self.action_id}")


@dataclass(frozen=True)
class Flows:
    """Actions (id -> what each does, in order) and the rules that use them."""

    actions: tuple[tuple[int, tuple[str, ...]], ...]
    rules: tuple[Rule, ...]


def read(path: Path, where: Where) -> Flows:
    """The rules file at ``path`` (``where``: the ``rules`` option naming it); action ids
    count from 1 in the file's order."""
    doc = read_document(path, where=where, what="rules file")
    entries = doc.data.get("access-list-entries") if isinstance(doc.data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise doc.error(("access-list-entries",) if isinstance(doc.data, dict) else (),
                        "expected access-list-entries: a list of {actions, matches}")
    actions, rules = [], []
    for index, entry in enumerate(entries, 1):
        at = ("access-list-entries", index - 1)
        if not isinstance(entry, dict):
            raise doc.error(at, "expected {actions: [...], matches: {...}}")
        actions.append((index, _actions(doc, at, entry.get("actions"))))
        rules.append(_rule(doc, at, entry.get("matches"), index))
    return Flows(tuple(actions), tuple(rules))


def _actions(doc: LocatedDocument, at: tuple, raw) -> tuple[str, ...]:
    allowed = f"{', '.join(PLAIN_ACTIONS)} or {{fwd|nat: {{port: N}}}}"
    if not isinstance(raw, list) or not raw:
        raise doc.error(at + ("actions",), f"expected a list of actions: {allowed}")
    commands = []
    for index, action in enumerate(raw):
        if isinstance(action, str) and action in PLAIN_ACTIONS:
            commands.append(action)
            continue
        if isinstance(action, dict) and len(action) == 1:
            (name, args), = action.items()
            port = args.get("port") if isinstance(args, dict) else None
            if name in PORT_ACTIONS and isinstance(port, int) and not isinstance(port, bool) \
                    and 0 <= port < 64:
                commands.append(f"{name} {port}")
                continue
            if name in PORT_ACTIONS:
                raise doc.error(at + ("actions", index, name),
                                f"'{name}' needs {{port: N}} (a DPDK port number)")
        raise doc.error(at + ("actions", index), f"unknown action {action!r}; SampleVNF's "
                        f"actions: {allowed}")
    return tuple(commands)


def _rule(doc: LocatedDocument, at: tuple, matches, action_id: int) -> Rule:
    at = at + ("matches",)
    if not isinstance(matches, dict):
        raise doc.error(at, f"expected matches: {{{', '.join(_NETWORKS + _RANGES)}}}")
    networks = []
    for key in _NETWORKS:
        value = matches.get(key)
        try:
            networks.append(ipaddress.ip_interface(str(value)).network)
        except ValueError:
            raise doc.error(at + ((key,) if key in matches else ()),
                            f"{key}: expected an IPv4 network (a.b.c.d/len), got "
                            f"{value!r}") from None
        if networks[-1].version != 4:
            raise doc.error(at + (key,), f"expected an IPv4 network, got {value!r}")
    ranges = [_port_range(doc, at, key, matches.get(key)) for key in _RANGES]
    numbers = {}
    for key, default, top in (("priority", DEFAULT_PRIORITY, 2**31 - 1),
                              ("protocol", DEFAULT_PROTOCOL, 255),
                              ("protocol_mask", DEFAULT_PROTOCOL_MASK, 255)):
        value = matches.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise doc.error(at + (key,), f"expected a whole number 0-{top}, got {value!r}")
        numbers[key] = value
    return Rule(networks[0], networks[1], ranges[0], ranges[1], action_id, **numbers)


def _port_range(doc: LocatedDocument, at: tuple, key: str, raw) -> tuple[int, int]:
    if not isinstance(raw, dict):
        raise doc.error(at + ((key,) if raw is not None else ()),
                        f"{key}: expected {{lower-port: N, upper-port: M}}")
    bounds = []
    for bound in ("lower-port", "upper-port"):
        value = raw.get(bound)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            raise doc.error(at + (key, bound) if bound in raw else at + (key,),
                            f"{bound}: expected a port 0-65535, got {value!r}")
        bounds.append(value)
    if bounds[0] > bounds[1]:
        raise doc.error(at + (key,), f"the range runs backwards ({bounds[0]}-{bounds[1]})")
    return bounds[0], bounds[1]
