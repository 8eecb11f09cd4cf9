"""trafgen packet configurations: Ethernet/IPv4/UDP frames with N flows.

trafgen sends the packets of a configuration in round-robin order, so a frame
mix is its cycle of packets written one after the other."""

from __future__ import annotations

import ipaddress

ETH_IP_UDP_HEADERS_B = 14 + 20 + 8
FCS_B = 4
BASE_UDP_PORT = 1024
MAX_FLOWS = 65536 - BASE_UDP_PORT


def packet_config(frame_size: int, src_mac: str, dst_mac: str, src_ip: str, dst_ip: str,
                  flows: int = 1, dst_port: int = 1024) -> str:
    """One trafgen packet of ``frame_size`` bytes (FCS included in the size, not sent).

    Flows differ in UDP source port and in the low 16 bits of the source IP,
    changed together so there are exactly ``flows`` distinct 5-tuples.
    """
    if frame_size < 64:
        raise ValueError(f"frame size {frame_size} is below the Ethernet minimum of 64")
    if not 1 <= flows <= MAX_FLOWS:
        raise ValueError(f"flows must be between 1 and {MAX_FLOWS}, got {flows}")
    fill = frame_size - FCS_B - ETH_IP_UDP_HEADERS_B
    src_low = int(ipaddress.IPv4Address(src_ip)) & 0xFFFF
    if flows > 1:
        first = min(src_low, 0xFFFF - (flows - 1))
        base_ip = str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(src_ip)) & 0xFFFF0000))
        ip_fields = f"sa={base_ip}, sa[2:2]=dinc({first}, {first + flows - 1})"
        udp_src = f"sp=dinc({BASE_UDP_PORT}, {BASE_UDP_PORT + flows - 1})"
    else:
        ip_fields = f"sa={src_ip}"
        udp_src = f"sp={BASE_UDP_PORT}"
    return (
        "{\n"
        f"  eth(da={dst_mac}, sa={src_mac}, type=0x0800),\n"
        f"  ipv4({ip_fields}, da={dst_ip}, ttl=64),\n"
        f"  udp({udp_src}, dp={dst_port}),\n"
        f"  fill(0x00, {fill})\n"
        "}\n"
    )


def mix_config(sequence: tuple[int, ...], *args, **kwargs) -> str:
    """One packet per entry of a mix's cycle, in the order they are to be sent."""
    by_size = {size: packet_config(size, *args, **kwargs) for size in set(sequence)}
    return "".join(by_size[size] for size in sequence)
