"""Platform facts of a node: what the results ran on, as reports print it."""

from __future__ import annotations

import json
import logging

from nsb.executors.base import Executor

LOG = logging.getLogger(__name__)

_LSCPU_FIELDS = {
    "Model name:": "cpu_model", "CPU(s):": "cpus", "Socket(s):": "sockets",
    "Core(s) per socket:": "cores_per_socket", "Thread(s) per core:": "threads_per_core",
    "NUMA node(s):": "numa_nodes", "Architecture:": "architecture",
}
_VERSIONS = {
    "dpdk": ["dpkg-query", "-W", "-f=${Version}", "dpdk"],
    "netsniff_ng": ["dpkg-query", "-W", "-f=${Version}", "netsniff-ng"],
    "openvswitch": ["dpkg-query", "-W", "-f=${Version}", "openvswitch-switch"],
}


def collect(executor: Executor) -> dict:
    """CPU, memory, hugepages, kernel and tool versions; missing facts are left out."""
    facts: dict = {}
    facts["hostname"] = _out(executor, ["hostname"])
    facts["kernel"] = _out(executor, ["uname", "-r"])
    facts["kernel_cmdline"] = _out(executor, ["cat", "/proc/cmdline"])
    lscpu = _out(executor, ["lscpu", "-J"])
    if lscpu:
        try:
            for entry in json.loads(lscpu).get("lscpu", []):
                key = _LSCPU_FIELDS.get(entry.get("field"))
                if key and key not in facts:
                    facts[key] = _number(entry.get("data"))
        except json.JSONDecodeError:
            LOG.debug("lscpu -J gave no JSON")
    meminfo = _out(executor, ["cat", "/proc/meminfo"])
    for line in meminfo.splitlines():
        name, _, value = line.partition(":")
        if name in ("MemTotal", "HugePages_Total", "HugePages_Free", "Hugepagesize"):
            facts[_snake(name)] = _number(value.replace("kB", "").strip())
    if "mem_total" in facts:
        facts["memory_gib"] = round(facts.pop("mem_total") / 1024 / 1024, 1)
    versions = {}
    for name, argv in _VERSIONS.items():
        version = _out(executor, argv)
        if version:
            versions[name] = version
    facts["versions"] = versions
    return facts


def _out(executor: Executor, argv: list[str]) -> str:
    try:
        result = executor.run(argv, timeout=10, check=False)
    except Exception as exc:  # a fact we cannot read is not a reason to stop the run
        LOG.debug("platform fact %s unavailable: %s", argv[0], exc)
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def _number(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return text


def _snake(name: str) -> str:
    out = ""
    for index, char in enumerate(name):
        if char.isupper() and index and not name[index - 1].isupper():
            out += "_"
        out += char.lower()
    return out.replace("huge_pages", "hugepages")
