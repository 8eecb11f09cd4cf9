"""PROX .cfg files: parse, fill NSB's placeholders from the topology, write back.

PROX configs are ini-like but not ini: section names repeat (two ``[core 1]``
with different tasks), keys may have no value, ``;`` starts a comment and
``[lua]`` holds Lua code. Every item keeps its line so an error points at it.

Placeholders, as NSB fills them (N is the node's DPDK port number):
``@@dst_macN`` / ``@@src_macN`` (MAC of the peer / of this port, as the
space-separated bytes ``pkt inline`` wants), ``dst mac=@@N`` / ``src mac=@@N``
(colon form), ``@@dst_ipN`` / ``@@src_ipN`` (dotted) and ``@@dst_ip_hexN`` /
``@@src_ip_hexN`` (bytes for ``pkt inline``). ``mac=`` of every ``[port N]``
becomes ``hardware`` and ``dofile("name")`` points at the copy of the
``prox_files`` entry with that name on the node.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from nsb.errors import TaskError
from nsb.nodes.platform import cpu_set

_PLACEHOLDER = re.compile(r"@@(dst_ip_hex|src_ip_hex|dst_mac|src_mac|dst_ip|src_ip)(\d+)")
_ANY_PLACEHOLDER = re.compile(r"@@\S*")
_MAC_KEY_PLACEHOLDER = re.compile(r"@@\D*(\d+)\S*")
_DOFILE = re.compile(r'dofile\("([^"]+)"\)')
_CORE = re.compile(r"^core\s+(\d+)$")
_CORE_LIST = re.compile(r"^core\s+(\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)h?$")
LATENCY_BUCKET_KEY = "latency bucket size"  # PROX's key; 'bucket size' is not one
# 2^12 TSC cycles: about 2 us per bucket at 2 GHz, 128 buckets cover about 260 us
DEFAULT_LATENCY_BUCKET_SIZE = 12


@dataclass
class Item:
    key: str
    value: str | None
    line: int


@dataclass
class Section:
    name: str
    line: int
    items: list[Item] = field(default_factory=list)

    def get(self, key: str, default: str | None = None) -> str | None:
        for item in self.items:
            if item.key == key:
                return item.value
        return default

    def set(self, key: str, value: str) -> None:
        for item in self.items:
            if item.key == key:
                item.value = value
                return
        self.items.append(Item(key, value, 0))


@dataclass(frozen=True)
class CoreTask:
    """One task of one core, as PROX's commands address it (``speed C T P``)."""

    core: int
    task: int
    mode: str
    name: str
    tx_port: int | None
    rx_port: int | None
    bucket_size: int


@dataclass(frozen=True)
class PortAddresses:
    """What the placeholders of one DPDK port are filled with."""

    interface: str
    mac: str
    ip: str = ""
    peer_mac: str = ""
    peer_ip: str = ""


class ProxConfig:
    def __init__(self, sections: list[Section], source: str):
        self.sections = sections
        self.source = source

    @classmethod
    def parse(cls, text: str, source: str) -> ProxConfig:
        sections: list[Section] = []
        current = None
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith(";") or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                current = Section(line[1:-1].strip(), number)
                sections.append(current)
                continue
            if current is None:
                raise TaskError(f"'{line}' comes before the first [section]", source, number)
            if current.name != "lua":
                line = re.sub(r"\s+;.*$", "", line)
            if "=" in line and current.name != "lua":
                key, value = line.split("=", 1)
                current.items.append(Item(key.strip(), value.strip(), number))
            else:
                current.items.append(Item(line, None, number))
        return cls(sections, source)

    def text(self) -> str:
        out = []
        for section in self.sections:
            out.append(f"[{section.name}]")
            for item in section.items:
                out.append(item.key if item.value is None else f"{item.key}={item.value}")
            out.append("")
        return "\n".join(out)

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def error(self, message: str, section: Section, item: Item | None = None) -> TaskError:
        key = f"[{section.name}]" + (f" {item.key}" if item else "")
        return TaskError(message, self.source, item.line if item and item.line else section.line,
                         key)

    def ports(self) -> dict[str, int]:
        """Port name (``name=`` of ``[port N]``) -> DPDK port number."""
        ports = {}
        for section in self.sections:
            match = re.match(r"^port\s+(\d+)$", section.name)
            if match:
                number = int(match.group(1))
                ports[section.get("name", str(number))] = number
        return ports

    def port_numbers(self) -> list[int]:
        return sorted(set(self.ports().values()))

    def tasks(self) -> list[CoreTask]:
        """Every ``[core C]`` task with its mode and ports."""
        names = self.ports()
        tasks = []
        for section in self.sections:
            if not section.name.startswith("core"):
                continue
            mode = section.get("mode", "")
            cores = _section_cores(section.name)
            if cores is None:
                if mode in ("gen", "lat"):
                    raise self.error(f"not supported yet: core notation '{section.name}' for a "
                                     f"mode={mode} task (use [core N] or [core N-M])", section)
                continue
            for core in cores:  # [core 1-4] is the same task on each of those cores
                tasks.append(CoreTask(
                    core=core, task=int(section.get("task", "0") or 0), mode=mode,
                    name=section.get("name", ""),
                    tx_port=self._port(section, "tx port", names),
                    rx_port=self._port(section, "rx port", names),
                    bucket_size=int(section.get(LATENCY_BUCKET_KEY)
                                    or DEFAULT_LATENCY_BUCKET_SIZE)))
        return tasks

    def _port(self, section: Section, key: str, names: dict[str, int]) -> int | None:
        value = section.get(key)
        if not value:
            return None
        first = value.split(",")[0].strip()
        if first in names:
            return names[first]
        if first.isdigit():
            return int(first)
        item = next(i for i in section.items if i.key == key)
        raise self.error(f"unknown port '{first}'; ports: {', '.join(names) or 'none'}",
                         section, item)

    # --- filling placeholders -------------------------------------------

    def fill(self, ports: dict[int, PortAddresses], files: dict[str, str], node: str) -> None:
        """Fill placeholders, ``mac=hardware`` and ``dofile`` paths in place."""
        for section in self.sections:
            if re.match(r"^port\s+\d+$", section.name):
                for item in section.items:
                    if item.key == "mac":
                        item.value = "hardware"
            for item in section.items:
                item.key = self._dofile(item.key, files, section, item)
                if item.value is None:
                    continue
                item.value = self._dofile(item.value, files, section, item)
                mac_port = _MAC_KEY_PLACEHOLDER.fullmatch(item.value)
                if item.key in ("dst mac", "src mac") and mac_port:
                    # Yardstick: any @@... here (@@1, @@tester_p1, @@tester_mac1, @@dst_mac1)
                    # is port N's MAC, N the first number: the peer's for dst, its own for src
                    port = self._port_of(int(mac_port.group(1)), ports, section, item, node)
                    mac = port.peer_mac if item.key == "dst mac" else port.mac
                    item.value = self._need(mac, item.key, port, section, item)
                    continue
                item.value = _PLACEHOLDER.sub(
                    lambda m, s=section, i=item: self._placeholder(m, ports, s, i, node),
                    item.value)
                leftover = _ANY_PLACEHOLDER.search(item.value)
                if leftover:
                    raise self.error(f"unknown placeholder '{leftover.group(0)}'; known: "
                                     "@@dst_macN, @@src_macN, @@dst_ipN, @@src_ipN, "
                                     "@@dst_ip_hexN, @@src_ip_hexN, and any @@...N as the "
                                     "whole value of 'dst mac'/'src mac'", section, item)

    def _placeholder(self, match, ports, section, item, node) -> str:
        kind, number = match.group(1), int(match.group(2))
        port = self._port_of(number, ports, section, item, node)
        if kind in ("dst_mac", "src_mac"):
            mac = self._need(port.peer_mac if kind == "dst_mac" else port.mac, match.group(0),
                             port, section, item)
            return mac.replace(":", " ")
        address = port.peer_ip if kind.startswith("dst") else port.ip
        address = self._need(address.split("/")[0], match.group(0), port, section, item)
        if kind.endswith("_hex"):
            return " ".join(f"{b:02x}" for b in ipaddress.IPv4Address(address).packed)
        return address

    def _port_of(self, number, ports, section, item, node) -> PortAddresses:
        if number not in ports:
            raise self.error(f"placeholder '{item.value}' has no value: node {node} has DPDK "
                             f"ports {', '.join(map(str, ports)) or 'none'}", section, item)
        return ports[number]

    def _need(self, value: str, what: str, port: PortAddresses, section, item) -> str:
        if not value:
            raise self.error(f"placeholder '{what}' has no value: interface {port.interface} "
                             "has no link or no address for it in the topology", section, item)
        return value

    def _dofile(self, text: str, files: dict[str, str], section, item) -> str:
        def replace(match) -> str:
            name = match.group(1).rsplit("/", 1)[-1]
            if name not in files:
                raise self.error(f'dofile("{match.group(1)}") names a file that is not in '
                                 f"prox_files (given: {', '.join(files) or 'none'})",
                                 section, item)
            return f'dofile("{files[name]}")'

        return _DOFILE.sub(replace, text)

    def dofile_names(self) -> list[str]:
        """The file names (without directories) that ``dofile("...")`` calls name."""
        names = []
        for section in self.sections:
            for item in section.items:
                for text in (item.key, item.value or ""):
                    names += [m.group(1).rsplit("/", 1)[-1] for m in _DOFILE.finditer(text)]
        return names

    def lcores(self) -> set[int]:
        """Every lcore a ``[core ...]`` section names (``core 1``, ``core 1-4``, ``core 2,3``)."""
        cores: set[int] = set()
        for section in self.sections:
            cores.update(_section_cores(section.name) or [])
        return cores

    def master_lcore(self) -> int | None:
        for section in self.sections:
            match = _CORE.match(section.name)
            if match and section.get("mode") == "master":
                return int(match.group(1))
        return None

    def use_latency_bucket_size(self, size: int = DEFAULT_LATENCY_BUCKET_SIZE) -> None:
        """Every ``mode=lat`` task states its histogram bucket width (2^size TSC cycles),
        so nsb knows the width it reads the histogram with; the config's value wins."""
        for section in self.sections:
            if section.get("mode") == "lat" and section.get(LATENCY_BUCKET_KEY) is None:
                section.set(LATENCY_BUCKET_KEY, str(size))

    # --- DPDK runtime directory and the embedded lab ------------------------

    def _one_sender_per_port(self) -> None:
        """Each task sending on a port takes its own TX queue there; an af_packet vdev
        has one (PROX would panic: "Too many TX queues"). More queue pairs would not
        help: frames spread over the RX queues too, and only polled ones are read."""
        names, senders = self.ports(), {}
        for section in self.sections:
            value = section.get("tx port") if section.name.startswith("core") else None
            for port in filter(None, (p.strip() for p in (value or "").split(","))):
                number = names.get(port, int(port) if port.isdigit() else None)
                if number in senders:
                    item = next(i for i in section.items if i.key == "tx port")
                    raise self.error(
                        f"port {port} is already sent on by [{senders[number].name}] (task "
                        f"{senders[number].get('task', '0')}); on af_packet ports (the embedded "
                        "lab) each port has one TX queue, so one task may send on it: use one "
                        "task that sends on both ports, as samples/prox/configs/*-lab.cfg do",
                        section, item)
                senders[number] = section

    def _eal_options(self) -> Section:
        eal = self.section("eal options")
        if eal is None:
            eal = Section("eal options", 0)
            self.sections.insert(0, eal)
        return eal

    def file_prefix(self) -> str | None:
        """The DPDK file prefix the config asks for (its runtime dir is /var/run/dpdk/<it>)."""
        eal = self.section("eal options")
        match = _FILE_PREFIX.search((eal.get("eal") or "") if eal else "")
        return match.group(1) if match else None

    def use_file_prefix(self, file_prefix: str) -> str:
        """Give PROX ``file_prefix`` unless the config names one; returns the one in force.

        Without one DPDK uses 'rte', which another DPDK application may share.
        """
        existing = self.file_prefix()
        if existing:
            return existing
        eal = self._eal_options()
        eal.set("eal", " ".join(filter(None, [eal.get("eal"), f"--file-prefix {file_prefix}"])))
        return file_prefix


    def use_pci_devices(self, pcis: list[str]) -> None:
        """The EAL takes these NICs only (``-a``), unless the config names its own."""
        eal = self._eal_options()
        existing = eal.get("eal") or ""
        if not pcis or re.search(r"(^|\s)(-a|-w|--allow|--pci-whitelist|--no-pci)\b",
                                 existing):
            return
        eal.set("eal", " ".join(filter(None, [existing, *(f"-a {p}" for p in pcis)])))

    def unlink_hugepages(self) -> None:
        """EAL unlinks its hugepage files once mapped (``--huge-unlink``): the pages go
        back when PROX ends, also when it is killed, and no file stays behind."""
        eal = self._eal_options()
        existing = eal.get("eal") or ""
        if eal.get("no-huge") or re.search(r"--(huge-unlink|in-memory|no-huge)\b", existing):
            return
        eal.set("eal", " ".join(filter(None, [existing, "--huge-unlink"])))

    def use_af_packet(self, interfaces: dict[int, str], file_prefix: str,
                      frame_size: int = 1024) -> None:
        """Ports become af_packet vdevs on the node's kernel interfaces (no NIC, no hugepages).

        What real PROX needs on veth: no-huge, no-pci, a vdev per port, its own
        file prefix, and ``lsc=no`` because af_packet has no link interrupt.
        """
        eal = self._eal_options()
        eal.set("no-huge", "yes")
        eal.set("no-pci", "yes")
        if eal.get("-m") is None:  # MB without hugepages; gen tasks' flow tables need more
            has_gen = any(s.get("mode") == "gen" for s in self.sections)
            eal.set("-m", "4096" if has_gen else "1024")
        self._one_sender_per_port()
        vdevs = [f"--vdev net_af_packet{n},iface={interfaces[n]},framesz={frame_size},"
                 "framecnt=4096,qdisc_bypass=1" for n in self.port_numbers() if n in interfaces]
        existing = eal.get("eal") or ""
        eal.set("eal", " ".join(filter(None, [existing, *vdevs])))
        self.use_file_prefix(file_prefix)
        for section in self.sections:
            if re.match(r"^port\s+\d+$", section.name) and section.get("lsc") is None:
                section.set("lsc", "no")


_FILE_PREFIX = re.compile(r"--file-prefix[=\s]+(\S+)")


def _section_cores(name: str) -> list[int] | None:
    """The lcores of a ``[core ...]`` section: ``core 1``, ``core 1-4``, ``core 2,5-6``
    (None for another section or notation, e.g. hyper-threads ``core 1h``)."""
    match = _CORE_LIST.match(name)
    if not match or name.endswith("h"):
        return None
    return sorted(cpu_set(match.group(1)))


def parameters_lua(ports: dict[int, PortAddresses]) -> str:
    """NSB's ``prox_generate_parameter``: the topology as Lua globals for route tables."""
    lines = ["-- generated by nsb from the topology: one entry per DPDK port"]
    for number, port in ports.items():
        values = {"src_mac": port.mac, "dst_mac": port.peer_mac, "tester_mac": port.peer_mac,
                  "src_ip": port.ip.split("/")[0], "dst_ip": port.peer_ip.split("/")[0]}
        lines += [f'{key}{number} = "{value}"' for key, value in values.items() if value]
    return "\n".join(lines) + "\n"
