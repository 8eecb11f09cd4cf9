"""The ``trex_cfg.yaml`` of one TRex server, from the generator node's ports.

Each port is whatever its interface is: a NIC by PCI address (TRex binds and
drives it with DPDK, as on NSB's pods), a kernel interface (an af_packet port), a
memif or a vhost-user socket (DPDK vdevs). An af_packet port gets a receive ring of
``af_packet_framecnt`` frames: with DPDK's default (512, what a bare interface name
gets) TRex on a shared core dropped 0.06 % of the frames at 100 kpps and 5 % at
300 kpps on a veth pair, with 4096 none up to the ~280 kpps it can send. Per
instance the RPC/publisher ports and the DPDK file prefix differ, so that two
generators never collide. On a node with few CPUs only TRex's ``low_end`` mode
starts (master, RX and data plane on one core).
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from nsb.nodes.node import Interface

LOW_END_BELOW_CPUS = 4  # with fewer, TRex cannot give master, latency and data plane a core each


@dataclass(frozen=True)
class ServerSettings:
    prefix: str  # DPDK --file-prefix: /var/run/dpdk/<prefix>
    rpc_port: int
    pub_port: int
    low_end: bool
    low_end_core: int = 0
    master_core: int | None = None
    latency_core: int | None = None
    worker_cores: tuple[int, ...] = ()
    af_packet_framecnt: int = 4096  # frames in an af_packet port's receive ring


def port_kind(iface: Interface) -> str:
    if iface.is_memif:
        return "memif"
    if iface.is_vhostuser:
        return "vhost-user"
    return "pci" if iface.pci else "kernel"


def interface_entry(number: int, iface: Interface, vhost_socket: str = "",
                    af_packet_framecnt: int = 4096) -> str:
    """How trex_cfg.yaml names port ``number``."""
    kind = port_kind(iface)
    if kind == "pci":
        return iface.pci
    if kind == "memif":  # TRex's DPDK still says master/slave
        role = "master" if iface.serves_socket else "slave"
        return (f"--vdev=net_memif{number},id=0,role={role},socket={iface.socket},"
                "socket-abstract=no,rsize=14")
    if kind == "vhost-user":
        return f"--vdev=net_virtio_user{number},path={vhost_socket},server=1,queues=1"
    # a bare name would be TRex's own --vdev=net_af_packetN,iface=<name>, small ring
    return (f"--vdev=net_af_packet{number},iface={iface.name},blocksz=4096,framesz=2048,"
            f"framecnt={af_packet_framecnt}")


def render(ports: list[Interface], settings: ServerSettings,
           vhost_sockets: dict[str, str] | None = None) -> str:
    """The config file's text (a one-element list, as TRex reads it)."""
    vhost_sockets = vhost_sockets or {}
    cfg: dict = {
        "version": 2,
        "port_limit": len(ports),
        "interfaces": [interface_entry(n, i, vhost_sockets.get(i.name, ""),
                                       settings.af_packet_framecnt)
                       for n, i in enumerate(ports)],
        "prefix": settings.prefix,
        "zmq_rpc_port": settings.rpc_port,
        "zmq_pub_port": settings.pub_port,
        # layer 2 mode: frames go to the MAC of what the port is cabled to, no ARP
        "port_info": [{"src_mac": i.mac, "dest_mac": i.peer_mac or i.mac} for i in ports],
    }
    if any(i.is_vhostuser for i in ports):
        cfg["port_mtu"] = max(i.mtu for i in ports)  # virtio_user needs it (Rx scatter)
    if settings.low_end:
        cfg.update(low_end=True, low_end_core=settings.low_end_core)
    elif settings.master_core is not None:
        cfg["platform"] = {
            "master_thread_id": settings.master_core,
            "latency_thread_id": settings.latency_core if settings.latency_core is not None
            else settings.master_core + 1,
            "dual_if": [{"socket": 0, "threads": list(settings.worker_cores)}
                        for _ in range(len(ports) // 2)],
        }
    return yaml.safe_dump([cfg], sort_keys=False)
