"""An address-learning trial (nsb.addresses) on TRex's stateless ports: the test port's
own frame, the learning burst, then the test burst, each a single burst of exactly its
frames with the MAC counted up by TRex's field engine; every port's counters read once
every port's receive counters rest after each phase (the generator's drain).

The learning burst's pace is read from TRex's own tx counter every 10 ms while it runs
(nsb.counter_span): a burst of 0.2 s or more that went slower than asked is the
generator's shortfall, and its pace on the wire is kept (``learning_pps_measured``).
"""

from __future__ import annotations

import time

from nsb import counter_span, frames
from nsb.addresses import AddressCounts, flooded_per_port
from nsb.errors import RunError
from nsb.trial import Trial, TrialResult
from nsb.vnfs.trex.send_clock import MIN_SPAN_S, POLL_S  # a pace over less is no pace
from nsb.vnfs.trex.streams import padded

BROADCAST = "ff:ff:ff:ff:ff:ff"
SRC_MAC_LOW = 8  # byte offset of the source MAC's last four bytes
DST_MAC_LOW = 2  # of the destination MAC's


def run(gen, trial: Trial) -> TrialResult:
    """The trial's three phases on ``gen`` (a started TrexTrafficGen)."""
    load = trial.addresses
    number = {iface.name: index for index, iface in enumerate(gen.ports)}
    learn, test = number[load.learning_port], number[load.test_port]
    monitors = [number[name] for name in load.monitor_ports]
    size = frames.largest(trial.frame_size)
    test_mac = gen.ports[test].mac
    _send(gen, test, _frames(gen.api, test_mac, BROADCAST, size), 1, 1000.0)
    learnt, pace = _send(gen, learn, _frames(gen.api, load.first_mac, test_mac, size,
                                             load.count, SRC_MAC_LOW),
                         load.count, load.learning_pps, timed=True)
    time.sleep(load.settle_s)
    started = time.monotonic()
    tested, _ = _send(gen, test, _frames(gen.api, test_mac, load.first_mac, size,
                                         load.count, DST_MAC_LOW),
                      load.count, load.test_pps)
    elapsed = time.monotonic() - started

    def rx(stats: dict, port: int) -> int:
        return int(stats[port]["ipackets"])

    counts = AddressCounts(
        learning_sent=int(learnt[learn]["opackets"]), learning_delivered=rx(learnt, test),
        learning_flooded=flooded_per_port({str(p): rx(learnt, p) for p in monitors}),
        test_sent=int(tested[test]["opackets"]), test_delivered=rx(tested, learn),
        flooded=flooded_per_port({str(p): rx(tested, p) for p in monitors}),
        learning_pps_measured=pace)
    short = [f"{what} {sent:,} of {load.count:,}" for what, sent in
             (("learning frames", counts.learning_sent), ("test frames", counts.test_sent))
             if sent < load.count]
    slow = load.learning_pps * (1 - gen.options["generator_tolerance_pct"] / 100)
    if pace is not None and pace < slow:
        short.append(f"learning frames at {pace:,.0f} of the {load.learning_pps:,.0f} "
                     "frames/s asked")
    note = f"TRex sent {', '.join(short)}" if short else ""
    ports = {iface.name: {"tx_packets": int(tested[k]["opackets"]),
                          "rx_packets": rx(tested, k)} for k, iface in enumerate(gen.ports)}
    return TrialResult(
        trial=trial, tx_packets=counts.test_sent, rx_packets=counts.test_delivered,
        elapsed_s=elapsed, generator_limited=bool(note), generator_note=note, ports=ports,
        intended_packets=load.count, addresses=counts)


def _frames(api, src: str, dst: str, size: int, count: int = 1, vary_at: int = 0):
    """A UDP frame of ``size`` bytes from ``src`` to ``dst``; with ``count`` > 1 the
    MAC at ``vary_at`` counts up from the given one, one step a frame."""
    base = api.Ether(src=src, dst=dst) / api.IP(src="198.18.0.1", dst="198.19.0.1") / \
        api.UDP(sport=1024, dport=1024)
    packet = padded(api, base, size)
    vm = None
    if count > 1:
        low = int((src if vary_at == SRC_MAC_LOW else dst).replace(":", "")[4:], 16)
        if low + count > 1 << 32:
            raise RunError(f"{count:,} addresses from {src if vary_at == SRC_MAC_LOW else dst}"
                           " do not fit its last four bytes: start lower (first_mac)")
        vm = api.STLVM()
        vm.var(name="mac", min_value=low, max_value=low + count - 1, size=4, op="inc")
        vm.write(fv_name="mac", pkt_offset=vary_at)
    return api.STLPktBuilder(pkt=packet, vm=vm)


def _send(gen, port: int, packet, count: int, pps: float,
          timed: bool = False) -> tuple[dict, float | None]:
    """Exactly ``count`` frames from ``port`` at ``pps``; every port's counters, cleared
    before, read once the receive counters rest; with ``timed``, the pace on the wire."""
    api, client = gen.api, gen.client
    every = list(range(len(gen.ports)))
    client.remove_all_streams(ports=every)
    client.add_streams([api.STLStream(packet=packet, mode=api.STLTXSingleBurst(
        total_pkts=count, pps=pps))], ports=[port])
    client.clear_stats(ports=every)
    asked = time.monotonic()
    client.start(ports=[port], force=True)
    readings = [(0.0, 0)]
    deadline = asked + count / pps * 3 + 10
    while port in client.get_active_ports():
        if time.monotonic() > deadline:
            client.stop(ports=[port])
            break
        if timed:
            before = time.monotonic()
            sent = int(client.get_stats(ports=[port])[port]["opackets"])
            readings.append(((before + time.monotonic()) / 2 - asked, sent))
        time.sleep(POLL_S)
    if timed:
        readings.append((time.monotonic() - asked,
                         int(client.get_stats(ports=[port])[port]["opackets"])))
    span = counter_span.span_s(readings, count) if timed else None
    # a burst of a few tens of ms spans too few readings to time
    return gen._drain(every, watched=every), (
        count / span if span and span >= MIN_SPAN_S else None)

