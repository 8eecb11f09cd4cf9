"""Read a DPDK application's counters through its telemetry socket.

The client runs on the node (through its executor) so it works the same in a
namespace, locally or over SSH; it needs only python3 on the node.
"""

from __future__ import annotations

import json

from nsb.errors import RunError
from nsb.executors.base import Executor

RUNTIME_DIR = "/var/run/dpdk"

_CLIENT = r"""
import json, socket, sys
path = sys.argv[1]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
sock.settimeout(5)
sock.connect(path)
info = json.loads(sock.recv(1024))
out = {}
for command in sys.argv[2:]:
    sock.send(command.encode())
    reply = json.loads(sock.recv(info.get("max_output_len", 16384)))
    out[command] = next(iter(reply.values()), None) if isinstance(reply, dict) else reply
print(json.dumps(out))
"""


def socket_path(file_prefix: str) -> str:
    return f"{RUNTIME_DIR}/{file_prefix}/dpdk_telemetry.v2"


def remove_runtime_dir(executor: Executor, file_prefix: str) -> None:
    """The DPDK application's /var/run/dpdk/<file-prefix>, which it leaves behind."""
    executor.run(["rm", "-rf", f"{RUNTIME_DIR}/{file_prefix}"], check=False)


def query(executor: Executor, file_prefix: str, commands: list[str],
          timeout_s: float = 60) -> dict:
    """Send telemetry ``commands`` (e.g. ``/ethdev/stats,0``); replies keyed by command.

    An answer takes milliseconds on a server; the timeout is for VMs under emulation
    (nested TCG), where starting python3 takes tens of seconds. -I -S: no site
    packages, no environment, the fastest start."""
    result = executor.run(["python3", "-I", "-S", "-c", _CLIENT, socket_path(file_prefix),
                           *commands],
                          timeout=timeout_s, check=False)
    if result.returncode != 0:
        raise RunError(f"{executor.name}: DPDK telemetry query {commands} failed: "
                       f"{result.stderr.strip().splitlines()[-1:] or result.stdout}")
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        raise RunError(f"{executor.name}: DPDK telemetry returned no JSON: "
                       f"{result.stdout[:200]!r}") from None


# ethdev counters as a port's counts (nsb.port_counts): received, sent, drops by kind
COUNTER_KINDS = {"ipackets": "rx", "opackets": "tx", "imissed": "imissed",
                 "rx_nombuf": "rx_nombuf", "ierrors": "ierrors", "oerrors": "oerrors"}


def port_stats_kpis(reply: dict, ports: list[int]) -> dict[str, float]:
    """Flatten ``/ethdev/stats,N`` replies into ``port<N>_<counter>`` KPIs."""
    kpis: dict[str, float] = {}
    for port in ports:
        stats = reply.get(f"/ethdev/stats,{port}")
        if not isinstance(stats, dict):
            continue
        for key in ("ipackets", "opackets", "ibytes", "obytes", "imissed", "ierrors",
                    "oerrors", "rx_nombuf"):
            if key in stats:
                kpis[f"port{port}_{key}"] = float(stats[key])
    return kpis


def ports_not_forwarding(reply: dict, ports: dict[int, str]) -> str:
    """From ``/ethdev/info,N`` and ``/ethdev/link_status,N`` replies: which of
    ``ports`` (number -> interface name) are not started or have no link ('' if none)."""
    missing = []
    for port, name in ports.items():
        info = reply.get(f"/ethdev/info,{port}")
        link = reply.get(f"/ethdev/link_status,{port}")
        if not isinstance(info, dict):
            missing.append(f"port {port} ({name}) to exist")
        elif not info.get("dev_started"):
            missing.append(f"port {port} ({name}) to start")
        elif not isinstance(link, dict) or link.get("status") != "UP":
            missing.append(f"port {port} ({name}) link up")
    return ", ".join(missing)


def port_xstats_kpis(reply: dict, ports: list[int], names: list[str]) -> dict[str, float]:
    """The extended counters ``names`` from ``/ethdev/xstats,N`` replies, as
    ``port<N>_<name>`` (a counter the port does not have is left out)."""
    kpis: dict[str, float] = {}
    for port in ports:
        xstats = reply.get(f"/ethdev/xstats,{port}")
        if not isinstance(xstats, dict):
            continue
        for name in names:
            if isinstance(xstats.get(name), int | float):
                kpis[f"port{port}_{name}"] = float(xstats[name])
    return kpis


def vnf_kpis(port_kpis: dict[str, float], ports: list[int]) -> dict[str, float]:
    """NSB's VNF KPIs from ``port_stats_kpis``: frames in and forwarded over all ports,
    and dropped (received and not sent, plus missed on receive)."""
    def total(key: str) -> float:
        return sum(port_kpis.get(f"port{p}_{key}", 0.0) for p in ports)

    packets_in, packets_fwd = total("ipackets"), total("opackets")
    return {"packets_in": packets_in, "packets_fwd": packets_fwd,
            "packets_dropped": max(0.0, packets_in - packets_fwd) + total("imissed")}
