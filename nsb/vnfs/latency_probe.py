"""Latency probe: a low-rate stream of timestamped frames sent with the traffic.

Runs on the generator's node as a standalone script (standard library only),
like TRex's latency streams: each probe frame carries a stream id and sequence
number; its send time is the kernel's software TX timestamp and its arrival
time the kernel's RX timestamp, so the probe's own scheduling does not count.

    python3 latency_probe.py --stream xe0,xe1,SRC_MAC,DST_MAC,SRC_IP,DST_IP [--stream ...]

It opens its sockets once and prints ``ready``; then, per trial, it reads a
line ``{"pps": 1000, "duration": 5, "frame_size": 64}`` on stdin, prints
``sending``, sends for ``duration`` seconds, keeps receiving until a ``stop``
line arrives, and prints one JSON line with per-stream counts and latency
statistics in microseconds. EOF on stdin ends it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import select
import socket
import struct
import sys
import time

PROBE_UDP_PORT = 50123
MAGIC = b"NSBP"
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_TX_TIMESTAMP = 16
PACKET_QDISC_BYPASS = 20
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
SO_TIMESTAMPING = 37
SO_ATTACH_FILTER = 26
SOF_TX_SOFTWARE = 1 << 1
SOF_SOFTWARE = 1 << 4
SOF_OPT_ID = 1 << 7
SOF_OPT_TSONLY = 1 << 11
MSG_ERRQUEUE = 0x2000
HISTOGRAM_EDGES_US = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000,
                      50000, 100000, 200000, 500000, 1000000)


def _mac(text):
    return bytes(int(part, 16) for part in text.split(":"))


def _checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def build_frame(src_mac, dst_mac, src_ip, dst_ip, frame_size, stream_id, seq):
    """An Ethernet/IPv4/UDP frame of ``frame_size`` bytes with FCS (FCS not included)."""
    length = max(frame_size, 64) - 4
    payload = MAGIC + struct.pack("!HI", stream_id, seq)
    payload += bytes(length - 14 - 20 - 8 - len(payload))
    udp = struct.pack("!HHHH", PROBE_UDP_PORT, PROBE_UDP_PORT, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0, 64, 17, 0,
                     socket.inet_aton(src_ip), socket.inet_aton(dst_ip))
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    return _mac(dst_mac) + _mac(src_mac) + b"\x08\x00" + ip + udp


def parse_probe(frame):
    """(stream_id, seq) of a probe frame, or None."""
    offset = 14 + 20 + 8
    if len(frame) < offset + 10 or frame[offset:offset + 4] != MAGIC:
        return None
    return struct.unpack("!HI", frame[offset + 4:offset + 10])


def _attach_probe_filter(sock):
    """Classic BPF: accept only IPv4/UDP to PROBE_UDP_PORT, so the traffic stays in the kernel."""
    program = [
        (0x28, 0, 0, 12), (0x15, 0, 5, 0x0800),        # ethertype IPv4
        (0x30, 0, 0, 23), (0x15, 0, 3, 17),            # protocol UDP
        (0x28, 0, 0, 36), (0x15, 0, 1, PROBE_UDP_PORT),  # destination port
        (0x06, 0, 0, 0xFFFF), (0x06, 0, 0, 0),
    ]
    blob = b"".join(struct.pack("HBBI", *insn) for insn in program)
    buffer = ctypes.create_string_buffer(blob)
    fprog = struct.pack("HL", len(program), ctypes.addressof(buffer))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    return buffer  # keep alive


def _timespec_ns(data, index=0):
    sec, nsec = struct.unpack_from("qq", data, index * 16)
    return sec * 1_000_000_000 + nsec


class Stream:
    def __init__(self, stream_id, spec, frame_size):
        tx_if, rx_if, src_mac, dst_mac, src_ip, dst_ip = spec.split(",")
        self.id = stream_id
        self.tx_if, self.rx_if = tx_if, rx_if
        self.frame_args = (src_mac, dst_mac, src_ip, dst_ip, frame_size, stream_id)
        self.sent = 0
        self.id_offset = 0  # the kernel numbers a socket's sends from its first one
        self.user_tx_ns = []
        self.kernel_tx_ns = {}
        self.rx_ns = {}
        self.duplicates = 0


def open_tx(ifname):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    sock.bind((ifname, 0))
    # skip the generator's shaper: probes must not queue behind the traffic they measure
    sock.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING,
                    SOF_TX_SOFTWARE | SOF_SOFTWARE | SOF_OPT_ID | SOF_OPT_TSONLY)
    sock.setblocking(False)
    return sock


def open_rx(ifname):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    keep = _attach_probe_filter(sock)
    try:
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass  # old kernel: outgoing frames are skipped by their packet type below
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((ifname, ETH_P_ALL))
    sock.setblocking(False)
    while True:  # frames that arrived before the filter was attached
        try:
            sock.recv(65535)
        except BlockingIOError:
            break
    return sock, keep


def drain_tx_timestamps(sock, stream):
    while True:
        try:
            _, ancdata, _, _ = sock.recvmsg(0, 1024, MSG_ERRQUEUE)
        except (BlockingIOError, InterruptedError):
            return
        stamp = ident = None
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING and len(data) >= 16:
                stamp = _timespec_ns(data, 0)
            elif level == SOL_PACKET and kind == PACKET_TX_TIMESTAMP and len(data) >= 16:
                ident = struct.unpack_from("IBBBBII", data)[6]
        if stamp and ident is not None and ident >= stream.id_offset:
            stream.kernel_tx_ns[ident - stream.id_offset] = stamp


def drain_rx(sock, streams):
    while True:
        try:
            frame, ancdata, _, address = sock.recvmsg(2048, 256)
        except (BlockingIOError, InterruptedError):
            return
        if len(address) > 2 and address[2] == PACKET_OUTGOING:
            continue
        probe = parse_probe(frame)
        if probe is None or probe[0] not in streams:
            continue
        stream = streams[probe[0]]
        stamp = None
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                stamp = _timespec_ns(data)
        if stamp is None:
            stamp = time.time_ns()
        if probe[1] in stream.rx_ns:
            stream.duplicates += 1
        else:
            stream.rx_ns[probe[1]] = stamp


def summarize(latencies_ns, wanted):
    """min/avg/max, the ``wanted`` percentiles (nearest rank) and a histogram, in
    microseconds."""
    if not latencies_ns:
        return None
    values = sorted(v / 1000.0 for v in latencies_ns)
    count = len(values)
    percentiles = {}
    for p in wanted:
        rank = max(1, -(-p * count // 100))
        percentiles[f"p{p:g}"] = values[int(rank) - 1]
    histogram = []
    index = 0
    for edge in HISTOGRAM_EDGES_US + (float("inf"),):
        start = index
        while index < count and values[index] <= edge:
            index += 1
        if index > start:
            histogram.append([edge if edge != float("inf") else None, index - start])
    return {"samples": count, "min_us": values[0], "max_us": values[-1],
            "avg_us": sum(values) / count, "percentiles_us": percentiles,
            "histogram": histogram}


class Probe:
    """Sockets stay open across trials; each trial gets fresh streams and counters."""

    def __init__(self, specs, percentiles):
        self.specs = specs
        self.percentiles = percentiles
        self.streams = {i: Stream(i, spec, 64) for i, spec in enumerate(specs)}
        self.tx_socks = {i: open_tx(s.tx_if) for i, s in self.streams.items()}
        self.rx_socks, self._programs = {}, []
        for stream in self.streams.values():
            if stream.rx_if not in self.rx_socks:
                sock, program = open_rx(stream.rx_if)
                self.rx_socks[stream.rx_if] = sock
                self._programs.append(program)
        self.poller = select.poll()
        self.by_fd = {}
        for i, sock in self.tx_socks.items():
            self.poller.register(sock, select.POLLERR)
            self.by_fd[sock.fileno()] = ("tx", i)
        for sock in self.rx_socks.values():
            self.poller.register(sock, select.POLLIN)
            self.by_fd[sock.fileno()] = ("rx", sock)
        self.poller.register(sys.stdin, select.POLLIN | select.POLLHUP)
        self.trial_id = 0
        self.socket_sends = {i: 0 for i in self.tx_socks}

    def trial(self, pps, duration, frame_size):
        # a new id space per trial: late frames of the previous trial are ignored
        self.trial_id += 1
        base = self.trial_id * len(self.specs)
        self.streams = {base + i: Stream(base + i, spec, frame_size)
                        for i, spec in enumerate(self.specs)}
        tx_by_stream = {base + i: sock for i, sock in self.tx_socks.items()}
        for i, sock in self.tx_socks.items():  # stale timestamps of the previous trial
            stale = Stream(-1, self.specs[i], 64)
            stale.id_offset = 1 << 62
            drain_tx_timestamps(sock, stale)
            self.streams[base + i].id_offset = self.socket_sends[i]
        for sock in self.rx_socks.values():
            drain_rx(sock, {})
        print("sending", flush=True)
        interval_ns = int(1e9 / pps) if pps > 0 else None
        start = time.monotonic_ns()
        send_until = start + int(duration * 1e9)
        next_send = start
        stopping = False
        while not stopping:
            now = time.monotonic_ns()
            sending = interval_ns is not None and now < send_until
            if sending and now >= next_send:
                for sid, stream in self.streams.items():
                    frame = build_frame(*stream.frame_args, stream.sent)
                    stream.user_tx_ns.append(time.time_ns())
                    try:
                        tx_by_stream[sid].send(frame)
                        stream.sent += 1
                    except OSError:
                        stream.user_tx_ns.pop()
                next_send += interval_ns
                if next_send < now:  # fell behind: do not burst to catch up
                    next_send = now + interval_ns
                continue
            timeout_ms = max(0, (next_send - now) // 1_000_000) if sending else 100
            for fd, _event in self.poller.poll(timeout_ms):
                kind = self.by_fd.get(fd)
                if kind is None:
                    line = sys.stdin.readline()
                    if not line or line.strip() == "stop":
                        stopping = True
                elif kind[0] == "tx":
                    sid = base + kind[1]
                    drain_tx_timestamps(self.tx_socks[kind[1]], self.streams[sid])
                else:
                    drain_rx(kind[1], self.streams)
        for i, sock in self.tx_socks.items():
            drain_tx_timestamps(sock, self.streams[base + i])
            self.socket_sends[i] += self.streams[base + i].sent
        for sock in self.rx_socks.values():
            drain_rx(sock, self.streams)
        return self.report()

    def report(self):
        report = {"streams": [], "all": None}
        everything = []
        for stream in self.streams.values():
            latencies = []
            kernel_stamps = 0
            for seq, rx in stream.rx_ns.items():
                tx = stream.kernel_tx_ns.get(seq)
                if tx is not None:
                    kernel_stamps += 1
                elif seq < len(stream.user_tx_ns):
                    tx = stream.user_tx_ns[seq]
                else:
                    continue
                latencies.append(rx - tx)
            everything += latencies
            report["streams"].append({
                "tx_if": stream.tx_if, "rx_if": stream.rx_if, "sent": stream.sent,
                "received": len(stream.rx_ns), "duplicates": stream.duplicates,
                "kernel_tx_timestamps": kernel_stamps,
                "latency": summarize(latencies, self.percentiles)})
        report["all"] = summarize(everything, self.percentiles)
        return report


def serve(specs, percentiles):
    probe = Probe(specs, percentiles)
    print("ready", flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        report = probe.trial(command["pps"], command["duration"], command["frame_size"])
        print(json.dumps(report), flush=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", action="append", required=True,
                        help="tx_if,rx_if,src_mac,dst_mac,src_ip,dst_ip")
    parser.add_argument("--percentiles", required=True,
                        help="latency percentiles to report, e.g. 50,90,99,99.9")
    args = parser.parse_args(argv)
    try:
        return serve(args.stream, [float(p) for p in args.percentiles.split(",")])
    except PermissionError:
        print("latency probe needs CAP_NET_RAW (run as root)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
