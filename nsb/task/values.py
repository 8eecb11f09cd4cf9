"""Checks of single values users write (addresses, prefixes, MACs, CPU lists,
interface names): each says what is wrong and what is allowed, or None.

Schemas check a value's form; these check what the form cannot say (an octet of
300, a /99, a broadcast MAC), so that a typo fails at load time, located, and not
as a silent misconfiguration on the wire.
"""

from __future__ import annotations

import ipaddress
import re

import jsonschema

IFNAME_MAX = 15  # Linux IFNAMSIZ - 1
_MAC = re.compile(r"^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$")


def address_problem(text, with_prefix: bool = False) -> str | None:
    """What is wrong with an IPv4/IPv6 address (``with_prefix``: address/prefix)."""
    if not isinstance(text, str):
        return f"{text!r} is not an IP address (e.g. 192.168.1.10 or 2001:db8::1)"
    address, slash, prefix = text.partition("/")
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return (f"{address!r} is not an IPv4 or IPv6 address (IPv4 is four numbers 0-255, "
                "e.g. 192.168.1.10; IPv6 e.g. 2001:db8::1)")
    if not slash:
        if with_prefix:
            return f"{text!r} has no prefix; write address/prefix, e.g. {address}/24"
        return None
    if not with_prefix:
        return f"{text!r}: give the address alone here, without /prefix"
    bits = ip.max_prefixlen
    if not prefix.isdigit() or int(prefix) > bits:
        return f"/{prefix} is not an IPv{ip.version} prefix (allowed: /0 to /{bits})"
    return None


def netmask_problem(text) -> str | None:
    """What is wrong with an IPv4 netmask (255.255.255.0) or prefix length (24)."""
    try:
        ipaddress.IPv4Network(f"0.0.0.0/{text}")
    except ValueError:
        return (f"{text!r} is not an IPv4 netmask (allowed: contiguous masks such as "
                "255.255.255.0, or a prefix length 0-32)")
    return None


def mac_problem(text) -> str | None:
    """What is wrong with an interface's own (unicast) MAC address."""
    if not isinstance(text, str) or not _MAC.match(text):
        return f"{text!r} is not a MAC address (six hex pairs, e.g. 02:00:00:00:01:01)"
    first = int(text[:2], 16)
    if text.lower() == "ff:ff:ff:ff:ff:ff":
        return f"{text} is the broadcast address; an interface needs a unicast MAC"
    if first & 1:
        return (f"{text} is a multicast address (the first octet is odd); an interface "
                "needs a unicast MAC (first octet even, e.g. 02:...)")
    if int(text.replace(":", ""), 16) == 0:
        return f"{text} is all zero; give the interface's real MAC (e.g. 02:00:00:00:01:01)"
    return None


def cpu_list(text: str) -> list[int]:
    """The CPUs of a CPU list such as DPDK's -l, in the order written ("1,0": CPU 1
    first), each once; parts that are no CPU are skipped (cpu_list_problem says why)."""
    cpus: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            cpus += [c for c in range(int(low), int(high or low) + 1) if c not in cpus]
    return cpus


def cpu_list_problem(text) -> str | None:
    """What is wrong with a CPU list such as DPDK's -l (0-3,8): no part may be empty."""
    parts = [p.strip() for p in str(text).split(",")]
    if not any(c.isdigit() for c in str(text)):
        return f"{text!r} names no CPU (allowed: numbers and ranges low-high, e.g. 0-3,8)"
    for part in parts:
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            return (f"{text!r} is not a CPU list (allowed: numbers and ranges low-high, "
                    "e.g. 0-3,8)")
        if dash and int(high) < int(low):
            return (f"the range {part} in {text!r} is empty: a range is low-high, e.g. "
                    f"{high}-{low}")
    return None


def ifname_problem(name) -> str | None:
    """What is wrong with a Linux interface name."""
    if len(str(name)) > IFNAME_MAX:
        return (f"interface name {name!r} has {len(str(name))} characters; Linux allows at "
                f"most {IFNAME_MAX}")
    return None


def same_subnet(a: str, b: str) -> bool:
    """Whether two address/prefix interfaces are on one subnet (each by its prefix)."""
    ia, ib = ipaddress.ip_interface(a), ipaddress.ip_interface(b)
    return ia.version == ib.version and (ib.ip in ia.network or ia.ip in ib.network)


class ValueProblem(ValueError):
    """A value a schema's ``format`` refused; its text is what is wrong and allowed."""


def _format(check):
    def format_ok(value) -> bool:
        problem = check(value) if isinstance(value, str) else None
        if problem:
            raise ValueProblem(problem)
        return True
    return format_ok


# schema formats: {"type": "string", "format": "nsb-mac"} and so on
FORMATS = jsonschema.FormatChecker(formats=())
for _name, _check in (("nsb-ip-address", address_problem),
                      ("nsb-ip-prefix", lambda text: address_problem(text, with_prefix=True)),
                      ("nsb-mac", mac_problem), ("nsb-cpu-list", cpu_list_problem),
                      ("nsb-ifname", ifname_problem)):
    FORMATS.checks(_name, raises=ValueProblem)(_format(_check))
