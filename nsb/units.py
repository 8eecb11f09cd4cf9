"""Rate conversions used everywhere: the code speaks pps, reports add Mbps and %.

Frame sizes include the FCS; on the wire each frame also takes 20 bytes of
preamble, start delimiter and inter-frame gap. A frame mix (IMIX) counts
with its mean frame size.
"""

from nsb.frames import Frame, avg_size

WIRE_OVERHEAD_B = 20


def line_rate_pps(frame_size: Frame, speed_gbps: float, ports: int = 1) -> float:
    """Maximum frames per second ``ports`` ports of ``speed_gbps`` can carry."""
    return ports * speed_gbps * 1e9 / 8 / (avg_size(frame_size) + WIRE_OVERHEAD_B)


def pps_to_mbps(rate_pps: float, frame_size: Frame) -> float:
    """Wire rate in Mbit/s, counting preamble and gap (the HPE/Intel report formula)."""
    return (avg_size(frame_size) + WIRE_OVERHEAD_B) * 8 * rate_pps / 1e6


def pct_to_pps(pct: float, frame_size: Frame, speed_gbps: float, ports: int = 1) -> float:
    return pct / 100.0 * line_rate_pps(frame_size, speed_gbps, ports)


def pps_to_pct(rate_pps: float, frame_size: Frame, speed_gbps: float, ports: int = 1) -> float:
    return 100.0 * rate_pps / line_rate_pps(frame_size, speed_gbps, ports)


def pps_text(rate_pps: float) -> str:
    """``1.23 Mpps``, ``812 kpps``, ``950 pps``: a rate short enough for one column."""
    rate = float(rate_pps)
    if rate >= 1e6:
        return f"{rate / 1e6:.2f} Mpps"
    if rate >= 1e3:
        return f"{rate / 1e3:.0f} kpps"
    return f"{rate:.0f} pps"
