"""The CLI script a SampleVNF runs at start (``-s``), as NSB writes it.

Every port gets its address (``link N config``), its peer as next hop for the
peer's network (``routeadd net``) and the peer's MAC (``p <ARPICMP> arpadd``).
vFW and vACL then get their flows: the rules file's actions and rules first
(action ids from 1), then NSB's defaults (per port pair: the uplink's network to
the downlink's forwarded to the downlink port and back, each with its own
action: accept, count, conntrack for vFW, fwd), and ``applyruleset``.
"""

from __future__ import annotations

from nsb.vnfs.samplevnf.ports import PortLayout, netmask_hex
from nsb.vnfs.samplevnf.rules import Flows, Rule

ARPICMP_PIPELINE = 1  # NSB writes ARPICMP as PIPELINE1
# NSB's hardware load balancing asks the NICs for symmetric hashing per pair
_HWLB = """
set_sym_hash_ena_per_port {0} enable
set_hash_global_config {0} simple_xor ipv4-udp enable
set_sym_hash_ena_per_port {1} enable
set_hash_global_config {1} simple_xor ipv4-udp enable
set_hash_input_set {0} ipv4-udp src-ipv4 udp-src-port add
set_hash_input_set {1} ipv4-udp dst-ipv4 udp-dst-port add
set_hash_input_set {0} ipv6-udp src-ipv6 udp-src-port add
set_hash_input_set {1} ipv6-udp dst-ipv6 udp-dst-port add
"""


def default_flows(layout: PortLayout, first_id: int, forward: tuple[str, ...]) -> Flows:
    """NSB's own flows per port pair: each network to the other, forwarded there."""
    actions, rules = [], []
    action_id = first_id
    full = (0, 65535)
    for up, down in layout.pairs:
        if not (up.address and down.address):
            continue
        for src, dst in ((up, down), (down, up)):
            actions.append((action_id, (*forward, f"fwd {dst.number}")))
            rules.append(Rule(src.address.network, dst.address.network, full, full,
                              action_id))
            action_id += 1
    return Flows(tuple(actions), tuple(rules))


def flows_text(word: str, layout: PortLayout, from_file: Flows | None,
               forward: tuple[str, ...]) -> str:
    """The ``p action add`` and ``p <word> add`` lines, then ``applyruleset``."""
    given = from_file or Flows((), ())
    defaults = default_flows(layout, len(given.actions) + 1, forward)
    lines = [f"p action add {action_id} {action}"
             for action_id, actions in (*given.actions, *defaults.actions)
             for action in actions]
    lines += [rule.command(word) for rule in (*given.rules, *defaults.rules)]
    return "\n".join([*lines, f"p {word} applyruleset"])


def script(layout: PortLayout, flows: str = "", hwlb: bool = False) -> str:
    """The whole script: links, routes, ARP entries, flows."""
    links = "".join(f"link {p.number} down\nlink {p.number} config {p.address.ip} "
                    f"{p.address.network.prefixlen}\nlink {p.number} up\n"
                    for p in layout.ports)
    arp = "\n".join(f"p {ARPICMP_PIPELINE} arpadd {p.number} {p.peer_address} "
                    f"{p.iface.peer_mac}" for p in layout.ports)
    routes = "\n".join(f"routeadd net {p.number} {p.peer_address} 0x{netmask_hex(p)}"
                       for p in layout.ports)
    text = f"\n{links}\n{arp}\n\n{routes}\n\n{flows}\n\n"
    if hwlb:
        text += "set fwd rxonly" + "".join(_HWLB.format(up.number, down.number)
                                           for up, down in layout.pairs)
    return text
