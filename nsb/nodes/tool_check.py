"""What a node can run: the generators and VNFs whose programs are where nsb looks
(NSB's /opt/nsb_bin, or PATH), with the version ansible's roles recorded for them.

One shell round trip per node: each candidate path is tested, and the records in
/opt/nsb_bin/.nsb-tools/ (written by the install_* roles) are read.
"""

from __future__ import annotations

import json
import shlex

from nsb.nodes.tool_roles import ROLES, hint

BIN = "/opt/nsb_bin"
# what nsb runs -> (the tool that provides it, where nsb looks for it: a path or a name on PATH)
PROGRAMS = {
    "trex": ("trex", [f"{BIN}/trex/scripts/t-rex-64"]),
    "prox": ("prox", [f"{BIN}/prox"]),
    "vfw": ("samplevnf", [f"{BIN}/vFW"]),
    "vacl": ("samplevnf", [f"{BIN}/vACL"]),
    "vcgnapt": ("samplevnf", [f"{BIN}/vCGNAPT"]),
    "udp_replay": ("samplevnf", [f"{BIN}/UDP_Replay"]),
    "l3fwd": ("dpdk_apps", ["dpdk-l3fwd", f"{BIN}/dpdk-l3fwd"]),
    "l2fwd": ("dpdk_apps", ["dpdk-l2fwd", f"{BIN}/dpdk-l2fwd"]),
    "testpmd": ("", ["dpdk-testpmd"]),  # Debian's dpdk package
    "trafgen": ("", ["trafgen"]),  # Debian's netsniff-ng package
}
PACKAGES = {"testpmd": "dpdk", "trafgen": "netsniff-ng"}


def script(bin_dir: str = BIN) -> str:
    """Prints each found path as ``found <program> <path>``, then the role records
    (``bin_dir``: where NSB's tools are, /opt/nsb_bin)."""
    lines = []
    for program, (_, nsb_places) in PROGRAMS.items():
        places = [p.replace(BIN, bin_dir, 1) for p in nsb_places]
        tests = " || ".join(
            f"{{ [ -x {shlex.quote(p)} ] && echo found {program} {shlex.quote(p)}; }}"
            if p.startswith("/") else
            f"{{ p=$(command -v {shlex.quote(p)}) && echo found {program} \"$p\"; }}"
            for p in places)
        lines.append(f"{tests} || true")
    lines.append(f"for r in {shlex.quote(bin_dir)}/.nsb-tools/*.json; do [ -f \"$r\" ] && "
                 "{ printf 'record '; tr -d '\\n' < \"$r\"; echo; }; done; true")
    return "\n".join(lines)


def what_runs(output: str) -> tuple[dict[str, str], dict[str, dict]]:
    """(program -> where it was found, tool -> the role's record) from ``script()``'s output."""
    found, records = {}, {}
    for line in output.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "found":
            program, _, path = rest.partition(" ")
            found.setdefault(program, path)
        elif kind == "record":
            try:
                record = json.loads(rest)
            except ValueError:
                continue
            records[str(record.get("tool"))] = record
    return found, records


def summary(node: str, found: dict[str, str], records: dict[str, dict]) -> list[str]:
    """Two lines: what the node can run (with versions), and what it cannot and why."""
    can = []
    for program, (tool, _) in PROGRAMS.items():
        if program in found:
            version = records.get(tool, {}).get("version")
            can.append(f"{program} ({version})" if version else program)
    cannot = []
    for program, (tool, places) in PROGRAMS.items():
        if program not in found:
            how = hint(tool) if tool in ROLES else f"apt-get install {PACKAGES[program]}"
            cannot.append(f"{program} (no {' or '.join(places)}; {how})")
    return [f"{node}: can run: {', '.join(can) or 'none of nsb generators or VNFs'}",
            f"{node}: cannot run: {'; '.join(cannot) or 'nothing missing'}"]
