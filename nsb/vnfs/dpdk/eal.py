"""The EAL half of a DPDK application's command line, shared by the DPDK programs nsb
starts (testpmd, l3fwd, l2fwd): which ports it takes and how, its memory and lcores,
and what its node must offer for them.

Each port is what its interface is: a NIC bound to a DPDK driver by its PCI address
(``-a``, hugepages), a vhost-user socket served by a virtio_user vdev (shared
hugepages), a memif vdev, else an af_packet vdev on the kernel interface.
"""

from __future__ import annotations

from dataclasses import dataclass

from nsb.contexts.base import Endpoint, vhost_socket
from nsb.nodes import platform
from nsb.vnfs import hugepages


def port_order(interfaces: list) -> list:
    """The interfaces in the order DPDK numbers its ports: NICs first, in PCI address
    order (the EAL probes the PCI bus before virtual devices), then the vdevs in the
    order given."""
    nics = sorted((i for i in interfaces if i.is_dpdk_port), key=lambda i: i.pci)
    return nics + [i for i in interfaces if not i.is_dpdk_port]


def is_kernel_port(iface) -> bool:
    """A kernel interface the program reads through an af_packet vdev."""
    return not (iface.is_dpdk_port or iface.is_vhostuser or iface.is_memif)


def needs_hugepages(interfaces: list) -> bool:
    """NICs (DMA) and vhost-user (shared memory) need hugepages; the rest runs on
    ordinary memory (--no-huge)."""
    return any(i.is_vhostuser or i.is_dpdk_port for i in interfaces)


@dataclass(frozen=True)
class Eal:
    """What the EAL options of one program are made of."""

    interfaces: list  # in port order
    lcores: str  # EAL -l
    file_prefix: str
    task_id: str
    node: str
    memory_mb: int  # -m, unless socket_mem (with hugepages)
    socket_mem: str = ""
    memory_channels: int = 0
    af_packet_framecnt: int = 4096
    queues: int = 1  # queue pairs of each vdev (af_packet qpairs, virtio_user queues)

    def args(self) -> list[str]:
        """EAL options, ending with one vdev per port that is not a NIC."""
        huge = needs_hugepages(self.interfaces)
        # vhost-user shares the memory with the switch and NICs DMA into it: hugepages
        memory = ["--in-memory", "--single-file-segments"] if huge else ["--no-huge"]
        nics = [i.pci for i in self.interfaces if i.is_dpdk_port]
        devices = [a for pci in nics for a in ("-a", pci)] if nics else ["--no-pci"]
        size = ["--socket-mem", self.socket_mem] if self.socket_mem and huge \
            else ["-m", str(self.memory_mb)]
        channels = ["-n", str(self.memory_channels)] if self.memory_channels else []
        argv = [*memory, *devices, *size, *channels, "-l", self.lcores,
                "--file-prefix", self.file_prefix, "--log-level", "*:notice"]
        for port, iface in enumerate(self.interfaces):
            if not iface.is_dpdk_port:  # a NIC's number is its place in PCI order
                argv += ["--vdev", self.vdev(port, iface)]
        return argv

    def vdev(self, port: int, iface) -> str:
        if iface.is_vhostuser:
            socket = vhost_socket(self.task_id, Endpoint(self.node, iface.name))
            return (f"net_virtio_user{port},path={socket},server=1,queues={self.queues},"
                    f"mac={iface.mac}")
        if iface.is_memif:
            role = "server" if iface.serves_socket else "client"
            return (f"net_memif{port},role={role},id=0,socket={iface.socket},"
                    f"socket-abstract=no,mac={iface.mac}")
        qpairs = f",qpairs={self.queues}" if self.queues > 1 else ""
        return (f"net_af_packet{port},iface={iface.name},blocksz=4096,framesz=2048,"
                f"framecnt={self.af_packet_framecnt},qdisc_bypass=1{qpairs}")


def preflight(facts: dict, lcores: str, hugepages_mb: int,
              given_mb: int | None = None) -> list[str]:
    """Lcores the node has; for hugepages (``hugepages_mb`` > 0), the memory to add
    them, or, where the node was handed its hugepages (``given_mb``: a pod's), that
    they are enough. One line per problem."""
    problems = []
    online = platform.cpu_set(facts.get("online_cpus", ""))
    wanted = platform.cpu_set(lcores)
    if not wanted:
        problems.append(f"lcores '{lcores}' name no CPU (write e.g. 0-2 or 0,2)")
    elif online and not wanted <= online:
        problems.append(f"lcores {lcores}: the node has no CPU "
                        f"{','.join(map(str, sorted(wanted - online)))} (online CPUs: "
                        f"{facts['online_cpus']})")
    if hugepages_mb <= 0:
        return problems
    if given_mb is not None:
        if hugepages_mb > given_mb:
            problems.append(f"needs {hugepages_mb} MB of hugepages (memory_mb/socket_mem); "
                            f"its pod was given {given_mb} MB (resources.limits "
                            "hugepages-2Mi or hugepages-1Gi)")
        return problems
    # no hugetlbfs mount needed: --in-memory takes its pages through memfd
    needed = hugepages.pages_for(hugepages_mb) + 16
    can = facts.get("hugepages_free", 0) + facts.get("mem_available_kb", 0) // 2048
    if "mem_available_kb" in facts and can < needed:
        problems.append(f"needs {needed} hugepages of 2 MB (memory_mb/socket_mem); the "
                        f"node has {facts.get('hugepages_free', 0)} free and memory for "
                        f"{can - facts.get('hugepages_free', 0)} more")
    return problems
