"""The values of NSB's packet definitions: address and port ranges, MACs, counts.

NSB's TRex profiles (``trex_traffic_profile.py``, ``_call_on_range``) read a
field as ``"first-last"`` or one value; its range of IPv4 addresses or L4 ports
makes at most ``count`` distinct values (``last - first`` when that is fewer).
Each parser returns the value or raises ``ValueError`` with what is wrong and
what is allowed; the reader adds where it is.
"""

from __future__ import annotations

import ipaddress
import re

from nsb.packets import IpRange, PortRange

_MAC = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
_DIGITS = re.compile(r"^\s*[0-9]+\s*$")


def _parts(value: object, what: str) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"expected {what} or a range 'first-last', got "
                         f"{type(value).__name__}")
    parts = [part.strip() for part in str(value).split("-")]
    if len(parts) > 2 or not all(parts):
        raise ValueError(f"{value!r} is not {what} or a range 'first-last'")
    return parts


def ip_range(value: object, version: int) -> IpRange:
    """``"10.0.2.1-10.0.2.255"`` or one address, of IP ``version``."""
    what = f"an IPv{version} address"
    parts = _parts(value, what)
    try:
        addresses = [ipaddress.ip_address(part) for part in parts]
    except ValueError:
        raise ValueError(f"{value!r} is not {what} or a range 'first-last'") from None
    if any(address.version != version for address in addresses):
        raise ValueError(f"{value!r}: expected {what} (this is the IPv{version} header)")
    first, last = addresses[0], addresses[-1]
    if first > last:
        raise ValueError(f"{value!r}: the range runs backwards ({first} is above {last})")
    return IpRange(str(first), str(last))


def port_range(value: object) -> PortRange:
    """``"1234-4321"``, ``"2001"`` or ``2001``: L4 ports 0-65535."""
    parts = _parts(value, "a port")
    if not all(part.isdigit() for part in parts):
        raise ValueError(f"{value!r} is not a port (0-65535) or a range 'first-last'")
    first, last = int(parts[0]), int(parts[-1])
    if last > 65535:
        raise ValueError(f"{value!r}: a port is 0-65535")
    if first > last:
        raise ValueError(f"{value!r}: the range runs backwards ({first} is above {last})")
    return PortRange(first, last)


def single_int(value: object, low: int, high: int, what: str) -> int:
    """A whole number ``low``-``high`` (or its digits as text); a range is refused."""
    if isinstance(value, bool):
        raise ValueError(f"expected {what} ({low}-{high}), got {value!r}")
    if isinstance(value, str) and "-" in value.strip()[1:]:
        raise ValueError(f"not supported yet: a range of {what} ({value!r}); give one value "
                         f"{low}-{high}")
    if isinstance(value, int) or (isinstance(value, str) and _DIGITS.match(value)):
        number = int(value)
        if low <= number <= high:
            return number
    raise ValueError(f"expected {what} ({low}-{high}), got {value!r}")


def count(value: object) -> int:
    """NSB's ``count``: how many distinct values a range makes, 1 or more."""
    return single_int(value, 1, 2**32, "a flow count")


def mac(value: object) -> str:
    """One MAC address (NSB's MAC ranges step a counter nsb does not copy)."""
    text = str(value).strip() if isinstance(value, str) else ""
    if _MAC.match(text):
        return text.lower()
    if isinstance(value, str) and _MAC.match(text.split("-")[0].strip()):
        raise ValueError(f"not supported yet: a MAC range ({value!r}); give one MAC address")
    raise ValueError(f"{value!r} is not a MAC address (aa:bb:cc:dd:ee:ff)")


def distinct(ip_or_port: IpRange | PortRange | None) -> int:
    """NSB's number of values a range can take: ``last - first`` (at least 1)."""
    if ip_or_port is None:
        return 1
    if isinstance(ip_or_port, PortRange):
        return max(1, ip_or_port.last - ip_or_port.first)
    first = ipaddress.ip_address(ip_or_port.first)
    last = ipaddress.ip_address(ip_or_port.last)
    return max(1, int(last) - int(first))
