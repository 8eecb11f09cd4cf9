"""The nftables ruleset of the ``nftables`` VNF: nsb's own table for its mode and
limits, the user's ruleset checked to be whole tables (which nsb can delete again),
and nft's complaints placed on a line. A leaf module: plain values in, text out.

nsb's table counts with named counters, so what its rules dropped is read as
cumulative counts like every other KPI:

- ``new_packets``: packets of new connections reaching the forward hook (a SYN
  sent again counts again); its ``ct state`` match also keeps conntrack tracking
  in the node's namespace, which a ruleset without one would not;
- ``rate_limit_dropped``, ``session_limit_dropped``: new-connection packets over
  ``max_new_per_s`` (``limit rate over``, a burst of 20 ms worth) and over
  ``max_sessions`` (``ct count over``);
- ``pps_limit_dropped``: packets from the client side over ``max_pps`` (``limit rate
  over``, every packet, new or not: a DUT of known forwarding capacity for the data of
  open sessions);
- ``firewall_dropped``: what the firewall mode refused (new from a port that is not
  the client side, invalid or untracked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MODES = ("nat", "firewall", "custom")
COUNTERS = ("new_packets", "rate_limit_dropped", "session_limit_dropped", "firewall_dropped",
            "pps_limit_dropped")
FAMILIES = ("ip", "ip6", "inet", "arp", "bridge", "netdev")
# a limit's burst: 20 ms of new connections (at least nft's 5), so that a DUT set to N a
# second lets N a second through when they come as a generator sends them, a few at a
# time, not one every 1/N s (measured: with nft's burst of 5, a limit of 5,000 a second
# admitted 2,938 a second of TRex's connections without loss); a 1 s trial can then get
# 2 % more through than N, a longer one less
BURST_SHARE_S = 0.02


def burst_packets(rate_per_s: int) -> int:
    return max(5, round(rate_per_s * BURST_SHARE_S))


@dataclass(frozen=True)
class RulePlan:
    """What nsb's table does on one node (device names as the node calls them)."""

    table: str
    mode: str
    ports: tuple[str, ...]  # its devices: what comes in by others is none of its business
    clients: tuple[str, ...]  # devices facing the clients
    snat: tuple[tuple[str, str], ...]  # (device, its address without prefix)
    max_new_per_s: int | None = None
    max_sessions: int | None = None
    max_pps: int | None = None


def table_name(task_id: str, vnf: str) -> str:
    """nsb's table on the node: named after the run and the VNF, an nft identifier."""
    tag = task_id.rsplit("-", 1)[-1]
    return "nsb_" + re.sub(r"[^A-Za-z0-9_]", "_", f"{tag}_{vnf}")


def own_rules(plan: RulePlan) -> str:
    """nsb's table (family inet) for ``plan``, as ``nft -f`` reads it: its forward chain
    judges only what comes in by the VNF's ports (a pod's server may forward for
    others too)."""
    counters = [c for c in COUNTERS if _counted(plan, c)]
    lines = [f"table inet {plan.table} {{",
             "  # nsb's own table: deleted at teardown"]
    lines += [f"  counter {name} {{}}" for name in counters]
    lines += ["  chain forward {",
              "    type filter hook forward priority filter; policy accept;",
              f"    iifname != {_names(plan.ports)} accept",
              '    ct state new counter name "new_packets"']
    if plan.mode == "firewall":
        lines += ['    ct state { invalid, untracked } counter name "firewall_dropped" drop',
                  f'    ct state new iifname != {_names(plan.clients)} '
                  'counter name "firewall_dropped" drop']
    if plan.max_new_per_s is not None:
        lines.append(f"    ct state new limit rate over {plan.max_new_per_s}/second burst "
                     f"{burst_packets(plan.max_new_per_s)} packets counter name "
                     '"rate_limit_dropped" drop')
    if plan.max_sessions is not None:
        lines.append(f"    ct state new ct count over {plan.max_sessions} "
                     'counter name "session_limit_dropped" drop')
    if plan.max_pps is not None and plan.clients:
        lines.append(f"    iifname {_names(plan.clients)} limit rate over {plan.max_pps}/second "
                     f"burst {burst_packets(plan.max_pps)} packets counter name "
                     '"pps_limit_dropped" drop')
    lines.append("  }")
    if plan.mode == "nat" and plan.snat:
        lines += ["  chain postrouting {",
                  "    type nat hook postrouting priority srcnat; policy accept;"]
        lines += [f'    oifname "{device}" snat {"ip6" if ":" in address else "ip"} to {address}'
                  for device, address in plan.snat]
        lines.append("  }")
    return "\n".join(lines + ["}"]) + "\n"


def _counted(plan: RulePlan, counter: str) -> bool:
    return {"rate_limit_dropped": plan.max_new_per_s is not None,
            "session_limit_dropped": plan.max_sessions is not None,
            "firewall_dropped": plan.mode == "firewall",
            "pps_limit_dropped": plan.max_pps is not None and bool(plan.clients)}.get(counter, True)


def _names(devices: tuple[str, ...]) -> str:
    quoted = [f'"{device}"' for device in devices]
    return quoted[0] if len(quoted) == 1 else "{ " + ", ".join(quoted) + " }"


# the user's ruleset

class RulesetError(ValueError):
    """A ruleset nsb does not load, with the line (of the ruleset) it is about."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


_KEEPS = ("define", "redefine", "undefine")


def user_tables(text: str) -> list[tuple[str, str]]:
    """The tables (family, name) a user's ruleset makes. It may hold only whole tables
    (``table inet fw { ... }``, ``add table ...``) and definitions: what it makes, nsb
    deletes at teardown, so it must not reach into tables that were there (``add rule
    inet filter ...``) nor flush or delete anything (``flush ruleset``)."""
    tables: list[tuple[str, str]] = []
    for line, words in _statements(text):
        if words[0] in _KEEPS or words[0] == "{":  # a table's block on a line of its own
            continue
        if words[0] in ("add", "create") and words[1:2] == ["table"]:
            words = words[1:]
        if words[0] != "table":
            raise RulesetError(line, _refused(words))
        family, name = (words[1], words[2]) if len(words) > 2 and words[1] in FAMILIES \
            else ("ip", words[1] if len(words) > 1 else "")
        if not name or name == "{":
            raise RulesetError(line, "a table without a name")
        if (family, name) not in tables:
            tables.append((family, name))
    return tables


def _refused(words: list[str]) -> str:
    said = " ".join(words[:3])
    if words[0] in ("flush", "delete", "destroy", "reset", "replace"):
        return (f"'{said}' would change what was on the node before, which nsb could not "
                "give back; leave it out (nsb deletes the tables the ruleset makes at "
                "teardown)")
    if words[0] == "include":
        return "'include' reads a file on the node; put its text in the ruleset"
    return (f"'{said}' is not a table: the ruleset holds whole tables (table <family> "
            "<name> { ... }), which nsb deletes at teardown; put the rule in a table of "
            "its own")


def _statements(text: str):
    """(line, words) of each top-level statement: comments dropped, what is inside
    braces skipped (a block is the word '{'), strings kept whole, a statement ended by
    a new line (unless continued with a backslash) or ';' outside braces."""
    depth, quoted, words, word, start = 0, False, [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        continued = line.endswith("\\")
        for char in line[:-1] if continued else line:
            if quoted or char == '"':
                quoted = not quoted if char == '"' else quoted
                word += char if depth == 0 else ""
                start = start or number
            elif char == "#":
                break
            elif char in "{};" or char.isspace():
                if word:
                    words.append(word)
                    word = ""
                if char == "{":
                    words += ["{"] if depth == 0 else []
                    depth += 1
                elif char == "}":
                    depth = max(0, depth - 1)
                elif char == ";" and depth == 0 and words:
                    yield start, words
                    words, start = [], 0
            elif depth == 0:
                word += char
                start = start or number
        if word:
            words.append(word)
            word = ""
        if not continued and depth == 0 and words:
            yield start, words
            words, start = [], 0
    if words:
        yield start, words


# nft's complaints

_LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)(?:-\d+)?: Error: (?P<msg>.*)$")


def complaint(stderr: str) -> tuple[int | None, str]:
    """nft's first error: (line of its input or None, what it said)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        found = _LOCATED.match(line)
        if found:
            return int(found["line"]), found["msg"].strip()
    for line in lines:
        if line.startswith("Error:"):
            return None, line[len("Error:"):].strip()
    return None, lines[0] if lines else "no reason given"
