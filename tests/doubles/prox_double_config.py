"""PROX .cfg parsing and validation for the PROX test double (tests/doubles/prox_double.py).

Part of the PROX test double; stdlib only. ``parse_cfg`` reads a PROX .cfg file
(ports, cores/tasks, ``[variables]`` and ``-w`` variables, ``[lua] dofile``) into the
model's ``Port``s and ``Task``s and fails, with ``ConfigError``, on the same kinds of
config errors as PROX (such as undefined variables, leftover Yardstick ``@@``
placeholders, missing lua files, unknown ports, duplicate tasks, bad ``pkt inline``).
``dut_from_env`` reads the simulated DUT from ``NSB_PROX_DOUBLE_DUT``
(``capacity_pps=..,capacity_gbps=..,latency_us=..``).
"""

from __future__ import annotations

import os
import re

if __package__:  # imported as tests.doubles.prox_double_config
    from .prox_double_model import Dut, Port, Task
else:  # run from the prox_double.py script: its directory is sys.path[0]
    from prox_double_model import Dut, Port, Task


class ConfigError(Exception):
    pass



VAR_RE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def _subst(value: str, variables: dict[str, str], where: str) -> str:
    def repl(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name not in variables:
            raise ConfigError(f"error: undefined variable ${name} in {where}")
        return variables[name]

    return VAR_RE.sub(repl, value)


def int_list(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:s\d+h?)?(?:-(\d+)(?:s\d+h?)?)?", part)
        if not m:
            raise ValueError(part)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        out.extend(range(lo, hi + 1))
    return out


def parse_cfg(path: str, variables: dict[str, str]) -> tuple[dict[int, Port], list[Task]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ConfigError(f"error: cannot open config file {path}: {e.strerror}") from e
    base_dir = os.path.dirname(os.path.abspath(path))
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and "]" in line:
            name = _subst(line[1 : line.index("]")].strip(), variables, line)
            sections.append((name, []))
            continue
        if not sections:
            continue
        sec_name, entries = sections[-1]
        where = f"[{sec_name}]"
        if sec_name == "lua":
            _check_placeholder(line, where)
            for m in re.finditer(r"""dofile\(\s*["']([^"']+)["']\s*\)""", line):
                lua = os.path.join(base_dir, m.group(1))  # absolute paths stay as they are
                if not os.path.isfile(lua):
                    raise ConfigError(f"error: cannot open {lua}")
            continue
        line = line.split(";", 1)[0].strip()
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        value = _subst(value, variables, f"{where} {key}")
        _check_placeholder(value, f"{where} {key}")
        if sec_name == "variables" and key.startswith("$"):
            variables[key[1:]] = value
        entries.append((key, value))
    return _build(sections)


def _check_placeholder(text: str, where: str) -> None:
    """Yardstick fills @@name placeholders; one left over means a broken config."""
    if m := re.search(r"@@\w*", text):
        raise ConfigError(f"error: unresolved placeholder {m.group(0)} in {where}")


def _build(sections: list[tuple[str, list[tuple[str, str]]]]) -> tuple[dict[int, Port], list[Task]]:
    ports: dict[int, Port] = {}
    for name, entries in sections:
        if m := re.fullmatch(r"port\s+(\d+)", name):
            num = int(m.group(1))
            ports[num] = Port(num, dict(entries).get("name", f"port{num}"))
    by_name = {p.name: p.num for p in ports.values()}

    def port_ids(value: str, where: str) -> list[int]:
        ids = []
        for item in filter(None, (v.strip() for v in value.split(","))):
            if item in by_name:
                ids.append(by_name[item])
            elif item.isdigit() and int(item) in ports:
                ids.append(int(item))
            else:
                raise ConfigError(f"error: unknown port '{item}' in {where}")
        return ids

    tasks: dict[tuple[int, int], Task] = {}
    for name, entries in sections:
        m = re.fullmatch(r"core\s+(.+)", name)
        if not m:
            continue
        where = f"[{name}]"
        try:
            cores = int_list(m.group(1))
        except ValueError as e:
            raise ConfigError(f"error: invalid core specification in {where}") from e
        kv = dict(entries)
        for core in cores:
            t = Task(core=core, task=int(kv.get("task", "0")), name=kv.get("name", ""),
                     mode=kv.get("mode", "nop"))
            if (core, t.task) in tasks:
                raise ConfigError(f"error: core {core} task {t.task} defined twice")
            t.tx_ports = port_ids(kv.get("tx port", ""), f"{where} tx port")
            t.rx_ports = port_ids(kv.get("rx port", ""), f"{where} rx port")
            if "pkt inline" in kv:
                data = kv["pkt inline"].split()
                bad = [b for b in data if not re.fullmatch(r"[0-9a-fA-F]{2}", b)]
                if bad or not data:
                    raise ConfigError(f"error: invalid byte '{bad[0] if bad else ''}' in "
                                      f"{where} pkt inline (expected hex bytes)")
                t.pkt_size = len(data)
            if "pkt size" in kv:
                t.pkt_size = int(kv["pkt size"])
            if "bps" in kv:
                t.speed = int(float(kv["bps"])) / 12_500_000
            t.bucket_size = int(kv.get("bucket size", "11"))
            if t.mode == "gen" and not t.tx_ports:
                raise ConfigError(f"error: gen task in {where} needs a tx port")
            tasks[(core, t.task)] = t
    return ports, list(tasks.values())


def dut_from_env(spec: str) -> Dut:
    """The DUT from ``NSB_PROX_DOUBLE_DUT``: ``key=value`` items, comma-separated."""
    dut = Dut()
    for item in filter(None, (s.strip() for s in spec.split(","))):
        key, _, value = item.partition("=")
        if key.strip() not in ("capacity_pps", "capacity_gbps", "latency_us"):
            raise ConfigError(f"error: NSB_PROX_DOUBLE_DUT: unknown key '{key.strip()}'")
        setattr(dut, key.strip(), float(value))
    return dut
