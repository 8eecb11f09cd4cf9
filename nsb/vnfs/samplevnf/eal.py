"""The EAL of a SampleVNF (DPDK 17.05): its ports, memory and runtime files.

NICs are taken by PCI address (``-w``: 17.05's allow-list), kernel interfaces
through af_packet vdevs. An af_packet port opens one socket per queue pair
and the kernel spreads the frames over all of them, so a port gets exactly the
queue pairs its pipelines use: a socket no pipeline reads would take frames
until its ring is full (512 frames) and lose them.
"""

from __future__ import annotations

from dataclasses import dataclass

from nsb.vnfs.samplevnf.ports import PortLayout


@dataclass(frozen=True)
class Memory:
    huge_dir: str
    socket_mem_mb: int
    file_prefix: str


def af_packet(number: int, iface: str, qpairs: int = 1) -> str:
    vdev = f"net_af_packet{number},iface={iface}"
    return vdev + (f",qpairs={qpairs}" if qpairs > 1 else "")


def config_section(layout: PortLayout, memory: Memory, qpairs: dict[int, int]) -> str:
    """The ``[EAL]`` section of a pipeline config."""
    lines = [f"w = {p.iface.pci}" for p in layout.ports if p.iface.is_dpdk_port]
    lines += [f"vdev = {af_packet(p.number, p.name, qpairs.get(p.number, 1))}"
              for p in layout.ports if not p.iface.is_dpdk_port]
    if not any(p.iface.is_dpdk_port for p in layout.ports):
        lines.append("no_pci = yes")
    lines += [f"huge_dir = {memory.huge_dir}", f"socket_mem = {memory.socket_mem_mb}",
              f"file_prefix = {memory.file_prefix}"]
    return "[EAL]\n" + "".join(f"{line}\n" for line in lines) + "\n"


def arguments(layout: PortLayout, memory: Memory, lcores: str) -> list[str]:
    """The EAL options of a program that takes them on its command line (UDP_Replay)."""
    argv = ["-l", lcores, "-n", "4"]
    nics = [p.iface.pci for p in layout.ports if p.iface.is_dpdk_port]
    argv += [a for pci in nics for a in ("-w", pci)] or ["--no-pci"]
    for port in layout.ports:
        if not port.iface.is_dpdk_port:
            argv += ["--vdev", af_packet(port.number, port.name)]
    return argv + ["--huge-dir", memory.huge_dir, "--socket-mem", str(memory.socket_mem_mb),
                   "--file-prefix", memory.file_prefix]


def runtime_files(file_prefix: str) -> list[str]:
    """What DPDK 17.05 leaves for a file prefix (newer DPDKs: /var/run/dpdk/<prefix>)."""
    return [f"/var/run/.{file_prefix}_config", f"/var/run/.{file_prefix}_hugepage_info",
            f"/var/run/dpdk/{file_prefix}"]
