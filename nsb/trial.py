"""What a traffic profile asks of a generator (Trial) and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass, field

from nsb import kpi_names
from nsb.addresses import AddressCounts, AddressLoad
from nsb.frames import Frame
from nsb.packets import PacketSpec
from nsb.sessions import SessionCounts, SessionLoad

# the latency percentiles every generator reports (``LatencyStats.percentiles_us``
# keys p50, p90, ...), which the results and the dashboards show
PERCENTILES = (50.0, 90.0, 99.0, 99.9)


@dataclass(frozen=True)
class Trial:
    """Offer ``rate_pps`` (summed over all transmitting ports) for ``duration_s``."""

    frame_size: Frame  # bytes with FCS, or a mix of sizes (IMIX)
    rate_pps: float
    duration_s: float
    flows: int | None = None
    # per direction what the frames carry (NSB's uplink_N/downlink_N); empty: the
    # generator's own UDP frames between its ports' addresses
    packets: tuple[PacketSpec, ...] = ()
    # measure latency in this trial (latency streams, probes); False: throughput only,
    # the generator spends nothing on timestamping
    latency: bool = True
    # the frames come back to the port that sent them (NSB's correlated traffic: a
    # reflector beyond the DUT answers each frame), not to the other port of its pair
    reflected: bool = False
    # send exactly this many frames (summed over the transmitting ports) at rate_pps,
    # back to back, then stop: RFC 2544's back-to-back bursts; None: rate x duration
    burst_frames: int | None = None
    # every frame is a latency frame (latency at no load, CSIT's 0 %): generators with
    # latency streams send those alone at rate_pps; others send a low-rate trial
    latency_only: bool = False
    # each port pair's own rate (by pair index; they add up to rate_pps): a chain loaded
    # apart from the others (the isolation profile); empty: rate_pps spread evenly
    pair_rates_pps: tuple[float, ...] = ()
    # a stateful trial's load (nsb.sessions.SessionLoad): connections per second running
    # a program; rate_pps is then 0 (the generator's packets follow the sessions)
    sessions: SessionLoad | None = None
    # an address-learning trial's load (nsb.addresses.AddressLoad): its frames are the
    # learning and test frames, sent at their own rates; rate_pps is the test frames'
    addresses: AddressLoad | None = None

    def pair_rate_pps(self, pair: int) -> float:
        """Port pair ``pair``'s own rate in ``pair_rates_pps`` (0 for a pair it does not
        list); only meaningful where the trial gives pairs their rates."""
        return self.pair_rates_pps[pair] if pair < len(self.pair_rates_pps) else 0.0


def burst_shares(total: int | None, parts: int) -> list[int | None]:
    """Each sending port's frames of a burst of ``total``: the first ports take the
    remainder, so the shares add up to it exactly; None each when there is no burst."""
    if total is None:
        return [None] * parts
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]


@dataclass(frozen=True)
class LatencyStats:
    """One-way latency of the probe stream, in microseconds."""

    samples: int
    min_us: float
    avg_us: float
    max_us: float
    percentiles_us: dict[str, float] = field(default_factory=dict)
    histogram: list[tuple[float, int]] = field(default_factory=list)  # (upper edge us, count)
    # samples beyond the histogram's range: percentiles whose rank falls there are omitted
    overflow_samples: int = 0
    # how precise the percentiles and the mean are, in words (empty: the histogram's buckets)
    resolution: str = ""
    # the HDR histogram of every sample, encoded as HdrHistogram encodes it (when the
    # generator keeps one): percentiles anyone can recompute
    hdrh: str = ""


@dataclass(frozen=True)
class TrialResult:
    """Counters of one trial, read after the traffic stopped and drained."""

    trial: Trial
    tx_packets: int
    rx_packets: int
    elapsed_s: float
    latency: LatencyStats | None = None
    generator_limited: bool = False
    ports: dict[str, dict[str, int]] = field(default_factory=dict)
    extra: dict[str, float] = field(default_factory=dict)
    # generators that pace by time (PROX) measure their rates over a window
    # while sending; the counts then cover a little more than duration_s
    measured_tx_pps: float | None = None
    measured_rx_pps: float | None = None
    # frames the generator was asked to send in the trial (None: rate x duration);
    # MLRsearch judges loss against it
    intended_packets: int | None = None
    # frames that reached the generator's ports but that its receive path dropped (no
    # buffer): lost, but not by the DUT
    rx_missed_packets: int = 0
    # why the generator fell short of the trial (empty when it did not), in words
    generator_note: str = ""
    # the rate its frames are proven to have left at, at least, by the generator's own
    # counters (all out by a known time); None when the generator cannot tell
    proven_tx_pps: float | None = None
    # each service chain's share (nsb.chains), when the scenario has several
    chains: tuple = ()
    # the latency of each of the generator's port pairs (by pair index), where it
    # measures latency per pair: a chain's own latency
    pair_latency: dict = field(default_factory=dict)
    # each chain's own counts where the generator tells chains on one network apart by
    # their streams (chain index -> {"tx_packets", "rx_packets", "latency"})
    chain_counts: dict = field(default_factory=dict)
    # a stateful trial's connections (nsb.sessions.SessionCounts); tx/rx_packets are
    # then the packets of those connections
    sessions: SessionCounts | None = None
    # an address-learning trial's counts (nsb.addresses.AddressCounts); tx/rx_packets
    # are then its test frames sent and received by the learning port
    addresses: AddressCounts | None = None

    @property
    def lost_packets(self) -> int:
        return self.tx_packets - self.rx_packets

    @property
    def loss_pct(self) -> float:
        if self.tx_packets <= 0:
            return 100.0
        return 100.0 * max(0, self.lost_packets) / self.tx_packets

    @property
    def dut_loss_pct(self) -> float:
        """Loss without the frames the generator itself failed to receive."""
        if self.tx_packets <= 0:
            return 100.0
        return 100.0 * max(0, self.lost_packets - self.rx_missed_packets) / self.tx_packets

    @property
    def tx_rate_pps(self) -> float:
        if self.measured_tx_pps is not None:
            return self.measured_tx_pps
        return self.tx_packets / self.trial.duration_s

    @property
    def rx_rate_pps(self) -> float:
        if self.measured_rx_pps is not None:
            return self.measured_rx_pps
        return self.rx_packets / self.trial.duration_s


def latency_record(latency: LatencyStats | None) -> dict | None:
    """Latency as results files hold it: the statistics, ``p50_us``... ``p99_9_us``
    (nsb.kpi_names), the histogram."""
    if latency is None:
        return None
    record = {"samples": latency.samples, "min_us": latency.min_us, "avg_us": latency.avg_us,
              "max_us": latency.max_us}
    record.update({f"{kpi_names.stat(key)}_us": value
                   for key, value in latency.percentiles_us.items()})
    record["histogram"] = [{"le_us": edge, "count": count} for edge, count in latency.histogram]
    if latency.overflow_samples:
        record["histogram_overflow"] = latency.overflow_samples
    if latency.resolution:
        record["resolution"] = latency.resolution
    if latency.hdrh:
        record["hdrh"] = latency.hdrh
    return record


def percentiles(histogram: list[tuple[float, int]], samples: int,
                overflow: int = 0) -> dict[str, float]:
    """Upper bucket edge at each percentile's rank (conservative by at most one
    bucket); none for a rank that falls among the ``overflow`` samples (the last)."""
    result = {}
    covered = samples - overflow
    for p in PERCENTILES:
        rank = max(1, -(-p * samples // 100))
        if rank > covered:
            continue
        seen = 0
        for edge, count in histogram:
            seen += count
            if seen >= rank:
                result[f"p{p:g}"] = edge
                break
    return result
