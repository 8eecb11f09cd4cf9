"""Platform facts of a node: what the results ran on, as reports print it."""

from __future__ import annotations

import json
import logging
import re

from nsb.executors.base import Executor

LOG = logging.getLogger(__name__)

_LSCPU_FIELDS = {
    "Model name:": "cpu_model", "CPU(s):": "cpus", "Socket(s):": "sockets",
    "Core(s) per socket:": "cores_per_socket", "Thread(s) per core:": "threads_per_core",
    "NUMA node(s):": "numa_nodes", "Architecture:": "architecture",
}
_PCI = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
# a virtio NIC's device link names the virtio device; its parent is the PCI one
_PCI_OF_NETDEV = ('d=$(readlink -f "/sys/class/net/$1/device") || exit 0; '
                  'case "$(basename "$d")" in virtio*) d=$(dirname "$d");; esac; basename "$d"')
_MEMINFO = {"MemTotal": "mem_total", "MemAvailable": "mem_available_kb",
            "HugePages_Total": "hugepages_total",
            "HugePages_Free": "hugepages_free", "Hugepagesize": "hugepagesize"}
_VERSIONS = {
    "dpdk": ["dpkg-query", "-W", "-f=${Version}", "dpdk"],
    "netsniff_ng": ["dpkg-query", "-W", "-f=${Version}", "netsniff-ng"],
    "openvswitch": ["dpkg-query", "-W", "-f=${Version}", "openvswitch-switch"],
}


def collect(executor: Executor, node=None) -> dict:
    """CPU, memory, hugepages, kernel, NICs and tool versions; missing facts are left out."""
    facts: dict = {}
    facts["hostname"] = command_output(executor, ["hostname"])
    facts["os_release"] = command_output(executor, [
        "sh", "-c", '. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"'])
    facts["kernel"] = command_output(executor, ["uname", "-r"])
    facts["kernel_cmdline"] = command_output(executor, ["cat", "/proc/cmdline"])
    lscpu = command_output(executor, ["lscpu", "-J"])
    if lscpu:
        try:
            for entry in json.loads(lscpu).get("lscpu", []):
                field = entry.get("field") or ""
                key = _LSCPU_FIELDS.get(field)
                if key and key not in facts:
                    facts[key] = _number(entry.get("data"))
                numa = re.match(r"NUMA (node\d+) CPU\(s\):", field)
                if numa:  # which CPUs each NUMA node has, e.g. {"node0": "0-17,36-53"}
                    facts.setdefault("numa_layout", {})[numa.group(1)] = entry.get("data")
        except json.JSONDecodeError:
            LOG.debug("lscpu -J gave no JSON")
    facts.update(memory(executor))
    if "mem_total" in facts:
        facts["memory_gib"] = round(facts.pop("mem_total") / 1024 / 1024, 1)
    facts["isolated_cpus"] = command_output(executor, ["cat", "/sys/devices/system/cpu/isolated"])
    facts["online_cpus"] = command_output(executor, ["cat", "/sys/devices/system/cpu/online"])
    if node is not None:
        facts["nics"] = {iface.name: nic_facts(executor, iface) for iface in
                         node.interfaces.values()}
    versions = {}
    for name, argv in _VERSIONS.items():
        version = command_output(executor, argv)
        if version:
            versions[name] = version
    facts["versions"] = versions
    facts.update(getattr(executor, "facts", None) or {})  # what the context knows (a pod's)
    return facts


def memory(executor: Executor) -> dict:
    """mem_total (kB) and the hugepage counts from /proc/meminfo."""
    facts = {}
    for line in command_output(executor, ["cat", "/proc/meminfo"]).splitlines():
        name, _, value = line.partition(":")
        if name in _MEMINFO:
            facts[_MEMINFO[name]] = _number(value.replace("kB", "").strip())
    return facts


def nic_facts(executor: Executor, iface) -> dict:
    """PCI address, driver, NUMA node and MAC of one interface.

    A NIC bound to DPDK has no kernel netdev: it is found by its PCI address.
    """
    pci = iface.pci or command_output(executor, ["sh", "-c", _PCI_OF_NETDEV, "sh", iface.name])
    facts = {"mac": iface.mac, "pci": pci if re.match(_PCI, pci) else ""}
    base = f"/sys/bus/pci/devices/{facts['pci']}" if facts["pci"] else ""
    if base:
        driver = command_output(executor, ["readlink", "-f", f"{base}/driver"])
        facts["driver"] = driver.rsplit("/", 1)[-1] if driver else ""
        facts["numa_node"] = _number(command_output(executor, ["cat", f"{base}/numa_node"]))
    else:
        facts["driver"] = iface.driver or command_output(executor, [
            "sh", "-c", 'ethtool -i "$1" 2>/dev/null | sed -n "s/^driver: //p"', "sh", iface.name])
    firmware = command_output(executor, [
        "sh", "-c", 'ethtool -i "$1" 2>/dev/null | sed -n "s/^firmware-version: //p"', "sh",
        iface.name])
    if firmware and firmware.lower() not in ("n/a", ""):
        facts["firmware"] = firmware
    return facts


def command_output(executor: Executor, argv: list[str]) -> str:
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


def cpu_set(cpu_list: str) -> set[int]:
    """A kernel CPU list ("0-3,8,10-11") as a set of CPU numbers ('' is empty)."""
    cpus: set[int] = set()
    for part in filter(None, (p.strip() for p in (cpu_list or "").split(","))):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            cpus.update(range(int(low), int(high or low) + 1))
    return cpus
