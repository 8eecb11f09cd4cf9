"""What a pod's form cannot say: addresses, netmasks, MACs (unicast, one per node),
interface names Linux accepts. Every mistake of a pod is
found in one pass, so that they are reported together."""

from __future__ import annotations

import ipaddress

from nsb.errors import TaskError
from nsb.task import values
from nsb.task.yaml_lines import LocatedDocument


def problems(doc: LocatedDocument) -> list[TaskError]:
    """Every value mistake in the pod ``doc`` (its form already checked)."""
    found: list[TaskError] = []
    for index, node in enumerate(doc.data["nodes"]):
        at = ("nodes", index)
        host = node.get("ip")
        if isinstance(host, str) and _looks_numeric(host):
            _add(found, doc, at + ("ip",), values.address_problem(host))
        macs: dict[str, str] = {}
        for name, iface in (node.get("interfaces") or {}).items():
            _interface(found, doc, at + ("interfaces", name), name, iface or {}, macs)
    return found


def _interface(found: list, doc, at: tuple, name: str, iface: dict, macs: dict) -> None:
    _add(found, doc, at, values.ifname_problem(name))
    address = iface.get("local_ip")
    if address is not None:
        _add(found, doc, at + ("local_ip",), values.address_problem(address))
    if "netmask" in iface and _version(address) == 6:
        _add(found, doc, at + ("netmask",), values.address_problem(
            f"{address}/{iface['netmask']}", with_prefix=True))
    elif "netmask" in iface:
        _add(found, doc, at + ("netmask",), values.netmask_problem(iface["netmask"]))
    mac = iface.get("local_mac")
    if mac is None:
        return
    problem = values.mac_problem(mac)
    _add(found, doc, at + ("local_mac",), problem)
    if problem is None:
        first = macs.setdefault(mac.lower(), name)
        if first != name:
            _add(found, doc, at + ("local_mac",),
                 f"{mac} is also {first}'s MAC on this node; each interface needs its own")


def _add(found: list, doc: LocatedDocument, at: tuple, problem: str | None) -> None:
    if problem:
        found.append(doc.error(at, problem))


def _looks_numeric(host: str) -> bool:
    """An address, not a host name (names are resolved by SSH, not checked here)."""
    return ":" in host or all(part.isdigit() for part in host.split("."))


def _version(address) -> int | None:
    try:
        return ipaddress.ip_address(address).version
    except ValueError:
        return None
